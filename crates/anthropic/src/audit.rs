//! Cache audit: find volatile text and misplaced breakpoints in a compiled request.
//!
//! Anthropic caches the prefix of a request up to each `cache_control` breakpoint, in the
//! order tools, `system`, `messages`. Text that changes every turn (dynamic state, an
//! injected guardrail, announcements) before or inside the segment of the last breakpoint
//! makes every turn a cache miss. The audit reads a compiled [`wire::Request`] and reports:
//!
//! - each volatile **marker** found in a segment at or before the last breakpoint
//!   (segments: one per `system` block, then one per message, whose text is every text
//!   block and string tool result joined with `"\n"` before each);
//! - a breakpoint on a deferred tool or on a `tool_search_*` server tool (the API refuses
//!   both);
//! - more breakpoints than the API accepts.
//!
//! The markers are configurable: the runtime adds its memory headers with
//! [`CacheAudit::with_marker`].

use std::fmt;

use serde_json::Value;

use crate::{
    compile::MAX_BREAKPOINTS,
    wire::{self, ContentBlock, ToolResultContent},
};

/// Text that signals volatile content, where it comes from, and how to fix its placement.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Marker {
    /// The substring to look for.
    pub needle: String,
    /// What produces it (`dynamic state`, …).
    pub source: String,
    /// The advice when a breakpoint follows the segment holding it.
    pub fix: String,
    /// Extra advice when it shares the last breakpoint's segment.
    pub alt: Option<String>,
}

impl Marker {
    /// A marker with its source and fix.
    pub fn new(
        needle: impl Into<String>,
        source: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            needle: needle.into(),
            source: source.into(),
            fix: fix.into(),
            alt: None,
        }
    }

    /// Sets the alternative advice.
    #[must_use]
    pub fn with_alt(mut self, alt: impl Into<String>) -> Self {
        self.alt = Some(alt.into());
        self
    }
}

/// The audit, with its markers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheAudit {
    /// The markers, checked in this order.
    pub markers: Vec<Marker>,
}

impl Default for CacheAudit {
    /// The markers of chef's own volatile channels.
    fn default() -> Self {
        Self {
            markers: vec![
                Marker::new(
                    "<dynamic_state>",
                    "dynamic state",
                    "place dynamic state in the last user turn",
                ),
                Marker::new(
                    "<implicit_context>",
                    "implicit context injection",
                    "keep dynamic state in the last user turn",
                ),
                Marker::new(
                    "<EPHEMERAL_MESSAGE>",
                    "guardrail enforce-XML",
                    "place the guardrail in the last user turn",
                ),
                Marker::new(
                    "<skill_instructions",
                    "skill tail instructions",
                    "move the breakpoint earlier",
                )
                .with_alt("or place the skill right after the system prompt"),
                Marker::new(
                    "<announcements>",
                    "announcements",
                    "move the breakpoint earlier",
                ),
            ],
        }
    }
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IssueKind {
    /// A volatile marker sits before a later breakpoint.
    VolatilePrefix,
    /// A volatile marker shares the segment of the last breakpoint.
    VolatileBreakpointTail,
    /// A breakpoint on a deferred tool.
    BreakpointOnDeferredTool,
    /// A breakpoint on a `tool_search_*` server tool.
    BreakpointOnToolSearch,
    /// More than [`MAX_BREAKPOINTS`] breakpoints.
    TooManyBreakpoints,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheIssue {
    /// What is wrong.
    pub kind: IssueKind,
    /// Where: `system[i]`, `messages[i]`, `tools[i]`, or `request`.
    pub location: String,
    /// A key to report each kind of problem once: `<source>@prefix`,
    /// `<source>@breakpoint-tail`, or the structural problem's name.
    pub dedupe_key: String,
    /// What to do about it.
    pub message: String,
}

impl fmt::Display for CacheIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cache audit — {}: {}", self.location, self.message)
    }
}

struct Segment {
    location: String,
    text: String,
    breakpoint: bool,
}

impl CacheAudit {
    /// Adds a marker (checked after the existing ones).
    #[must_use]
    pub fn with_marker(mut self, marker: Marker) -> Self {
        self.markers.push(marker);
        self
    }

    /// Audits a compiled request.
    ///
    /// ```
    /// use chef_anthropic::{CacheAudit, CompileOptions, compile};
    /// use chef_ir::{Message, Request};
    ///
    /// let request = Request::new(vec![
    ///     Message::user("q\n\n<dynamic_state>\n  <a>1</a>\n</dynamic_state>").with_cache_breakpoint(true),
    /// ]);
    /// let compiled = compile(&request, &CompileOptions::default())?;
    /// let issues = CacheAudit::default().audit(&compiled.body);
    /// assert_eq!(issues[0].location, "messages[0]");
    /// assert_eq!(issues[0].dedupe_key, "dynamic state@breakpoint-tail");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn audit(&self, request: &wire::Request<'_>) -> Vec<CacheIssue> {
        let mut issues = Vec::new();
        for (i, tool) in request.tools.iter().enumerate() {
            if !tool.has_cache_control() {
                continue;
            }
            if tool.is_deferred() {
                issues.push(CacheIssue {
                    kind: IssueKind::BreakpointOnDeferredTool,
                    location: format!("tools[{i}]"),
                    dedupe_key: "breakpoint-on-deferred-tool".to_owned(),
                    message: "cache_control on a deferred tool is refused by the API; put it on the last tool that is loaded".to_owned(),
                });
            }
            if tool.kind().is_some_and(|k| k.starts_with("tool_search_")) {
                issues.push(CacheIssue {
                    kind: IssueKind::BreakpointOnToolSearch,
                    location: format!("tools[{i}]"),
                    dedupe_key: "breakpoint-on-tool-search".to_owned(),
                    message: "cache_control on a tool search server tool; put it on the last function tool that is loaded".to_owned(),
                });
            }
        }
        let count = request.breakpoint_count();
        if count > MAX_BREAKPOINTS {
            issues.push(CacheIssue {
                kind: IssueKind::TooManyBreakpoints,
                location: "request".to_owned(),
                dedupe_key: "too-many-breakpoints".to_owned(),
                message: format!(
                    "{count} cache breakpoints; the API accepts at most {MAX_BREAKPOINTS}"
                ),
            });
        }

        let segments = segments(request);
        let Some(last) = segments.iter().rposition(|s| s.breakpoint) else {
            return issues;
        };
        for (i, segment) in segments.iter().enumerate().take(last + 1) {
            for marker in &self.markers {
                if !segment.text.contains(&marker.needle) {
                    continue;
                }
                let (kind, suffix, message) = if i == last {
                    let alt = marker
                        .alt
                        .as_deref()
                        .map(|a| format!(" ({a})"))
                        .unwrap_or_default();
                    (
                        IssueKind::VolatileBreakpointTail,
                        "breakpoint-tail",
                        format!(
                            "{} shares the segment of the last cache breakpoint, so the cached prefix changes every turn; move the breakpoint earlier{alt}",
                            marker.source
                        ),
                    )
                } else {
                    (
                        IssueKind::VolatilePrefix,
                        "prefix",
                        format!(
                            "{} sits before a cache breakpoint, so the cached prefix changes every turn; {}",
                            marker.source, marker.fix
                        ),
                    )
                };
                issues.push(CacheIssue {
                    kind,
                    location: segment.location.clone(),
                    dedupe_key: format!("{}@{suffix}", marker.source),
                    message,
                });
            }
        }
        issues
    }
}

fn segments(request: &wire::Request<'_>) -> Vec<Segment> {
    let system = request.system.iter().enumerate().map(|(i, b)| Segment {
        location: format!("system[{i}]"),
        text: b.text.to_string(),
        breakpoint: b.cache_control.is_some(),
    });
    let messages = request.messages.iter().enumerate().map(|(i, m)| {
        let mut text = String::new();
        for block in &m.content {
            block_text(block, &mut text);
        }
        Segment {
            location: format!("messages[{i}]"),
            text,
            breakpoint: m.content.iter().any(|b| b.cache_control().is_some()),
        }
    });
    system.chain(messages).collect()
}

fn block_text(block: &ContentBlock<'_>, out: &mut String) {
    match block {
        ContentBlock::Text(b) => {
            out.push('\n');
            out.push_str(&b.text);
        }
        ContentBlock::ToolResult(b) => match &b.content {
            Some(ToolResultContent::Text(text)) => {
                out.push('\n');
                out.push_str(text);
            }
            Some(ToolResultContent::Blocks(blocks)) => {
                for nested in blocks {
                    block_text(nested, out);
                }
            }
            None => {}
        },
        ContentBlock::Unknown(value) => {
            let text = value
                .get("text")
                .or_else(|| value.get("content"))
                .and_then(Value::as_str);
            if let Some(text) = text {
                out.push('\n');
                out.push_str(text);
            }
        }
        _ => {}
    }
}
