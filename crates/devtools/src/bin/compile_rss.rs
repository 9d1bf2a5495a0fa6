//! Peak resident memory of a process doing 1,000 compiles of issue 9's session (200
//! messages, 149 tools, 3 announcements, 10 memories), and where one compile's time goes.
//!
//! Run with `cargo run --release -p chef-devtools --bin compile_rss [TARGET]` where TARGET is
//! `anthropic`, `openai-chat`, `openai-responses` or `gemini` (default: all four, 250
//! compiles each). Prints VmHWM from `/proc/self/status` at the end (Linux only).
#[path = "../../../chef/benches/support/session200.rs"]
#[allow(clippy::expect_used, reason = "a broken fixture should stop loudly")]
mod support;

use std::time::{Duration, Instant};

use chef::{ChefConfig, ir::Message, ir::Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let targets: Vec<Target> = match std::env::args().nth(1) {
        None => Target::ALL.to_vec(),
        Some(name) => vec![chef_devtools::target(&name)?],
    };
    let per_target = 1000 / targets.len();
    let mut chef = support::session(ChefConfig::default());
    let base = chef.history().to_vec();
    let mut bytes = 0usize;
    let mut assemble = Duration::ZERO;
    let started = Instant::now();
    for target in &targets {
        for i in 0..per_target {
            if i % 50 == 0 {
                chef.set_history(base.clone());
            }
            chef.push(Message::user(format!("And partner {i}?")));
            let t = Instant::now();
            let request = chef.request(*target)?;
            assemble += t.elapsed();
            drop(request);
            bytes += chef.compile(*target)?.body.len();
            chef.push(Message::assistant(format!("Partner {i} is in line.")));
        }
    }
    let total = started.elapsed();
    let compiles = per_target * targets.len();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: unknown");
    println!("compiles: {compiles}, body bytes total: {bytes}");
    println!(
        "mean per turn (request + compile): {:?}, of which assembling the IR request: {:?}",
        total / u32::try_from(compiles)?,
        assemble / u32::try_from(compiles)?
    );
    println!("{hwm}");
    Ok(())
}
