//! What can be wrong with a `SKILL.md` file.

use std::path::{Path, PathBuf};

/// A `SKILL.md` file that could not be loaded: where, and why. The loaders report these
/// beside the skills that did load (see [`Loaded`](super::Loaded)).
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {kind}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SkillError {
    path: PathBuf,
    line: Option<usize>,
    #[source]
    kind: SkillErrorKind,
}

impl SkillError {
    pub(crate) fn new(path: &Path, line: Option<usize>, kind: SkillErrorKind) -> Self {
        Self {
            path: path.to_path_buf(),
            line,
            kind,
        }
    }

    /// The file (or directory) at fault.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The 1-based line in that file, when the problem has one (a YAML error's line is
    /// counted from the top of the file, the `---` fence included).
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// What is wrong.
    pub fn kind(&self) -> &SkillErrorKind {
        &self.kind
    }
}

/// What is wrong with a `SKILL.md` file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillErrorKind {
    /// The file or directory could not be read (not UTF-8 text counts).
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// A `---` line opens the front matter but none closes it.
    #[error("the front matter opened by --- is never closed by a --- line")]
    UnclosedFrontMatter,
    /// The front matter is not valid YAML.
    #[error("invalid YAML in the front matter: {message}")]
    Yaml {
        /// The parser's message.
        message: String,
    },
    /// The front matter is YAML but not a mapping of keys to values.
    #[error("the front matter must be a mapping of keys to values")]
    NotAMapping,
    /// A key has a value of the wrong shape.
    #[error("{field:?} must be {expected}")]
    InvalidField {
        /// The key as written.
        field: String,
        /// What it must be.
        expected: &'static str,
    },
    /// The skill's name cannot be used.
    #[error(
        "{name:?} is not usable as a skill name (1 to 64 characters, no line breaks, none of \" < > &)"
    )]
    InvalidName {
        /// The name given (or taken from the folder).
        name: String,
    },
}
