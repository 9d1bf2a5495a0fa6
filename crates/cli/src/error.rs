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
    /// The tools cannot be compressed (a schema refused, level 4 without a map, …).
    #[error("{}: {source}", path.display())]
    Compress {
        path: PathBuf,
        #[source]
        source: chef_compress::CompressError,
    },
    /// A line of a calls file is unusable.
    #[error("{}: line {line}: {problem}", path.display())]
    Calls {
        path: PathBuf,
        line: usize,
        problem: String,
    },
    /// The token tables failed to load (a build defect, not an input problem).
    #[error("the o200k_base token tables failed to load")]
    Tokenizer,
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Write(#[source] std::io::Error),
    /// stdout was closed by the reader (e.g. `| head`); not an error for the user.
    #[error("output closed")]
    BrokenPipe,
}

impl CliError {
    /// 2 for bad input, 1 for failures of chef itself or the environment.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Read { .. } | Self::Tools { .. } | Self::Compress { .. } | Self::Calls { .. } => {
                2
            }
            Self::Tokenizer | Self::Write(_) | Self::BrokenPipe => 1,
        }
    }
}
