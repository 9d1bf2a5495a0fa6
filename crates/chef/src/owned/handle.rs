//! Answering calls of the library-owned tools.
//!
//! Every mistake a model can correct (bad JSON, a missing argument, an unknown command, a
//! path that escapes, a read-only namespace, a missing entry, a refused key) comes back as
//! an [`OwnedReply`] with `is_error` set and text the model can act on. Only failures of
//! the host (the store's I/O) are `Err`.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{
    CONTEXT, CONTEXT_COMMANDS, CREATE_MEMORY, MODIFY_MEMORY, NEW_CONTEXT, RECALL_CONTEXT,
    text::{ViewRange, edit, search_entry, search_results, snippet, view_range},
};
use crate::{
    memory::{Memory, MemoryError},
    store::{Entry, Expect, Namespace, StorageBackend, StoreError, StoreKey},
};

/// The answer to an owned tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedReply {
    /// The text for the model.
    pub text: String,
    /// Whether the text reports a mistake (send it as an error tool result).
    pub is_error: bool,
}

impl OwnedReply {
    pub(super) fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
        }
    }

    pub(crate) fn err(text: impl Into<String>) -> Self {
        Self {
            text: format!("Error: {}", text.into()),
            is_error: true,
        }
    }
}

/// What the handler works on.
pub(crate) struct Context<'a> {
    pub(crate) memory: Option<&'a mut Memory>,
    pub(crate) store: &'a Arc<dyn StorageBackend>,
    pub(crate) writable: &'a [String],
    pub(crate) new_context_requested: &'a mut bool,
    /// Whether the session has a handoff (`ChefConfig::with_handoff`): without one,
    /// `new_context` was never offered, and a call of it ends no window.
    pub(crate) handoff: bool,
}

type Outcome = Result<OwnedReply, StoreError>;

/// Handles one call of an owned tool. `name` must be an owned name.
pub(crate) async fn handle(name: &str, arguments: &Value, cx: Context<'_>) -> Outcome {
    let args = match parse_arguments(arguments) {
        Ok(args) => args,
        Err(reply) => return Ok(reply),
    };
    match name {
        CREATE_MEMORY => Ok(create_memory(&args, cx)),
        MODIFY_MEMORY => Ok(modify_memory(&args, cx)),
        NEW_CONTEXT if !cx.handoff => Ok(OwnedReply::err(
            "new_context is not available: this session has no handoff tool, so its context \
             window is not yours to end.",
        )),
        NEW_CONTEXT => {
            *cx.new_context_requested = true;
            Ok(OwnedReply::ok("Starting a new context window."))
        }
        RECALL_CONTEXT => {
            let uri = match required(&args, "uri") {
                Ok(uri) => uri,
                Err(reply) => return Ok(reply),
            };
            view(uri, cx).await
        }
        CONTEXT => context(&args, cx).await,
        other => Ok(OwnedReply::err(format!(
            "\"{other}\" is not a library tool."
        ))),
    }
}

fn parse_arguments(arguments: &Value) -> Result<Map<String, Value>, OwnedReply> {
    let parsed;
    let value = match arguments {
        Value::Null => return Ok(Map::new()),
        Value::String(text) => {
            let text = text.trim();
            if text.is_empty() {
                return Ok(Map::new());
            }
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|_| OwnedReply::err("the tool arguments were not valid JSON."))?;
            &parsed
        }
        other => other,
    };
    match value {
        Value::Object(map) => Ok(map.clone()),
        _ => Err(OwnedReply::err("the tool arguments must be a JSON object.")),
    }
}

pub(super) fn required<'a>(
    args: &'a Map<String, Value>,
    name: &str,
) -> Result<&'a str, OwnedReply> {
    match args.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(OwnedReply::err(format!(
            "the \"{name}\" argument is required and must be a non-empty string."
        ))),
    }
}

pub(super) fn optional<'a>(
    args: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, OwnedReply> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(OwnedReply::err(format!(
            "the \"{name}\" argument must be a string."
        ))),
    }
}

macro_rules! try_reply {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(reply) => return reply,
        }
    };
}

macro_rules! try_reply_ok {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(reply) => return Ok(reply),
        }
    };
}

const MEMORY_UNAVAILABLE: &str =
    "context://memory/ is not available: this session has no memory configured.";

fn memory_uri(key: &str) -> String {
    format!("context://memory/{key}")
}

fn memory_error(key: &str, error: &MemoryError) -> OwnedReply {
    let uri = memory_uri(key);
    match error {
        MemoryError::InvalidKey(e) => {
            // The key quoted as a name is (escaped, cut at 200 characters: a model's
            // 100,000-character key is not sent back whole), and once.
            let problem = e.problem.to_string();
            let end = if problem.ends_with('.') { "" } else { "." };
            OwnedReply::err(format!(
                "\"{}\" is not a usable memory key: {problem}{end}",
                chef_compress::similarity::shown_name(key)
            ))
        }
        MemoryError::NotAllowed { allowed, .. } if allowed.is_empty() => OwnedReply::err(format!(
            "{uri} cannot be written: no memory keys are allowed."
        )),
        MemoryError::NotAllowed { allowed, .. } => OwnedReply::err(format!(
            "{uri} is not an allowed memory key. Allowed keys: {}.",
            allowed.join(", ")
        )),
        MemoryError::NotFound { .. } => OwnedReply::err(format!("nothing is stored at {uri}.")),
        MemoryError::TooLong {
            field,
            chars,
            limit,
            ..
        } => OwnedReply::err(format!(
            "the {field} for {uri} is {} characters long; a memory entry holds at most {} \
             (every entry is shown in every request). Store a shorter {field}: a summary, \
             or only what later turns need.",
            crate::offload::grouped(*chars),
            crate::offload::grouped(*limit)
        )),
        MemoryError::Rejected { reason, .. } => OwnedReply::err(format!(
            "the write to {uri} was rejected by the host: {reason}"
        )),
        other => OwnedReply::err(format!("the memory write failed: {other}.")),
    }
}

/// Persists the memory keys one owned call changed (write-through), after `reply` was
/// decided. Conflicts [`Memory::persist`] resolves stay invisible. Keys are saved writes
/// first, then deletes; at the first key it refuses, that key and every key not yet saved
/// are reloaded from the store (their change dropped: a rename never deletes its source
/// unless its destination was saved) and the reply becomes an error telling the model what
/// was not saved. Only other store failures are `Err`.
pub(crate) async fn write_through(
    memory: &mut Memory,
    backend: &dyn StorageBackend,
    keys: &[StoreKey],
    reply: OwnedReply,
) -> Result<OwnedReply, MemoryError> {
    let (writes, deletes): (Vec<&StoreKey>, Vec<&StoreKey>) =
        keys.iter().partition(|k| memory.get(k.as_str()).is_some());
    let mut refused: Option<String> = None;
    let mut saved = Vec::new();
    let mut dropped = Vec::new();
    for key in writes.into_iter().chain(deletes) {
        let uri = memory_uri(key.as_str());
        if refused.is_some() {
            memory.reload_key(backend, key).await?;
            dropped.push(uri);
            continue;
        }
        let was_stored = memory.is_stored(key);
        match memory.persist_key(backend, key).await {
            Ok(_) => saved.push(uri),
            Err(e) if e.is_conflict() => {
                memory.reload_key(backend, key).await?;
                let what = match (was_stored, memory.get(key.as_str()).is_some()) {
                    (_, false) => "deleted",
                    (false, true) => "created",
                    (true, true) => "changed",
                };
                refused = Some(format!("{uri} was {what} by someone else meanwhile"));
            }
            Err(e) => return Err(e),
        }
    }
    let Some(refused) = refused else {
        return Ok(reply);
    };
    let mut text = format!(
        "{refused}, so your change there was not saved. Memory now shows what is stored; \
         view it and decide again."
    );
    if !dropped.is_empty() {
        text.push_str(&format!(
            " Your change to {} was not saved either.",
            dropped.join(", ")
        ));
    }
    if !saved.is_empty() {
        text.push_str(&format!(" Your change to {} was saved.", saved.join(", ")));
    }
    Ok(OwnedReply::err(text))
}

fn writable(cx: &Context<'_>, namespace: &str) -> bool {
    cx.writable.iter().any(|w| w == namespace)
}

fn read_only(cx: &Context<'_>, uri: &str) -> OwnedReply {
    let list: Vec<String> = cx
        .writable
        .iter()
        .map(|w| format!("context://{w}/"))
        .collect();
    OwnedReply::err(format!(
        "{uri} is read-only. This tool may write to: {}.",
        if list.is_empty() {
            "(nothing)".to_owned()
        } else {
            list.join(", ")
        }
    ))
}

fn create_memory(args: &Map<String, Value>, cx: Context<'_>) -> OwnedReply {
    let key = try_reply!(required(args, "key"));
    let value = try_reply!(required(args, "value"));
    let description = try_reply!(optional(args, "description"));
    if !writable(&cx, "memory") {
        return OwnedReply::err(format!("{} is read-only.", memory_uri(key)));
    }
    let Some(memory) = cx.memory else {
        return OwnedReply::err(MEMORY_UNAVAILABLE);
    };
    write_new_memory(
        memory,
        key,
        value,
        description,
        "Use modify_memory to update or delete it.",
    )
}

/// Creates a memory entry; `existing` says what to do instead when the key exists, in the
/// words of the tools the model has.
fn write_new_memory(
    memory: &mut Memory,
    key: &str,
    value: &str,
    description: Option<&str>,
    existing: &str,
) -> OwnedReply {
    if memory.get(key).is_some() {
        return OwnedReply::err(format!("{} already exists. {existing}", memory_uri(key)));
    }
    match memory.create(key, value, description) {
        Ok(_) => OwnedReply::ok(format!("Created {}.", memory_uri(key))),
        Err(e) => memory_error(key, &e),
    }
}

fn modify_memory(args: &Map<String, Value>, cx: Context<'_>) -> OwnedReply {
    let may_write = writable(&cx, "memory");
    let Some(memory) = cx.memory else {
        return OwnedReply::err(MEMORY_UNAVAILABLE);
    };
    let action = try_reply!(required(args, "action"));
    let key = try_reply!(required(args, "key"));
    // The access policy holds for updates and deletes too, not only for creation.
    if !may_write {
        return OwnedReply::err(format!("{} is read-only.", memory_uri(key)));
    }
    if !matches!(action, "update" | "delete") {
        // A refused key, then a missing entry, are reported before a wrong action (the
        // reference's order): the model fixes the key first.
        if let Some(allowed) = memory.allowed_keys()
            && !allowed.iter().any(|k| k == key)
        {
            let refused = MemoryError::NotAllowed {
                key: key.to_owned(),
                allowed: allowed.to_vec(),
            };
            return memory_error(key, &refused);
        }
        if memory.get(key).is_none() {
            return OwnedReply::err(format!("nothing is stored at {}.", memory_uri(key)));
        }
    }
    match action {
        "delete" => match memory.remove(key) {
            Ok(_) => OwnedReply::ok(format!("Deleted {}.", memory_uri(key))),
            Err(e) => memory_error(key, &e),
        },
        "update" => {
            let value = try_reply!(required(args, "value"));
            let description = try_reply!(optional(args, "description"));
            match memory.modify(key, value, description) {
                Ok(_) => OwnedReply::ok(format!("Updated {}.", memory_uri(key))),
                Err(e) => memory_error(key, &e),
            }
        }
        other => OwnedReply::err(format!(
            "action must be \"update\" or \"delete\", got \"{other}\"."
        )),
    }
}

/// A parsed `context://` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Address {
    pub(crate) namespace: String,
    /// The path inside the namespace; empty or ending in `/` for a directory.
    pub(crate) path: String,
}

impl Address {
    fn is_dir(&self) -> bool {
        self.path.is_empty() || self.path.ends_with('/')
    }

    fn uri(&self) -> String {
        format!("context://{}/{}", self.namespace, self.path)
    }

    fn key(&self) -> Result<StoreKey, OwnedReply> {
        StoreKey::new(self.path.as_str())
            .map_err(|e| OwnedReply::err(format!("\"{}\" is not a context path: {e}.", self.uri())))
    }
}

/// Parses `context://ns/path`, `ns/path` or `ns`, refusing anything that could escape.
pub(crate) fn parse_address(raw: &str) -> Result<Address, OwnedReply> {
    let hint = "Use context://<namespace>/<path>.";
    let trimmed = raw.trim();
    let rest = trimmed.strip_prefix("context://").unwrap_or(trimmed);
    let rest = rest.trim_start_matches('/');
    let (ns, path) = rest.split_once('/').unwrap_or((rest, ""));
    // Quoted as a name is: escaped, cut at 200 characters.
    let shown = chef_compress::similarity::shown_name(raw);
    let bad = |problem: &str| {
        OwnedReply::err(format!(
            "\"{shown}\" is not a context path: {problem}. {hint}"
        ))
    };
    if ns.is_empty() {
        return Err(OwnedReply::err(format!(
            "\"{shown}\" is not a context path. {hint}"
        )));
    }
    if ns == "." || ns == ".." {
        return Err(bad("the namespace cannot be \".\" or \"..\""));
    }
    if ns.contains('\\') || path.contains('\\') {
        return Err(bad("backslashes are not allowed"));
    }
    if ns.contains(':') {
        return Err(bad("only the context:// scheme is understood"));
    }
    if ns.chars().chain(path.chars()).any(char::is_control) {
        return Err(bad("control characters are not allowed"));
    }
    if ns
        .chars()
        .chain(path.chars())
        .any(chef_compress::similarity::unshowable)
    {
        return Err(bad(
            "invisible formatting characters (zero-width, bidirectional) are not allowed",
        ));
    }
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        if *segment == "." || *segment == ".." {
            return Err(bad("path segments cannot be \".\" or \"..\""));
        }
        if segment.is_empty() && i != last && !path.is_empty() {
            return Err(bad("empty path segments are not allowed"));
        }
    }
    if Namespace::new(ns).is_err() {
        return Err(bad("not a usable namespace name"));
    }
    Ok(Address {
        namespace: ns.to_owned(),
        path: path.to_owned(),
    })
}

async fn context(args: &Map<String, Value>, cx: Context<'_>) -> Outcome {
    let command = try_reply_ok!(required(args, "command"));
    if !CONTEXT_COMMANDS.contains(&command) {
        return Ok(OwnedReply::err(format!(
            "unknown command \"{command}\". Use one of: {}.",
            CONTEXT_COMMANDS.join(", ")
        )));
    }
    let raw = try_reply_ok!(required(args, "path"));
    let address = try_reply_ok!(parse_address(raw));
    let writes = !matches!(command, "view" | "search");
    if writes && !writable(&cx, &address.namespace) {
        return Ok(read_only(&cx, &address.uri()));
    }
    if address.namespace == "memory" {
        return Ok(memory_command(command, args, &address, cx));
    }
    store_command(command, args, &address, cx).await
}

async fn view(raw: &str, cx: Context<'_>) -> Outcome {
    let address = try_reply_ok!(parse_address(raw));
    let mut args = Map::new();
    args.insert("command".into(), "view".into());
    if address.namespace == "memory" {
        return Ok(memory_command("view", &args, &address, cx));
    }
    store_command("view", &args, &address, cx).await
}

pub(super) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn memory_command(
    command: &str,
    args: &Map<String, Value>,
    address: &Address,
    cx: Context<'_>,
) -> OwnedReply {
    let Some(memory) = cx.memory else {
        return OwnedReply::err(MEMORY_UNAVAILABLE);
    };
    let key = address.path.as_str();
    let uri = address.uri();
    if address.is_dir() && command != "view" && command != "search" {
        return OwnedReply::err(format!(
            "{uri} is a directory. Name the memory key to {command}."
        ));
    }
    match command {
        "view" if address.is_dir() => {
            let entries: Vec<_> = memory
                .entries()
                .filter(|e| e.key().as_str().starts_with(key))
                .collect();
            if entries.is_empty() {
                return OwnedReply::ok(format!("{uri} is empty."));
            }
            let mut out = format!("{uri} ({}):", count(entries.len(), "entry", "entries"));
            for e in entries {
                out.push_str(&format!("\n- {}", memory_uri(e.key().as_str())));
                if let Some(d) = e.description() {
                    out.push_str(&format!(" — {d}"));
                }
            }
            OwnedReply::ok(out)
        }
        "view" => match memory.get(key) {
            Some(e) => OwnedReply::ok(e.value()),
            None => OwnedReply::err(format!("nothing is stored at {uri}.")),
        },
        "search" => {
            let query = try_reply!(required(args, "query"));
            if !memory.entries().any(|e| e.key().as_str().starts_with(key)) {
                return OwnedReply::err(format!("nothing is stored at {uri}."));
            }
            let hits: Vec<(String, String)> = memory
                .entries()
                .filter(|e| e.key().as_str().starts_with(key))
                .filter_map(|e| {
                    let mut hay = e.value().to_owned();
                    if let Some(d) = e.description() {
                        hay.push('\n');
                        hay.push_str(d);
                    }
                    snippet(&hay, query).map(|s| (memory_uri(e.key().as_str()), s))
                })
                .collect();
            OwnedReply::ok(search_results(query, &uri, &hits))
        }
        "create" => {
            let text = try_reply!(required(args, "file_text"));
            let description = try_reply!(optional(args, "description"));
            write_new_memory(
                memory,
                key,
                text,
                description,
                "Use str_replace to edit it, or delete it first.",
            )
        }
        "str_replace" | "insert" => {
            let Some(entry) = memory.get(key) else {
                return OwnedReply::err(format!("nothing is stored at {uri}."));
            };
            let current = entry.value().to_owned();
            let edited = try_reply!(edit(command, args, &current, &uri));
            match memory.modify(key, edited, None) {
                Ok(_) if command == "insert" => OwnedReply::ok(format!("Inserted into {uri}.")),
                Ok(_) => OwnedReply::ok(format!("Edited {uri}.")),
                Err(e) => memory_error(key, &e),
            }
        }
        "delete" => match memory.remove(key) {
            Ok(_) => OwnedReply::ok(format!("Deleted {uri}.")),
            Err(e) => memory_error(key, &e),
        },
        "rename" => {
            let target = try_reply!(required(args, "new_path"));
            let dest = try_reply!(parse_address(target));
            if dest.namespace != "memory" {
                return OwnedReply::err(format!(
                    "rename cannot move {uri} into another namespace ({}).",
                    dest.uri()
                ));
            }
            if dest.is_dir() {
                return OwnedReply::err("new_path must name a memory key, not a directory.");
            }
            let Some(entry) = memory.get(key).cloned() else {
                return OwnedReply::err(format!("nothing is stored at {uri}."));
            };
            if memory.get(&dest.path).is_some() {
                return OwnedReply::err(format!("{} already exists.", dest.uri()));
            }
            if let Err(e) = memory.create_moved(&dest.path, entry.value(), entry.description()) {
                return memory_error(&dest.path, &e);
            }
            match memory.remove(key) {
                Ok(_) => OwnedReply::ok(format!("Renamed {uri} to {}.", dest.uri())),
                Err(_) => OwnedReply::err(format!(
                    "Copied {uri} to {}, but the original could not be removed.",
                    dest.uri()
                )),
            }
        }
        _ => OwnedReply::err(format!("unknown command \"{command}\".")),
    }
}

async fn store_command(
    command: &str,
    args: &Map<String, Value>,
    address: &Address,
    cx: Context<'_>,
) -> Outcome {
    let ns = match Namespace::new(address.namespace.as_str()) {
        Ok(ns) => ns,
        Err(e) => {
            return Ok(OwnedReply::err(format!(
                "\"{}\" is not a context path: {e}.",
                address.uri()
            )));
        }
    };
    let uri = address.uri();
    let store = cx.store;
    if address.is_dir() && !matches!(command, "view" | "search") {
        return Ok(OwnedReply::err(format!(
            "{uri} is a directory. Name an entry to {command}."
        )));
    }
    match command {
        "view" if address.is_dir() => listing(store, &ns, address).await,
        "view" => {
            let key = try_reply_ok!(address.key());
            let range = try_reply_ok!(ViewRange::from_args(args));
            match store.get(&ns, &key).await? {
                Some(entry) => Ok(view_range(entry.value.content(), &uri, range)),
                None => {
                    let dir = Address {
                        namespace: address.namespace.clone(),
                        path: format!("{}/", address.path),
                    };
                    if store.list(&ns, &dir.path).await?.is_empty() {
                        Ok(OwnedReply::err(format!("nothing is stored at {uri}.")))
                    } else {
                        listing(store, &ns, &dir).await
                    }
                }
            }
        }
        "search" => {
            let query = try_reply_ok!(required(args, "query"));
            if !address.is_dir() {
                let key = try_reply_ok!(address.key());
                if let Some(entry) = store.get(&ns, &key).await? {
                    return Ok(OwnedReply::ok(search_entry(
                        entry.value.content(),
                        query,
                        &uri,
                    )));
                }
            }
            let entries = store.scan(&ns, &address.path).await?;
            // An address nothing is stored under is said so, as `view` says it: "no
            // matches" would read as an entry that exists.
            if entries.is_empty() {
                return Ok(OwnedReply::err(format!("nothing is stored at {uri}.")));
            }
            let hits: Vec<(String, String)> = entries
                .into_iter()
                .filter_map(|(key, entry)| {
                    snippet(entry.value.content(), query).map(|s| {
                        (
                            format!("context://{}/{}", address.namespace, key.as_str()),
                            s,
                        )
                    })
                })
                .collect();
            Ok(OwnedReply::ok(search_results(query, &uri, &hits)))
        }
        "create" => {
            let text = try_reply_ok!(required(args, "file_text"));
            let key = try_reply_ok!(address.key());
            match store.put(&ns, &key, Entry::new(text), Expect::Absent).await {
                Ok(_) => Ok(OwnedReply::ok(format!("Created {uri}."))),
                Err(e) if e.is_conflict() => Ok(OwnedReply::err(format!(
                    "{uri} already exists. Use str_replace to edit it, or delete it first."
                ))),
                Err(e) => Err(e),
            }
        }
        "str_replace" | "insert" => {
            let key = try_reply_ok!(address.key());
            let Some(current) = store.get(&ns, &key).await? else {
                return Ok(OwnedReply::err(format!("nothing is stored at {uri}.")));
            };
            let edited = try_reply_ok!(edit(command, args, current.value.content(), &uri));
            let (_, meta) = current.value.clone().into_parts();
            let entry = Entry::new(edited).with_meta_map(meta);
            match store
                .put(&ns, &key, entry, Expect::Version(current.version))
                .await
            {
                Ok(_) if command == "insert" => Ok(OwnedReply::ok(format!("Inserted into {uri}."))),
                Ok(_) => Ok(OwnedReply::ok(format!("Edited {uri}."))),
                Err(e) if e.is_conflict() => Ok(OwnedReply::err(format!(
                    "{uri} was changed by someone else meanwhile; view it and try again."
                ))),
                Err(e) => Err(e),
            }
        }
        "delete" => {
            let key = try_reply_ok!(address.key());
            if store.delete(&ns, &key, Expect::Any).await? {
                Ok(OwnedReply::ok(format!("Deleted {uri}.")))
            } else {
                Ok(OwnedReply::err(format!("nothing is stored at {uri}.")))
            }
        }
        "rename" => {
            let target = try_reply_ok!(required(args, "new_path"));
            let dest = try_reply_ok!(parse_address(target));
            if dest.namespace != address.namespace {
                return Ok(OwnedReply::err(format!(
                    "rename cannot move {uri} into another namespace ({}).",
                    dest.uri()
                )));
            }
            if dest.is_dir() {
                return Ok(OwnedReply::err(
                    "new_path must name an entry, not a directory.",
                ));
            }
            let key = try_reply_ok!(address.key());
            let dest_key = try_reply_ok!(dest.key());
            let Some(current) = store.get(&ns, &key).await? else {
                return Ok(OwnedReply::err(format!("nothing is stored at {uri}.")));
            };
            match store
                .put(&ns, &dest_key, current.value.clone(), Expect::Absent)
                .await
            {
                Ok(_) => {}
                Err(e) if e.is_conflict() => {
                    return Ok(OwnedReply::err(format!("{} already exists.", dest.uri())));
                }
                Err(e) => return Err(e),
            }
            match store
                .delete(&ns, &key, Expect::Version(current.version))
                .await
            {
                Ok(true) => Ok(OwnedReply::ok(format!("Renamed {uri} to {}.", dest.uri()))),
                Ok(false) | Err(_) => Ok(OwnedReply::err(format!(
                    "Copied {uri} to {}, but the original could not be removed.",
                    dest.uri()
                ))),
            }
        }
        _ => Ok(OwnedReply::err(format!("unknown command \"{command}\"."))),
    }
}

async fn listing(store: &Arc<dyn StorageBackend>, ns: &Namespace, address: &Address) -> Outcome {
    let uri = address.uri();
    let keys = store.list(ns, &address.path).await?;
    if keys.is_empty() {
        return Ok(OwnedReply::ok(format!("{uri} is empty.")));
    }
    let mut out = format!("{uri} ({}):", count(keys.len(), "entry", "entries"));
    for key in keys {
        out.push_str(&format!(
            "\n- context://{}/{}",
            address.namespace,
            key.as_str()
        ));
    }
    Ok(OwnedReply::ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_refuse_escapes() {
        let a = parse_address("context://notes/plan.md").unwrap();
        assert_eq!(
            (a.namespace.as_str(), a.path.as_str()),
            ("notes", "plan.md")
        );
        let a = parse_address("  /memory/ ").unwrap();
        assert_eq!((a.namespace.as_str(), a.path.as_str()), ("memory", ""));
        for bad in [
            "",
            "context://",
            "../etc/passwd",
            "notes/../../etc",
            "notes/a//b",
            "notes\\x",
            "file://x",
            "notes/a\u{0}b",
            "./x",
        ] {
            assert!(parse_address(bad).is_err(), "{bad:?}");
        }
    }

    /// A refused key or path is quoted once, cut: a model's 100,000-character key does not
    /// come back whole (twice, before).
    #[test]
    fn refusals_quote_a_long_key_or_path_cut() {
        let long = format!("../{}", "k".repeat(100_000));
        let error = MemoryError::InvalidKey(crate::store::StoreKey::new(long.clone()).unwrap_err());
        let reply = memory_error(&long, &error);
        assert!(
            reply.is_error && reply.text.len() < 600,
            "{}",
            reply.text.len()
        );
        assert!(
            reply.text.contains("is not a usable memory key"),
            "{}",
            reply.text
        );
        let Err(reply) = parse_address(&format!("notes/../{long}")) else {
            panic!("an escaping path was accepted");
        };
        assert!(reply.text.len() < 600, "{}", reply.text.len());
        assert!(
            reply.text.contains(r#"cannot be "." or ".."."#),
            "{}",
            reply.text
        );
    }
}
