//! The gateway's configuration: a TOML file, validated when it is read.
//!
//! ```toml
//! listen = "127.0.0.1:8787"
//!
//! [upstream]
//! openai = "https://api.openai.com/v1"
//! anthropic = "https://api.anthropic.com/v1"
//!
//! [chef]
//! level = 1            # the default; 3 for the dispatcher when context is the binding constraint
//! prune = "discover"   # the default: the top_k best-ranked tools plus find_tools
//! top_k = 10
//! blocked = ["github_delete_repository"]
//!
//! [[chef.announcements]]
//! id = "freeze"
//! text = "The repository is frozen for the release; do not open pull requests."
//! channel = "auto"   # auto | system | user_tail
//!
//! [memory]
//! dir = "/var/lib/chef/sessions"
//! timeout_secs = 5
//! max_value_chars = 8000
//!
//! [limits]
//! max_body_bytes = 8388608
//! max_tools = 1000
//! max_internal_rounds = 4
//! upstream_timeout_secs = 300
//! header_timeout_secs = 30
//! body_timeout_secs = 60
//! max_connections = 10000
//! ```
//!
//! Every table and key is optional; unknown keys are refused with their name.

use std::{collections::BTreeMap, net::SocketAddr, path::Path, sync::Arc, time::Duration};

use chef_compress::{Level, MapStyle};
use serde::Deserialize;

/// The port `listen` defaults to.
pub const DEFAULT_PORT: u16 = 8787;

/// A configuration that cannot be used, with the key (or file) at fault. Where a parser
/// refused a value (TOML, an address, a URL, a level, a compiled map file), its error is
/// kept as the [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML is malformed, or a key is unknown or of the wrong type (toml names it).
    #[error("{0}")]
    Toml(#[source] Box<toml::de::Error>),
    /// A `[[policy]]` key is unknown or of the wrong type (toml names it).
    #[error("`policy.{policy}`: {source}")]
    PolicyToml {
        /// The policy's name.
        policy: String,
        /// What toml found.
        #[source]
        source: Box<toml::de::Error>,
    },
    /// A key's value is out of range.
    #[error("`{key}`: {message}")]
    Invalid {
        /// The dotted key (`policy.NAME.KEY` for a policy's).
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A key's value was refused by what reads it.
    #[error("`{key}`: {source}")]
    Value {
        /// The dotted key (`policy.NAME.KEY` for a policy's).
        key: String,
        /// Why the value cannot be used.
        #[source]
        source: ValueError,
    },
}

/// Why a key's value cannot be used ([`ConfigError::Value`]); each keeps the parser's
/// error as its source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Not an `address:port`.
    #[error("{value:?} is not an address:port ({source})")]
    Address {
        /// The value as written.
        value: String,
        /// The parser's error.
        #[source]
        source: std::net::AddrParseError,
    },
    /// Not a URL.
    #[error("{value:?} is not a URL ({source})")]
    Url {
        /// The value as written.
        value: String,
        /// The URL parser's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Not a compression level.
    #[error("{0}")]
    Level(#[source] chef_compress::UnsupportedLevel),
    /// Not a map style.
    #[error("{0}")]
    MapStyle(#[source] chef_compress::UnsupportedMapStyle),
    /// The compiled map file cannot be read.
    #[error("cannot read {path}: {source}")]
    MapRead {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The compiled map file is not a JSON object of tool name to line.
    #[error("{path} is not a compiled map (a JSON object of tool name to line): {source}")]
    MapJson {
        /// The file.
        path: String,
        /// What serde_json found.
        #[source]
        source: serde_json::Error,
    },
    /// Not a connection string PostgreSQL can use. The message never repeats the URL (it
    /// may hold a password).
    #[error("not a usable PostgreSQL URL: {}", crate::error_chain(&**.0))]
    PostgresUrl(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The URL asks for TLS (`sslmode=require`), which this build's PostgreSQL connections
    /// do not have.
    #[error(
        "sslmode=require needs TLS, which this build's PostgreSQL connections do not have: \
         connect over a private network or a local TLS proxy with sslmode=disable or prefer"
    )]
    PostgresTls,
}

impl ConfigError {
    fn value(key: impl Into<String>, source: ValueError) -> Self {
        Self::Value {
            key: key.into(),
            source,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    listen: Option<String>,
    #[serde(default)]
    upstream: RawUpstream,
    #[serde(default)]
    chef: RawChef,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    log: RawLog,
    #[serde(default)]
    memory: RawMemory,
    #[serde(default)]
    policy: Vec<toml::Table>,
}

/// A `[[policy]]` table: its own keys, and the `[chef]` keys it sets.
struct RawPolicy {
    name: String,
    route: Option<String>,
    keys: Vec<String>,
    chef: RawChef,
}

impl RawPolicy {
    fn read(mut table: toml::Table, index: usize) -> Result<Self, ConfigError> {
        let Some(toml::Value::String(name)) = table.remove("name") else {
            return Err(ConfigError::Invalid {
                key: format!("policy[{index}].name"),
                message: "each [[policy]] needs a `name` (a string)".to_owned(),
            });
        };
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            key: format!("policy.{name}.{key}"),
            message: message.to_owned(),
        };
        let route = match table.remove("route") {
            None => None,
            Some(toml::Value::String(route)) => Some(route),
            Some(_) => return Err(invalid("route", "must be a string")),
        };
        let keys = match table.remove("keys") {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items
                .into_iter()
                .map(|item| match item {
                    toml::Value::String(key) => Ok(key),
                    _ => Err(invalid("keys", "must be a list of strings")),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(invalid("keys", "must be a list of strings")),
        };
        // What is left are `[chef]` keys; an unknown one is named by toml.
        let chef = RawChef::deserialize(toml::Value::Table(table)).map_err(|source| {
            ConfigError::PolicyToml {
                policy: name.clone(),
                source: Box::new(source),
            }
        })?;
        Ok(Self {
            name,
            route,
            keys,
            chef,
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    dir: Option<String>,
    url: Option<String>,
    tools: Option<String>,
    timeout_secs: Option<u64>,
    max_value_chars: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUpstream {
    openai: Option<String>,
    anthropic: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChef {
    level: Option<u8>,
    map_style: Option<String>,
    prune: Option<String>,
    top_k: Option<usize>,
    always_keep: Option<Vec<String>>,
    allow: Option<Vec<String>>,
    blocked: Option<Vec<String>>,
    announce_tool_changes: Option<bool>,
    repeat_notice: Option<bool>,
    cache: Option<bool>,
    announcements: Option<Vec<RawAnnouncement>>,
    compiled_map: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnnouncement {
    id: String,
    text: String,
    #[serde(default)]
    channel: chef::Channel,
}

/// A standing note the gateway adds to every request (see `chef::Chef::announce`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// Its id.
    pub id: String,
    /// What the model is told.
    pub text: String,
    /// Where it goes.
    pub channel: chef::Channel,
}

/// A named policy: the `[chef]` settings for requests sent under its route
/// (`/ROUTE/v1/…`) or with one of its client keys.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Its name, in logs and metrics.
    pub name: String,
    /// The first path segment that selects it (`None`: keys only).
    pub route: Option<String>,
    /// SHA-256 fingerprints (`sha256:` and 64 lowercase hex digits) of the client API keys
    /// that select it (`Authorization: Bearer KEY` or `x-api-key: KEY`).
    pub keys: Vec<String>,
    /// The whole configuration for its requests: the file's, with the policy's keys set.
    pub config: Arc<Config>,
}

/// The fingerprint a policy's `keys` list for a client API key: `sha256:` and the hex
/// SHA-256 of the key's bytes (`printf %s "$KEY" | sha256sum`).
pub fn key_fingerprint(key: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(key.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_body_bytes: Option<usize>,
    max_tools: Option<usize>,
    max_internal_rounds: Option<u32>,
    upstream_timeout_secs: Option<u64>,
    header_timeout_secs: Option<u64>,
    body_timeout_secs: Option<u64>,
    max_connections: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLog {
    filter: Option<String>,
}

/// Which tools each request keeps before compression (see `chef::PrunePolicy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prune {
    /// Every tool the client sent.
    All,
    /// Tools that match the latest user message.
    ByTask,
    /// The `allow` list only.
    Allowlist(Vec<String>),
    /// The `top_k` best-ranked tools for the latest user message, plus `always_keep`.
    Ranked {
        /// How many ranked tools to keep.
        top_k: usize,
        /// Tools kept whatever the task.
        always_keep: Vec<String>,
    },
    /// Find, then call by real name: the `top_k` best-ranked tools plus `find_tools`,
    /// answered by the gateway itself (docs/DISCOVERY.md). The default, with `top_k` 10.
    Discover {
        /// How many ranked tools to show before any search.
        top_k: usize,
        /// Tools kept whatever the task.
        always_keep: Vec<String>,
    },
}

/// `top_k` of the default `prune = "discover"`.
pub const DEFAULT_DISCOVER_TOP_K: usize = 10;

impl Prune {
    /// Whether this is the default, `prune = "discover"` with `top_k` 10 and nothing
    /// always kept.
    #[must_use]
    pub fn is_default(&self) -> bool {
        matches!(self, Self::Discover { top_k, always_keep }
            if *top_k == DEFAULT_DISCOVER_TOP_K && always_keep.is_empty())
    }

    /// The config's name for this kind (`prune = "…"`).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::All => "all",
            Self::ByTask => "by_task",
            Self::Allowlist(_) => "allowlist",
            Self::Ranked { .. } => "ranked",
            Self::Discover { .. } => "discover",
        }
    }
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen (default `127.0.0.1:8787`).
    pub listen: SocketAddr,
    /// The OpenAI API base that replaces the client's `/v1` (default
    /// `https://api.openai.com/v1`).
    pub openai_base: String,
    /// The Anthropic API base that replaces the client's `/v1` (default
    /// `https://api.anthropic.com/v1`).
    pub anthropic_base: String,
    /// The compression level.
    pub level: Level,
    /// The level-3 map style (`None`: chef's choice).
    pub map_style: Option<MapStyle>,
    /// Pruning.
    pub prune: Prune,
    /// Tools, namespaces or toolkits refused by the gate.
    pub blocked: Vec<String>,
    /// Tell the model about tool changes (blocked tools).
    pub announce_tool_changes: bool,
    /// The loop guard: tell the model when its latest calls repeat answered calls (see
    /// `chef::ChefConfig::with_repeat_notice`). On by default.
    pub repeat_notice: bool,
    /// chef's cache breakpoints.
    pub cache: bool,
    /// Announcements added to every request.
    pub announcements: Vec<Announcement>,
    /// The compiled map for level 4 (real tool name → compiled line), read from
    /// `compiled_map`; at level 1 its verified docstrings are used too.
    pub compiled_map: Option<Arc<BTreeMap<String, String>>>,
    /// Policies chosen per route or per client key, each a copy of this config with its own
    /// `[chef]` keys set (see [`Config::policy_for`]).
    pub policies: Vec<Policy>,
    /// The largest request body accepted.
    pub max_body_bytes: usize,
    /// The most tools one request may declare.
    pub max_tools: usize,
    /// Upstream requests the gateway may make for one client request (the first included).
    pub max_internal_rounds: u32,
    /// How long one upstream request may take, streaming included.
    pub upstream_timeout: Duration,
    /// The header timeout and connection cap of the listener (`[limits]
    /// header_timeout_secs`, `max_connections`; see [`crate::serve_router`]).
    pub connections: crate::Connections,
    /// How long a client may take to send a request's whole body once its headers are in
    /// (`[limits] body_timeout_secs`, default 60 s); past that it is answered 400, in the
    /// API's error shape.
    pub body_timeout: Duration,
    /// The `tracing` filter (default `info`; `RUST_LOG` overrides it).
    pub log_filter: String,
    /// Where each session's memory is kept (one directory per session id); `None`: no
    /// memory tools, unless `memory_url` is set.
    pub memory_dir: Option<std::path::PathBuf>,
    /// A PostgreSQL URL: every session's memory in that database, each session in its own
    /// key space (`chef::store::Scoped`), shared by every gateway instance using it.
    pub memory_url: Option<String>,
    /// The tools memory is offered through: `create_memory` / `modify_memory` (default), or
    /// chef's unified `context` tool.
    pub memory_tools: chef::ToolsMode,
    /// How long one memory store operation may take (connecting, opening a session's
    /// store, each read and write); one that takes longer fails (default 5 s).
    pub memory_timeout: Duration,
    /// The longest value or description, in characters, the model's memory tools may store
    /// (`[memory] max_value_chars`; default [`chef::memory::DEFAULT_MAX_VALUE_CHARS`];
    /// `None`: no limit, which a config file cannot ask for: 0 refuses every non-empty
    /// write).
    pub memory_max_value_chars: Option<usize>,
    /// A store of the embedder's own for every session's memory, each session in its own
    /// key space as with `memory_url` (never read from a file; set it before
    /// [`Gateway::new`](crate::Gateway::new)). Takes the place of `memory_url`.
    pub memory_store: Option<SharedStore>,
}

/// A store every session's memory shares (see [`Config::memory_store`]).
#[derive(Clone)]
pub struct SharedStore(pub Arc<dyn chef::store::StorageBackend>);

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedStore(..)")
    }
}

/// The default of `[limits] body_timeout_secs`.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// The default of `[memory] timeout_secs`.
pub const DEFAULT_MEMORY_TIMEOUT: Duration = Duration::from_secs(5);

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            openai_base: "https://api.openai.com/v1".to_owned(),
            anthropic_base: "https://api.anthropic.com/v1".to_owned(),
            level: Level::One,
            map_style: None,
            prune: Prune::Discover {
                top_k: DEFAULT_DISCOVER_TOP_K,
                always_keep: Vec::new(),
            },
            blocked: Vec::new(),
            announce_tool_changes: false,
            repeat_notice: true,
            cache: true,
            announcements: Vec::new(),
            compiled_map: None,
            policies: Vec::new(),
            max_body_bytes: 8 * 1024 * 1024,
            max_tools: 1000,
            max_internal_rounds: 4,
            upstream_timeout: Duration::from_secs(300),
            connections: crate::Connections::default(),
            body_timeout: DEFAULT_BODY_TIMEOUT,
            log_filter: "info".to_owned(),
            memory_dir: None,
            memory_url: None,
            memory_tools: chef::ToolsMode::Legacy,
            memory_timeout: DEFAULT_MEMORY_TIMEOUT,
            memory_max_value_chars: Some(chef::memory::DEFAULT_MAX_VALUE_CHARS),
            memory_store: None,
        }
    }
}

impl Config {
    /// Whether sessions have memory (`[memory] dir` or `url`, or a
    /// [`memory_store`](Self::memory_store)).
    pub fn has_memory(&self) -> bool {
        self.memory_dir.is_some() || self.memory_url.is_some() || self.memory_store.is_some()
    }

    /// What `[memory]` points at, for messages: the directory, or the PostgreSQL database,
    /// its host and user (never the password); `None` without memory.
    pub fn memory_target(&self) -> Option<String> {
        if let Some(dir) = &self.memory_dir {
            return Some(format!("dir {}", dir.display()));
        }
        if let Some(url) = &self.memory_url {
            return Some(pg_target(url));
        }
        self.memory_store
            .as_ref()
            .map(|_| "the embedder's store".to_owned())
    }

    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Parses and validates config text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let raw: Raw = toml::from_str(text).map_err(|e| ConfigError::Toml(Box::new(e)))?;
        let mut config = Self::default();
        if let Some(listen) = raw.listen {
            config.listen = listen.parse().map_err(|source| {
                ConfigError::value(
                    "listen",
                    ValueError::Address {
                        value: listen.clone(),
                        source,
                    },
                )
            })?;
        }
        if let Some(url) = raw.upstream.openai {
            config.openai_base = base_url("upstream.openai", &url)?;
        }
        if let Some(url) = raw.upstream.anthropic {
            config.anthropic_base = base_url("upstream.anthropic", &url)?;
        }
        apply_chef(&mut config, raw.chef, "chef")?;
        let limits = raw.limits;
        if let Some(n) = limits.max_body_bytes {
            config.max_body_bytes = positive("limits.max_body_bytes", n)?;
        }
        if let Some(n) = limits.max_tools {
            config.max_tools = positive("limits.max_tools", n)?;
        }
        if let Some(n) = limits.max_internal_rounds {
            if !(1..=32).contains(&n) {
                return Err(ConfigError::Invalid {
                    key: "limits.max_internal_rounds".to_owned(),
                    message: format!("{n} is outside 1..=32"),
                });
            }
            config.max_internal_rounds = n;
        }
        if let Some(secs) = limits.upstream_timeout_secs {
            config.upstream_timeout =
                Duration::from_secs(positive("limits.upstream_timeout_secs", secs)?);
        }
        if let Some(secs) = limits.header_timeout_secs {
            config.connections.header_timeout =
                Duration::from_secs(positive("limits.header_timeout_secs", secs)?);
        }
        if let Some(secs) = limits.body_timeout_secs {
            config.body_timeout = Duration::from_secs(positive("limits.body_timeout_secs", secs)?);
        }
        if let Some(n) = limits.max_connections {
            config.connections.max = positive("limits.max_connections", n)?;
        }
        if let Some(filter) = raw.log.filter {
            // Checked here: at start an invalid directive would only be skipped, with a
            // warning, and the gateway would log nothing it was asked for.
            if let Err(e) = tracing_subscriber::EnvFilter::try_new(&filter) {
                return Err(ConfigError::Invalid {
                    key: "log.filter".to_owned(),
                    message: format!("{filter:?} is not a tracing filter: {e}"),
                });
            }
            config.log_filter = filter;
        }
        if let Some(dir) = raw.memory.dir {
            if dir.trim().is_empty() {
                return Err(ConfigError::Invalid {
                    key: "memory.dir".to_owned(),
                    message: "must be a directory path".to_owned(),
                });
            }
            config.memory_dir = Some(std::path::PathBuf::from(dir));
        }
        if let Some(url) = raw.memory.url {
            if config.memory_dir.is_some() {
                return Err(ConfigError::Invalid {
                    key: "memory.url".to_owned(),
                    message: "set `dir` or `url`, not both".to_owned(),
                });
            }
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return Err(ConfigError::Invalid {
                    key: "memory.url".to_owned(),
                    message: "must be a postgres:// or postgresql:// URL".to_owned(),
                });
            }
            if !cfg!(feature = "postgres") {
                return Err(ConfigError::Invalid {
                    key: "memory.url".to_owned(),
                    message: "this chef was built without PostgreSQL support (cargo feature \
                              `postgres`)"
                        .to_owned(),
                });
            }
            check_pg_url(&url).map_err(|source| ConfigError::value("memory.url", source))?;
            config.memory_url = Some(url);
        }
        if let Some(secs) = raw.memory.timeout_secs {
            config.memory_timeout = Duration::from_secs(positive("memory.timeout_secs", secs)?);
        }
        if let Some(max) = raw.memory.max_value_chars {
            config.memory_max_value_chars = Some(max);
        }
        if let Some(tools) = raw.memory.tools {
            config.memory_tools = match tools.as_str() {
                "memory" => chef::ToolsMode::Legacy,
                "context" => chef::ToolsMode::Unified,
                other => {
                    return Err(ConfigError::Invalid {
                        key: "memory.tools".to_owned(),
                        message: format!("unknown {other:?} (expected memory or context)"),
                    });
                }
            };
        }
        let mut policies = Vec::with_capacity(raw.policy.len());
        for (index, table) in raw.policy.into_iter().enumerate() {
            let policy = RawPolicy::read(table, index)?;
            policies.push(read_policy(&config, policy, &policies)?);
        }
        config.policies = policies;
        Ok(config)
    }

    /// The configuration for a request: the policy of its route (the first path segment
    /// before `/v1`), else the first policy listing its API key's fingerprint, else this
    /// one. Returns the policy's index in [`policies`](Self::policies) too.
    pub fn policy_for(&self, route: Option<&str>, api_key: Option<&str>) -> Option<usize> {
        if let Some(route) = route {
            return self
                .policies
                .iter()
                .position(|p| p.route.as_deref() == Some(route));
        }
        let fingerprint = key_fingerprint(api_key?);
        self.policies
            .iter()
            .position(|p| p.keys.contains(&fingerprint))
    }
}

/// Sets `config`'s chef settings from a `[chef]` table (or a policy's keys), naming keys
/// under `prefix`.
fn apply_chef(config: &mut Config, chef: RawChef, prefix: &str) -> Result<(), ConfigError> {
    let key = |name: &str| format!("{prefix}.{name}");
    if let Some(level) = chef.level {
        config.level = Level::try_from(level)
            .map_err(|e| ConfigError::value(key("level"), ValueError::Level(e)))?;
    }
    if let Some(style) = chef.map_style {
        config.map_style = Some(
            style
                .parse()
                .map_err(|e| ConfigError::value(key("map_style"), ValueError::MapStyle(e)))?,
        );
    }
    if let Some(path) = chef.compiled_map {
        config.compiled_map = Some(Arc::new(
            read_compiled_map(&path).map_err(|e| ConfigError::value(key("compiled_map"), e))?,
        ));
    }
    if config.level == Level::Four && config.compiled_map.is_none() {
        return Err(ConfigError::Invalid {
            key: key("level"),
            message: "level 4 needs a compiled map: set `compiled_map` to the JSON file \
                      `chef compile-map` writes"
                .to_owned(),
        });
    }
    let inherits = chef.prune.is_none()
        && chef.top_k.is_none()
        && chef.always_keep.is_none()
        && chef.allow.is_none();
    // A dispatcher level chosen without a prune setting keeps every tool in its map: `q`
    // is its discovery, so the discovery default does not apply there.
    if inherits && chef.level.is_some() && config.level.is_dispatcher() && config.prune.is_default()
    {
        config.prune = Prune::All;
    }
    if !inherits {
        // A key left out keeps its inherited value: the kind, and the settings of that kind
        // (a policy with only `top_k = 3` under `[chef] prune = "ranked"` stays ranked and
        // keeps `always_keep`). Naming another kind inherits none of the old kind's keys.
        let inherited_kind = config.prune.kind();
        let kind = chef.prune.as_deref().unwrap_or(inherited_kind);
        let (mut top_k, mut always_keep, mut allow) = (chef.top_k, chef.always_keep, chef.allow);
        if kind == inherited_kind {
            match &config.prune {
                Prune::Ranked {
                    top_k: k,
                    always_keep: keep,
                }
                | Prune::Discover {
                    top_k: k,
                    always_keep: keep,
                } => {
                    top_k = top_k.or(Some(*k));
                    always_keep = always_keep.or_else(|| Some(keep.clone()));
                }
                Prune::Allowlist(list) => allow = allow.or_else(|| Some(list.clone())),
                Prune::All | Prune::ByTask => {}
            }
        }
        config.prune = prune(prefix, Some(kind), top_k, always_keep, allow)?;
    }
    if let Some(blocked) = chef.blocked {
        // An entry of no letters or digits ("", "_", " ") names no tool: most likely a
        // slip that leaves open the tool it meant.
        if let Some(empty) = blocked
            .iter()
            .find(|entry| !entry.chars().any(char::is_alphanumeric))
        {
            return Err(ConfigError::Invalid {
                key: key("blocked"),
                message: format!("the entry {empty:?} names no tool"),
            });
        }
        // A `*` that is not the last character would match nothing as meant.
        if let Some(message) = blocked.iter().find_map(|e| chef::gate::pattern_error(e)) {
            return Err(ConfigError::Invalid {
                key: key("blocked"),
                message,
            });
        }
        config.blocked = blocked;
    }
    if let Some(on) = chef.announce_tool_changes {
        config.announce_tool_changes = on;
    }
    if let Some(on) = chef.repeat_notice {
        config.repeat_notice = on;
    }
    if let Some(on) = chef.cache {
        config.cache = on;
    }
    if let Some(announcements) = chef.announcements {
        config.announcements.clear();
        for announcement in announcements {
            if announcement.id.is_empty() || announcement.text.trim().is_empty() {
                return Err(ConfigError::Invalid {
                    key: key("announcements"),
                    message: "each needs a non-empty `id` and `text`".to_owned(),
                });
            }
            if config.announcements.iter().any(|a| a.id == announcement.id) {
                return Err(ConfigError::Invalid {
                    key: key("announcements"),
                    message: format!("the id {:?} is used twice", announcement.id),
                });
            }
            config.announcements.push(Announcement {
                id: announcement.id,
                text: announcement.text,
                channel: announcement.channel,
            });
        }
    }
    Ok(())
}

/// A `[[policy]]`: the file's configuration with the policy's chef keys set.
fn read_policy(base: &Config, raw: RawPolicy, earlier: &[Policy]) -> Result<Policy, ConfigError> {
    let name = raw.name;
    let valid = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
    };
    if !valid(&name) {
        return Err(ConfigError::Invalid {
            key: "policy.name".to_owned(),
            message: format!("{name:?}: 1 to 64 characters of A-Z a-z 0-9 - _"),
        });
    }
    let prefix = format!("policy.{name}");
    let invalid = |what: &str, message: String| ConfigError::Invalid {
        key: format!("{prefix}.{what}"),
        message,
    };
    if earlier.iter().any(|p| p.name == name) {
        return Err(invalid("name", "the name is used twice".to_owned()));
    }
    if let Some(route) = &raw.route {
        if !valid(route) || route == "v1" || route == "metrics" {
            return Err(invalid(
                "route",
                format!("{route:?}: 1 to 64 characters of A-Z a-z 0-9 - _, not `v1` or `metrics`"),
            ));
        }
        if let Some(other) = earlier.iter().find(|p| p.route.as_ref() == Some(route)) {
            return Err(invalid(
                "route",
                format!("{route:?} is the route of policy {:?} too", other.name),
            ));
        }
    }
    if raw.route.is_none() && raw.keys.is_empty() {
        return Err(invalid(
            "route",
            "a policy needs a `route`, `keys`, or both".to_owned(),
        ));
    }
    for key in &raw.keys {
        let hex = key.strip_prefix("sha256:").unwrap_or_default();
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(invalid(
                "keys",
                "each is `sha256:` and 64 lowercase hex digits, the SHA-256 of the key \
                 (`printf %s \"$KEY\" | sha256sum`); keys themselves are never written in the config"
                    .to_owned(),
            ));
        }
    }
    let mut config = base.clone();
    apply_chef(&mut config, raw.chef, &prefix)?;
    Ok(Policy {
        name,
        route: raw.route,
        keys: raw.keys,
        config: Arc::new(config),
    })
}

/// Whether PostgreSQL can use `url` at all: it parses as a connection string, and asks for
/// no TLS (this build connects without TLS, so `sslmode=require` never connects). The
/// message never repeats the URL (it may hold a password).
#[cfg(feature = "postgres")]
fn check_pg_url(url: &str) -> Result<(), ValueError> {
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| ValueError::PostgresUrl(Box::new(e)))?;
    match config.get_ssl_mode() {
        tokio_postgres::config::SslMode::Disable | tokio_postgres::config::SslMode::Prefer => {
            Ok(())
        }
        _ => Err(ValueError::PostgresTls),
    }
}

#[cfg(not(feature = "postgres"))]
fn check_pg_url(_url: &str) -> Result<(), ValueError> {
    Ok(())
}

/// `PostgreSQL database DB on HOST:PORT as USER`, from a URL [`check_pg_url`] accepted.
#[cfg(feature = "postgres")]
fn pg_target(url: &str) -> String {
    use tokio_postgres::config::Host;
    let Ok(config) = url.parse::<tokio_postgres::Config>() else {
        return "PostgreSQL".to_owned();
    };
    let user = config.get_user().unwrap_or("(default user)");
    let db = config.get_dbname().unwrap_or(user);
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                #[cfg(unix)]
                Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    format!(
        "PostgreSQL database {db} on {} as {user}",
        if hosts.is_empty() {
            "localhost:5432".to_owned()
        } else {
            hosts.join(",")
        }
    )
}

#[cfg(not(feature = "postgres"))]
fn pg_target(_url: &str) -> String {
    "PostgreSQL".to_owned()
}

/// Reads a compiled map file: a JSON object of real tool name → compiled line.
fn read_compiled_map(path: &str) -> Result<BTreeMap<String, String>, ValueError> {
    let text = std::fs::read_to_string(path).map_err(|source| ValueError::MapRead {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ValueError::MapJson {
        path: path.to_owned(),
        source,
    })
}

fn positive<T: PartialEq + Default + std::fmt::Display>(key: &str, n: T) -> Result<T, ConfigError> {
    if n == T::default() {
        return Err(ConfigError::Invalid {
            key: key.to_owned(),
            message: "must be greater than 0".to_owned(),
        });
    }
    Ok(n)
}

fn base_url(key: &str, url: &str) -> Result<String, ConfigError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        ConfigError::value(
            key,
            ValueError::Url {
                value: url.to_owned(),
                source: Box::new(e),
            },
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ConfigError::Invalid {
            key: key.to_owned(),
            message: format!("{url:?} is not an http(s) URL"),
        });
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(ConfigError::Invalid {
            key: key.to_owned(),
            message: format!("{url:?} must not have a query or fragment"),
        });
    }
    Ok(url.trim_end_matches('/').to_owned())
}

fn prune(
    prefix: &str,
    kind: Option<&str>,
    top_k: Option<usize>,
    always_keep: Option<Vec<String>>,
    allow: Option<Vec<String>>,
) -> Result<Prune, ConfigError> {
    let key = |name: &str| format!("{prefix}.{name}");
    let unused = |name: &str, kind: &str| ConfigError::Invalid {
        key: key(name),
        message: format!("only used with a prune kind that takes it, not {kind:?}"),
    };
    let kind = kind.unwrap_or("all");
    match kind {
        "all" | "by_task" => {
            if top_k.is_some() {
                return Err(unused("top_k", kind));
            }
            if always_keep.is_some() {
                return Err(unused("always_keep", kind));
            }
            if allow.is_some() {
                return Err(unused("allow", kind));
            }
            Ok(if kind == "all" {
                Prune::All
            } else {
                Prune::ByTask
            })
        }
        "allowlist" => {
            if top_k.is_some() {
                return Err(unused("top_k", kind));
            }
            if always_keep.is_some() {
                return Err(unused("always_keep", kind));
            }
            Ok(Prune::Allowlist(allow.ok_or_else(|| {
                ConfigError::Invalid {
                    key: key("allow"),
                    message: "required with prune = \"allowlist\"".to_owned(),
                }
            })?))
        }
        "ranked" => {
            if allow.is_some() {
                return Err(unused("allow", kind));
            }
            Ok(Prune::Ranked {
                top_k: positive(
                    &key("top_k"),
                    top_k.ok_or_else(|| ConfigError::Invalid {
                        key: key("top_k"),
                        message: "required with prune = \"ranked\"".to_owned(),
                    })?,
                )?,
                always_keep: always_keep.unwrap_or_default(),
            })
        }
        "discover" => {
            if allow.is_some() {
                return Err(unused("allow", kind));
            }
            // 0 is allowed here (not for "ranked"): find_tools alone until the model
            // searches, what `chef mcp serve`'s discover mode shows a host.
            Ok(Prune::Discover {
                top_k: top_k.unwrap_or(DEFAULT_DISCOVER_TOP_K),
                always_keep: always_keep.unwrap_or_default(),
            })
        }
        other => Err(ConfigError::Invalid {
            key: key("prune"),
            message: format!(
                "unknown kind {other:?} (expected all, by_task, allowlist, ranked or discover)"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// The prune setting of the one policy of `toml`.
    fn policy_prune(toml: &str) -> Result<Prune, ConfigError> {
        let config = Config::parse(toml)?;
        Ok(config.policies.first().unwrap().config.prune.clone())
    }

    #[test]
    fn a_policy_inherits_the_prune_keys_it_does_not_set() {
        let base = "[chef]\nprune = \"ranked\"\ntop_k = 5\nalways_keep = [\"a\"]\n";
        let policy = |keys: &str| format!("{base}[[policy]]\nname = \"p\"\nroute = \"p\"\n{keys}");
        let ranked = |top_k: usize, always_keep: &[&str]| Prune::Ranked {
            top_k,
            always_keep: always_keep.iter().map(|&k| k.to_owned()).collect(),
        };
        let cases = [
            // Only top_k: still ranked, always_keep inherited.
            ("top_k = 3\n", ranked(3, &["a"])),
            // Only always_keep: top_k inherited.
            ("always_keep = []\n", ranked(5, &[])),
            // Nothing about pruning: the whole setting inherited.
            ("level = 1\n", ranked(5, &["a"])),
            // Another kind inherits none of the ranked keys.
            (
                "prune = \"allowlist\"\nallow = [\"b\"]\n",
                Prune::Allowlist(vec!["b".to_owned()]),
            ),
        ];
        for (keys, want) in cases {
            assert_eq!(policy_prune(&policy(keys)).unwrap(), want, "{keys}");
        }
        let err = policy_prune(&policy("prune = \"allowlist\"\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("policy.p.allow"), "{err}");
        // A key the inherited kind does not take is still refused, by its name.
        let all = "[[policy]]\nname = \"p\"\nroute = \"p\"\nallow = [\"x\"]\n";
        let err = policy_prune(all).unwrap_err().to_string();
        assert!(err.contains("policy.p.allow"), "{err}");
        // Under the default (discover), a policy's top_k keeps the kind.
        let top = "[[policy]]\nname = \"p\"\nroute = \"p\"\ntop_k = 3\n";
        assert_eq!(
            policy_prune(top).unwrap(),
            Prune::Discover {
                top_k: 3,
                always_keep: Vec::new()
            }
        );
    }

    #[test]
    fn defaults_listen_on_loopback_only() {
        let config = Config::parse("").unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8787");
    }

    /// Issue 43: the default follows the evidence — level 1 with discovery, top 10 — and a
    /// dispatcher level chosen alone keeps every tool in its map.
    #[test]
    fn the_default_is_discovery_at_level_one_and_a_dispatcher_keeps_every_tool() {
        let config = Config::parse("").unwrap();
        assert_eq!(config.level, Level::One);
        assert_eq!(
            config.prune,
            Prune::Discover {
                top_k: 10,
                always_keep: Vec::new()
            }
        );
        let config = Config::parse("[chef]\nlevel = 3\n").unwrap();
        assert_eq!(config.prune, Prune::All);
        let config = Config::parse("[chef]\nlevel = 3\nprune = \"discover\"\n").unwrap();
        assert!(matches!(config.prune, Prune::Discover { top_k: 10, .. }));
        let config = Config::parse("[chef]\nprune = \"discover\"\ntop_k = 4\n").unwrap();
        assert!(matches!(config.prune, Prune::Discover { top_k: 4, .. }));
        // 0: find_tools alone until the model searches (chef mcp serve's discover mode).
        let config = Config::parse("[chef]\ntop_k = 0\n").unwrap();
        assert!(matches!(config.prune, Prune::Discover { top_k: 0, .. }));
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = Config::parse("[chef]\nlevle = 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("levle"), "{err}");
        let err = Config::parse("[limit]\n").unwrap_err().to_string();
        assert!(err.contains("limit"), "{err}");
    }

    #[test]
    fn bad_values_name_their_key() {
        for (text, key) in [
            ("listen = \"localhost\"", "listen"),
            ("[upstream]\nopenai = \"ftp://x\"", "upstream.openai"),
            ("[chef]\nlevel = 9", "chef.level"),
            ("[chef]\nmap_style = \"terse\"", "chef.map_style"),
            ("[chef]\nprune = \"ranked\"", "chef.top_k"),
            ("[chef]\nallow = [\"a\"]", "chef.allow"),
            ("[chef]\nprune = \"ranked\"\ntop_k = 0", "chef.top_k"),
            (
                "[chef]\nprune = \"discover\"\nallow = [\"a\"]",
                "chef.allow",
            ),
            (
                "[limits]\nmax_internal_rounds = 0",
                "limits.max_internal_rounds",
            ),
            ("[limits]\nmax_body_bytes = 0", "limits.max_body_bytes"),
            ("[chef]\nblocked = [\"ok\", \"\"]", "chef.blocked"),
            ("[chef]\nblocked = [\"_\"]", "chef.blocked"),
            ("[chef]\nblocked = [\"*_delete\"]", "chef.blocked"),
            ("[chef]\nblocked = [\"git_**\"]", "chef.blocked"),
            (
                "[[policy]]\nname = \"p\"\nroute = \"p\"\nblocked = [\" \"]",
                "policy.p.blocked",
            ),
            ("[log]\nfilter = \"[[[not valid\"", "log.filter"),
        ] {
            let err = Config::parse(text).unwrap_err().to_string();
            assert!(err.contains(key), "{text}: {err}");
        }
    }

    #[test]
    fn announcements_read_and_duplicates_are_named() {
        let config = Config::parse(
            "[[chef.announcements]]\nid = \"a\"\ntext = \"Be brief.\"\nchannel = \"system\"\n",
        )
        .unwrap();
        assert_eq!(config.announcements[0].channel, chef::Channel::System);
        let err = Config::parse(
            "[[chef.announcements]]\nid = \"a\"\ntext = \"x\"\n[[chef.announcements]]\nid = \"a\"\ntext = \"y\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("chef.announcements") && err.contains("twice"),
            "{err}"
        );
        let err =
            Config::parse("[[chef.announcements]]\nid = \"a\"\ntext = \"x\"\nchannel = \"loud\"\n")
                .unwrap_err()
                .to_string();
        assert!(err.contains("loud"), "{err}");
    }

    #[test]
    fn a_full_config_reads() {
        let config = Config::parse(
            "listen = \"0.0.0.0:9000\"\n[upstream]\nopenai = \"http://127.0.0.1:1/v1/\"\n\
             [chef]\nlevel = 2\nprune = \"ranked\"\ntop_k = 5\nblocked = [\"x\"]\n\
             [limits]\nupstream_timeout_secs = 3\n",
        )
        .unwrap();
        assert_eq!(config.openai_base, "http://127.0.0.1:1/v1");
        assert_eq!(config.level, Level::Two);
        assert_eq!(
            config.prune,
            Prune::Ranked {
                top_k: 5,
                always_keep: vec![]
            }
        );
        assert_eq!(config.upstream_timeout, Duration::from_secs(3));
    }
}
