//! Dynamic state and injected context: the volatile, per-turn blocks of a request.
//!
//! * **Dynamic state** ([`DynamicState`], set with [`LayersMut::set_dynamic_state`]) is what the
//!   agent knows about the task right now (the open file, the plan, the step), rendered as
//!   XML under `<dynamic_state>`. It stands until replaced or cleared, and rides snapshots.
//! * **Injected context** comes from [`ContextInjector`]s (added with
//!   [`LayersMut::add_injector`]), called at every compile with a view of the session; what they
//!   inject is wrapped in `<implicit_context>`. Injectors are code, not state: snapshots
//!   do not carry them.
//!
//! Both land where they cost the prompt cache nothing: under [`Placement::LastUser`] (the
//! default) they are stitched into the last user turn, after the memory block and before
//! the announcements, followed by the anchor line. [`Placement::System`] puts them in a
//! system message after the history instead (`CURRENT TASK STATE:` + the XML), which only
//! OpenAI Chat Completions keeps there: Anthropic hoists it into its `system` parameter,
//! Responses into `instructions` and Gemini into `systemInstruction`, ahead of every cached
//! message, so each change re-bills the whole prompt. The cache audit reports it.
//!
//! # Rendering
//!
//! [`render_xml`] turns a JSON value into the XML block, the reference's way:
//!
//! ```
//! use chef::dynamic::render_xml;
//! use serde_json::json;
//!
//! let xml = render_xml(&json!({"file": "a.ts", "todo": ["x", "y"]}), "dynamic_state");
//! assert_eq!(
//!     xml,
//!     "<dynamic_state>\n  <file>a.ts</file>\n  <todo>\n  <item>x</item>\n  <item>y</item>\n</todo>\n</dynamic_state>"
//! );
//! ```
//!
//! * `null` renders as nothing; a scalar as `<name>text</name>`, text escaped (`<`, `>`,
//!   `&`, `'`, `"`); an empty array as nothing; an array as its items, each under `<item>`;
//!   an object as its members in insertion order, each under its key with every character
//!   outside `[A-Za-z0-9_]` replaced by `_` (an empty key becomes `_`, where the reference
//!   would write the broken tag `<>`).
//! * Only the first line of a nested block is indented (two spaces); the reference does
//!   the same, and the bytes are what a cached prompt was built from.
//! * Numbers: integers as written; a float with no fractional part and magnitude below
//!   10²¹ as an integer (`2.0` → `2`, as JavaScript prints it); other floats in their
//!   shortest round-trip form (`0.1`, `1.5e-7`, `1e+300`). Integers beyond 2⁵³ keep every
//!   digit, where JavaScript would have rounded them on parsing.
//!
//! [`LayersMut::set_dynamic_state`]: crate::LayersMut::set_dynamic_state
//! [`LayersMut::add_injector`]: crate::LayersMut::add_injector

use chef_ir::{Message, Target};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a system-placed dynamic-state message starts with.
pub const SYSTEM_PREFIX: &str = "CURRENT TASK STATE:\n";

/// The root element of the dynamic-state block.
pub const ROOT: &str = "dynamic_state";

/// Where dynamic state and injected context go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Placement {
    /// Stitched into the last user turn, followed by the anchor line (cache-safe).
    #[default]
    LastUser,
    /// A system message after the history (`CURRENT TASK STATE:` + XML, with any injected
    /// context appended). Only OpenAI Chat Completions keeps it there: Anthropic, Responses
    /// and Gemini move it into their system prompt, ahead of the cached history.
    System,
}

/// The session's dynamic state: a JSON value and where it goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DynamicState {
    /// The state, as set (members keep their order).
    pub value: Value,
    /// Where it goes.
    #[serde(default)]
    pub placement: Placement,
}

impl DynamicState {
    /// A state for `value` placed as `placement`.
    pub fn new(value: Value, placement: Placement) -> Self {
        Self { value, placement }
    }

    /// The rendered `<dynamic_state>` block (empty for `null`).
    pub fn xml(&self) -> String {
        render_xml(&self.value, ROOT)
    }
}

/// Why dynamic state could not be set.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicStateError {
    /// The value could not be turned into JSON.
    #[error("dynamic state is not representable as JSON: {0}")]
    Serialize(#[source] serde_json::Error),
    /// The schema given to check the state is unusable.
    #[error("the dynamic-state schema is unusable: {0}")]
    Schema(#[source] Box<chef_compress::validate::SchemaError>),
    /// The state does not satisfy its schema.
    #[error("dynamic state does not match its schema: {0}")]
    Invalid(#[source] Box<chef_compress::validate::ArgumentError>),
}

/// Renders `value` as XML under the element `name` (see the [module docs](self)).
pub fn render_xml(value: &Value, name: &str) -> String {
    let mut out = String::new();
    render_into(&mut out, value, name);
    out
}

fn render_into(out: &mut String, value: &Value, name: &str) {
    match value {
        Value::Null => {}
        Value::Bool(b) => scalar(out, name, if *b { "true" } else { "false" }),
        Value::Number(n) => scalar(out, name, &number(n)),
        Value::String(s) => scalar(out, name, s),
        Value::Array(items) if items.is_empty() => {}
        Value::Array(items) => {
            open(out, name);
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str("  ");
                render_into(out, item, "item");
            }
            out.push('\n');
            close(out, name);
        }
        Value::Object(members) => {
            open(out, name);
            for (key, member) in members {
                out.push_str("  ");
                render_into(out, member, &safe_key(key));
                out.push('\n');
            }
            close(out, name);
        }
    }
}

fn open(out: &mut String, name: &str) {
    out.push('<');
    out.push_str(name);
    out.push_str(">\n");
}

fn close(out: &mut String, name: &str) {
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

fn scalar(out: &mut String, name: &str, text: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&apos;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// An element name for a member key: characters outside `[A-Za-z0-9_]` become `_`.
fn safe_key(key: &str) -> String {
    if key.is_empty() {
        return "_".to_owned();
    }
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        // Integral and below 10^21: exactly an i128 (and -0.0 prints as 0, as in JavaScript).
        #[allow(
            clippy::cast_possible_truncation,
            reason = "f is integral and |f| < 1e21 < i128::MAX"
        )]
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => (f as i128).to_string(),
        _ => n.to_string(),
    }
}

/// What an injector sees of the session at a compile.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct InjectionView<'a> {
    /// The compile's target.
    pub target: Target,
    /// The turn being compiled (0-based).
    pub turn: u64,
    /// The caller's system prompt.
    pub system: &'a [Message],
    /// The history as it will be sent (after any overflow step).
    pub history: &'a [Message],
    /// The dynamic state, when set.
    pub dynamic_state: Option<&'a DynamicState>,
}

/// The texts injected at one compile, in order. Empty texts are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Injections {
    texts: Vec<String>,
}

impl Injections {
    /// Adds a text (ignored when empty).
    pub fn push(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.texts.push(text);
        }
    }

    /// The texts so far.
    pub fn texts(&self) -> &[String] {
        &self.texts
    }

    /// `<implicit_context>` with the texts joined by blank lines; `None` when there are none.
    pub fn xml(&self) -> Option<String> {
        if self.texts.is_empty() {
            return None;
        }
        Some(format!(
            "<implicit_context>\n{}\n</implicit_context>",
            self.texts.join("\n\n")
        ))
    }
}

/// Why an injector failed. A failing injector fails the compile: a request without the
/// context its loop relies on is worse than none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InjectError(pub String);

impl From<String> for InjectError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for InjectError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// Adds context to every compile (retrieved documents, the state of a build, …).
///
/// Called once per compile (and per [`Chef::request`](crate::Chef::request)), in the order
/// the injectors were added. Closures of the right shape are injectors:
///
/// ```
/// use chef::{Chef, ChefConfig, dynamic::{InjectionView, Injections}};
/// use chef_ir::{Message, Target};
///
/// let mut chef = Chef::new(ChefConfig::default());
/// chef.layers_mut().add_injector("build", |_: &InjectionView<'_>, out: &mut Injections| {
///     out.push("The last build passed.");
///     Ok(())
/// });
/// chef.push(Message::user("What next?"));
/// let body = String::from_utf8(chef.compile(Target::OpenAiChat)?.body)?;
/// assert!(body.contains("<implicit_context>\\nThe last build passed.\\n</implicit_context>"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ContextInjector: Send + Sync {
    /// Pushes this compile's texts into `out`.
    fn inject(&self, view: &InjectionView<'_>, out: &mut Injections) -> Result<(), InjectError>;
}

impl<F> ContextInjector for F
where
    F: Fn(&InjectionView<'_>, &mut Injections) -> Result<(), InjectError> + Send + Sync,
{
    fn inject(&self, view: &InjectionView<'_>, out: &mut Injections) -> Result<(), InjectError> {
        self(view, out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn scalars_escape_the_five_characters() {
        assert_eq!(
            render_xml(&json!("a<b>&'\""), "v"),
            "<v>a&lt;b&gt;&amp;&apos;&quot;</v>"
        );
        assert_eq!(render_xml(&json!(true), "v"), "<v>true</v>");
        assert_eq!(render_xml(&Value::Null, "v"), "");
    }

    #[test]
    fn numbers_print_as_javascript_would_where_it_is_unambiguous() {
        assert_eq!(render_xml(&json!(3), "n"), "<n>3</n>");
        assert_eq!(render_xml(&json!(-7), "n"), "<n>-7</n>");
        assert_eq!(render_xml(&json!(2.0), "n"), "<n>2</n>");
        assert_eq!(render_xml(&json!(-0.0), "n"), "<n>0</n>");
        assert_eq!(render_xml(&json!(0.1), "n"), "<n>0.1</n>");
        assert_eq!(render_xml(&json!(1.5), "n"), "<n>1.5</n>");
        assert_eq!(render_xml(&json!(1e300), "n"), "<n>1e+300</n>");
        assert_eq!(render_xml(&json!(1.5e-7), "n"), "<n>1.5e-7</n>");
        // Like JavaScript, exponents from 1e21 on.
        assert_eq!(render_xml(&json!(1e21), "n"), "<n>1e+21</n>");
        assert_eq!(
            render_xml(&json!(i64::MIN), "n"),
            "<n>-9223372036854775808</n>"
        );
        assert_eq!(
            render_xml(&json!(u64::MAX), "n"),
            "<n>18446744073709551615</n>"
        );
    }

    #[test]
    fn nested_blocks_indent_only_their_first_line() {
        let value = json!({"a": {"b": {"c": 1}}, "list": [[1, 2]], "empty": {}, "none": []});
        assert_eq!(
            render_xml(&value, "s"),
            "<s>\n  <a>\n  <b>\n  <c>1</c>\n</b>\n</a>\n  <list>\n  <item>\n  <item>1</item>\n  <item>2</item>\n</item>\n</list>\n  <empty>\n</empty>\n  \n</s>"
        );
    }

    #[test]
    fn keys_become_element_names() {
        let value = json!({"a-b c": 1, "ünï": 2, "": 3, "ok_9": 4});
        assert_eq!(
            render_xml(&value, "s"),
            "<s>\n  <a_b_c>1</a_b_c>\n  <_n_>2</_n_>\n  <_>3</_>\n  <ok_9>4</ok_9>\n</s>"
        );
    }

    #[test]
    fn null_array_items_keep_their_line() {
        assert_eq!(
            render_xml(&json!([null, "x"]), "s"),
            "<s>\n  \n  <item>x</item>\n</s>"
        );
    }

    #[test]
    fn injections_skip_empty_texts() {
        let mut out = Injections::default();
        assert_eq!(out.xml(), None);
        out.push("A");
        out.push("");
        out.push(String::from("B"));
        assert_eq!(
            out.xml().as_deref(),
            Some("<implicit_context>\nA\n\nB\n</implicit_context>")
        );
    }
}
