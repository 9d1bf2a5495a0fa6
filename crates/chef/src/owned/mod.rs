//! Library-owned tools: memory and the context store, and the context-window reset.
//!
//! These tools are answered by chef itself, never by the agent's dispatcher. Their schemas
//! are static — nothing in them depends on live state — so they are safe inside a cached
//! prompt prefix. They are appended after the pruned tools, so pruning, namespaces and
//! the blocklist never remove them from the list (the blocklist still gates calls to them).
//!
//! | mode | tools emitted |
//! |---|---|
//! | [`ToolsMode::Legacy`] | `create_memory`, `modify_memory` when memory is configured |
//! | [`ToolsMode::Unified`] | `context`, then `new_context` when a handoff budget is configured |
//!
//! `load_skill` is emitted after those, in either mode, when
//! [`ChefConfig::with_skill_tool`](crate::ChefConfig::with_skill_tool) turns it on;
//! `find_tools` under discovery; `final_answer` last, when
//! [`ChefConfig::with_answer_tool`](crate::ChefConfig::with_answer_tool) turns it on.
//! `recall_context` is owned (handled when called) but never emitted.

mod handle;
mod text;

use chef_ir::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use self::handle::OwnedReply;
pub(crate) use self::handle::{Context, handle, write_through};

/// `create_memory`.
pub const CREATE_MEMORY: &str = "create_memory";
/// `modify_memory`.
pub const MODIFY_MEMORY: &str = "modify_memory";
/// `context`.
pub const CONTEXT: &str = "context";
/// `new_context`.
pub const NEW_CONTEXT: &str = "new_context";
/// `recall_context`.
pub const RECALL_CONTEXT: &str = "recall_context";
/// `load_skill`.
pub const LOAD_SKILL: &str = "load_skill";

/// `find_tools`: the discovery search tool, offered under
/// [`PrunePolicy::Discover`](crate::PrunePolicy::Discover) and answered by
/// [`Chef::route`](crate::Chef::route) itself (a [`Routed::Lookup`](crate::Routed::Lookup)).
pub const FIND_TOOLS: &str = "find_tools";

/// `final_answer`: the model ends its task with its answer, offered with
/// [`ChefConfig::with_answer_tool`](crate::ChefConfig::with_answer_tool);
/// [`Chef::recover_text_calls`](crate::Chef::recover_text_calls) turns its call into the
/// reply's text.
pub const FINAL_ANSWER: &str = "final_answer";

/// The `final_answer` tool. Its schema is static, so it is safe inside a cached prefix.
pub fn final_answer_tool() -> ToolDefinition {
    ToolDefinition::new(
        FINAL_ANSWER,
        json!({
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "Your answer for the user, in a sentence or two."}
            },
            "required": ["answer"]
        }),
    )
    .with_description(
        "End the task with your answer for the user. Call it once every part of the request is done (or when no tool can do what was asked); call no other tool after it.",
    )
}

/// The answer of a `final_answer` call: its `answer` when that is text, else its
/// arguments as JSON text (nothing the model wrote is dropped).
pub fn final_answer_text(arguments: &Value) -> String {
    let parsed = crate::arguments::parsed(arguments);
    match (parsed.get("answer"), arguments) {
        (Some(Value::String(answer)), _) => answer.clone(),
        // Argument text that is not JSON: the text itself.
        (_, Value::String(text)) if parsed.is_null() => text.clone(),
        _ => parsed.to_string(),
    }
}

/// How many tools one `find_tools` call returns when the model does not say.
pub const FIND_TOOLS_DEFAULT_LIMIT: usize = 5;
/// The most tools one `find_tools` call returns.
pub const FIND_TOOLS_MAX_LIMIT: usize = 10;

/// The `find_tools` tool. Its schema is static, so it is safe inside a cached prefix.
pub fn find_tools_tool() -> ToolDefinition {
    find_tools_tool_with_default(FIND_TOOLS_DEFAULT_LIMIT)
}

/// [`find_tools_tool`] for a host that answers a call without a `limit` with `default`
/// tools (its schema says so).
pub fn find_tools_tool_with_default(default: usize) -> ToolDefinition {
    ToolDefinition::new(
        FIND_TOOLS,
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    // No example query: a small model that had finished its task searched
                    // with the example's words (chef eval, whole tasks, session 21).
                    "description": "What the tool you need should do for this task, in a few words."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": FIND_TOOLS_MAX_LIMIT.max(default),
                    "description": format!("How many tools to return (default {default}).")
                }
            },
            "required": ["query"]
        }),
    )
    .with_description(
        "Search every tool available to you, not only the ones listed, for a tool that does \
         what you need. Returns the best matches with their parameters; from your next \
         step you can call them by name. Use it when no listed tool fits the task; when the \
         task is done, answer instead.",
    )
}

/// The longest `find_tools` query, in characters: "a few words" is far shorter, and a
/// longer one is refused whole rather than searched and quoted back (a page pasted into a
/// query would be ranked and repeated in the answer, twice in the context).
pub const FIND_TOOLS_MAX_QUERY_CHARS: usize = 500;

/// Why a `find_tools` query (as [`find_tools_args`] reads it) cannot be searched, in words
/// for the model: empty, or over [`FIND_TOOLS_MAX_QUERY_CHARS`]. `None` when it can.
///
/// ```
/// use chef::owned::find_tools_query_error;
///
/// assert!(find_tools_query_error("send an email").is_none());
/// assert!(find_tools_query_error("").unwrap().starts_with("find_tools needs a query"));
/// assert!(find_tools_query_error(&"word ".repeat(200)).unwrap().contains("at most 500"));
/// ```
pub fn find_tools_query_error(query: &str) -> Option<String> {
    if query.is_empty() {
        return Some(
            "find_tools needs a query: a few words saying what the tool should do.".to_owned(),
        );
    }
    let chars = query.chars().count();
    (chars > FIND_TOOLS_MAX_QUERY_CHARS).then(|| {
        format!(
            "find_tools' query is {chars} characters; it takes at most \
             {FIND_TOOLS_MAX_QUERY_CHARS}: call it again with a few words saying what the tool \
             should do."
        )
    })
}

/// A `find_tools` call's query (trimmed; empty when missing) and how many tools to return
/// (its `limit`, else `default`, kept within `1..=max`).
pub fn find_tools_args(arguments: &Value, default: usize, max: usize) -> (String, usize) {
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned();
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(default)
        .clamp(1, max.max(1));
    (query, limit)
}

/// A `find_tools` answer lists no tool scoring under this share of its best tool's score
/// (nor does a session's [`search`](crate::Tools::search), nor `chef mcp serve`'s
/// `find_tools`).
///
/// On the real catalogues chef holds (retrieval-149's 149 MCP tools and NESTFUL's, their
/// calibration halves) no tool in a search's best five scores under a tenth of the best,
/// and the tool a request needs scores at least 0.40 of it; in a small catalogue a search
/// for one tool's job otherwise fills its places with unrelated tools scoring a few
/// hundredths, and each would join the model's list.
pub const FOUND_SCORE_FLOOR: f64 = 0.1;

/// One line of a `find_tools` answer: `- name(params) — first sentence of its description`.
pub fn found_tool_line(tool: &ToolDefinition) -> String {
    found_tool_line_as(tool.name.as_str(), tool)
}

/// [`found_tool_line`] naming the tool `name`: the name the model will see it under (the
/// wire name a provider's name rule gives `billing.invoice_create`, `billing_invoice_create`).
pub fn found_tool_line_as(name: &str, tool: &ToolDefinition) -> String {
    let mut line = format!(
        "- {}",
        chef_compress::signature_line(name, &tool.input_schema)
    );
    let sentence = chef_compress::first_sentence(&tool.description).trim();
    if !sentence.is_empty() {
        line.push_str(" — ");
        line.push_str(sentence);
    }
    line
}

/// Every name chef owns.
pub const OWNED_NAMES: [&str; 6] = [
    CONTEXT,
    NEW_CONTEXT,
    CREATE_MEMORY,
    MODIFY_MEMORY,
    RECALL_CONTEXT,
    LOAD_SKILL,
];

/// Which library-owned tools compile emits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolsMode {
    /// `create_memory` / `modify_memory` (when memory is configured).
    #[default]
    Legacy,
    /// The unified `context` tool (plus `new_context` with a handoff budget).
    Unified,
}

/// Whether chef owns (answers) a tool of this exact name.
pub fn is_owned_name(name: &str) -> bool {
    OWNED_NAMES.contains(&name)
}

/// The `create_memory` tool; `allowed_keys`, when non-empty, becomes the key's enum.
pub fn create_memory_tool(allowed_keys: &[String]) -> ToolDefinition {
    let mut key = serde_json::Map::new();
    key.insert("type".into(), json!("string"));
    key.insert(
        "description".into(),
        json!("A short, stable key such as user_timezone or repo_conventions."),
    );
    if !allowed_keys.is_empty() {
        key.insert("enum".into(), Value::from(allowed_keys.to_vec()));
    }
    ToolDefinition::new(
        CREATE_MEMORY,
        json!({
            "type": "object",
            "properties": {
                "key": key,
                "value": {"type": "string", "description": "What to remember."},
                "description": {"type": "string", "description": "Optional: why this matters or when to use it."}
            },
            "required": ["key", "value"]
        }),
    )
    .with_description(
        "Remember a durable fact for later turns and sessions: a preference, a convention, \
         a decision. Creating never overwrites; use modify_memory to change an entry.",
    )
}

/// The `modify_memory` tool.
pub fn modify_memory_tool() -> ToolDefinition {
    ToolDefinition::new(
        MODIFY_MEMORY,
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["update", "delete"]},
                "key": {"type": "string", "description": "The key of an existing memory."},
                "value": {"type": "string", "description": "The new value (update only)."},
                "description": {"type": "string", "description": "Optional new description (update only)."}
            },
            "required": ["action", "key"]
        }),
    )
    .with_description("Update or delete a memory created earlier.")
}

/// The commands of the `context` tool, in the order its schema lists them.
const CONTEXT_COMMANDS: [&str; 7] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "delete",
    "rename",
    "search",
];

/// The unified `context` tool.
pub fn context_tool() -> ToolDefinition {
    ToolDefinition::new(
        CONTEXT,
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": CONTEXT_COMMANDS},
                "path": {"type": "string", "description": "An address such as context://memory/user_timezone or notes/plan.md; a trailing / names a directory."},
                "file_text": {"type": "string", "description": "create: the full content."},
                "old_str": {"type": "string", "description": "str_replace: the exact text to replace (must occur once)."},
                "new_str": {"type": "string", "description": "str_replace: the replacement (omit to delete the match)."},
                "insert_line": {"type": "integer", "description": "insert: the line after which to insert (0 = at the top)."},
                "insert_text": {"type": "string", "description": "insert: the text to insert."},
                "new_path": {"type": "string", "description": "rename: the new address, in the same namespace."},
                "query": {"type": "string", "description": "search: text to look for (case-insensitive); in a directory, or inside one entry (matching lines with their numbers)."},
                "offset": {"type": "integer", "description": "view: the first line to show (1-based, default 1)."},
                "limit": {"type": "integer", "description": "view: how many lines to show (long entries are shown in parts)."},
                "column": {"type": "integer", "description": "view: where to start inside the first line (1-based), to read on in a very long line."},
                "description": {"type": "string", "description": "create under memory/: a one-line description."}
            },
            "required": ["command", "path"]
        }),
    )
    .with_description(
        "Read and write the context store, addressed as context://<namespace>/<path>. \
         Namespaces: memory/ (durable facts, shown to you automatically each turn), notes/ \
         (working notes), vfs/ and archive/ (offloaded content and archived conversation, \
         read-only). memory/ and notes/ are writable. Mistakes come back as error text you \
         can correct.",
    )
}

/// The `new_context` tool (no parameters).
pub fn new_context_tool() -> ToolDefinition {
    ToolDefinition::new(NEW_CONTEXT, json!({"type": "object", "properties": {}})).with_description(
        "Start a fresh context window. Older conversation is summarised or archived. Use \
             it after finishing a chunk of work or when little room is left.",
    )
}

/// The `recall_context` tool (owned, never emitted automatically).
pub fn recall_context_tool() -> ToolDefinition {
    ToolDefinition::new(
        RECALL_CONTEXT,
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "A context:// address to read back."}},
            "required": ["uri"]
        }),
    )
    .with_description("Read back content stored under a context:// address.")
}

/// The `load_skill` tool. Its schema is static: the skill names live in the listing
/// ([`SessionSkills::listing`](crate::SessionSkills::listing)), never in an enum, so the tool
/// list (and the cache over it) holds when skills are registered or change.
pub fn load_skill_tool() -> ToolDefinition {
    ToolDefinition::new(
        LOAD_SKILL,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The name of a skill from the available skills list."}
            },
            "required": ["name"]
        }),
    )
    .with_description(
        "Load a skill: its instructions are added to your context from the next turn on, \
         replacing any skill loaded before. Use it when the task matches a skill's \
         description in the available skills list.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_answer_keeps_what_the_model_wrote() {
        let answer = |v: Value| final_answer_text(&v);
        assert_eq!(answer(json!({"answer": "Sunny."})), "Sunny.");
        assert_eq!(answer(json!(r#"{"answer": "Sunny."}"#)), "Sunny.");
        assert_eq!(answer(json!("not json: sunny")), "not json: sunny");
        assert_eq!(answer(json!({"text": "Sunny."})), r#"{"text":"Sunny."}"#);
    }

    #[test]
    fn owned_names_are_exact() {
        for n in OWNED_NAMES {
            assert!(is_owned_name(n));
        }
        assert!(!is_owned_name("load_toolkit"));
        assert!(!is_owned_name("Context"));
    }

    #[test]
    fn allowed_keys_become_an_enum_only_when_given() {
        let t = create_memory_tool(&["a".into(), "b".into()]);
        assert_eq!(
            t.input_schema["properties"]["key"]["enum"],
            json!(["a", "b"])
        );
        assert!(
            create_memory_tool(&[]).input_schema["properties"]["key"]
                .get("enum")
                .is_none()
        );
        let m = modify_memory_tool();
        assert!(m.input_schema["properties"]["key"].get("enum").is_none());
        assert_eq!(
            m.input_schema["properties"]["action"]["enum"],
            json!(["update", "delete"])
        );
    }

    #[test]
    fn definitions_are_static() {
        assert_eq!(context_tool(), context_tool());
        assert_eq!(
            context_tool().input_schema["properties"]["command"]["enum"],
            json!([
                "view",
                "create",
                "str_replace",
                "insert",
                "delete",
                "rename",
                "search"
            ])
        );
        assert_eq!(
            context_tool().input_schema["required"],
            json!(["command", "path"])
        );
    }
}
