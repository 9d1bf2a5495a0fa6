//! Answering calls of the library-owned tools.
//!
//! Every mistake a model can correct (bad JSON, a missing argument, an unknown command, a
//! path that escapes, a read-only namespace, a missing entry, a refused key) comes back as
//! an [`OwnedReply`] with `is_error` set and text the model can act on. Only failures of
//! the host (the store's I/O) are `Err`.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{CONTEXT, CREATE_MEMORY, MODIFY_MEMORY, NEW_CONTEXT, RECALL_CONTEXT};
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
    fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
        }
    }

    fn err(text: impl Into<String>) -> Self {
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

fn required<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, OwnedReply> {
    match args.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(OwnedReply::err(format!(
            "the \"{name}\" argument is required and must be a non-empty string."
        ))),
    }
}

fn optional<'a>(args: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, OwnedReply> {
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
            OwnedReply::err(format!("\"{key}\" is not a usable memory key: {e}."))
        }
        MemoryError::NotAllowed { allowed, .. } if allowed.is_empty() => OwnedReply::err(format!(
            "{uri} cannot be written: no memory keys are allowed."
        )),
        MemoryError::NotAllowed { allowed, .. } => OwnedReply::err(format!(
            "{uri} is not an allowed memory key. Allowed keys: {}.",
            allowed.join(", ")
        )),
        MemoryError::NotFound { .. } => OwnedReply::err(format!("nothing is stored at {uri}.")),
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
    let bad = |problem: &str| {
        OwnedReply::err(format!(
            "\"{raw}\" is not a context path: {problem}. {hint}"
        ))
    };
    if ns.is_empty() {
        return Err(OwnedReply::err(format!(
            "\"{raw}\" is not a context path. {hint}"
        )));
    }
    if ns == "." || ns == ".." {
        return Err(bad("the namespace cannot be . or .."));
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
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        if *segment == "." || *segment == ".." {
            return Err(bad("path segments cannot be . or .."));
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
    const COMMANDS: [&str; 7] = [
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
        "search",
    ];
    if !COMMANDS.contains(&command) {
        return Ok(OwnedReply::err(format!(
            "unknown command \"{command}\". Use one of: {}.",
            COMMANDS.join(", ")
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

fn count(n: usize, one: &str, many: &str) -> String {
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
            if let Err(e) = memory.create(&dest.path, entry.value(), entry.description()) {
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
            let hits: Vec<(String, String)> = store
                .scan(&ns, &address.path)
                .await?
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

/// Lines a `view` shows at most without a `limit`.
pub(crate) const VIEW_MAX_LINES: usize = 400;
/// Characters of line text a `view` shows at most, whatever the `limit`.
pub(crate) const VIEW_MAX_CHARS: usize = 20_000;
/// Matching lines a `search` inside one entry lists at most.
const SEARCH_MAX_HITS: usize = 50;

/// The part of an entry a `view` asks for: 1-based first line and column, line count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ViewRange {
    offset: usize,
    limit: Option<usize>,
    column: usize,
}

impl ViewRange {
    fn from_args(args: &Map<String, Value>) -> Result<Self, OwnedReply> {
        Ok(Self {
            offset: positive(args, "offset")?.unwrap_or(1),
            limit: positive(args, "limit")?,
            column: positive(args, "column")?.unwrap_or(1),
        })
    }
}

/// An optional whole number ≥ 1 (a numeric string is read as the number: small models
/// often quote them).
fn positive(args: &Map<String, Value>, name: &str) -> Result<Option<usize>, OwnedReply> {
    let bad = || {
        OwnedReply::err(format!(
            "the \"{name}\" argument must be a whole number of at least 1."
        ))
    };
    let n = match args.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(bad)?,
        // "2,020" and "2_020" too: written back from a reply with separators.
        Some(Value::String(s)) => s
            .trim()
            .replace([',', '_'], "")
            .parse::<u64>()
            .map_err(|_| bad())?,
        Some(_) => return Err(bad()),
    };
    if n == 0 {
        return Err(bad());
    }
    Ok(Some(usize::try_from(n).unwrap_or(usize::MAX)))
}

/// Lines `from..to` (0-based) of `content`, each with its 1-based number right-aligned to
/// width 6, then a tab.
fn numbered_lines(content: &str, lines: &[(usize, usize)], from: usize, to: usize) -> String {
    let mut out = String::new();
    for (i, &(s, e)) in lines.iter().enumerate().take(to).skip(from) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{:>6}\t{}", i + 1, &content[s..e]));
    }
    out
}

/// A `view` of an entry: the asked-for lines, numbered, within [`VIEW_MAX_LINES`] (without
/// a limit) and [`VIEW_MAX_CHARS`], with a closing line saying where to read on when not
/// everything was shown. A line longer than the character cap is shown in parts: `column`
/// says where the part starts.
fn view_range(content: &str, uri: &str, range: ViewRange) -> OwnedReply {
    use crate::offload::grouped;
    let lines = crate::offload::line_ranges(content);
    let total = lines.len();
    if total == 0 {
        return OwnedReply::ok(format!("{uri} is empty."));
    }
    if range.offset > total {
        return OwnedReply::err(format!(
            "{uri} has {} line{}; offset {} is past its end.",
            grouped(total),
            if total == 1 { "" } else { "s" },
            range.offset
        ));
    }
    let from = range.offset - 1;
    let want = range.limit.unwrap_or(VIEW_MAX_LINES);
    let mut budget = VIEW_MAX_CHARS;
    // A column inside the first line: show that line from there (in parts if long).
    let Some(&(fs, fe)) = lines.get(from) else {
        return OwnedReply::ok(format!("{uri} is empty."));
    };
    let first = &content[fs..fe];
    let first_len = first.chars().count();
    if range.column > 1 || first_len > budget {
        if range.column > first_len.max(1) {
            return OwnedReply::err(format!(
                "line {} of {uri} has {} characters; column {} is past its end.",
                from + 1,
                grouped(first_len),
                range.column
            ));
        }
        let start = first
            .char_indices()
            .nth(range.column - 1)
            .map_or(first.len(), |(i, _)| i);
        let part: String = first[start..].chars().take(budget).collect();
        let end_col = range.column - 1 + part.chars().count();
        let mut out = format!("{:>6}\t{part}", from + 1);
        if end_col < first_len {
            out.push_str(&format!(
                "\n[{uri}: line {} of {}, characters {}–{} of {}; view with offset {} and \
                 column {} to read on]",
                from + 1,
                total,
                range.column,
                end_col,
                first_len,
                from + 1,
                end_col + 1
            ));
        } else if from + 1 < total {
            out.push_str(&format!(
                "\n[{uri}: the end of line {} of {}; view with offset {} to read on]",
                from + 1,
                total,
                from + 2
            ));
        }
        return OwnedReply::ok(out);
    }
    let mut to = from;
    while to - from < want {
        let Some(&(s, e)) = lines.get(to) else { break };
        let len = content[s..e].chars().count();
        if len > budget {
            break;
        }
        budget -= len;
        to += 1;
    }
    let mut out = numbered_lines(content, &lines, from, to);
    if from > 0 || to < total {
        out.push_str(&format!("\n[{uri}: lines {}–{} of {}", from + 1, to, total));
        if to < total {
            out.push_str(&format!("; view with offset {} to read on", to + 1));
        }
        out.push(']');
    }
    OwnedReply::ok(out)
}

/// `search` inside one entry: its lines containing `query` (case-insensitive), numbered,
/// long lines shown around the match.
fn search_entry(content: &str, query: &str, uri: &str) -> String {
    use crate::offload::grouped;
    let q = query.to_lowercase();
    if q.trim().is_empty() {
        return format!("No matches for \"{query}\" in {uri}.");
    }
    let lines = crate::offload::line_ranges(content);
    let mut hits = Vec::new();
    let mut more = 0usize;
    for (i, &(s, e)) in lines.iter().enumerate() {
        let line = &content[s..e];
        if !line.to_lowercase().contains(&q) {
            continue;
        }
        if hits.len() == SEARCH_MAX_HITS {
            more += 1;
            continue;
        }
        let shown = if line.chars().count() <= 200 {
            line.to_owned()
        } else {
            let column = line
                .to_lowercase()
                .find(&q)
                .map_or(1, |b| line.get(..b).map_or(0, |p| p.chars().count()) + 1);
            format!(
                "(column {column}) {}",
                snippet(line, query).unwrap_or_default()
            )
        };
        hits.push(format!("{:>6}\t{shown}", i + 1));
    }
    if hits.is_empty() {
        return format!("No matches for \"{query}\" in {uri}.");
    }
    let mut out = format!(
        "{} for \"{query}\" in {uri} (line numbers for view's offset):\n{}",
        count(hits.len() + more, "matching line", "matching lines"),
        hits.join("\n")
    );
    if more > 0 {
        out.push_str(&format!(
            "\n[… and {} more; narrow the query, or view a range]",
            grouped(more)
        ));
    }
    out
}

fn edit(
    command: &str,
    args: &Map<String, Value>,
    current: &str,
    uri: &str,
) -> Result<String, OwnedReply> {
    if command == "str_replace" {
        let old = required(args, "old_str")?;
        let new = optional(args, "new_str")?.unwrap_or("");
        let Some(at) = current.find(old) else {
            return Err(OwnedReply::err(format!(
                "old_str was not found in {uri}. Copy it exactly, including whitespace and line breaks."
            )));
        };
        if current
            .get(at + old.len()..)
            .is_some_and(|rest| rest.contains(old))
        {
            return Err(OwnedReply::err(format!(
                "old_str appears more than once in {uri}. Include more surrounding text so it is unique."
            )));
        }
        let mut out = String::with_capacity(current.len() + new.len());
        out.push_str(current.get(..at).unwrap_or(""));
        out.push_str(new);
        out.push_str(current.get(at + old.len()..).unwrap_or(""));
        return Ok(out);
    }
    let line = match args.get("insert_line") {
        Some(Value::Number(n)) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }),
        // A numeric string is read as its number ("2" is 2). Unlike JavaScript's
        // `Number("")`, an empty or blank string is not 0: it is refused, rather than
        // silently inserting at the top.
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    let Some(line) = line else {
        return Err(OwnedReply::err(
            "the \"insert_line\" argument is required and must be an integer.",
        ));
    };
    let text = required(args, "insert_text")?;
    let mut lines: Vec<&str> = if current.is_empty() {
        Vec::new()
    } else {
        current.split('\n').collect()
    };
    let len = lines.len();
    let Ok(at) = usize::try_from(line) else {
        return Err(OwnedReply::err("insert_line is out of range."));
    };
    if at > len {
        return Err(OwnedReply::err(format!(
            "insert_line {line} is out of range for {uri}, which has {}. Use 0 to {len}.",
            count(len, "line", "lines")
        )));
    }
    let inserted: Vec<&str> = text.split('\n').collect();
    lines.splice(at..at, inserted);
    Ok(lines.join("\n"))
}

/// A window of 40 characters around the first case-insensitive match, whitespace collapsed.
fn snippet(text: &str, query: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let q = query.to_lowercase();
    if q.trim().is_empty() {
        return None;
    }
    // Work on char indices so multi-byte text never splits.
    let chars: Vec<char> = text.chars().collect();
    let lower_chars: Vec<char> = lower.chars().collect();
    let q_chars: Vec<char> = q.chars().collect();
    if lower_chars.len() != chars.len() {
        // Lower-casing changed the length (rare scripts); fall back to a plain containment test.
        return lower
            .contains(&q)
            .then(|| text.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let start = lower_chars
        .windows(q_chars.len())
        .position(|w| w == q_chars.as_slice())?;
    let from = start.saturating_sub(40);
    let to = (start + q_chars.len() + 40).min(chars.len());
    let window: String = chars
        .get(from..to)
        .map(|w| w.iter().collect())
        .unwrap_or_default();
    let mut out = window.split_whitespace().collect::<Vec<_>>().join(" ");
    if from > 0 {
        out.insert(0, '…');
    }
    if to < chars.len() {
        out.push('…');
    }
    Some(out)
}

fn search_results(query: &str, root: &str, hits: &[(String, String)]) -> String {
    if hits.is_empty() {
        return format!("No matches for \"{query}\" under {root}.");
    }
    let mut out = format!(
        "{} for \"{query}\" under {root}:",
        count(hits.len(), "match", "matches")
    );
    for (uri, snippet) in hits {
        out.push_str(&format!("\n- {uri}: {snippet}"));
    }
    out
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

    #[test]
    fn edits_and_snippets() {
        let mut args = Map::new();
        args.insert("old_str".into(), "b".into());
        args.insert("new_str".into(), "B".into());
        assert_eq!(edit("str_replace", &args, "abc", "u").unwrap(), "aBc");
        assert!(
            edit("str_replace", &args, "abcb", "u")
                .unwrap_err()
                .text
                .contains("more than once")
        );
        let mut args = Map::new();
        args.insert("insert_line".into(), 1.into());
        args.insert("insert_text".into(), "x\ny".into());
        assert_eq!(edit("insert", &args, "a\nb", "u").unwrap(), "a\nx\ny\nb");
        args.insert("insert_line".into(), 9.into());
        assert!(
            edit("insert", &args, "a", "u")
                .unwrap_err()
                .text
                .contains("out of range")
        );
        assert_eq!(snippet("Hello   world", "WORLD").unwrap(), "Hello world");
        let all = ViewRange {
            offset: 1,
            limit: None,
            column: 1,
        };
        assert_eq!(view_range("a\nb", "u", all).text, "     1\ta\n     2\tb");
        assert_eq!(view_range("a\nb\n", "u", all).text, "     1\ta\n     2\tb");
    }

    fn range(offset: usize, limit: Option<usize>, column: usize) -> ViewRange {
        ViewRange {
            offset,
            limit,
            column,
        }
    }

    #[test]
    fn views_in_ranges() {
        let text: String = (1..=1_000).map(|i| format!("row {i}\n")).collect();
        let r = view_range(&text, "context://vfs/x", range(1, None, 1));
        assert!(!r.is_error);
        assert!(r.text.starts_with("     1\trow 1\n"));
        assert!(r.text.ends_with(
            "   400\trow 400\n[context://vfs/x: lines 1–400 of 1000; view with offset 401 to read on]"
        ));
        let r = view_range(&text, "u", range(998, Some(10), 1));
        assert_eq!(
            r.text,
            "   998\trow 998\n   999\trow 999\n  1000\trow 1000\n[u: lines 998–1000 of 1000]"
        );
        let r = view_range(&text, "u", range(1_001, None, 1));
        assert!(
            r.is_error
                && r.text
                    .contains("has 1,000 lines; offset 1001 is past its end"),
            "{}",
            r.text
        );
        // The character cap holds whatever the limit.
        let wide: String = (0..100).map(|i| format!("{i:0>999}\n")).collect();
        let r = view_range(&wide, "u", range(1, Some(100), 1));
        assert!(
            r.text
                .ends_with("[u: lines 1–20 of 100; view with offset 21 to read on]")
        );
    }

    #[test]
    fn views_a_long_line_in_parts() {
        let line = "x".repeat(50_000);
        let r = view_range(&line, "u", range(1, None, 1));
        assert!(r.text.ends_with(
            "[u: line 1 of 1, characters 1–20000 of 50000; view with offset 1 and column 20001 to read on]"
        ));
        let r = view_range(&line, "u", range(1, None, 40_001));
        assert_eq!(r.text.len(), 6 + 1 + 10_000);
        let r = view_range(&line, "u", range(1, None, 50_001));
        assert!(r.is_error);
    }

    #[test]
    fn searches_inside_an_entry() {
        let text = "ok\nERROR disk full\nok\nerror again\n";
        assert_eq!(
            search_entry(text, "error", "u"),
            "2 matching lines for \"error\" in u (line numbers for view's offset):\n     2\tERROR disk full\n     4\terror again"
        );
        assert_eq!(
            search_entry(text, "nope", "u"),
            "No matches for \"nope\" in u."
        );
        let many: String = (0..60).map(|i| format!("hit {i}\n")).collect();
        assert!(
            search_entry(&many, "hit", "u")
                .ends_with("[… and 10 more; narrow the query, or view a range]")
        );
        let long = format!("{}needle{}", "a".repeat(300), "b".repeat(300));
        assert!(search_entry(&long, "needle", "u").contains("(column 301) …"));
    }

    #[test]
    fn view_numbers_are_checked() {
        let mut args = Map::new();
        args.insert("offset".into(), "1,2".into());
        args.insert("limit".into(), 5.into());
        assert_eq!(ViewRange::from_args(&args).unwrap(), range(12, Some(5), 1));
        args.insert("offset".into(), 0.into());
        assert!(ViewRange::from_args(&args).is_err());
        args.insert("offset".into(), (-3).into());
        assert!(ViewRange::from_args(&args).is_err());
        args.insert("offset".into(), "many".into());
        assert!(ViewRange::from_args(&args).is_err());
    }
}
