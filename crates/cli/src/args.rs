//! Flag groups and value parsers shared by several commands. A leaf: it imports no other
//! module of this crate, so every command can use it without an import circle.

use std::{path::PathBuf, time::Duration};

use chef_compress::{Level, MapStyle};
use clap::Args;

/// Level, map style and limits, shared by `compress` and `resolve`.
#[derive(Debug, Args)]
pub(crate) struct CompressionFlags {
    /// Compression level (4 needs --compiled).
    #[arg(long, value_name = "0|1|2|3|4", default_value = "1", value_parser = parse_level)]
    pub(crate) level: Level,
    /// Level-3 map style.
    #[arg(long, value_name = "name+required|explicit|signature|distinct", value_parser = parse_map_style)]
    pub(crate) map_style: Option<MapStyle>,
    #[command(flatten)]
    pub(crate) limits: LimitFlags,
}

/// The compiled map, shared by `compress` and `resolve`.
#[derive(Debug, Args)]
pub(crate) struct CompiledFlags {
    /// A compiled map (JSON object: tool name -> `def` line, as `chef compile-map` writes
    /// it), required at level 4, optional at level 1. Lines that no longer fit their tool
    /// are dropped and listed.
    #[arg(long, value_name = "MAP.json")]
    pub(crate) compiled: Option<PathBuf>,
    /// Fail when a tool has no usable compiled line (levels 1 and 4).
    #[arg(long, requires = "compiled")]
    pub(crate) require_compiled: bool,
}

/// Resource limits, shared by every command that compresses a catalogue.
#[derive(Debug, Args)]
pub(crate) struct LimitFlags {
    /// The most tools a catalogue may hold.
    #[arg(long, value_name = "N", default_value_t = chef_compress::validate::Limits::default().max_tools, value_parser = at_least_one)]
    pub(crate) max_tools: usize,
}

/// A `--target` value clap cannot take.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TargetFlagError {
    #[error("unknown target {0:?} (expected anthropic, openai, openai-responses or gemini)")]
    Unknown(String),
    #[error("chef eval sends Chat Completions requests: --target openai only (not {0})")]
    NotChat(chef_ir::Target),
}

pub(crate) fn parse_target(s: &str) -> Result<chef_ir::Target, TargetFlagError> {
    chef_ir::Target::from_name(s).ok_or_else(|| TargetFlagError::Unknown(s.to_owned()))
}

pub(crate) fn parse_level(s: &str) -> Result<Level, chef_compress::UnsupportedLevel> {
    s.parse()
}

pub(crate) fn parse_map_style(s: &str) -> Result<MapStyle, chef_compress::UnsupportedMapStyle> {
    s.parse()
}

/// Why a `--timeout` value is unusable.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum TimeoutError {
    #[error("{0:?} is not a number of seconds")]
    NotANumber(String),
    #[error("the timeout must be more than 0 seconds")]
    NotPositive,
    #[error("{value:?}: {source}")]
    OutOfRange {
        value: String,
        #[source]
        source: std::time::TryFromFloatSecsError,
    },
}

/// Parses `--timeout` seconds (decimals allowed).
pub(crate) fn parse_timeout(value: &str) -> Result<Duration, TimeoutError> {
    let seconds: f64 = value
        .parse()
        .map_err(|_| TimeoutError::NotANumber(value.to_owned()))?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(TimeoutError::NotPositive);
    }
    Duration::try_from_secs_f64(seconds).map_err(|source| TimeoutError::OutOfRange {
        value: value.to_owned(),
        source,
    })
}

/// A count of at least 1 (`--max-tools 0` would refuse every catalogue).
pub(crate) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Text that is not blank (`--model ""` would be sent as a model id).
pub(crate) fn not_blank(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err("must not be empty".to_owned())
    } else {
        Ok(text.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_as_positive_seconds() {
        assert_eq!(parse_timeout("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_timeout("0.25"), Ok(Duration::from_millis(250)));
        for bad in ["0", "-1", "ten", "NaN", "inf"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }
}
