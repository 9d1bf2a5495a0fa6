//! Step 4 of a turn: the assembled IR request to provider bytes, through the provider
//! crates.

use chef_ir::{Request, Target, WireNames};

use crate::error::ChefError;

/// Per-target compile settings, passed through to the provider crates.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TargetOptions {
    /// Anthropic Messages settings (model, max_tokens, thinking, cache TTL, …).
    pub anthropic: chef_anthropic::CompileOptions,
    /// OpenAI settings (Chat Completions and Responses).
    pub openai: chef_openai::CompileOptions,
    /// Gemini settings.
    pub gemini: chef_gemini::CompileOptions,
}

/// The provider's view of one compiled request.
pub(crate) struct Wire {
    pub(crate) body: Vec<u8>,
    pub(crate) names: WireNames,
    pub(crate) notices: Vec<String>,
}

fn provider<E: std::fmt::Display>(target: Target) -> impl FnOnce(E) -> ChefError {
    move |e| ChefError::Provider {
        target,
        message: e.to_string(),
    }
}

pub(crate) fn compile(
    target: Target,
    request: &Request,
    options: &TargetOptions,
) -> Result<Wire, ChefError> {
    let err = provider(target);
    match target {
        Target::Anthropic => {
            let c =
                chef_anthropic::compile(request, &options.anthropic).map_err(provider(target))?;
            Ok(Wire {
                body: c.to_vec().map_err(err)?,
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
            })
        }
        Target::OpenAiChat => {
            let c =
                chef_openai::chat::compile(request, &options.openai).map_err(provider(target))?;
            Ok(Wire {
                body: chef_openai::chat::to_vec(&c).map_err(provider(target))?,
                notices: c.notices.iter().map(|n| format!("{n:?}")).collect(),
                names: c.names,
            })
        }
        Target::OpenAiResponses => {
            let c = chef_openai::responses::compile(request, &options.openai)
                .map_err(provider(target))?;
            Ok(Wire {
                body: chef_openai::responses::to_vec(&c).map_err(provider(target))?,
                notices: c.notices.iter().map(|n| format!("{n:?}")).collect(),
                names: c.names,
            })
        }
        Target::Gemini => {
            let c = chef_gemini::compile(request, &options.gemini).map_err(provider(target))?;
            Ok(Wire {
                body: chef_gemini::to_vec(&c).map_err(provider(target))?,
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
            })
        }
    }
}
