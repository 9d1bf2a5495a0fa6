//! A fixed number of turns of issue 9's session, for instruction counts on a noisy machine.
//!
//! Run with:
//!
//! ```text
//! cargo build --release -p chef-devtools --bin profile_turn
//! valgrind --tool=callgrind \
//!     --toggle-collect='chef::session::compile::<impl chef::session::Chef>::compile' \
//!     target/release/profile_turn [TARGET] [TURNS] [MIX] [MESSAGES] [BODY]
//! ```
//!
//! Each turn is what the `compile` bench times: push a user message, compile to bytes; the
//! assistant's reply is pushed after, and every 50 turns the history is reset to its
//! MESSAGES messages (default 200; issue 24's long session has 2000) and compiled once.
//! The `Chef::compile` toggle counts those compiles too: instructions per turn are the
//! collected count divided by TURNS + TURNS / 50 (510 for the default 500 turns).
//! `--toggle-collect='profile_turn::turn'` counts the turns alone, as the bench times
//! them (divide by TURNS).
//!
//! TARGET is `anthropic` (default), `openai-chat`, `openai-responses` or `gemini`. MIX is
//! the history's: `plain` (default), `errors` (1 tool result in 10 an error) or `realistic`
//! (errors, images in tool results, thinking blocks, pinned messages). BODY is `vec`
//! (default: `Chef::compile`) or `chunks` (`Chef::compile_chunked`; collect with
//! `--toggle-collect='chef::session::compile::<impl chef::session::Chef>::compile_chunked'`,
//! or `profile_turn::turn`).
#[path = "../../../chef/benches/support/session200.rs"]
#[allow(clippy::expect_used, reason = "a broken fixture should stop loudly")]
mod support;

use chef::{Chef, ChefConfig, ChefError, PayloadMeta, ir::Message, ir::Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target = args
        .next()
        .map_or(Ok(Target::Anthropic), |name| chef_devtools::target(&name))?;
    let turns: usize = args.next().map_or(Ok(500), |a| a.parse())?;
    let mix = match args.next().as_deref() {
        None | Some("plain") => support::Mix::Plain,
        Some("errors") => support::Mix::Errors,
        Some("realistic") => support::Mix::Realistic,
        Some(other) => return Err(format!("unknown mix {other:?}").into()),
    };
    let messages: usize = args.next().map_or(Ok(200), |a| a.parse())?;
    let chunked = match args.next().as_deref() {
        None | Some("vec") => false,
        Some("chunks") => true,
        Some(other) => return Err(format!("unknown body form {other:?}").into()),
    };
    let mut chef = support::session_sized(ChefConfig::default(), mix, messages);
    let base = chef.history().to_vec();
    let mut bytes = 0;
    let mut reused = 0;
    for i in 0..turns {
        if i % 50 == 0 {
            chef.set_history(base.clone());
            chef.compile(target)?;
        }
        chef.push(Message::user(format!("And partner {i}?")));
        let (len, meta) = turn(&mut chef, target, chunked)?;
        bytes += len;
        reused += usize::from(meta.reused_prefix);
        chef.push(Message::assistant(format!("Partner {i} is in line.")));
    }
    println!("turns: {turns}, reused the prefix: {reused}, body bytes: {bytes}");
    Ok(())
}

/// One timed turn's compile, in the form asked for: the body's length and the meta. Not
/// inlined, so that `--toggle-collect='profile_turn::turn'` counts the turns alone, as the
/// bench times them (without the compile after each reset).
#[inline(never)]
fn turn(chef: &mut Chef, target: Target, chunked: bool) -> Result<(usize, PayloadMeta), ChefError> {
    if chunked {
        let payload = chef.compile_chunked(target)?;
        Ok((payload.body.len(), payload.meta))
    } else {
        let payload = chef.compile(target)?;
        Ok((payload.body.len(), payload.meta))
    }
}
