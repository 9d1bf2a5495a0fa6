//! `chef-mcp.toml`: what `chef mcp serve` fronts and how it shows it to the host.
//!
//! ```toml
//! mode = "discover"               # minify | dispatch | search | discover (default discover)
//! map_style = "distinct"          # dispatch: the code map's style (default: chef's choice)
//! compiled_map = "map.json"       # dispatch: a level-4 map (chef compile-map), relative to this file
//! prefix_format = "{server}_{tool}"
//! blocklist = ["git_push", "files_*"]   # refused at call time; the tool list does not change
//!                                 # (matched as calls are: see `gate`)
//! call_timeout = 60               # seconds per forwarded call
//! start_timeout = 10              # seconds for an upstream to start and list its tools
//! ping_interval = 15              # seconds between pings; no answer within start_timeout: restart
//! search_limit = 8                # results per q; discover: find_tools' default, a call
//!                                 # may ask for up to max(10, search_limit)
//! found_limit = 32                # discover: found tools listed at once; the least recently
//!                                 # found or called leaves first (it stays callable)
//! code_file = "chef-mcp.codes.json"   # dispatch, search: codes kept across restarts
//!                                 # (default: beside this file, named after it; "" for none)
//! http_max_sessions = 1000        # --http: sessions open at once; past that initialize fails
//!
//! [[server]]
//! name = "files"
//! command = "python3 files_server.py --root ."   # split like a shell, run directly
//! env = { LOG = "warn" }
//! cwd = "."
//!
//! [[server]]
//! name = "remote"
//! url = "https://mcp.example.com/mcp"            # streamable HTTP
//! headers = { Authorization = "Bearer …" }
//! ```

use std::{
    collections::{BTreeMap, HashSet},
    path::{Path, PathBuf},
    time::Duration,
};

use serde::Deserialize;

use crate::prefix::{BadNameFormat, NameFormat};

/// Discover mode's default `found_limit`: four full searches' worth at the default
/// `search_limit`.
pub(crate) const DEFAULT_FOUND_LIMIT: usize = 32;

/// Why the config file cannot be used; `Display` names the file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// What is wrong in the file.
    #[error("{}: {source}", path.display())]
    Invalid {
        path: PathBuf,
        #[source]
        source: Problem,
    },
}

/// What is wrong in a config text, naming the key or the server.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Problem {
    /// The TOML is malformed, or a key is unknown or of the wrong type (toml names it).
    #[error("{0}")]
    Toml(#[source] toml::de::Error),
    #[error("map_style: {0}")]
    MapStyle(#[source] chef_compress::UnsupportedMapStyle),
    #[error("compiled_map: cannot read {}: {source}", path.display())]
    MapRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("compiled_map: {} is not a JSON object of tool name to line: {source}", path.display())]
    MapJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("prefix_format {0}")]
    PrefixFormat(#[source] BadNameFormat),
    #[error("{at}: cannot split command: {source}")]
    Split {
        at: String,
        #[source]
        source: shell_words::ParseError,
    },
    #[error("{key}: {source}")]
    Seconds {
        key: &'static str,
        #[source]
        source: std::time::TryFromFloatSecsError,
    },
    /// A value chef itself refuses (the message names the key or the server).
    #[error("{0}")]
    Invalid(String),
}

/// How the host sees the upstream tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Every tool, level 1: short descriptions, full schemas.
    Minify,
    /// chef's dispatcher: `t` (whose description carries the code map) and `q`.
    Dispatch,
    /// `t` and `q` only, no map: the host finds tools with `q`.
    Search,
    /// Find, then call by real name: `find_tools` alone at first; each tool it finds joins
    /// the list (level 1, the upstream's own schema) and the host is sent
    /// `tools/list_changed`.
    Discover,
}

impl Mode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Minify => "minify",
            Self::Dispatch => "dispatch",
            Self::Search => "search",
            Self::Discover => "discover",
        }
    }

    pub(crate) const ALL: [Self; 4] = [Self::Minify, Self::Dispatch, Self::Search, Self::Discover];
}

/// How chef reaches an upstream.
#[derive(Debug, Clone)]
pub(crate) enum Transport {
    /// A child process speaking MCP over its stdin and stdout.
    Command {
        /// The program and its arguments.
        argv: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Url {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// One upstream MCP server.
#[derive(Debug, Clone)]
pub(crate) struct Upstream {
    pub(crate) name: String,
    pub(crate) transport: Transport,
}

/// A checked configuration.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) mode: Mode,
    pub(crate) map_style: Option<chef_compress::MapStyle>,
    pub(crate) compiled_map: Option<BTreeMap<String, String>>,
    pub(crate) prefix_format: NameFormat,
    pub(crate) blocklist: super::gate::Blocklist,
    pub(crate) call_timeout: Duration,
    pub(crate) start_timeout: Duration,
    /// How often a live upstream is pinged; one that does not answer within the start
    /// timeout is restarted.
    pub(crate) ping_interval: Duration,
    pub(crate) search_limit: usize,
    /// Discover mode: how many found tools the list holds at once (at least 1).
    pub(crate) found_limit: usize,
    /// `--http`: the most sessions open at once (at least 1).
    pub(crate) http_max_sessions: usize,
    /// Where the codes issued are kept across restarts (dispatch and search modes); `None`
    /// in minify mode, or when `code_file = ""` turns it off.
    pub(crate) code_file: Option<PathBuf>,
    pub(crate) servers: Vec<Upstream>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    mode: Option<String>,
    map_style: Option<String>,
    compiled_map: Option<PathBuf>,
    prefix_format: Option<String>,
    #[serde(default)]
    blocklist: Vec<String>,
    call_timeout: Option<f64>,
    start_timeout: Option<f64>,
    ping_interval: Option<f64>,
    search_limit: Option<usize>,
    found_limit: Option<usize>,
    http_max_sessions: Option<usize>,
    code_file: Option<PathBuf>,
    #[serde(default, rename = "server")]
    servers: Vec<RawServer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    command: Option<String>,
    args: Option<Vec<String>>,
    url: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Reads and checks `path`. The error names the file and the key.
pub(crate) fn read(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&text, path).map_err(|source| ConfigError::Invalid {
        path: path.to_owned(),
        source,
    })
}

fn seconds(key: &'static str, value: Option<f64>, default: f64) -> Result<Duration, Problem> {
    let s = value.unwrap_or(default);
    if !s.is_finite() || s <= 0.0 {
        return Err(Problem::Invalid(format!(
            "{key} must be a number of seconds above 0 (got {s})"
        )));
    }
    Duration::try_from_secs_f64(s).map_err(|source| Problem::Seconds { key, source })
}

/// A count of at least 1 (`default` when the key is absent): 0 is refused, naming the key,
/// rather than read as 1.
fn count(key: &'static str, value: Option<usize>, default: usize) -> Result<usize, Problem> {
    match value.unwrap_or(default) {
        0 => Err(Problem::Invalid(format!(
            "{key} must be at least 1 (got 0)"
        ))),
        n => Ok(n),
    }
}

/// Parses the configuration `text` of the file `path` (its relative paths are under the
/// file's directory, and the default code file is named after it).
pub(crate) fn parse(text: &str, path: &Path) -> Result<Config, Problem> {
    let base = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let invalid = |message: String| Err(Problem::Invalid(message));
    let raw: Raw = toml::from_str(text).map_err(Problem::Toml)?;
    // Discover by default: find, then call by real name is what a real model does best with
    // (docs/EVAL.md, "chef mcp serve's modes on a model").
    let mode = match raw.mode.as_deref().unwrap_or("discover") {
        "minify" => Mode::Minify,
        "dispatch" => Mode::Dispatch,
        "search" => Mode::Search,
        "discover" => Mode::Discover,
        other => {
            return invalid(format!(
                "mode {other:?} is not one of minify, dispatch, search, discover"
            ));
        }
    };
    let map_style = raw
        .map_style
        .as_deref()
        .map(|s| {
            s.parse::<chef_compress::MapStyle>()
                .map_err(Problem::MapStyle)
        })
        .transpose()?;
    let compiled_map = match &raw.compiled_map {
        None => None,
        Some(file) => {
            let file = base.join(file);
            let text = std::fs::read_to_string(&file).map_err(|source| Problem::MapRead {
                path: file.clone(),
                source,
            })?;
            let map: BTreeMap<String, String> =
                serde_json::from_str(&text).map_err(|source| Problem::MapJson {
                    path: file.clone(),
                    source,
                })?;
            Some(map)
        }
    };
    if compiled_map.is_some() && mode != Mode::Dispatch {
        return invalid("compiled_map is used only with mode = \"dispatch\"".to_owned());
    }
    let prefix_format =
        NameFormat::parse(raw.prefix_format.as_deref().unwrap_or("{server}_{tool}"))
            .map_err(Problem::PrefixFormat)?;
    if raw.servers.is_empty() {
        return invalid("no [[server]]: name at least one upstream MCP server".to_owned());
    }
    let mut names = HashSet::new();
    let mut servers = Vec::with_capacity(raw.servers.len());
    for s in raw.servers {
        let at = format!("server {:?}", s.name);
        if let Some(c) = s
            .name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            return invalid(format!(
                "{at}: a name may hold only letters, digits and `-` (found {c:?}): it becomes part of tool names"
            ));
        }
        if s.name.is_empty() {
            return invalid("a [[server]] has an empty name".to_owned());
        }
        // Case-blind: tool names are `{server}_{tool}`, and the blocklist and a call's
        // name match them ignoring case, so `Git` and `git` would reach each other's tools.
        if !names.insert(s.name.to_ascii_lowercase()) {
            return invalid(format!(
                "{at} is named twice (server names are compared ignoring case)"
            ));
        }
        let transport = match (&s.command, &s.url) {
            (Some(_), Some(_)) => return invalid(format!("{at}: give command or url, not both")),
            (None, None) => {
                return invalid(format!(
                    "{at}: needs command (stdio) or url (streamable HTTP)"
                ));
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return invalid(format!(
                        "{at}: url {url:?} must start with http:// or https://"
                    ));
                }
                if s.args.is_some() || !s.env.is_empty() || s.cwd.is_some() {
                    return invalid(format!("{at}: args, env and cwd go with command, not url"));
                }
                for (name, value) in &s.headers {
                    if name.parse::<axum::http::HeaderName>().is_err()
                        || value.parse::<axum::http::HeaderValue>().is_err()
                    {
                        return invalid(format!(
                            "{at}: header {name:?} is not a valid HTTP header"
                        ));
                    }
                }
                Transport::Url {
                    url: url.clone(),
                    headers: s.headers,
                }
            }
            (Some(c), None) => {
                if !s.headers.is_empty() {
                    return invalid(format!("{at}: headers go with url, not command"));
                }
                let mut argv = shell_words::split(c).map_err(|source| Problem::Split {
                    at: at.clone(),
                    source,
                })?;
                argv.extend(s.args.unwrap_or_default());
                if argv.is_empty() {
                    return invalid(format!("{at}: command is empty"));
                }
                Transport::Command {
                    argv,
                    env: s.env,
                    cwd: s.cwd.map(|c| base.join(c)),
                }
            }
        };
        servers.push(Upstream {
            name: s.name,
            transport,
        });
    }
    // Only a trailing `*` is a pattern: a `*` anywhere else would be read past like a
    // separator (`*push` would block `push` alone), leaving open what the entry meant.
    if let Some(message) = raw
        .blocklist
        .iter()
        .find_map(|e| chef::gate::pattern_error(e))
    {
        return invalid(message);
    }
    Ok(Config {
        mode,
        map_style,
        compiled_map,
        prefix_format,
        blocklist: super::gate::Blocklist::new(&raw.blocklist),
        call_timeout: seconds("call_timeout", raw.call_timeout, 60.0)?,
        start_timeout: seconds("start_timeout", raw.start_timeout, 10.0)?,
        ping_interval: seconds("ping_interval", raw.ping_interval, 15.0)?,
        search_limit: count("search_limit", raw.search_limit, 8)?,
        found_limit: count("found_limit", raw.found_limit, DEFAULT_FOUND_LIMIT)?,
        http_max_sessions: count(
            "http_max_sessions",
            raw.http_max_sessions,
            super::sessions::MAX_SESSIONS,
        )?,
        code_file: match &raw.code_file {
            _ if matches!(mode, Mode::Minify | Mode::Discover) => None,
            Some(file) if file.as_os_str().is_empty() => None,
            Some(file) => Some(base.join(file)),
            // Beside the config file: `chef-mcp.toml` keeps its codes in
            // `chef-mcp.codes.json`.
            None => {
                let stem = path
                    .file_stem()
                    .map_or_else(|| "chef-mcp".into(), |s| s.to_string_lossy().into_owned());
                Some(base.join(format!("{stem}.codes.json")))
            }
        },
        servers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first TOML block of a document.
    fn toml_block(doc: &str) -> &str {
        doc.split("```toml\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .expect("a toml block")
    }

    /// The configurations the docs show parse as written (a reader copies them).
    #[test]
    fn the_configurations_in_the_docs_parse_as_written() {
        let at = Path::new("/etc/chef-mcp.toml");
        let proxy = parse(
            toml_block(include_str!("../../../../docs/MCP-PROXY.md")),
            at,
        )
        .expect("docs/MCP-PROXY.md's configuration");
        assert_eq!(proxy.mode, Mode::Discover);
        assert_eq!(proxy.servers.len(), 2);
        let readme = parse(toml_block(include_str!("../../../../README.md")), at)
            .expect("README.md's configuration");
        assert_eq!(readme.mode, Mode::Discover);
        assert!(
            readme
                .blocklist
                .entry_for("github_push_files", "push_files")
                .is_some()
        );
    }

    #[test]
    fn a_config_parses_and_bad_ones_name_the_key() {
        let c = parse(
            "mode = \"search\"\nblocklist = [\"git_*\"]\n[[server]]\nname = \"git\"\ncommand = \"git-mcp --x 'a b'\"\n",
            Path::new("/etc/chef-mcp.toml"),
        )
        .unwrap();
        assert_eq!(c.mode, Mode::Search);
        let plain = parse(
            "[[server]]\nname = \"git\"\ncommand = \"git-mcp\"\n",
            Path::new("chef-mcp.toml"),
        )
        .unwrap();
        assert_eq!(plain.mode, Mode::Discover, "the default mode");
        // The code file defaults to one beside the config, named after it.
        assert_eq!(
            c.code_file.as_deref(),
            Some(Path::new("/etc/chef-mcp.codes.json"))
        );
        assert!(
            matches!(&c.servers[0].transport, Transport::Command { argv, .. } if argv == &["git-mcp", "--x", "a b"])
        );
        assert!(c.blocklist.entry_for("git_push", "push").is_some());
        assert!(c.blocklist.entry_for("files_read", "read").is_none());
        for (text, needle) in [
            (
                "mode = \"all\"\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "mode \"all\"",
            ),
            ("", "no [[server]]"),
            (
                "blocklist = [\"*push\"]\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "only a `*` at the end is a pattern",
            ),
            (
                "blocklist = [\"p*sh\"]\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "blocklist entry \"p*sh\"",
            ),
            ("[[server]]\nname=\"a b\"\ncommand=\"x\"", "letters, digits"),
            (
                "[[server]]\nname=\"a\"\ncommand=\"x\"\n[[server]]\nname=\"a\"\ncommand=\"y\"",
                "named twice",
            ),
            (
                "[[server]]\nname=\"git\"\ncommand=\"x\"\n[[server]]\nname=\"Git\"\ncommand=\"y\"",
                "ignoring case",
            ),
            ("[[server]]\nname=\"a\"", "needs command"),
            ("[[server]]\nname=\"a\"\nurl=\"ftp://x\"", "http://"),
            (
                "[[server]]\nname=\"a\"\nurl=\"http://x\"\ncommand=\"y\"",
                "not both",
            ),
            (
                "[[server]]\nname=\"a\"\nurl=\"http://x\"\nheaders={\"a b\"=\"c\"}",
                "header",
            ),
            (
                "call_timeout = 0\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "call_timeout",
            ),
            (
                "colour = 1\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "colour",
            ),
            (
                "found_limit = 0\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "found_limit must be at least 1",
            ),
            (
                "search_limit = 0\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "search_limit must be at least 1",
            ),
            (
                "prefix_format = \"{server}\"\n[[server]]\nname=\"a\"\ncommand=\"x\"",
                "prefix_format",
            ),
        ] {
            let e = parse(text, Path::new("chef-mcp.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
