//! The proxy's state: the upstreams' tools, what the host sees, and how a host's call is
//! resolved, checked, gated and routed.
//!
//! Every change of an upstream's tool list rebuilds one immutable [`View`] (the catalogue
//! compressed for the mode, the advertised tool list, the route of every tool). Codes are
//! pinned across rebuilds (`Options::with_pinned_codes` with every code ever issued), so a
//! call written against an earlier list reaches the same tool or none, never another one.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
    time::{Duration, Instant},
};

use chef_compress::{Compressed, Level, Options, Resolution, ResolveError};
use chef_ir::ToolDefinition;
use parking_lot::{Mutex, RwLock};
use rmcp::{
    ErrorData, Peer, RoleClient, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, ContentBlock,
        ProgressNotificationParam, ProgressToken, RequestMetaObject, ServerResult, Tool,
    },
    service::{PeerRequestOptions, RequestHandle},
};
use serde_json::{Value, json};

use super::{
    codes::{self, CodeFileError},
    config::{Config, Mode},
};

/// How every "not available now" answer ends, whichever path found the tool's server gone
/// (a host's model reads one text for one situation).
const MAY_RETURN: &str = "it may return. Use another tool or try later.";

/// An upstream's state, for the status resource and for calls to its tools.
#[derive(Debug, Clone)]
pub(crate) enum Status {
    Starting { attempt: u32 },
    Up { tools: usize, since: Instant },
    Down { reason: String, retry_in: Duration },
}

impl Status {
    fn describe(&self) -> String {
        match self {
            Self::Starting { attempt } => format!("starting (attempt {attempt})"),
            Self::Up { tools, since } => format!(
                "up: {tools} tool{}, for {} s",
                if *tools == 1 { "" } else { "s" },
                since.elapsed().as_secs()
            ),
            Self::Down { reason, retry_in } => {
                format!(
                    "down: {reason}; next try in {:.1} s",
                    retry_in.as_secs_f64()
                )
            }
        }
    }
}

/// Where a host-visible tool goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Route {
    server: String,
    tool: String,
}

/// What the host sees now.
pub(crate) struct View {
    pub(crate) generation: u64,
    compressed: Option<Compressed>,
    routes: HashMap<String, Route>,
    /// Normalised name (lower case, no separators) → real name, for minify's name drift;
    /// `None` when two tools normalise alike.
    loose: HashMap<String, Option<String>>,
    pub(crate) advertised: Arc<Vec<Tool>>,
    advertised_json: String,
    /// Discover mode: the catalogue's ranking (the bundled hybrid, as the pruner ranks).
    ranking: Option<Arc<chef::Pruner>>,
}

/// Where an upstream call's progress goes: the host, its token, and the number of
/// notifications being forwarded now (see [`Hub::finish_progress`]).
struct ProgressRoute {
    host: Peer<RoleServer>,
    token: ProgressToken,
    forwarding: Arc<std::sync::atomic::AtomicUsize>,
}

/// Scheduler turns a finished call gives its upstream's last progress notifications to
/// start being forwarded.
const PROGRESS_YIELDS: usize = 8;

/// The longest a finished call waits for its progress notifications being forwarded.
const PROGRESS_SETTLE: Duration = Duration::from_millis(200);

/// The proxy.
pub(crate) struct Hub {
    pub(crate) config: Config,
    view: RwLock<Arc<View>>,
    /// The latest tool list of every upstream that is up, by server, in the server's order.
    lists: Mutex<BTreeMap<String, Vec<Tool>>>,
    status: Mutex<BTreeMap<String, Status>>,
    peers: Mutex<HashMap<String, Peer<RoleClient>>>,
    /// Every code ever issued (real name → code), loaded from and saved to the code file.
    pins: Mutex<BTreeMap<String, String>>,
    /// Every tool name ever shown, by [`loose_key`]: a call of one whose server is down is
    /// told it may return, in every mode.
    seen: Mutex<HashMap<String, String>>,
    /// The upstream tool each host-visible name was first given to in this process: a
    /// name (and the code pinned to it) never passes to another server's tool, even after
    /// its first holder's server went away.
    owners: Mutex<HashMap<String, Route>>,
    hosts: Mutex<Vec<Peer<RoleServer>>>,
    /// Upstream progress token → the host, the host's own token, and how many of its
    /// notifications are being forwarded right now.
    progress: Mutex<HashMap<ProgressToken, ProgressRoute>>,
    /// Serialises rebuilds, so views and pins advance together.
    rebuilding: tokio::sync::Mutex<()>,
    /// Servers whose first start has ended (up or failed); `ready` turns true when all have,
    /// so a host's first `tools/list` does not see an empty list while they start.
    settled: Mutex<std::collections::HashSet<String>>,
    ready: tokio::sync::watch::Sender<bool>,
    /// The blocklist entries that matched no tool at the last report (logged when it changes).
    unmatched: Mutex<Option<Vec<String>>>,
    /// Discover mode: the tools `find_tools` found, in the order found (listed after it),
    /// at most `found_limit` of them.
    found: Mutex<super::found::Found>,
}

/// Normalises a name for loose matching.
fn loose_key(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The compression options for `mode`.
fn options(config: &Config, mode: Mode) -> Options {
    let mut o = Options::new().with_search_limit(config.search_limit);
    match mode {
        Mode::Minify | Mode::Discover => o = o.with_level(Level::One),
        Mode::Dispatch | Mode::Search => {
            o = o.with_level(Level::Three);
            if let (Mode::Dispatch, Some(map)) = (mode, &config.compiled_map) {
                o = o.with_level(Level::Four).with_compiled(map.clone());
            }
            if let Some(style) = config.map_style {
                o = o.with_map_style(style);
            }
        }
    }
    o
}

/// The named tools (definition and MCP tool, in server order), their routes, and the
/// collisions skipped (as log lines).
type Combined = (
    Vec<(ToolDefinition, Tool)>,
    HashMap<String, Route>,
    Vec<String>,
);

/// A character a tool name must not hold: whitespace, a control character, or an invisible
/// format character (zero-width spaces and joiners, bidirectional overrides, the
/// byte-order mark, the soft hyphen) that would make a name read as another in the host.
fn unshowable(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// A parameter name anywhere in `schema` (a key of any `properties`) that holds a
/// character [`unshowable`] refuses, a plain space aside: the map, `q`'s answers and minify's signatures show
/// parameter names, where a line break would let an upstream write lines of its own.
fn unshowable_parameter(schema: &Value) -> Option<String> {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = object.get("properties")
                && let Some(name) = properties
                    .keys()
                    .find(|k| k.chars().any(|c| c != ' ' && unshowable(c)))
            {
                return Some(name.clone());
            }
            object.values().find_map(unshowable_parameter)
        }
        Value::Array(items) => items.iter().find_map(unshowable_parameter),
        _ => None,
    }
}

/// The tools the proxy lists and answers itself in `mode`.
fn owned_names(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Minify => &[],
        Mode::Dispatch | Mode::Search => &["t", "q"],
        Mode::Discover => &[chef::owned::FIND_TOOLS],
    }
}

/// Records each name's tool as its holder, unless the name is held already.
fn hold_names(owners: &mut HashMap<String, Route>, routes: &HashMap<String, Route>) {
    for (name, route) in routes {
        owners.entry(name.clone()).or_insert_with(|| route.clone());
    }
}

/// Names every upstream's tools with the prefix format; a name taken by an earlier server,
/// given earlier to another server's tool (`owners`, kept by the running proxy), or one the
/// proxy answers itself in its mode ([`owned_names`]), skips the tool (logged).
fn combine(
    config: &Config,
    lists: &BTreeMap<String, Vec<Tool>>,
    owners: &HashMap<String, Route>,
) -> Combined {
    let mut tools = Vec::new();
    let mut routes: HashMap<String, Route> = HashMap::new();
    let mut skipped = Vec::new();
    // The proxy's own names in this mode, as calls are matched (case and separators aside).
    let owned: Vec<(String, &str)> = owned_names(config.mode)
        .iter()
        .map(|own| (chef::gate::name_key(own), *own))
        .collect();
    for server in &config.servers {
        let Some(list) = lists.get(&server.name) else {
            continue;
        };
        for tool in list {
            // The server's own name is what a call is sent under: a prefix cannot make up
            // for an empty one.
            if tool.name.trim().is_empty() {
                skipped.push(format!(
                    "a tool of {:?} has an empty name: left out",
                    server.name
                ));
                continue;
            }
            // A name with a line break, any other whitespace or control character, or an
            // invisible format character cannot be called reliably (provider APIs refuse
            // it; MCP asks for none) and would carry text of the upstream's choosing into
            // the host's lists and logs, or read there as another name.
            if tool.name.chars().any(unshowable) {
                skipped.push(format!(
                    "a tool of {:?} is named {:?}, which holds whitespace, a control character or an invisible format character: left out",
                    server.name, tool.name
                ));
                continue;
            }
            let schema = Value::Object((*tool.input_schema).clone());
            if let Some(param) = unshowable_parameter(&schema) {
                skipped.push(format!(
                    "tool {:?} of {:?} has a parameter named {param:?}, which holds a line break, another control character or an invisible format character: left out",
                    tool.name, server.name
                ));
                continue;
            }
            let name = config.prefix_format.apply(&server.name, &tool.name);
            // A name the proxy answers itself in this mode (in any case or separators, as
            // calls are matched) would list two tools of that name, one unreachable.
            let key = (!owned.is_empty()).then(|| chef::gate::name_key(&name));
            if let Some((_, own)) = owned.iter().find(|(own, _)| key.as_ref() == Some(own)) {
                skipped.push(format!(
                    "tool {:?} of {:?} is named {name:?}, which reads as chef's own {own:?} in {} mode: skipped (change prefix_format to list it)",
                    tool.name,
                    server.name,
                    config.mode.as_str()
                ));
                continue;
            }
            // A host may hold this name, or its code, from when it was another tool's.
            if let Some(owner) = owners.get(&name)
                && (owner.server != server.name || owner.tool != tool.name.as_ref())
            {
                skipped.push(format!(
                    "tool {:?} of {:?} is named {name:?}, which was {:?} of {:?} earlier: skipped (a host may still hold that name or its code; change prefix_format to list it)",
                    tool.name, server.name, owner.tool, owner.server
                ));
                continue;
            }
            if let Some(first) = routes.get(&name) {
                skipped.push(format!(
                    "tool {:?} of {:?} is named {name:?}, as is {:?} of {:?}: skipped",
                    tool.name, server.name, first.tool, first.server
                ));
                continue;
            }
            let mut renamed = tool.clone();
            renamed.name = name.clone().into();
            // The schema the host is shown is the one chef validates against: a schema
            // found in the wild (`"required": "x"`, a keyword of the wrong type) is shown
            // normalised, since a host's SDK may refuse the whole list over one such tool;
            // a schema chef cannot use at all leaves its tool out. A schema that needs no
            // change is shown as the upstream wrote it, byte for byte.
            match chef_compress::validate::normalise_schema(&name, &schema) {
                Ok(normalised) if normalised.notes.is_empty() => {}
                Ok(normalised) => {
                    if let Value::Object(object) = normalised.schema {
                        renamed.input_schema = Arc::new(object);
                    }
                }
                Err(e) => {
                    skipped.push(format!(
                        "tool {:?} of {:?}: its input schema is unusable ({e}): left out",
                        tool.name, server.name
                    ));
                    continue;
                }
            }
            let def = ToolDefinition::from(&renamed);
            routes.insert(
                name,
                Route {
                    server: server.name.clone(),
                    tool: tool.name.to_string(),
                },
            );
            tools.push((def, renamed));
        }
    }
    (tools, routes, skipped)
}

/// Per mode, the tools the host would see and their `tools/list` JSON; and the tools left
/// out (log lines).
pub(crate) type CheckReport = (Vec<(Mode, usize, String)>, Vec<String>);

/// Compresses `tools`, leaving out (and naming, as log lines) each tool chef cannot use:
/// an unusable schema, an over-long or empty name. The others are still served.
fn compress_usable(
    tools: &mut Vec<(ToolDefinition, Tool)>,
    options: &Options,
) -> Result<(Compressed, Vec<String>), chef_compress::CompressError> {
    let mut left_out = Vec::new();
    loop {
        let defs: Vec<ToolDefinition> = tools.iter().map(|(d, _)| d.clone()).collect();
        let e = match chef_compress::compress(&defs, options) {
            Ok(c) => return Ok((c, left_out)),
            Err(e) => e,
        };
        let culprit = match &e {
            chef_compress::CompressError::Schema(schema) => tools
                .iter()
                .position(|(d, _)| d.name.as_str() == schema.tool()),
            chef_compress::CompressError::NameTooLong { index, .. }
            | chef_compress::CompressError::MissingName { index } => Some(*index),
            _ => None,
        };
        match culprit.filter(|&i| i < tools.len()) {
            Some(i) => {
                let (def, _) = tools.remove(i);
                left_out.push(format!("tool {} is left out: {e}", def.name.as_str()));
            }
            None => return Err(e),
        }
    }
}

/// `compressed` with `q` ranking by the hybrid of BM25F and the static model bundled in
/// chef, the default everywhere chef searches (`chef search`, the pruner); BM25F alone if
/// the model cannot load.
fn with_search_model(compressed: Compressed) -> Compressed {
    match chef_compress::search::dense::DenseConfig::bundled() {
        Ok(config) => compressed.with_embedder(config),
        Err(e) => {
            tracing::warn!("q ranks with BM25F alone: the bundled model did not load: {e}");
            compressed
        }
    }
}

/// The tool list the host sees for `compressed` in `mode`; `originals` by name keeps
/// minify's titles and annotations; `found` is what discover mode lists after `find_tools`,
/// whose schema names `search_limit` as its default.
fn advertise(
    mode: Mode,
    search_limit: usize,
    compressed: &Compressed,
    originals: &HashMap<&str, &Tool>,
    found: &[String],
) -> Vec<Tool> {
    let mut out = Vec::new();
    if mode == Mode::Discover {
        if let Ok(tool) = Tool::try_from(&chef::owned::find_tools_tool_with_default(search_limit)) {
            out.push(tool);
        }
        for name in found {
            let Some(def) = compressed.tools().iter().find(|d| d.name.as_str() == name) else {
                continue; // its server is down: it returns with it
            };
            let (Ok(mut tool), Some(original)) =
                (Tool::try_from(def), originals.get(name.as_str()))
            else {
                continue;
            };
            keep_upstream_fields(&mut tool, original);
            out.push(tool);
        }
        return out;
    }
    for def in compressed.tools() {
        let Ok(mut tool) = Tool::try_from(def) else {
            continue;
        };
        match mode {
            Mode::Minify => {
                if let Some(original) = originals.get(def.name.as_str()) {
                    // Short descriptions, but the upstream's whole input schema: parameter
                    // descriptions, defaults and formats are what a host needs to write
                    // the arguments.
                    keep_upstream_fields(&mut tool, original);
                }
            }
            Mode::Dispatch if def.name.as_str() == "t" => {
                // The map rides in this description, not in a system prompt (a host has
                // none for us): the dispatcher's own wording points below instead.
                let map = compressed.system();
                let own = def
                    .description
                    .replace(" in the system prompt", " below")
                    .replace(" of the system prompt", " below");
                let description = format!("{own}\n\n{map}");
                tool.description = Some(description.into());
            }
            Mode::Search if def.name.as_str() == "t" => {
                tool.description = Some(
                    "Call a tool that q found: f = its code (or name), a = its arguments as q \
                     showed them. Search with q first; there is no map."
                        .into(),
                );
            }
            Mode::Search if def.name.as_str() == "q" => {
                tool.description = Some(
                    "Search the tools behind this server: s=<what you need> gives the best \
                     matches with their codes; c=<code or name> gives that tool's full name, \
                     description and parameters."
                        .into(),
                );
            }
            _ => {}
        }
        out.push(tool);
    }
    out
}

/// `tool` (chef's listing of an upstream tool) with what the upstream wrote of it besides
/// the short description: its whole input schema, title, annotations, output schema,
/// icons and `_meta`.
fn keep_upstream_fields(tool: &mut Tool, original: &Tool) {
    tool.input_schema = Arc::clone(&original.input_schema);
    tool.title.clone_from(&original.title);
    tool.annotations.clone_from(&original.annotations);
    tool.output_schema.clone_from(&original.output_schema);
    tool.icons.clone_from(&original.icons);
    tool.meta.clone_from(&original.meta);
}

impl Hub {
    /// A hub for `config`, with the codes issued before (the code file), so a code a host
    /// kept across a restart reaches the same tool or none.
    ///
    /// # Errors
    /// The code file exists but cannot be read or is not a code table.
    pub(crate) fn new(config: Config) -> Result<Arc<Self>, CodeFileError> {
        let pins = match &config.code_file {
            Some(path) => codes::load(path)?,
            None => BTreeMap::new(),
        };
        Ok(Self::with_pins(config, pins))
    }

    fn with_pins(config: Config, pins: BTreeMap<String, String>) -> Arc<Self> {
        let status = config
            .servers
            .iter()
            .map(|s| (s.name.clone(), Status::Starting { attempt: 1 }))
            .collect();
        Arc::new(Self {
            config,
            view: RwLock::new(Arc::new(View {
                generation: 0,
                compressed: None,
                routes: HashMap::new(),
                loose: HashMap::new(),
                advertised: Arc::new(Vec::new()),
                advertised_json: String::new(),
                ranking: None,
            })),
            lists: Mutex::new(BTreeMap::new()),
            status: Mutex::new(status),
            peers: Mutex::new(HashMap::new()),
            pins: Mutex::new(pins),
            seen: Mutex::new(HashMap::new()),
            owners: Mutex::new(HashMap::new()),
            hosts: Mutex::new(Vec::new()),
            progress: Mutex::new(HashMap::new()),
            rebuilding: tokio::sync::Mutex::new(()),
            settled: Mutex::new(std::collections::HashSet::new()),
            ready: tokio::sync::watch::Sender::new(false),
            unmatched: Mutex::new(None),
            found: Mutex::new(super::found::Found::default()),
        })
    }

    /// Marks `server`'s first start as over.
    fn settle(&self, server: &str) {
        let now_ready = {
            let mut settled = self.settled.lock();
            settled.insert(server.to_owned());
            settled.len() >= self.config.servers.len()
        };
        if now_ready && !self.ready.send_replace(true) {
            let view = self.view();
            hold_names(&mut self.owners.lock(), &view.routes);
            self.report_blocklist(&view);
        }
    }

    /// Logs, as an error, each blocklist entry that matches no tool of the upstreams that are
    /// up (most likely a typo, which leaves the tool it meant open), once every upstream has
    /// had its first start and again whenever that set changes.
    fn report_blocklist(&self, view: &View) {
        if !*self.ready.borrow() || self.config.blocklist.is_empty() {
            return;
        }
        let unmatched = self.config.blocklist.unmatched(
            view.routes
                .iter()
                .map(|(name, route)| (name.as_str(), route.tool.as_str())),
        );
        let mut last = self.unmatched.lock();
        if last.as_ref() == Some(&unmatched) {
            return;
        }
        for entry in &unmatched {
            tracing::error!(
                "blocklist entry {entry:?} matches no tool of the upstreams that are up: it blocks nothing now (a typo? entries match tool names ignoring case and separators, with or without the server prefix)"
            );
        }
        *last = Some(unmatched);
    }

    /// The blocklist entries that match no tool of `lists`, as `--check` reports them.
    pub(crate) fn unmatched_blocklist(
        config: &Config,
        lists: &BTreeMap<String, Vec<Tool>>,
    ) -> Vec<String> {
        let (_, routes, _) = combine(config, lists, &HashMap::new());
        config.blocklist.unmatched(
            routes
                .iter()
                .map(|(name, route)| (name.as_str(), route.tool.as_str())),
        )
    }

    /// Waits (at most the start timeout and a second) until every upstream's first start is
    /// over, so the first tool list is complete.
    pub(crate) async fn wait_ready(&self) {
        let mut rx = self.ready.subscribe();
        let limit = self.config.start_timeout + Duration::from_secs(1);
        let _ = tokio::time::timeout(limit, rx.wait_for(|ready| *ready)).await;
    }

    pub(crate) fn view(&self) -> Arc<View> {
        Arc::clone(&self.view.read())
    }

    pub(crate) fn set_status(&self, server: &str, status: Status) {
        self.status.lock().insert(server.to_owned(), status);
    }

    /// The status resource's text: one line per upstream.
    pub(crate) fn status_text(&self) -> String {
        let view = self.view();
        let mut out = format!(
            "chef mcp serve: mode {}, {} reachable behind it (generation {}; what the host lists depends on the mode)\n",
            self.config.mode.as_str(),
            match view.routes.len() {
                1 => "1 upstream tool".to_owned(),
                n => format!("{n} upstream tools"),
            },
            view.generation
        );
        for (name, status) in self.status.lock().iter() {
            out.push_str(&format!("{name}: {}\n", status.describe()));
        }
        if let Some(unmatched) = self.unmatched.lock().as_ref() {
            for entry in unmatched {
                out.push_str(&format!(
                    "blocklist entry {entry:?} matches no tool: it blocks nothing now\n"
                ));
            }
        }
        out
    }

    pub(crate) fn add_host(&self, peer: Peer<RoleServer>) {
        self.hosts.lock().push(peer);
    }

    /// An upstream came up (or relisted): its peer and tools.
    pub(crate) async fn publish(&self, server: &str, peer: Peer<RoleClient>, tools: Vec<Tool>) {
        self.peers.lock().insert(server.to_owned(), peer);
        self.set_status(
            server,
            Status::Up {
                tools: tools.len(),
                since: Instant::now(),
            },
        );
        self.lists.lock().insert(server.to_owned(), tools);
        self.rebuild().await;
        self.settle(server);
    }

    /// An upstream went away: its tools are withdrawn until it returns.
    pub(crate) async fn withdraw(&self, server: &str, status: Status) {
        self.peers.lock().remove(server);
        self.set_status(server, status);
        let had = self.lists.lock().remove(server).is_some();
        if had {
            self.rebuild().await;
        }
        self.settle(server);
    }

    /// Recompiles the view; tells the hosts when what they see changed.
    pub(crate) async fn rebuild(&self) {
        let _one = self.rebuilding.lock().await;
        let lists = self.lists.lock().clone();
        // Rebuilds are serialised (above), so the owners cannot move under this one.
        let (mut tools, mut routes, skipped) = combine(&self.config, &lists, &self.owners.lock());
        for line in skipped {
            tracing::warn!("{line}");
        }
        let pins = self.pins.lock().clone();
        let options = options(&self.config, self.config.mode).with_pinned_codes(pins);
        let compressed = match compress_usable(&mut tools, &options) {
            Ok((compressed, left_out)) => {
                for line in left_out {
                    tracing::warn!("{line}");
                }
                with_search_model(compressed)
            }
            Err(e) => {
                tracing::error!(
                    "cannot compress the upstream tools: {e}; the host keeps the previous list"
                );
                return;
            }
        };
        routes.retain(|name, _| tools.iter().any(|(d, _)| d.name.as_str() == name));
        // Names are held by their tools from the first list a host can see (every first
        // start over), so that list is in server order whichever server answered first.
        if *self.ready.borrow() {
            hold_names(&mut self.owners.lock(), &routes);
        }
        let originals: HashMap<&str, &Tool> =
            tools.iter().map(|(d, t)| (d.name.as_str(), t)).collect();
        let grown = {
            let mut pins = self.pins.lock();
            let before = pins.len();
            pins.extend(
                compressed
                    .codes()
                    .map(|(name, code)| (name.to_owned(), code.to_owned())),
            );
            (pins.len() != before).then(|| pins.clone())
        };
        if let (Some(pins), Some(path)) = (grown, &self.config.code_file)
            && let Err(e) = codes::save(path, &pins)
        {
            tracing::error!("{e}; codes issued now may name other tools after a restart of chef");
        }
        {
            let mut seen = self.seen.lock();
            for name in routes.keys() {
                seen.insert(loose_key(name), name.clone());
            }
        }
        let found = self.found.lock().names().to_vec();
        let advertised = advertise(
            self.config.mode,
            self.config.search_limit,
            &compressed,
            &originals,
            &found,
        );
        let ranking = (self.config.mode == Mode::Discover).then(|| {
            let defs: Vec<ToolDefinition> = tools.iter().map(|(d, _)| d.clone()).collect();
            // A rebuild for a search's finds keeps the tools: keep their ranking too (its
            // hybrid index embeds the whole catalogue on first use).
            if let Some(previous) = self.view().ranking.clone()
                && previous.all_tools() == defs.as_slice()
            {
                return previous;
            }
            let mut pruner = chef::Pruner::default();
            // The same names compress accepted, so registration cannot refuse them.
            if let Err(e) = pruner.register_tools(defs) {
                tracing::error!("find_tools cannot rank the tools: {e}");
            }
            Arc::new(pruner)
        });
        let advertised_json = serde_json::to_string(&advertised).unwrap_or_default();
        let mut loose: HashMap<String, Option<String>> = HashMap::new();
        for name in routes.keys() {
            loose
                .entry(loose_key(name))
                .and_modify(|v| *v = None)
                .or_insert_with(|| Some(name.clone()));
        }
        let changed;
        let view = {
            let mut view = self.view.write();
            changed = view.generation > 0 && view.advertised_json != advertised_json;
            let generation = view.generation + 1;
            *view = Arc::new(View {
                generation,
                compressed: Some(compressed),
                routes,
                loose,
                advertised: Arc::new(advertised),
                advertised_json,
                ranking,
            });
            Arc::clone(&*view)
        };
        self.report_blocklist(&view);
        if changed {
            tracing::info!("the tool list changed; telling the host");
            let hosts = self.hosts.lock().clone();
            let mut alive = Vec::with_capacity(hosts.len());
            for host in hosts {
                if host.notify_tool_list_changed().await.is_ok() {
                    alive.push(host);
                }
            }
            *self.hosts.lock() = alive;
        }
    }

    fn tool_error(text: impl Into<String>) -> CallToolResponse {
        CallToolResult::error(vec![ContentBlock::text(text.into())]).into()
    }

    /// Answers a host's `tools/call`.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
        host: Peer<RoleServer>,
        meta: &RequestMetaObject,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.wait_ready().await;
        let view = self.view();
        let Some(compressed) = &view.compressed else {
            return Ok(Self::tool_error(
                "No upstream MCP server is up yet; read the chef://status resource, then try again.",
            ));
        };
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        if self.config.mode == Mode::Discover && request.name == chef::owned::FIND_TOOLS {
            let (reply, fresh) = self.find(&view, &args);
            drop(view);
            if fresh {
                self.rebuild().await;
            }
            return Ok(match reply {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]).into(),
                Err(text) => Self::tool_error(text),
            });
        }
        let mut written = request.name.to_string();
        if compressed.level() == Level::One
            && !view.routes.contains_key(&written)
            && let Some(Some(real)) = view.loose.get(&loose_key(&written))
        {
            written.clone_from(real);
        }
        // Did-you-mean never names (or codes) a blocked tool.
        let hidden = |real: &str| self.blocked(&view, real);
        let (name, args) = match compressed.resolve_hiding(&written, &args, &hidden) {
            Resolution::Call { name, args } => (name, args),
            Resolution::Meta { result, .. } => {
                return Ok(CallToolResult::success(vec![ContentBlock::text(result)]).into());
            }
            Resolution::Error(e) => {
                // The gate before validation: a blocked tool called with bad arguments is
                // refused as blocked, and its parameters are never taught.
                if let Some(refusal) = e.tool().and_then(|tool| self.refusal(&view, tool)) {
                    return Ok(Self::tool_error(refusal));
                }
                return Ok(Self::tool_error(self.explain(&view, &e)));
            }
        };
        if let Some(refusal) = self.refusal(&view, &name) {
            return Ok(Self::tool_error(refusal));
        }
        let Some(route) = view.routes.get(&name).cloned() else {
            return Ok(Self::tool_error(format!(
                "Tool {name} is not available now."
            )));
        };
        drop(view);
        // A found tool in use is the last to leave a full list.
        self.found.lock().touch(&name);
        let peer = self.peers.lock().get(&route.server).cloned();
        let Some(peer) = peer else {
            return Ok(Self::tool_error(format!(
                "Tool {name} is not available now: server {} is {}; {MAY_RETURN}",
                route.server,
                self.status
                    .lock()
                    .get(&route.server)
                    .map_or("unknown".to_owned(), Status::describe)
            )));
        };
        let mut params = chef_ir::interop::rmcp3::call_tool_params(route.tool.clone(), &args)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        // The host's own `_meta` (a trace id, an app's keys) goes on with the call; its
        // progress token is mapped below, and the protocol's per-hop keys are not the
        // upstream's.
        let forwarded: serde_json::Map<String, Value> = meta
            .0
            .iter()
            .filter(|(key, _)| {
                key.as_str() != "progressToken" && !key.starts_with("io.modelcontextprotocol/")
            })
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        if !forwarded.is_empty() {
            params.meta = Some(RequestMetaObject(forwarded.into()));
        }
        // The server may have stopped between the route lookup and the send (a crash the
        // supervisor has not seen yet): that is the model's "not available now", a tool
        // result it can act on, never a JSON-RPC error the host shows as a failure.
        let handle: RequestHandle<RoleClient> = match peer
            .send_cancellable_request(
                ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                return Ok(Self::tool_error(format!(
                    "Tool {name} is not available now (server {}: {e}); {MAY_RETURN}",
                    route.server
                )));
            }
        };
        let upstream_token = handle.progress_token.clone();
        let forwarding = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        if let Some(token) = meta.get_progress_token() {
            self.progress.lock().insert(
                upstream_token.clone(),
                ProgressRoute {
                    host,
                    token,
                    forwarding: Arc::clone(&forwarding),
                },
            );
        }
        let timeout = self.config.call_timeout;
        let id = handle.id.clone();
        let cancel_peer = peer.clone();
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, handle.await_response()) => Some(r),
            () = cancelled => None,
        };
        self.finish_progress(&upstream_token, &forwarding).await;
        let send_cancel = |reason: &'static str| async move {
            let _ = cancel_peer
                .send_notification(rmcp::model::ClientNotification::CancelledNotification(
                    rmcp::model::CancelledNotification::new(
                        rmcp::model::CancelledNotificationParam::new(
                            Some(id),
                            Some(reason.to_owned()),
                        ),
                    ),
                ))
                .await;
        };
        match outcome {
            None => {
                send_cancel("cancelled by the host").await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            Some(Err(_)) => {
                send_cancel("chef mcp serve: call timeout").await;
                Ok(Self::tool_error(format!(
                    "Tool {name} did not answer within {:.0} s (server {}); the call was cancelled.",
                    timeout.as_secs_f64(),
                    route.server
                )))
            }
            Some(Ok(Err(rmcp::ServiceError::McpError(e)))) => Err(e),
            Some(Ok(Err(e))) => Ok(Self::tool_error(format!(
                "Tool {name} failed: server {}: {e}",
                route.server
            ))),
            Some(Ok(Ok(ServerResult::CallToolResult(r)))) => Ok(r.into()),
            Some(Ok(Ok(ServerResult::InputRequiredResult(r)))) => Ok(r.into()),
            Some(Ok(Ok(ServerResult::CreateTaskResult(r)))) => Ok(r.into()),
            Some(Ok(Ok(other))) => Ok(Self::tool_error(format!(
                "Tool {name}: server {} answered with something that is not a tool result ({})",
                route.server,
                crate::mcp::clip(&serde_json::to_string(&other).unwrap_or_default())
            ))),
        }
    }

    /// Answers `find_tools` in discover mode: the best-ranked tools for the query that the
    /// blocklist allows (up to `search_limit`), or "nothing fits"; records the new finds and
    /// says whether there were any (the list then grows and the host is told).
    fn find(&self, view: &View, args: &Value) -> (Result<String, String>, bool) {
        let (query, limit) = chef::owned::find_tools_args(
            args,
            self.config.search_limit,
            chef::owned::FIND_TOOLS_MAX_LIMIT.max(self.config.search_limit),
        );
        if let Some(error) = chef::owned::find_tools_query_error(&query) {
            return (Err(error), false);
        }
        // A search for a blocked tool by its name is refused as that tool, not answered
        // with the tools its words would bring back (which the model did not ask for).
        let written = query.trim();
        if !written.contains(char::is_whitespace)
            && let Some(refusal) = self.refusal(view, written)
        {
            return (Err(refusal), false);
        }
        let Some(ranking) = &view.ranking else {
            return (Err("No upstream MCP server is up yet.".to_owned()), false);
        };
        let total = ranking.all_tools().len().max(1);
        // Ranked among the tools the blocklist allows: a blocked tool costs no place, and
        // when it is the only one that fits, nothing does.
        let (ranked, best) =
            ranking.rank_search_among_with_best(&query, (limit + 20).min(total), &|name| {
                !self.blocked(view, name)
            });
        // Every tool the reply lists is in the tool list, which holds `found_limit` found
        // tools at most: a search that asked for more says where it stopped.
        let asked = limit;
        let limit = limit.min(self.config.found_limit);
        let mut lines = Vec::new();
        let mut finds = Vec::new();
        // An unrelated tail (under a tenth of the best score of the whole ranking, a
        // blocked best match included) is not listed: each tool listed joins the host's
        // list.
        for (tool, reason) in ranked.tools.iter().zip(&ranked.reasons) {
            if lines.len() >= limit {
                break;
            }
            if reason.score().unwrap_or(0.0) < best * chef::owned::FOUND_SCORE_FLOOR {
                continue;
            }
            let name = tool.name.as_str();
            lines.push(chef::owned::found_tool_line(tool));
            finds.push(name.to_owned());
        }
        let fresh = self.found.lock().record(&finds, self.config.found_limit);
        // Quoted as a name is: control and invisible characters escaped, cut at 200.
        let query = chef_compress::similarity::shown_name(&query);
        if lines.is_empty() {
            return (
                Ok(format!(
                    "No tool fits \"{query}\": none of the tools behind this server can do that. Answer without a tool, or search again with other words."
                )),
                false,
            );
        }
        let capped = if asked > limit && ranked.tools.len() > lines.len() {
            format!(
                "\n(This server lists at most {limit} found tools at once: search again with other words for more.)"
            )
        } else {
            String::new()
        };
        (
            Ok(format!(
                "Tools for \"{query}\", best first; they are in your tool list now (call them by these names):\n{}{capped}",
                lines.join("\n")
            )),
            fresh,
        )
    }

    /// Whether the blocklist refuses `name` (a tool the host sees, or one it saw).
    fn blocked(&self, view: &View, name: &str) -> bool {
        let upstream = view.routes.get(name).map_or(name, |r| r.tool.as_str());
        self.config.blocklist.entry_for(name, upstream).is_some()
    }

    /// The blocklist's answer for a call that reached `name`, if the blocklist refuses it.
    fn refusal(&self, view: &View, name: &str) -> Option<String> {
        self.blocked(view, name).then(|| format!(
            "Tool {name} is blocked by this proxy's policy: do not call it again; do the task another way or tell the user."
        ))
    }

    /// The model's text for a resolve error; a code or name issued earlier whose tool is gone
    /// says so. A name that reaches nothing in minify or discover mode is answered with
    /// the nearest name of a tool that is not blocked (none when a blocked tool's name is
    /// at least as near), and in discover mode how to search;
    /// search mode's hint names no map (the host was shown none).
    fn explain(&self, view: &View, e: &ResolveError) -> String {
        // A name the host saw (pinned, or listed before) and that is not listed now is
        // that tool, gone for now; `t(f=…)` takes names as well as codes, so an unknown
        // code may be one too. A name listed now was not reached for another reason (case
        // or separators at levels 0–1): the did-you-mean below answers it.
        let seen_name = |name: &String| {
            let pinned = self.pins.lock().contains_key(name);
            let seen = if pinned {
                Some(name.clone())
            } else {
                self.seen.lock().get(&loose_key(name)).cloned()
            };
            seen.filter(|seen| !view.routes.contains_key(seen))
        };
        let gone = match e {
            ResolveError::UnknownCode { code, .. } => {
                let coded = {
                    let pins = self.pins.lock();
                    pins.iter()
                        .find(|(_, c)| *c == code)
                        .map(|(name, _)| name.clone())
                };
                coded.or_else(|| seen_name(code))
            }
            ResolveError::UnknownTool { name, .. } => seen_name(name),
            _ => None,
        };
        match gone {
            Some(name) => {
                let server = self
                    .config
                    .servers
                    .iter()
                    .find(|s| name.starts_with(&self.config.prefix_format.apply(&s.name, "")))
                    .map(|s| {
                        let status = self.status.lock().get(&s.name).map(|status| {
                            // Up and listing its tools: this one is not among them.
                            if matches!(status, Status::Up { .. }) {
                                format!("{}, which no longer lists it", status.describe())
                            } else {
                                status.describe()
                            }
                        });
                        format!(
                            " (server {}: {})",
                            s.name,
                            status.as_deref().unwrap_or("unknown")
                        )
                    })
                    .unwrap_or_default();
                format!("Tool {name} is not available now{server}; {MAY_RETURN}")
            }
            None => match (e, self.config.mode) {
                (ResolveError::UnknownTool { name, .. }, Mode::Minify | Mode::Discover) => {
                    let mut names: Vec<&str> = view.routes.keys().map(String::as_str).collect();
                    names.sort_unstable();
                    let mut text = e.message();
                    // Nothing when a blocked tool is the nearest: the host's model meant
                    // it, and the next name is another tool it did not ask for.
                    if let Some(near) = chef_compress::similarity::nearest_open(
                        name,
                        names,
                        chef_compress::similarity::SUGGESTION_FLOOR,
                        |n| self.blocked(view, n),
                    ) {
                        text.push_str(&format!(" Did you mean \"{near}\"?"));
                    }
                    if self.config.mode == Mode::Discover {
                        text.push_str(&format!(
                            " Search with {}(query=\"what the tool should do\") to find one.",
                            chef::owned::FIND_TOOLS
                        ));
                    }
                    text
                }
                (ResolveError::UnknownCode { code, suggestion }, Mode::Search)
                    if !code.trim().is_empty() =>
                {
                    let near = suggestion
                        .as_ref()
                        .map(|s| format!(" Did you mean \"{s}\"?"))
                        .unwrap_or_default();
                    format!("No map code \"{code}\". Search with q(s=…).{near}")
                }
                _ => e.message(),
            },
        }
    }

    /// Forwards an upstream's progress to the host whose call it is.
    pub(crate) async fn progress(&self, mut params: ProgressNotificationParam) {
        use std::sync::atomic::Ordering;
        // Counted under the lock, so that `finish_progress` either sees this forward or has
        // removed the route before it starts.
        let target = self
            .progress
            .lock()
            .get(&params.progress_token)
            .map(|route| {
                route.forwarding.fetch_add(1, Ordering::SeqCst);
                (
                    route.host.clone(),
                    route.token.clone(),
                    Arc::clone(&route.forwarding),
                )
            });
        if let Some((host, token, forwarding)) = target {
            params.progress_token = token;
            let _ = host.notify_progress(params).await;
            forwarding.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Ends a call's progress forwarding once its answer is in, before the answer goes to
    /// the host. The upstream's client handles each notification on a task of its own, so
    /// notifications sent just before the answer may not have been handled when the answer
    /// arrives: they get a few turns of the scheduler and a millisecond to start (only a
    /// call whose host asked for progress waits so), and those that started are
    /// waited for (at most [`PROGRESS_SETTLE`]), so that they reach the host before the
    /// result (a host drops progress for a call it has an answer to).
    async fn finish_progress(
        &self,
        upstream_token: &ProgressToken,
        forwarding: &std::sync::atomic::AtomicUsize,
    ) {
        use std::sync::atomic::Ordering;
        if !self.progress.lock().contains_key(upstream_token) {
            return;
        }
        for _ in 0..PROGRESS_YIELDS {
            tokio::task::yield_now().await;
        }
        // And a millisecond, for a task another worker took but has not run yet.
        tokio::time::sleep(Duration::from_millis(1)).await;
        self.progress.lock().remove(upstream_token);
        let deadline = tokio::time::Instant::now() + PROGRESS_SETTLE;
        while forwarding.load(Ordering::SeqCst) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// The catalogue as `chef mcp serve --check` reports it: per mode, tool count and the
    /// advertised list as JSON.
    pub(crate) fn check_report(
        config: &Config,
        lists: &BTreeMap<String, Vec<Tool>>,
    ) -> Result<CheckReport, chef_compress::CompressError> {
        let (tools, _, mut left_out) = combine(config, lists, &HashMap::new());
        let mut out = Vec::new();
        for (i, mode) in Mode::ALL.into_iter().enumerate() {
            let mut usable = tools.clone();
            let (c, dropped) = compress_usable(&mut usable, &options(config, mode))?;
            if i == 0 {
                left_out.extend(dropped);
            }
            let originals: HashMap<&str, &Tool> =
                usable.iter().map(|(d, t)| (d.name.as_str(), t)).collect();
            let list = advertise(mode, config.search_limit, &c, &originals, &[]);
            out.push((
                mode,
                list.len(),
                serde_json::to_string(&json!({ "tools": list })).unwrap_or_default(),
            ));
        }
        Ok((out, left_out))
    }
}
