//! An output guardrail with a prefill, checked on the model's reply with a retry, and hooks
//! that watch every compile: the events a loop subscribes to (and stops), and the exact
//! request bytes handed to an `on_compiled` hook.
//!
//! Run with `cargo run -p chef-examples --example guardrails_and_hooks`. Offline: the
//! "model" is scripted (its first answer breaks the guardrail, its second keeps it).
//! `cargo test -p chef-examples` runs it too and fails if anything it shows stops holding.
//!
//! What it shows, each step checked:
//! 1. `layers_mut().set_guardrail` (a JSON object valid against a schema) and `set_prefill`: the
//!    guardrail's instruction is the last message on every target; the prefill is native
//!    on Anthropic and an instruction (with a notice) on the others.
//! 2. `check_reply` fails the first answer with a message written for the model, which the
//!    loop sends back; the second answer passes.
//! 3. `subscribe` counts compiles until `unsubscribe`; an `on_compiled` hook sees the same
//!    bytes the compile returns, without a copy being made for it.

#[macro_use]
mod common;

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicUsize, Ordering},
};

use chef::{
    Chef, ChefConfig, ChefEvent,
    guardrail::{Guardrail, Verdict},
};
use chef_ir::{Message, Target};
use serde_json::json;

use common::{Error, ensure};

/// Runs the example; returns what it printed.
fn run() -> Result<Vec<String>, Error> {
    let mut log = Vec::new();
    let mut chef = Chef::new(ChefConfig::default());
    chef.set_system_prompt(vec![Message::system("You answer geography questions.")]);

    // Hooks: count compiles; keep the last request's bytes as a hook sees them.
    let compiles = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&compiles);
    let subscription = chef.subscribe(move |event| {
        if matches!(event, ChefEvent::CompileDone { .. }) {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    chef.on_compiled(move |compiled| {
        // The body as the chunked form holds it, piece by piece, read in place.
        let mut bytes = Vec::with_capacity(compiled.body_len());
        compiled.for_each_chunk(|piece| bytes.extend_from_slice(piece));
        if let Ok(mut seen) = sink.lock() {
            *seen = bytes;
        }
    });

    // 1. The guardrail and the prefill, on every target.
    chef.layers_mut()
        .set_guardrail(Some(Guardrail::json(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
            "required": ["city", "country"],
            "additionalProperties": false
        }))?))
        .set_prefill(Some("{\"city\":"));
    chef.push(Message::user("Where is the Eiffel Tower?"));
    for target in Target::ALL {
        let payload = chef.compile(target)?;
        let body = String::from_utf8(payload.body.clone())?;
        let instruction = body
            .rfind("Answer with one JSON object")
            .ok_or("no guardrail instruction")?;
        ensure(
            body.find("Where is the Eiffel Tower?")
                .unwrap_or(usize::MAX)
                < instruction,
            "the guardrail comes after the question",
        )?;
        ensure(
            seen.lock().map_err(|_| "poisoned")?.as_slice() == payload.body.as_slice(),
            "the hook saw other bytes",
        )?;
        let prefill = if target == Target::Anthropic {
            ensure(payload.notices.is_empty(), "Anthropic prefills natively")?;
            "native".to_owned()
        } else {
            ensure(
                payload.notices.iter().any(|n| n.contains("prefill")),
                "a notice names the degraded prefill",
            )?;
            format!("degraded ({})", payload.notices.join("; "))
        };
        log.push(format!(
            "{target:?}: guardrail last, prefill {prefill}; hook saw the same {} bytes",
            payload.body.len()
        ));
    }

    // 2. The scripted model answers; the loop checks and retries once.
    let replies = [
        // The provider returns what follows the prefill: put it back in front to check.
        " \"Paris\"}",
        " \"Paris\", \"country\": \"France\"}",
    ];
    for (i, reply) in replies.iter().enumerate() {
        let full = format!("{}{reply}", chef.layers().prefill().unwrap_or_default());
        match chef.check_reply(&full).ok_or("no guardrail")? {
            Verdict::Pass { content } => {
                log.push(format!("answer {}: passes: {content}", i + 1));
                ensure(i == 1, "only the second answer passes")?;
            }
            Verdict::Fail { retry, .. } => {
                log.push(format!("answer {}: fails; sent back: {retry}", i + 1));
                ensure(i == 0, "the first answer fails")?;
                ensure(retry.contains("country"), "the retry names what is missing")?;
                chef.push(Message::assistant(full));
                chef.push(Message::user(retry));
                chef.compile(Target::Anthropic)?;
            }
            other => return Err(format!("unexpected verdict {other:?}").into()),
        }
    }

    // 3. Ending the subscription stops the events; the hook stays until its own end.
    let before = compiles.load(Ordering::Relaxed);
    ensure(chef.unsubscribe(subscription), "the subscription was there")?;
    chef.compile(Target::Anthropic)?;
    ensure(
        compiles.load(Ordering::Relaxed) == before,
        "no events after unsubscribe",
    )?;
    log.push(format!(
        "{before} compiles counted, then none after unsubscribe"
    ));
    Ok(log)
}

fn main() -> Result<(), Error> {
    common::print_log(&run()?);
    Ok(())
}

log_test!(
    the_guardrail_holds_on_every_target_and_the_hooks_see_every_compile,
    [
        "Anthropic: guardrail last, prefill native",
        "answer 1: fails",
        "answer 2: passes",
        "5 compiles counted, then none after unsubscribe",
    ]
);
