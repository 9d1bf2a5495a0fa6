//! One client request as a chef session: the client's body read into the IR, the session
//! built from the config, each round compiled to upstream bytes, and each reply's tool calls
//! routed.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use chef::{Chef, ChefConfig, OwnedCall, PrunePolicy, Routed};
use chef_compress::Level;
use chef_ir::{Content, Message, Role, ToolCall, ToolCallId, ToolResult, WireNames, relay::Echo};
use serde_json::{Map, Value};
use sha2::Digest as _;

use crate::{
    api::{Api, ApiError, Kind},
    config::{Config, Prune},
};

/// A client request read and turned into a session.
pub struct Prepared {
    /// The client's API.
    pub api: Api,
    /// The session: the client's tools, system prompt and history.
    pub chef: Chef,
    /// The top-level fields chef does not compile (`model`, `max_tokens`, `stream`, …), in
    /// the client's order, sent upstream as received (`tool_choice` adjusted to the wire
    /// tools).
    pub extras: Map<String, Value>,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// Whether the client sent no tools (absent or an empty list): the request goes
    /// upstream with no tools and no map, and its `tool_choice` as sent.
    pub toolless: bool,
    /// What the reply repeats of the client's request (Responses: its own `tools` and
    /// `instructions`), as the provider crate says.
    pub echo: Echo,
    /// The pool key (the tools' bytes) when the session may be kept for reuse.
    key: Option<Arc<[u8]>>,
    /// The tool block's size, before and after compression.
    chars: Arc<ToolChars>,
    /// Whether the session is a fork of a pooled template (its tools already registered).
    pub reused: bool,
    /// Whether the tools offered depend on the task: a session that served a request is
    /// then never kept as a template.
    per_task: bool,
    /// For a per-task session made fresh: the template of its tools, forked before it
    /// served anything (see [`pooled`]).
    pristine: Option<Chef>,
    /// Which of the gateway's pools it may go back to (its policy's).
    pub(crate) pool: usize,
    /// The tool the client's `tool_choice` forces by name, if any.
    forced: Option<Forced>,
    /// Upstream rounds compiled so far.
    rounds: u32,
}

impl Prepared {
    /// Characters of the tool block before and after compression (`(0, 0)` before the
    /// session's first compile).
    pub fn tool_chars(&self) -> (usize, usize) {
        self.chars.get()
    }

    /// o200k tokens of the tool block before and after compression, when counted: for
    /// sessions made from (or becoming) a template, once per tool set.
    pub fn tool_tokens(&self) -> Option<(usize, usize)> {
        self.chars.tokens()
    }
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("api", &self.api)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

fn invalid(api: Api, message: impl Into<String>) -> ApiError {
    ApiError::new(api, Kind::InvalidRequest, message)
}

/// The most characters of a request error's text the client gets back (a decoder's
/// complaint can quote a value of the request whole).
const REQUEST_ERROR_CHARS: usize = 500;

/// Why a request could not be read, with the decoder's complaint (which member, which line
/// and column), cut at [`REQUEST_ERROR_CHARS`].
fn request_error(e: &(dyn std::error::Error + 'static)) -> String {
    let text = crate::error_chain(e);
    match text.char_indices().nth(REQUEST_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The session configuration the gateway's config asks for.
pub fn chef_config(config: &Config) -> ChefConfig {
    let mut options = chef_compress::Options::new().with_level(config.level);
    if let Some(style) = config.map_style {
        options = options.with_map_style(style);
    }
    if let Some(map) = &config.compiled_map {
        options = options.with_compiled(map.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let prune = match &config.prune {
        Prune::All => PrunePolicy::All,
        Prune::ByTask => PrunePolicy::ByTask,
        Prune::Allowlist(names) => PrunePolicy::Allowlist {
            names: names.clone(),
        },
        Prune::Ranked { top_k, always_keep } => PrunePolicy::Ranked {
            top_k: *top_k,
            always_keep: always_keep.clone(),
        },
        Prune::Discover { top_k, always_keep } => PrunePolicy::Discover {
            top_k: *top_k,
            always_keep: always_keep.clone(),
        },
    };
    // `cache = false` means no breakpoint at all: chef's (system, history) and the one
    // the Anthropic compile puts on the last tool by default.
    let mut targets = chef::TargetOptions::default();
    targets.anthropic = targets.anthropic.with_cache_tools(config.cache);
    ChefConfig::default()
        .with_tools_mode(config.memory_tools)
        .with_compress(options)
        .with_prune(prune)
        .with_cache(config.cache)
        .with_targets(targets)
        .with_tool_change_announcements(config.announce_tool_changes)
        .with_repeat_notice(config.repeat_notice)
}

/// Characters of the client's tool block before and after compression, as the session's
/// `Compress` event reported them when its tools were compressed.
#[derive(Debug, Default)]
pub struct ToolChars {
    before: AtomicUsize,
    after: AtomicUsize,
    /// o200k tokens, `before + 1` and `after + 1` (0: not counted). Counted for sessions
    /// that become templates only: once per tool set, not per request.
    tokens_before: AtomicUsize,
    tokens_after: AtomicUsize,
}

impl ToolChars {
    /// `(before, after)`.
    pub fn get(&self) -> (usize, usize) {
        (
            self.before.load(Ordering::Relaxed),
            self.after.load(Ordering::Relaxed),
        )
    }

    /// `(before, after)` in o200k tokens, when counted.
    pub fn tokens(&self) -> Option<(usize, usize)> {
        let before = self.tokens_before.load(Ordering::Relaxed).checked_sub(1)?;
        let after = self.tokens_after.load(Ordering::Relaxed).checked_sub(1)?;
        Some((before, after))
    }
}

/// A prepared session for one tool set: its tools registered, and for each target it has
/// compiled for, compressed and serialised. Every request that sends the same tools gets a
/// [`Chef::fork`] of it, which shares all of that instead of doing it again.
pub struct Template {
    chef: Chef,
    chars: Arc<ToolChars>,
    /// The targets the template has compiled for (their tool bytes are cached in it); none
    /// for a pristine template (per-task pruning), which never compiles.
    warm: Vec<chef_ir::Target>,
}

/// Templates kept by the exact bytes of the tools they were made for (the client's `tools`
/// text as sent), so a request whose tools were seen before skips parsing, registering,
/// compressing and serialising them. A template holds no system prompt, history or
/// memory; everything else a request could change is off where templates are used
/// (tool-change announcements, pruning other than `all`, memory: see [`pooled`]).
#[derive(Default)]
pub struct Pool {
    /// Tool sets, least recently used first.
    sets: parking_lot::Mutex<Vec<ToolSet>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("tool_sets", &self.sets.lock().len())
            .finish()
    }
}

/// The exact bytes of a tool set, and its template.
type ToolSet = (Arc<[u8]>, Arc<Template>);

/// Tool sets a pool keeps.
const POOL_TOOL_SETS: usize = 16;

/// Whether requests under `config` may use a template: a session must not depend on what
/// it showed before (tool-change announcements) or on the conversation (memory).
///
/// With pruning other than `all` the tools a request is offered depend on its task, so
/// its template is *pristine*: a fork of the first session for those tools taken before
/// it served anything, its search indexes and prepared registry built
/// (`ToolsMut::warm`), and never replaced by a session that did. Each request forks it
/// and picks its own tools.
pub fn pooled(config: &Config) -> bool {
    !config.announce_tool_changes && !config.has_memory()
}

/// Whether the tools a request is offered depend on its task (pruning other than `all`).
fn per_task(config: &Config) -> bool {
    config.prune != Prune::All
}

impl Pool {
    /// The template for these tool bytes, marked most recently used.
    fn get(&self, key: &[u8]) -> Option<(Arc<[u8]>, Arc<Template>)> {
        let mut sets = self.sets.lock();
        let index = sets.iter().position(|(k, _)| **k == *key)?;
        let entry = sets.remove(index);
        let found = (Arc::clone(&entry.0), Arc::clone(&entry.1));
        sets.push(entry);
        Some(found)
    }

    /// Keeps `prepared`'s session as the template of its tools when it has compiled for a
    /// target the kept template has not (or none is kept).
    pub fn release(&self, prepared: Prepared) {
        let Some(key) = prepared.key else {
            return;
        };
        if prepared.per_task {
            // Only a session that served nothing is a template for per-task tools.
            if let Some(chef) = prepared.pristine {
                self.keep_pristine(key, chef, prepared.chars);
            }
            return;
        }
        let target = prepared.api.target();
        let mut sets = self.sets.lock();
        let kept = sets.iter().position(|(k, _)| **k == *key);
        let warm = match kept.and_then(|i| sets.get(i)) {
            Some((_, template)) if template.warm.contains(&target) => return,
            // A fork of the kept template: it holds that template's targets too.
            Some((_, template)) if prepared.reused => template.warm.clone(),
            _ => Vec::new(),
        };
        let mut chef = prepared.chef;
        chef.set_history(Vec::new());
        chef.set_system_prompt(Vec::new());
        let mut warm = warm;
        warm.push(target);
        let template = Arc::new(Template {
            chef,
            chars: prepared.chars,
            warm,
        });
        if let Some(index) = kept {
            sets.remove(index);
        } else if sets.len() >= POOL_TOOL_SETS {
            sets.remove(0);
        }
        sets.push((key, template));
    }

    /// Keeps `chef` (a session with its tools registered that served nothing) as the
    /// template of `key`, unless one is kept already.
    fn keep_pristine(&self, key: Arc<[u8]>, chef: Chef, chars: Arc<ToolChars>) {
        let mut sets = self.sets.lock();
        if sets.iter().any(|(k, _)| **k == *key) {
            return;
        }
        if sets.len() >= POOL_TOOL_SETS {
            sets.remove(0);
        }
        let template = Arc::new(Template {
            chef,
            chars,
            // It never compiles: each fork compiles its own selection.
            warm: Vec::new(),
        });
        sets.push((key, template));
    }
}

/// Reads a client body and builds its session (a fresh one).
pub fn prepare(config: &Config, api: Api, body: &[u8]) -> Result<Prepared, ApiError> {
    prepare_with(config, api, body, None)
}

/// [`prepare`], forking the template `pool` keeps for the same tools when there is one.
pub fn prepare_with(
    config: &Config,
    api: Api,
    body: &[u8],
    pool: Option<&Pool>,
) -> Result<Prepared, ApiError> {
    build(config, parse_with(config, api, body, pool)?, None)
}

/// Where a parsed request's tools are.
enum Tools {
    /// Parsed from the body; with the pool key (the tools' bytes) when the session may
    /// become a template.
    Parsed(Vec<chef_ir::ToolDefinition>, Option<Arc<[u8]>>),
    /// Not parsed: the pool has a template for the same bytes.
    Template(Arc<[u8]>, Arc<Template>),
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Parsed(tools, _) => write!(f, "Parsed({} tools)", tools.len()),
            Self::Template(..) => f.write_str("Template"),
        }
    }
}

/// A client body read into the IR, before its session is built.
#[derive(Debug)]
pub struct Parsed {
    api: Api,
    system: Vec<Message>,
    history: Vec<Message>,
    tools: Tools,
    extras: Map<String, Value>,
    stream: bool,
    echo: Echo,
}

impl Parsed {
    /// Whether the client sent tools (a non-empty list). A request without any is sent
    /// upstream with no tools and no map, and without memory (whose tools it would get).
    pub fn has_tools(&self) -> bool {
        match &self.tools {
            Tools::Parsed(tools, _) => !tools.is_empty(),
            Tools::Template(..) => true,
        }
    }

    /// The session id for memory: the client's `x-chef-session` header, which must be a
    /// valid id (1 to 128 characters of `A-Z a-z 0-9 . _ -`, not starting with a dot; else
    /// a 400: another id in its place would put the client in someone else's session), or
    /// without one an id derived from the system prompt and the first user message (the
    /// same conversation gets the same id on every turn; so does any other conversation
    /// that opens with the same system prompt and first user message).
    pub fn session_id(&self, header: Option<&[u8]>) -> Result<String, ApiError> {
        if let Some(id) = header {
            return match std::str::from_utf8(id) {
                Ok(id) if valid_session_id(id) => Ok(id.to_owned()),
                _ => Err(invalid(
                    self.api,
                    "the x-chef-session header must be 1 to 128 characters of \
                     A-Z a-z 0-9 . _ -, not starting with a dot",
                )),
            };
        }
        let mut hasher = sha2::Sha256::new();
        for message in &self.system {
            hasher.update(message.text().as_bytes());
            hasher.update([0]);
        }
        hasher.update([1]);
        if let Some(first) = self.history.iter().find(|m| m.role == Role::User) {
            hasher.update(first.text().as_bytes());
        }
        let digest = hasher.finalize();
        let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        Ok(format!("c-{hex}"))
    }
}

/// 1 to 128 characters of `A-Z a-z 0-9 . _ -`, not starting with a dot.
fn valid_session_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Memory for one session: its entries loaded from the session's store, and the store
/// (memory writes go through to it before a tool answers).
pub struct MemorySetup {
    /// The entries.
    pub memory: chef::memory::Memory,
    /// The session's store.
    pub store: Arc<dyn chef::store::StorageBackend>,
}

/// Reads a client body into the IR.
pub fn parse(config: &Config, api: Api, body: &[u8]) -> Result<Parsed, ApiError> {
    parse_with(config, api, body, None)
}

/// The members of a JSON object, in order, their values unparsed.
struct Members<'a>(Vec<(String, &'a serde_json::value::RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some(member) =
                    map.next_entry::<String, &'de serde_json::value::RawValue>()?
                {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// `{…}` made of `members` (a key given twice: its last value, as a JSON reader keeps).
fn object_of<'a>(
    members: impl Iterator<Item = &'a (String, &'a serde_json::value::RawValue)>,
) -> Vec<u8> {
    let mut out = Vec::new();
    out.push(b'{');
    for (key, value) in members {
        if out.len() > 1 {
            out.push(b',');
        }
        // A `String` always serialises.
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        out.extend_from_slice(value.get().as_bytes());
    }
    out.push(b'}');
    out
}

/// [`parse`], without parsing the tools when `pool` has a template for the same tool bytes
/// (the request's session is then a fork of it: see [`build`]).
pub fn parse_with(
    config: &Config,
    api: Api,
    body: &[u8],
    pool: Option<&Pool>,
) -> Result<Parsed, ApiError> {
    // One pass that only finds the members: the tools (most of a request's bytes) are
    // parsed only when no template has them.
    let members: Members<'_> = match serde_json::from_slice(body) {
        Ok(members) => members,
        Err(e) if e.is_data() => {
            return Err(invalid(api, "the request body must be a JSON object"));
        }
        Err(e) => {
            return Err(invalid(
                api,
                format!("the request body is not valid JSON: {e}"),
            ));
        }
    };
    let members = members.0;
    let relay = api.relay();
    let owned = relay.owned_fields();
    let mut extras = Map::new();
    for (key, raw) in &members {
        if owned.contains(&key.as_str()) {
            continue;
        }
        // Sent on re-serialised (the same JSON values), so an integer wider than 64 bits,
        // which the reader can only hold rounded, is refused rather than changed.
        if let Some(chef_ir::json_scan::Oddity::WideInteger(n)) =
            chef_ir::json_scan::oddity(raw.get().as_bytes())
        {
            return Err(invalid(
                api,
                format!(
                    "`{key}` holds the integer {n}, wider than 64 bits: the gateway would pass \
                     it on rounded (send it as a string)"
                ),
            ));
        }
        let value: Value = serde_json::from_str(raw.get())
            .map_err(|e| invalid(api, format!("the request body is not valid JSON: {e}")))?;
        extras.insert(key.clone(), value);
    }
    let stream = relay.streamed(&extras);
    // Every API relayed takes `stream` as a boolean: another value would be sent on and
    // the upstream's refusal blamed on the upstream.
    if extras
        .get("stream")
        .is_some_and(|v| !(v.is_boolean() || v.is_null()))
    {
        return Err(invalid(api, "`stream` must be true or false".to_owned()));
    }
    if let Some(refusal) = relay.refusal(&extras) {
        return Err(invalid(api, refusal));
    }
    // The last of a member given twice, as a JSON reader keeps.
    let member = |name: &str| {
        members
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, raw)| *raw)
    };
    let echo = relay.echo(&|name| member(name).map(ToOwned::to_owned));
    let pool = pool.filter(|_| pooled(config));
    let tools_member = relay.tools_member();
    let tools_raw = member(tools_member).map(serde_json::value::RawValue::get);
    // Keyed by the API too: each API reads a tool list its own way (and refuses another
    // API's shapes), so the same bytes from another API are another tool set.
    let key: Option<Arc<[u8]>> = pool.and(tools_raw).map(|raw| {
        let name = api.name().as_bytes();
        let mut key = Vec::with_capacity(name.len() + 1 + raw.len());
        key.extend_from_slice(name);
        key.push(b'\n');
        key.extend_from_slice(raw.as_bytes());
        Arc::from(key)
    });
    let template = match (pool, &key) {
        (Some(pool), Some(key)) => pool.get(key),
        _ => None,
    };
    let reduced;
    let read = match &template {
        Some(_) => {
            reduced = object_of(members.iter().filter(|(k, _)| k != tools_member));
            &reduced[..]
        }
        None => body,
    };
    let mut request = relay
        .read_request(read)
        .map_err(|e| invalid(api, request_error(&e)))?;
    // chef sessions have no prefill: the trailing assistant text (Messages) goes back at the
    // end of the history, where the API reads it as one.
    if let Some(prefill) = request.prefill.take() {
        request.messages.push(Message::assistant(prefill));
    }
    if !request.native_tools.is_empty() {
        return Err(invalid(
            api,
            "provider-native tools (web search, code execution, …) are not supported by chef serve yet",
        ));
    }
    if request.tools.len() > config.max_tools {
        return Err(invalid(
            api,
            format!(
                "the request declares {} tools; the gateway accepts at most {} (limits.max_tools)",
                request.tools.len(),
                config.max_tools
            ),
        ));
    }
    let tools = match template {
        // The template was made from a request with the same tool bytes, which passed the
        // checks above.
        Some((key, template)) => Tools::Template(key, template),
        // No tools: nothing to keep a template for.
        None if request.tools.is_empty() => Tools::Parsed(Vec::new(), None),
        None => Tools::Parsed(request.tools, key),
    };
    let mut messages = request.messages;
    let lead = messages
        .iter()
        .take_while(|m| m.role == Role::System && !m.positional)
        .count();
    let history = messages.split_off(lead);
    Ok(Parsed {
        api,
        system: messages,
        history,
        tools,
        extras,
        stream,
        echo,
    })
}

/// Builds the session of a parsed request: a fork of the pool's template when the request
/// found one, else fresh; with `memory`, the memory tools are offered and answered.
pub fn build(
    config: &Config,
    parsed: Parsed,
    memory: Option<MemorySetup>,
) -> Result<Prepared, ApiError> {
    let toolless = !parsed.has_tools();
    let Parsed {
        api,
        mut system,
        mut history,
        tools,
        extras,
        stream,
        echo,
    } = parsed;
    // The client's own cache breakpoints (Anthropic `cache_control` on its system blocks
    // and messages) are not sent: chef places its own (`cache = true`) or none at all.
    for message in system.iter_mut().chain(history.iter_mut()) {
        message.cache_breakpoint = false;
    }
    // A request without tools gets none: no dispatcher, no map, no memory tools.
    let memory = memory.filter(|_| !toolless);
    let per_task = per_task(config);
    let mut pristine = None;
    let (mut chef, chars, key, reused) = match tools {
        Tools::Template(key, template) => (
            template.chef.fork(),
            Arc::clone(&template.chars),
            Some(key),
            true,
        ),
        Tools::Parsed(tools, key) => {
            let chars = Arc::new(ToolChars::default());
            let key = key.filter(|_| memory.is_none());
            // A session that becomes a template counts its tool block's tokens, once.
            let mut session_config = chef_config(config);
            if toolless {
                // Level 0 of no tools is no tool block at all (levels 2–4 would add their
                // dispatchers and an empty map).
                let options = session_config.compress.clone().with_level(Level::Zero);
                session_config = session_config.with_compress(options);
            }
            // Counted once per tool set; a per-task session compresses its own selection
            // on every request, so there it would be counted every time.
            if key.is_some() && !per_task {
                let options = session_config.compress.clone().with_token_counts(true);
                session_config = session_config.with_compress(options);
            }
            let mut chef = Chef::new(session_config);
            if let Some(setup) = memory {
                chef = chef
                    .with_memory(setup.memory)
                    .with_memory_store(Arc::clone(&setup.store))
                    .with_store(setup.store);
            }
            let sink = Arc::clone(&chars);
            chef.subscribe(move |event| {
                if let chef::ChefEvent::Compress {
                    original_chars,
                    compressed_chars,
                    original_tokens,
                    compressed_tokens,
                    ..
                } = event
                {
                    sink.before.store(*original_chars, Ordering::Relaxed);
                    sink.after.store(*compressed_chars, Ordering::Relaxed);
                    if let (Some(before), Some(after)) = (original_tokens, compressed_tokens) {
                        sink.tokens_before.store(before + 1, Ordering::Relaxed);
                        sink.tokens_after.store(after + 1, Ordering::Relaxed);
                    }
                }
            });
            chef.register_tools(tools)
                .map_err(|e| invalid(api, format!("the tools cannot be used: {e}")))?;
            chef.tools_mut().set_blocked(config.blocked.iter().cloned());
            for a in &config.announcements {
                chef.announce(a.id.clone(), a.text.clone(), a.channel);
            }
            if key.is_some() && per_task {
                // What every request's selection reads (the search indexes, the registry
                // prepared for compression), built once and shared by the template's forks.
                chef.tools_mut().warm();
                pristine = Some(chef.fork());
            }
            (chef, chars, key, false)
        }
    };
    let forced = forced_tool(api, &chef, &extras, toolless)?;
    chef.set_system_prompt(system);
    chef.set_history(history);
    let encoded = encode_history(&mut chef);
    chef.set_history(encoded);
    Ok(Prepared {
        api,
        chef,
        extras,
        stream,
        toolless,
        echo,
        key,
        chars,
        reused,
        per_task,
        pristine,
        pool: 0,
        forced,
        rounds: 0,
    })
}

/// The tool a `tool_choice` forces by name.
#[derive(Debug, Clone)]
struct Forced {
    /// Its real name.
    name: String,
    /// chef's own (`find_tools`, a memory tool), not the client's: it must be on the wire,
    /// and only the first round is forced (it is answered inside, so forcing it again
    /// would ask for it for ever). A client's tool is kept on the wire under pruning, and
    /// a call of another tool is answered "call this one" (at levels 2–3 the upstream can
    /// only be told "some tool").
    own: bool,
}

impl Prepared {
    /// The client's tool its `tool_choice` forces by name, if any (not chef's own).
    pub fn forced_client_tool(&self) -> Option<&str> {
        self.forced
            .as_ref()
            .filter(|f| !f.own)
            .map(|f| f.name.as_str())
    }

    /// chef's own tool the `tool_choice` forces, if any.
    fn forced_own_tool(&self) -> Option<&str> {
        self.forced
            .as_ref()
            .filter(|f| f.own)
            .map(|f| f.name.as_str())
    }
}

/// The tool a `tool_choice` forces by name, if any. Refused: OpenAI's `allowed_tools`; a
/// tool the blocklist blocks (the model could only be made to call it, or some other tool
/// in its place); a name that is not among the request's tools (none, for a request
/// without tools) nor one of chef's own.
fn forced_tool(
    api: Api,
    chef: &Chef,
    extras: &Map<String, Value>,
    toolless: bool,
) -> Result<Option<Forced>, ApiError> {
    let relay = api.relay();
    let mut extras = extras.clone();
    let Some(choice) = relay.tool_choice(&mut extras) else {
        return Ok(None);
    };
    // OpenAI's `allowed_tools` names a set the gateway cannot keep: it chooses the tools
    // on the wire (pruned, found, compressed), and a named tool may be blocked.
    if !toolless && choice.get("type").and_then(Value::as_str) == Some("allowed_tools") {
        return Err(invalid(
            api,
            "`tool_choice` of type `allowed_tools` is not supported by chef serve: the \
             gateway chooses the tools the model sees; send `auto`, `required`, `none` or \
             one function"
                .to_owned(),
        ));
    }
    let Some(name) = relay
        .forced_tool(choice)
        .and_then(|slot| slot.as_str().map(str::to_owned))
    else {
        return Ok(None);
    };
    if toolless {
        return Err(invalid(
            api,
            format!("`tool_choice` forces the tool {name:?}, but the request has no tools"),
        ));
    }
    let pruner = chef.tools().pruner();
    if pruner.blocklist().blocks(&name) {
        return Err(invalid(
            api,
            format!(
                "`tool_choice` forces the tool {name:?}, which the gateway's blocklist refuses"
            ),
        ));
    }
    if pruner.all_tools().iter().any(|t| t.name.as_str() == name) {
        return Ok(Some(Forced { name, own: false }));
    }
    // chef's own tools are forced when they are on the wire (checked at the first round);
    // a name that is nobody's is the client's mistake, said as the API does.
    if chef::owned::is_owned_name(&name) || name == chef::owned::FIND_TOOLS {
        return Ok(Some(Forced { name, own: true }));
    }
    Err(invalid(
        api,
        format!("`tool_choice` forces the tool {name:?}, which is not among the request's tools"),
    ))
}

/// The calls for the client of a reply cut short by the output limit go to it; every
/// other call (a half-written one among them) is left out of the reply, not answered.
pub fn leave_out_unfinished(decisions: &mut [(ToolCallId, Decision)]) {
    for (_, decision) in decisions.iter_mut() {
        if !matches!(decision, Decision::Client { .. }) {
            *decision = Decision::Internal {
                reply: String::new(),
                is_error: true,
                outcome: "cut",
            };
        }
    }
}

/// With a tool forced by the client's `tool_choice`, a call of another of its tools is
/// not run: the model is told which tool to call (and, behind the dispatcher, how). The
/// upstream was told to call that tool, or at levels 2–3 "some tool".
pub fn keep_to_forced(chef: &Chef, forced: Option<&str>, decisions: &mut [(ToolCallId, Decision)]) {
    let Some(forced) = forced else {
        return;
    };
    for (_, decision) in decisions.iter_mut() {
        let Decision::Client { name, .. } = decision else {
            continue;
        };
        if name == forced {
            continue;
        }
        // How the model writes a call of the forced tool at this level (`t` with its code
        // behind the dispatcher), when that is not its own name.
        let how = chef
            .tools()
            .encode_call(forced, Value::Object(Map::new()))
            .filter(|encoded| encoded.name.as_str() != forced)
            .map(|encoded| format!(" (write it as {}({}))", encoded.name, encoded.arguments))
            .unwrap_or_default();
        *decision = Decision::Internal {
            reply: format!(
                "Not run: this step must call the tool {forced}, not {name}. Call {forced} \
                 now{how}."
            ),
            is_error: true,
            outcome: "forced",
        };
    }
}

/// The history with every earlier call of a client tool written the way the model writes
/// it at this level (`t` with the tool's code at level 3, the namespace tool at level 2):
/// the client replays the real names the gateway gave it, and the model must see its own
/// calls as it made them, or it learns to call tools that are not on the wire.
fn encode_history(chef: &mut Chef) -> Vec<Message> {
    let mut history = chef.history().to_vec();
    let registered: std::collections::HashSet<String> = chef
        .tools()
        .pruner()
        .all_tools()
        .iter()
        .map(|t| t.name.as_str().to_owned())
        .collect();
    for message in &mut history {
        if message.role != Role::Assistant {
            continue;
        }
        for content in &mut message.content {
            let Content::ToolCall(call) = content else {
                continue;
            };
            if !registered.contains(call.name.as_str()) {
                continue;
            }
            if let Some(encoded) = chef
                .tools()
                .encode_call(call.name.as_str(), call.arguments.clone())
            {
                call.name = encoded.name;
                call.arguments = encoded.arguments;
            }
        }
    }
    history
}

/// Compiles one round of `prepared` and makes its upstream body; returns the body and the
/// wire names to read the reply with. `stream` asks Chat for usage in the stream.
pub fn compile_round(
    prepared: &mut Prepared,
    stream: bool,
) -> Result<(Vec<u8>, WireNames), ApiError> {
    let api = prepared.api;
    prepared.rounds += 1;
    let mut payload = prepared
        .chef
        .compile(api.target())
        .map_err(|e| invalid(api, e.to_string()))?;
    let on_wire = |payload: &chef::Payload, name: &str| {
        payload.meta.wire_tools.iter().any(|t| t.as_str() == name)
    };
    // A forced tool the ranking left out is kept beside the ranked ones (only then: a
    // forced tool already ranked changes nothing on the wire).
    if let Some(name) = prepared.forced_client_tool().map(str::to_owned)
        && !on_wire(&payload, &name)
    {
        let mut policy = prepared.chef.tools().prune_policy().clone();
        if let PrunePolicy::Ranked { always_keep, .. } | PrunePolicy::Discover { always_keep, .. } =
            &mut policy
            && !always_keep.contains(&name)
        {
            always_keep.push(name);
            prepared.chef.tools_mut().set_prune_policy(policy);
            payload = prepared
                .chef
                .compile(api.target())
                .map_err(|e| invalid(api, e.to_string()))?;
        }
    }
    // chef's own tool, forced: it must be offered in this setting.
    if let Some(own) = prepared.forced_own_tool()
        && prepared.rounds == 1
        && !on_wire(&payload, own)
    {
        return Err(invalid(
            api,
            format!(
                "`tool_choice` forces {own:?}, which this gateway does not offer here \
                 (find_tools is offered under discovery, the memory tools with [memory])"
            ),
        ));
    }
    let mut extras = std::borrow::Cow::Borrowed(&prepared.extras);
    if prepared.forced_own_tool().is_some() && prepared.rounds > 1 {
        // Answered inside at the first round: forcing it again would loop.
        let mut relaxed = prepared.extras.clone();
        if let Some(choice) = api.relay().tool_choice(&mut relaxed) {
            *choice = api.relay().auto_tool();
        }
        extras = std::borrow::Cow::Owned(relaxed);
    }
    let body = if prepared.toolless {
        // No tools on the wire: a `tool_choice` goes as the client sent it.
        upstream_body(api, &payload.body, &payload.names, None, &extras, stream)
    } else {
        upstream_body(
            api,
            &payload.body,
            &payload.names,
            Some(&payload.meta.wire_tools),
            &extras,
            stream,
        )
    };
    Ok((body, payload.names))
}

/// The upstream body of one round: chef's compiled body with the client's other fields
/// appended, in the client's order.
///
/// `tool_choice` naming a tool that is not on the wire this turn (at level 3 no real tool
/// is) becomes "some tool" (`"required"`, Anthropic `{"type":"any"}`); a named tool on the
/// wire is sent under its wire name. With `wire_tools` `None` (the client sent no tools)
/// it is left as sent.
pub fn upstream_body(
    api: Api,
    compiled: &[u8],
    payload_names: &WireNames,
    wire_tools: Option<&[chef_ir::ToolName]>,
    extras: &Map<String, Value>,
    force_stream_usage: bool,
) -> Vec<u8> {
    let relay = api.relay();
    let mut extras = extras.clone();
    if let (Some(choice), Some(wire_tools)) = (relay.tool_choice(&mut extras), wire_tools)
        && let Some(slot) = relay.forced_tool(choice)
        && let Some(name) = slot.as_str().map(str::to_owned)
    {
        // Forced under its wire name when it is on the wire, else some tool is forced
        // (and a call of another is answered inside; see `keep_to_forced`). The choice's
        // other members (`disable_parallel_tool_use`) are kept.
        if wire_tools.iter().any(|t| t.as_str() == name) {
            *slot = Value::from(payload_names.to_wire(&name));
        } else {
            *choice = relay.any_tool(choice);
        }
    }
    if force_stream_usage {
        relay.ask_stream_usage(&mut extras);
    }
    splice(compiled, &extras)
}

/// `body` (a JSON object) with `extras` appended as members.
pub fn splice(body: &[u8], extras: &Map<String, Value>) -> Vec<u8> {
    if extras.is_empty() {
        return body.to_vec();
    }
    let members = serde_json::to_vec(extras).unwrap_or_else(|_| b"{}".to_vec());
    // `members` is `{…}`: its inside goes before `body`'s closing brace.
    let inner = members
        .get(1..members.len().saturating_sub(1))
        .unwrap_or_default();
    let Some(close) = body.iter().rposition(|&b| b == b'}') else {
        return body.to_vec();
    };
    let head = body.get(..close).unwrap_or_default();
    let empty = head.iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let mut out = Vec::with_capacity(body.len() + inner.len() + 1);
    out.extend_from_slice(head);
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(inner);
    out.push(b'}');
    out
}

/// What the gateway does with one call of the model's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Back to the client under the real name with validated arguments.
    Client {
        /// The real tool name.
        name: String,
        /// The validated arguments.
        arguments: Value,
    },
    /// Answered inside the gateway with this reply.
    Internal {
        /// The reply for the model.
        reply: String,
        /// Whether it reports a failure.
        is_error: bool,
        /// `lookup`, `error`, `blocked`, `toolkit`, `owned` or `deferred` (metrics, logs).
        outcome: &'static str,
    },
    /// A library-owned tool (memory) the gateway answers through the session; becomes
    /// `Internal` in [`answer_owned`].
    Owned(OwnedCall),
}

/// Routes every call of `message` through the session.
pub fn route_all(chef: &mut Chef, message: &Message) -> Vec<(ToolCallId, Decision)> {
    let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
    calls
        .into_iter()
        .map(|call| {
            let decision = match chef.route(&call) {
                Routed::Call(routed) => Decision::Client {
                    name: routed.name.as_str().to_owned(),
                    arguments: routed.arguments,
                },
                Routed::Owned(owned) if chef.memory().is_some() => Decision::Owned(owned),
                Routed::Owned(owned) => Decision::Internal {
                    reply: format!(
                        "The tool {} is not available through this gateway.",
                        owned.name
                    ),
                    is_error: true,
                    outcome: "owned",
                },
                other => {
                    let outcome = match &other {
                        Routed::Lookup { .. } => "lookup",
                        Routed::Blocked { .. } => "blocked",
                        Routed::ToolkitLoaded { .. } => "toolkit",
                        _ => "error",
                    };
                    Decision::Internal {
                        reply: other.reply().unwrap_or_default().to_owned(),
                        is_error: other.is_error(),
                        outcome,
                    }
                }
            };
            (call.id, decision)
        })
        .collect()
}

/// Answers the round's owned-tool calls through the session (memory writes are persisted
/// to the session's store before the reply is made).
pub async fn answer_owned(chef: &mut Chef, decisions: &mut [(ToolCallId, Decision)]) {
    for (_, decision) in decisions.iter_mut() {
        let Decision::Owned(call) = decision else {
            continue;
        };
        let (reply, is_error) = match chef.handle_tool(call).await {
            Ok(reply) => (reply.text, reply.is_error),
            Err(e) => {
                tracing::warn!(tool = %call.name, error = %crate::error_chain(&e), "owned tool failed");
                (
                    "The memory store failed; nothing was saved.".to_owned(),
                    true,
                )
            }
        };
        *decision = Decision::Internal {
            reply,
            is_error,
            outcome: "owned",
        };
    }
}

/// What a call for the client is answered when the same reply holds calls the gateway
/// answers: it is not run, and the model is asked to make it again.
pub const DEFERRED_REPLY: &str = "Not run: another call of the same step had to be answered \
     first. Call this tool again if you still need it.";

/// A reply that mixes calls for the client with calls the gateway answers cannot go to the
/// client whole: unless this is the last round allowed, the client's calls are answered
/// [`DEFERRED_REPLY`] too, so the model hears every answer and makes the calls it still
/// needs again. On the last round the client's calls are returned and the others dropped.
pub fn defer_mixed(decisions: &mut [(ToolCallId, Decision)], last_round: bool) {
    let client = decisions
        .iter()
        .filter(|(_, d)| matches!(d, Decision::Client { .. }))
        .count();
    if last_round || client == 0 || client == decisions.len() {
        return;
    }
    for (_, decision) in decisions.iter_mut() {
        if matches!(decision, Decision::Client { .. }) {
            *decision = Decision::Internal {
                reply: DEFERRED_REPLY.to_owned(),
                is_error: false,
                outcome: "deferred",
            };
        }
    }
}

/// Whether a round's calls are all answered inside the gateway (so another round is due).
pub fn all_internal(decisions: &[(ToolCallId, Decision)]) -> bool {
    !decisions.is_empty()
        && decisions
            .iter()
            .all(|(_, d)| !matches!(d, Decision::Client { .. }))
}

/// The tool message answering an internal round.
pub fn internal_results(decisions: &[(ToolCallId, Decision)]) -> Message {
    let results = decisions
        .iter()
        .filter_map(|(id, d)| match d {
            Decision::Internal {
                reply, is_error, ..
            } => Some(if *is_error {
                ToolResult::error(id.clone(), reply.clone())
            } else {
                ToolResult::text(id.clone(), reply.clone())
            }),
            Decision::Client { .. } => None,
            Decision::Owned(call) => Some(ToolResult::error(
                id.clone(),
                format!("The tool {} was not answered.", call.name),
            )),
        })
        .collect();
    Message::tool_results(results)
}

/// Parses an upstream reply (whole, or assembled from a stream) into the IR.
pub fn parse_reply(api: Api, raw: &Value, names: &WireNames) -> Result<Message, ApiError> {
    api.relay()
        .read_reply(raw, names)
        .map_err(|e| crate::api::relay_error(api, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The loop guard is on unless `[chef]` or a policy turns it off, and reaches the
    /// session's config.
    #[test]
    fn the_loop_guard_is_on_by_default_and_a_policy_may_turn_it_off() {
        let config = Config::parse("").unwrap();
        assert!(config.repeat_notice);
        assert!(chef_config(&config).repeat_notice);
        let config = Config::parse(
            "[chef]\nrepeat_notice = false\n[[policy]]\nname = \"p\"\nroute = \"p\"\nrepeat_notice = true\n",
        )
        .unwrap();
        assert!(!config.repeat_notice);
        assert!(!chef_config(&config).repeat_notice);
        assert!(config.policies.first().unwrap().config.repeat_notice);
    }

    #[test]
    fn splice_appends_members_in_order() {
        let mut extras = Map::new();
        extras.insert("model".to_owned(), Value::from("m"));
        extras.insert("stream".to_owned(), Value::from(false));
        assert_eq!(
            splice(br#"{"messages":[]}"#, &extras),
            br#"{"messages":[],"model":"m","stream":false}"#.to_vec()
        );
        assert_eq!(
            splice(b"{}", &extras),
            br#"{"model":"m","stream":false}"#.to_vec()
        );
        assert_eq!(splice(b"{}", &Map::new()), b"{}".to_vec());
    }
}
