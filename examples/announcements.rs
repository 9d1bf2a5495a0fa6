//! Announcements and tool deltas: standing notes that tell the model what changed, placed
//! where they never move the prompt-cache prefix.
//!
//! Run with `cargo run -p chef-examples --example announcements`. Offline; compiles for
//! Anthropic Messages. `cargo test -p chef-examples` runs it too and fails if anything it
//! shows stops holding.
//!
//! What it shows, each step checked:
//! 1. An announcement on the `user_tail` channel is stitched into the last user turn; one
//!    on the `system` channel becomes a positional system note after the tail; announcing
//!    an existing id again replaces it in place (upsert); retracting removes it.
//! 2. With `ChefConfig::announce_tool_changes` on, changing the blocklist announces the
//!    blocked tools (the tool list itself never changes), pruning that swaps the tools
//!    for a new task announces the delta once, and loading a toolkit is announced.
//! 3. The prefix a provider caches — the tools, the system blocks up to chef's breakpoint
//!    and the history before the tail — is byte-identical across every compile where only
//!    announcements or the blocklist changed. Pruning to a new task changes the tool list
//!    itself, so that prefix moves there, and only there; a toolkit load appends its tools
//!    after the unchanged stable ones.

mod common;

use chef::{Channel, Chef, ChefConfig, PrunePolicy, Routed, ToolGroup};
use chef_ir::{Message, Target, ToolCall, ToolDefinition};
use serde_json::{Value, json};

use common::{Error, ensure};

const TARGET: Target = Target::Anthropic;

/// `value[key]`, or `null` when absent (indexing a `Value` is fine, but lints ask for `get`).
fn at<'a>(value: &'a Value, key: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    value.get(key).unwrap_or(&NULL)
}

/// FNV-1a, 64 bits: a small, fixed hash to print for byte comparisons.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn tool(name: &str, description: &str, tags: &[&str]) -> ToolDefinition {
    ToolDefinition::new(
        name,
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
    )
    .with_description(description)
    .with_tags(tags.iter().copied())
}

/// The prefix an Anthropic request caches, in the API's prefix order: the tools, the
/// `system` blocks (chef's breakpoint ends them), and the history before the tail (every
/// message but the last user turn, which carries the stitched announcements).
fn cached_prefix(body: &[u8]) -> Result<String, Error> {
    let body: Value = serde_json::from_slice(body)?;
    let system = serde_json::to_string(at(&body, "system"))?;
    if !system.ends_with(r#""cache_control":{"type":"ephemeral"}}]"#) {
        return Err(format!("chef's breakpoint does not end the system blocks: {system}").into());
    }
    let mut messages = at(&body, "messages")
        .as_array()
        .cloned()
        .unwrap_or_default();
    messages.pop();
    Ok(format!(
        "{}{system}{}",
        serde_json::to_string(at(&body, "tools"))?,
        serde_json::to_string(&messages)?
    ))
}

/// The text of the last message of a request: where the tail goes.
fn tail(body: &[u8]) -> Result<String, Error> {
    let body: Value = serde_json::from_slice(body)?;
    let last = at(&body, "messages")
        .as_array()
        .and_then(|m| m.last())
        .ok_or("no messages")?;
    Ok(at(last, "content")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| at(b, "text").as_str())
        .collect::<Vec<_>>()
        .join("\n"))
}

fn tool_defs(body: &[u8]) -> Result<Vec<Value>, Error> {
    let body: Value = serde_json::from_slice(body)?;
    let mut tools = at(&body, "tools").as_array().cloned().unwrap_or_default();
    for tool in &mut tools {
        if let Some(object) = tool.as_object_mut() {
            object.remove("cache_control");
        }
    }
    Ok(tools)
}

fn system(body: &[u8]) -> Result<String, Error> {
    let body: Value = serde_json::from_slice(body)?;
    Ok(serde_json::to_string(at(&body, "system"))?)
}

/// One compile: what the log shows and what the checks compare.
struct Compiled {
    prefix: String,
    tail: String,
    tools: Vec<String>,
    /// The tool definitions without Anthropic's `cache_control` marker.
    tool_defs: Vec<Value>,
    system: String,
}

fn compile(chef: &mut Chef, what: &str, log: &mut Vec<String>) -> Result<Compiled, Error> {
    let payload = chef.compile(TARGET)?;
    let prefix = cached_prefix(&payload.body)?;
    let tool_defs = tool_defs(&payload.body)?;
    let compiled = Compiled {
        tail: tail(&payload.body)?,
        tools: tool_defs
            .iter()
            .filter_map(|t| at(t, "name").as_str().map(str::to_owned))
            .collect(),
        tool_defs,
        system: system(&payload.body)?,
        prefix,
    };
    log.push(format!(
        "turn {} ({what}): {} bytes; cached prefix {} bytes, fnv1a {:016x}; tools {:?}",
        payload.meta.turn,
        payload.body.len(),
        compiled.prefix.len(),
        fnv1a(compiled.prefix.as_bytes()),
        compiled.tools
    ));
    Ok(compiled)
}

fn flat_session() -> Result<Chef, Error> {
    // Pruning by task: untagged tools are always kept; tagged ones when a tag is in the task.
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_prune(PrunePolicy::ByTask)
            .with_tool_change_announcements(true),
    );
    chef.register_tools(vec![
        tool("search_docs", "Search the documentation.", &[]),
        tool("get_weather", "Current weather for a city.", &["weather"]),
        tool("send_email", "Send an email.", &["email"]),
    ])?;
    chef.set_system_prompt(vec![Message::system("You are a concise assistant.")]);
    chef.push(Message::user("What's the weather in Oslo?"));
    Ok(chef)
}

fn announcements_and_deltas(log: &mut Vec<String>) -> Result<(), Error> {
    let mut chef = flat_session()?;
    let base = compile(&mut chef, "no announcements", log)?;
    ensure(
        base.tools == ["get_weather", "search_docs"],
        format!("pruned for the weather task: {:?}", base.tools),
    )?;

    chef.announce("deadline", "Reply before 17:00.", Channel::UserTail);
    let c = compile(&mut chef, "user_tail announcement", log)?;
    ensure(
        c.tail
            .contains("<announcement id=\"deadline\">\nReply before 17:00.")
            && c.tail.contains(chef::ANCHOR_LINE),
        format!("user_tail goes into the last user turn: {}", c.tail),
    )?;
    let mut same_prefix = vec![c.prefix];

    chef.announce(
        "mode",
        "Read-only mode: do not send anything.",
        Channel::System,
    );
    let c = compile(&mut chef, "system announcement", log)?;
    ensure(
        c.tail.contains("Read-only mode"),
        "on Anthropic the positional system note follows the tail",
    )?;
    same_prefix.push(c.prefix);

    chef.announce("deadline", "Reply before 18:00.", Channel::UserTail);
    let c = compile(&mut chef, "upsert", log)?;
    ensure(
        c.tail.contains("18:00") && !c.tail.contains("17:00"),
        "the upsert replaced the announcement in place",
    )?;
    ensure(
        chef.announcements().len() == 2,
        "still one announcement per id",
    )?;
    same_prefix.push(c.prefix);

    ensure(chef.retract_announcement("mode"), "retract removes it")?;
    let c = compile(&mut chef, "retract", log)?;
    ensure(!c.tail.contains("Read-only"), "the retracted note is gone")?;
    same_prefix.push(c.prefix);

    chef.tools_mut().set_blocked(["send_email"]);
    let c = compile(&mut chef, "blocklist", log)?;
    ensure(
        c.tail.contains(
            "These tools are blocked for now; calls to them will be refused: send_email.",
        ),
        format!("the blocklist is announced: {}", c.tail),
    )?;
    ensure(
        c.tools == base.tools,
        "the blocklist never edits the tool list",
    )?;
    same_prefix.push(c.prefix);

    ensure(
        same_prefix.iter().all(|p| *p == base.prefix),
        "announcements and the blocklist never move the cached prefix",
    )?;
    log.push(format!(
        "  the cached prefix is byte-identical across all {} compiles above",
        same_prefix.len() + 1
    ));

    // A new task: pruning keeps other tools, and the delta is announced once.
    chef.push(Message::assistant("It is 4 °C and clear in Oslo."));
    chef.push(Message::user("Thanks. Email that to Ann."));
    let pruned = compile(&mut chef, "new task, pruned again", log)?;
    ensure(
        pruned.tools == ["search_docs", "send_email"],
        format!("pruned for the email task: {:?}", pruned.tools),
    )?;
    // send_email is on the wire again but blocked: it is never announced as available.
    ensure(
        pruned
            .tail
            .contains("Tools no longer available: get_weather.")
            && !pruned.tail.contains("Tools now available: send_email"),
        format!(
            "the delta is announced, without the blocked tool: {}",
            pruned.tail
        ),
    )?;
    ensure(
        pruned.prefix != base.prefix,
        "a new tool list is a new cached prefix",
    )?;
    log.push("  pruning changed the tool list, so the prefix moved (by design)".to_owned());

    let next = compile(&mut chef, "nothing changed", log)?;
    ensure(
        !next.tail.contains("Tools now available"),
        "the delta is shown once, then retracted",
    )?;
    ensure(
        next.prefix == pruned.prefix,
        "retracting the delta does not move the prefix",
    )?;
    Ok(())
}

fn toolkit_load(log: &mut Vec<String>) -> Result<(), Error> {
    let mut chef = Chef::new(ChefConfig::default().with_tool_change_announcements(true));
    chef.tools_mut().register_namespaces(vec![ToolGroup::new(
        "docs",
        "The project documentation.",
        vec![tool("search_docs", "Search the documentation.", &[])],
    )])?;
    chef.tools_mut().register_toolkits(vec![ToolGroup::new(
        "Weather",
        "Forecasts and current conditions.",
        vec![tool("get_weather", "Current weather for a city.", &[])],
    )])?;
    chef.push(Message::user("What's the weather in Oslo?"));
    let before = compile(&mut chef, "two-layer, nothing loaded", log)?;

    let call = ToolCall::new("c1", "load_toolkit", json!({"toolkit_name": "Weather"}));
    ensure(
        matches!(chef.route(&call), Routed::ToolkitLoaded { .. }),
        "the toolkit loads",
    )?;
    let after = compile(&mut chef, "after load_toolkit", log)?;
    ensure(
        after.tools == ["docs", "load_toolkit", "get_weather"],
        format!(
            "the toolkit's tools follow the stable ones: {:?}",
            after.tools
        ),
    )?;
    ensure(
        after.tail.contains("Toolkit \"Weather\" is loaded")
            && after.tail.contains("Tools now available: get_weather."),
        format!("the load is announced: {}", after.tail),
    )?;
    // The stable tools and the system blocks are unchanged; only the breakpoint Anthropic
    // puts on the last tool moves to the new last tool.
    ensure(
        after.tool_defs.get(..before.tool_defs.len()) == Some(before.tool_defs.as_slice()),
        "the stable tool definitions come first, unchanged",
    )?;
    ensure(
        after.system == before.system,
        "the system blocks (with the toolkit directory) are unchanged",
    )?;
    log.push("  the toolkit's tools were appended after the unchanged stable tools".to_owned());
    Ok(())
}

fn run() -> Result<Vec<String>, Error> {
    let mut log = Vec::new();
    announcements_and_deltas(&mut log)?;
    toolkit_load(&mut log)?;
    Ok(log)
}

fn main() -> Result<(), Error> {
    common::print_log(&run()?);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn announcements_live_in_the_tail_and_never_move_the_cached_prefix() {
        let log = super::run().unwrap();
        let text = super::common::assert_log_contains(
            &log,
            &[
                "the cached prefix is byte-identical across all 6 compiles above",
                "pruning changed the tool list",
                "appended after the unchanged stable tools",
            ],
        );
        // Every announcement-only compile printed the same prefix hash.
        let hashes: Vec<&str> = log
            .iter()
            .take(6)
            .filter_map(|l| l.split("fnv1a ").nth(1))
            .map(|h| h.split(';').next().unwrap())
            .collect();
        assert_eq!(hashes.len(), 6, "{text}");
        assert!(hashes.iter().all(|h| *h == hashes[0]), "{hashes:?}");
    }
}
