//! The provider wire formats chef compiles to.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A provider wire format chef compiles to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Target {
    /// Anthropic Messages.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// OpenAI Chat Completions.
    #[serde(rename = "openai")]
    OpenAiChat,
    /// OpenAI Responses.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Gemini `generateContent`.
    #[serde(rename = "gemini")]
    Gemini,
}

impl Target {
    /// Every target, in a fixed order.
    pub const ALL: [Self; 4] = [
        Self::Anthropic,
        Self::OpenAiChat,
        Self::OpenAiResponses,
        Self::Gemini,
    ];

    /// The name used on the command line and in serialised data.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAiChat => "openai",
            Self::OpenAiResponses => "openai-responses",
            Self::Gemini => "gemini",
        }
    }

    /// Parses a target name as [`Target::as_str`] writes it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The tool names this target accepts: the rule its provider crate builds the
    /// [`WireNames`](crate::WireNames) table with.
    ///
    /// ```
    /// use chef_ir::{NameRule, Target};
    /// assert_eq!(Target::OpenAiChat.name_rule(), NameRule::OPENAI);
    /// assert!(Target::Gemini.name_rule().accepts("timezone.convert"));
    /// assert!(!Target::Anthropic.name_rule().accepts("timezone.convert"));
    /// ```
    pub fn name_rule(self) -> crate::NameRule {
        match self {
            Self::Anthropic => crate::NameRule::ANTHROPIC,
            Self::OpenAiChat | Self::OpenAiResponses => crate::NameRule::OPENAI,
            Self::Gemini => crate::NameRule::GEMINI,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
