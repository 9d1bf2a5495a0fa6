//! Step 4 of a turn: the assembled IR request to provider bytes, through the provider
//! crates.

use std::sync::Arc;

use chef_ir::{Request, Target, WireNames};

use super::select::TurnTools;
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
    pub(crate) cache_issues: Vec<chef_anthropic::CacheIssue>,
}

fn provider<E: std::fmt::Display>(target: Target) -> impl FnOnce(E) -> ChefError {
    move |e| ChefError::Provider {
        target,
        message: e.to_string(),
    }
}

/// Per target, the serialised tools array of the last compile and the tool selection it
/// was made from. While the selection (an `Arc`, held here so its address cannot be reused)
/// is the same, the bytes are spliced into the body instead of serialising the tools again:
/// the tools are most of a request's bytes and change rarely.
#[derive(Default)]
pub(crate) struct ToolBytes {
    slots: [Option<(Arc<TurnTools>, Vec<u8>)>; 4],
}

impl ToolBytes {
    fn slot(&mut self, target: Target) -> &mut Option<(Arc<TurnTools>, Vec<u8>)> {
        let index = match target {
            Target::Anthropic => 0,
            Target::OpenAiChat => 1,
            Target::OpenAiResponses => 2,
            Target::Gemini => 3,
        };
        // The array has one slot per target.
        #[allow(clippy::indexing_slicing, reason = "index < 4 by construction")]
        &mut self.slots[index]
    }

    /// The serialised tools for `key` on `target`, serialising `tools` on a miss.
    fn get<T: serde::Serialize>(
        &mut self,
        target: Target,
        key: &Arc<TurnTools>,
        tools: &T,
    ) -> Result<&[u8], serde_json::Error> {
        let slot = self.slot(target);
        let hit = slot.as_ref().is_some_and(|(k, _)| Arc::ptr_eq(k, key));
        if !hit {
            *slot = Some((Arc::clone(key), serde_json::to_vec(tools)?));
        }
        Ok(slot.as_ref().map_or(&[][..], |(_, bytes)| bytes.as_slice()))
    }
}

/// Inserts `"tools":<tools>` into a JSON object body at byte offset `at` (just after `{`,
/// or just before the closing `}`), with the comma on the side that needs it.
fn splice(body: &[u8], at: usize, tools: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + tools.len() + 10);
    let (head, tail) = body.split_at(at.min(body.len()));
    out.extend_from_slice(head);
    let at_end = tail == b"}";
    if at_end && head.len() > 1 {
        out.push(b',');
    }
    out.extend_from_slice(b"\"tools\":");
    out.extend_from_slice(tools);
    if !at_end && tail.len() > 1 {
        out.push(b',');
    }
    out.extend_from_slice(tail);
    out
}

pub(crate) fn compile(
    target: Target,
    request: &Request,
    options: &TargetOptions,
    cache: &mut ToolBytes,
    key: &Arc<TurnTools>,
    audit: bool,
) -> Result<Wire, ChefError> {
    match target {
        Target::Anthropic => {
            let mut c =
                chef_anthropic::compile(request, &options.anthropic).map_err(provider(target))?;
            let cache_issues = if audit {
                cache_audit().audit(&c.body)
            } else {
                Vec::new()
            };
            let tools = std::mem::take(&mut c.body.tools);
            let body = c.to_vec().map_err(provider(target))?;
            let body = if tools.is_empty() {
                body
            } else {
                let bytes = cache.get(target, key, &tools).map_err(provider(target))?;
                // Anthropic's tools field comes last.
                splice(&body, body.len().saturating_sub(1), bytes)
            };
            Ok(Wire {
                body,
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
                cache_issues,
            })
        }
        Target::OpenAiChat => {
            let mut c =
                chef_openai::chat::compile(request, &options.openai).map_err(provider(target))?;
            let tools = std::mem::take(&mut c.body.tools);
            let body = chef_openai::chat::to_vec(&c).map_err(provider(target))?;
            let body = if tools.is_empty() {
                body
            } else {
                // OpenAI's tools field comes first.
                splice(
                    &body,
                    1,
                    cache.get(target, key, &tools).map_err(provider(target))?,
                )
            };
            Ok(Wire {
                body,
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
                cache_issues: Vec::new(),
            })
        }
        Target::OpenAiResponses => {
            let mut c = chef_openai::responses::compile(request, &options.openai)
                .map_err(provider(target))?;
            let tools = std::mem::take(&mut c.body.tools);
            let body = chef_openai::responses::to_vec(&c).map_err(provider(target))?;
            let body = if tools.is_empty() {
                body
            } else {
                splice(
                    &body,
                    1,
                    cache.get(target, key, &tools).map_err(provider(target))?,
                )
            };
            Ok(Wire {
                body,
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
                cache_issues: Vec::new(),
            })
        }
        Target::Gemini => {
            let mut c = chef_gemini::compile(request, &options.gemini).map_err(provider(target))?;
            let tools = std::mem::take(&mut c.body.tools);
            let body = chef_gemini::to_vec(&c).map_err(provider(target))?;
            let body = if tools.is_empty() {
                body
            } else {
                // Gemini's tools field follows the system instruction, when there is one.
                let at = match &c.body.system_instruction {
                    Some(system) => {
                        let len = serde_json::to_vec(system).map_err(provider(target))?.len();
                        1 + b"\"systemInstruction\":".len() + len + 1
                    }
                    None => 1,
                };
                splice(
                    &body,
                    at,
                    cache.get(target, key, &tools).map_err(provider(target))?,
                )
            };
            Ok(Wire {
                body,
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
                cache_issues: Vec::new(),
            })
        }
    }
}

/// The Anthropic cache audit with chef's own volatile markers added (the memory block).
fn cache_audit() -> chef_anthropic::CacheAudit {
    chef_anthropic::CacheAudit::default().with_marker(chef_anthropic::Marker::new(
        "<memory>",
        "memory",
        "use MemoryPlacement::BeforeHistoryTail so that memory rides the last user turn",
    ))
}
