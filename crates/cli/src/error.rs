//! The CLI's error type and exit statuses.

use std::path::PathBuf;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A tool file is unusable.
    #[error("{}: {source}", path.display())]
    Tools {
        path: PathBuf,
        #[source]
        source: chef_ir::LoadError,
    },
    /// A line of a JSON Lines request file is unusable.
    #[error("{}: line {line}: {problem}", path.display())]
    Queries {
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        problem: String,
    },
    /// A flag value is unusable in a way clap cannot check alone.
    #[error("{0}")]
    Usage(String),
    /// `--endpoint` is not a URL.
    #[error("--endpoint {endpoint:?} is not a URL: {source}")]
    EndpointUrl {
        endpoint: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A session id is not a usable store key.
    #[error("invalid session id: {0}")]
    SessionId(#[source] chef::store::InvalidKey),
    /// `chef eval`: a setting's session refuses the tools.
    #[error("setting {setting}: {source}")]
    Registry {
        setting: String,
        #[source]
        source: Box<chef::ChefError>,
    },
    /// `chef eval`: a body chef compiled, or the response_format, does not read or write as
    /// JSON (a defect in chef).
    #[error("{what}: {source}")]
    Json {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// `--prefix-format` has no `{tool}`, or text a tool name may not hold.
    #[error("--prefix-format {0}")]
    PrefixFormat(#[source] crate::prefix::BadNameFormat),
    /// Some MCP servers gave no usable tool list (each is named on stderr).
    #[error("{} of {total} MCP servers failed: {}", failed.len(), failed.join(", "))]
    McpServersFailed { failed: Vec<String>, total: usize },
    /// `chef mcp serve --check`: blocklist entries that match no tool (most likely typos,
    /// which would leave the tool they meant open).
    #[error(
        "blocklist: {} no tool ({}); an entry matches a tool's name with or without its server prefix, ignoring case and separators, or ends in * for a prefix",
        if entries.len() == 1 { "1 entry matches".to_owned() } else { format!("{} entries match", entries.len()) },
        entries.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>().join(", ")
    )]
    BlocklistUnmatched { entries: Vec<String> },
    /// `chef serve` stopped (a bad config and a failed `--check` are bad input, exit 2).
    #[error(transparent)]
    Serve(chef_serve::CliError),
    /// The combined MCP catalogue does not load back (a defect in chef, not in a server).
    #[error("the combined MCP tool catalogue is invalid: {0}")]
    Catalogue(#[source] chef_ir::LoadError),
    /// The combined MCP catalogue cannot be compressed (a server's schema is refused, too
    /// many tools).
    #[error(
        "the combined MCP tool catalogue cannot be compressed: {message}{hint}",
        message = .0,
        hint = compress_hint(.0)
    )]
    McpCompress(#[source] chef_compress::CompressError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// An output file could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    WriteFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The tools cannot be compressed (a schema refused, too many tools, …).
    #[error("{}: {}{}", path.display(), source, compress_hint(source))]
    Compress {
        path: PathBuf,
        #[source]
        source: chef_compress::CompressError,
    },
    /// The compressed tools cannot be put in the provider's envelope.
    #[error("{}: cannot envelope the tools for {target}: {source}", path.display())]
    Envelope {
        path: PathBuf,
        target: chef_ir::Target,
        #[source]
        source: chef::ProviderError,
    },
    /// A line of a calls file is unusable.
    #[error("{}: line {line}: {problem}", path.display())]
    Calls {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    /// The demo could not run (a defect in chef, not in the user's input).
    #[error("the demo failed: {0}")]
    Demo(String),
    /// The token tables failed to load (a build defect, not an input problem).
    #[error("the o200k_base token tables failed to load")]
    Tokenizer,
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Write(#[source] std::io::Error),
    /// A chat-completions endpoint refused `chef compile-map` or never answered usefully.
    #[error("{0}")]
    Endpoint(String),
    /// The HTTP client for `--endpoint` could not be built.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    /// Ctrl-C stopped `chef compile-map` (what verified is kept).
    #[error("interrupted; {0}")]
    Interrupted(String),
    /// A store operation failed.
    #[error("store {store}: {source}")]
    Store {
        store: String,
        #[source]
        source: chef::store::StoreError,
    },
    /// No session with this id in the store.
    #[error("no session {id:?} in the store")]
    SessionNotFound { id: String },
    /// `import` found a session that already exists (and no --overwrite).
    #[error(
        "session {id:?} already exists in the target store ({imported} imported before it; use --overwrite to replace)"
    )]
    SessionExists { id: String, imported: usize },
    /// A stored session is not a readable snapshot (bad data in the store: exit status 2).
    #[error("session {id:?} is corrupt: {problem}")]
    CorruptSession { id: String, problem: String },
    /// `sessions ls` or `export` went on past damaged sessions, each already named on
    /// stderr with its reason; `what` says what became of them (exit status 2).
    #[error("{} damaged session(s) {what}: {}", ids.len(), ids.join(", "))]
    DamagedSessions {
        ids: Vec<String>,
        what: &'static str,
    },
    /// A line of a session bundle is unusable.
    #[error("{}: line {line}: {problem}", path.display())]
    Bundle {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    /// An embedding model could not be loaded, distilled or cached.
    #[error("{0}")]
    Dense(#[from] chef_dense::Error),
    /// The hybrid index failed (the model misbehaved or the cache is unusable).
    #[error("{0}")]
    Hybrid(#[from] chef_compress::search::dense::DenseError),
    /// A command's own error type, whole (`chef mcp serve`: its config file, its code
    /// file, the host's transport).
    #[error(transparent)]
    Command(CommandError),
    /// stdout was closed by the reader (e.g. `| head`); not an error for the user.
    #[error("output closed")]
    BrokenPipe,
}

/// A command module's own error, kept whole (its text and its sources are the error's),
/// with the exit status it asks for. A command whose errors are a type of its own reports
/// through [`CliError::Command`] with this, so this module names no command's types and
/// imports no command module (each command imports it).
#[derive(Debug)]
pub(crate) struct CommandError {
    error: Box<dyn std::error::Error + Send + Sync>,
    /// Bad input (exit status 2) rather than a failure of chef or its environment (1).
    usage: bool,
}

impl CommandError {
    /// Bad input: exit status 2.
    pub(crate) fn usage(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            error: Box::new(error),
            usage: true,
        }
    }

    /// A failure of chef or its environment: exit status 1.
    pub(crate) fn failure(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            error: Box::new(error),
            usage: false,
        }
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for CommandError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// What to do about a compress error on the command line, when there is a flag for it
/// (every command reporting [`CliError::Compress`] has `--max-tools`).
pub(crate) fn compress_hint(source: &chef_compress::CompressError) -> &'static str {
    match source {
        chef_compress::CompressError::TooManyTools { .. } => {
            " (raise the limit with --max-tools N)"
        }
        _ => "",
    }
}

impl CliError {
    /// 2 for bad input, 1 for failures of chef itself or the environment.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Serve(e) if e.is_usage() => 2,
            Self::Serve(_) => 1,
            // A stored entry that does not decode is damaged data, as a corrupt session is.
            Self::Store {
                source: chef::store::StoreError::Corrupt { .. },
                ..
            } => 2,
            Self::Read { .. }
            | Self::Tools { .. }
            | Self::Queries { .. }
            | Self::Compress { .. }
            | Self::Envelope { .. }
            | Self::Calls { .. }
            | Self::Usage(_)
            | Self::EndpointUrl { .. }
            | Self::SessionId(_)
            | Self::Registry { .. }
            | Self::Json { .. }
            | Self::PrefixFormat(_)
            | Self::McpServersFailed { .. }
            | Self::BlocklistUnmatched { .. }
            | Self::McpCompress(_)
            | Self::SessionNotFound { .. }
            | Self::SessionExists { .. }
            | Self::Bundle { .. }
            | Self::CorruptSession { .. }
            | Self::DamagedSessions { .. }
            | Self::Dense(_)
            | Self::Command(CommandError { usage: true, .. }) => 2,
            Self::Tokenizer
            | Self::Write(_)
            | Self::BrokenPipe
            | Self::Catalogue(_)
            | Self::Runtime(_)
            | Self::WriteFile { .. }
            | Self::Demo(_)
            | Self::Endpoint(_)
            | Self::HttpClient(_)
            | Self::Store { .. }
            | Self::Hybrid(_)
            | Self::Command(CommandError { usage: false, .. }) => 1,
            Self::Interrupted(_) => 130,
        }
    }
}

/// What is wrong with one line of JSON, for a message that names the file and line itself:
/// `not valid JSON at column C: …` for a syntax error, serde's message for the rest, never
/// serde's own ` at line L column C` (its line is 1 for any line parsed alone).
pub(crate) fn json_line_problem(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    if error.is_syntax() || error.is_eof() {
        format!("not valid JSON at column {}: {message}", error.column())
    } else {
        message.to_owned()
    }
}

/// An error and its sources on one line, `outer: inner: innermost`.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
