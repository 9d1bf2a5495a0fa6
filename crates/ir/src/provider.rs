//! The one trait every provider crate implements, and what is built on it once.
//!
//! A provider crate (`chef-anthropic`, `chef-openai`'s Chat Completions and Responses,
//! `chef-gemini`) is a pure translator: an IR [`Request`] into its wire JSON, and its wire
//! JSON back into the IR. [`Provider`] names those translations, so that the code that
//! drives them (the runtime's per-target caches and splicing, the gateway, a test) is
//! written once, generically, instead of once per provider:
//!
//! - [`Provider::layout`] compiles a request into a [`Layout`]: the body without its
//!   `tools` member and where it goes, the name table, the notices (see
//!   [`crate::layout`]). [`compile`] turns a layout into the whole body.
//! - [`Provider::parse_reply`] reads a whole reply into the assistant [`Message`] it holds;
//!   [`Provider::parse_request`] reads a whole request body (the input adapter).
//! - [`Provider::name_rule`] is the tool names the provider accepts.
//!
//! ```
//! use chef_ir::{
//!     Message, NameRule, Request, ToolDefinition, ToolPass, WireNames,
//!     layout::Layout,
//!     provider::{self, Provider},
//! };
//! use serde_json::{Value, json};
//!
//! /// A provider whose body is `{"tools":[…],"turns":["text",…]}`.
//! struct Toy;
//!
//! impl Provider for Toy {
//!     const NAME: &'static str = "toy";
//!     type Options = ();
//!     type Tool<'a> = String;
//!     type Error = serde_json::Error;
//!
//!     fn name_rule() -> NameRule {
//!         NameRule::OPENAI
//!     }
//!
//!     fn layout<'a>(
//!         request: &'a Request,
//!         _: &(),
//!         pass: ToolPass,
//!         _offset: usize,
//!     ) -> Result<Layout<String>, serde_json::Error> {
//!         let names = WireNames::new(request.tools.iter().map(|t| &t.name), Self::name_rule());
//!         let turns: Vec<String> = request.messages.iter().map(Message::text).collect();
//!         let body = serde_json::to_vec(&json!({ "turns": turns }))?;
//!         let mut layout = Layout::new(body, "turns", names.clone());
//!         layout.tools_at = 1;
//!         layout.converted = pass == ToolPass::Convert;
//!         if layout.converted {
//!             let wire = |t: &ToolDefinition| names.to_wire(t.name.as_str()).to_owned();
//!             layout.tools = request.tools.iter().map(wire).collect();
//!         }
//!         Ok(layout)
//!     }
//!
//!     fn parse_reply(body: &[u8], _: &WireNames, _: &[Message]) -> Result<Message, serde_json::Error> {
//!         let reply: Value = serde_json::from_slice(body)?;
//!         Ok(Message::assistant(reply["text"].as_str().unwrap_or_default()))
//!     }
//!
//!     fn parse_request(body: &[u8]) -> Result<Request, serde_json::Error> {
//!         let turns: Vec<String> = serde_json::from_slice::<Value>(body)
//!             .and_then(|v| serde_json::from_value(v["turns"].clone()))?;
//!         Ok(Request::new(turns.into_iter().map(Message::user).collect()))
//!     }
//! }
//!
//! let request = Request::new(vec![Message::user("hi")])
//!     .with_tools(vec![ToolDefinition::new("files.read", json!({"type": "object"}))]);
//! let compiled = provider::compile::<Toy>(&request, &())?;
//! assert_eq!(compiled.body, br#"{"tools":["files_read"],"turns":["hi"]}"#);
//! let reply = Toy::parse_reply(br#"{"text":"done"}"#, &compiled.names, &[])?;
//! assert_eq!(reply.text(), "done");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use serde::Serialize;

use crate::{Message, NameRule, Request, ToolPass, WireNames, layout::Layout};

/// A provider wire format: IR → wire bytes (as a [`Layout`]) and wire → IR.
///
/// Implemented by a unit type per wire format (`chef_anthropic::Anthropic`,
/// `chef_openai::Chat`, `chef_openai::Responses`, `chef_gemini::Gemini`); every method is
/// an associated function, so a caller names the provider as a type parameter. See the
/// [module docs](self) for a whole toy provider.
pub trait Provider {
    /// The provider's short name, for messages and logs.
    const NAME: &'static str;
    /// Its compile settings (model, token limits, thinking, …).
    type Options: Clone + Default + fmt::Debug + Send + Sync + 'static;
    /// One element of the body's `tools` array, borrowing the request.
    type Tool<'a>: Serialize;
    /// What compiling or parsing fails with.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The tool names the provider accepts; others are renamed through [`WireNames`].
    fn name_rule() -> NameRule;

    /// Compiles `request` into a [`Layout`]: the body without its `tools` member, where
    /// that member goes, the tools (converted unless `pass` is [`ToolPass::Skip`] and the
    /// provider honours it), the name table and the notices, renumbered for a request
    /// that left its first `offset` history messages out (see [`crate::layout`]).
    ///
    /// Identical input gives identical bytes.
    ///
    /// # Errors
    ///
    /// What the provider cannot express (its error type says), and a body that cannot be
    /// serialised.
    fn layout<'a>(
        request: &'a Request,
        options: &Self::Options,
        pass: ToolPass,
        offset: usize,
    ) -> Result<Layout<Self::Tool<'a>>, Self::Error>;

    /// Reads a whole reply into the assistant message it holds, its tool calls named by
    /// their real names through `names` (the table the request was compiled with).
    /// `history` is the conversation the reply answers (a provider whose calls carry no
    /// ids numbers them after the ones it holds).
    ///
    /// # Errors
    ///
    /// A body that is not the provider's reply JSON, or an error reply.
    fn parse_reply(
        body: &[u8],
        names: &WireNames,
        history: &[Message],
    ) -> Result<Message, Self::Error>;

    /// Reads a whole request body (the input adapter) into the IR, its history repaired
    /// with [`crate::repair_history`].
    ///
    /// # Errors
    ///
    /// A body that is not the provider's request JSON.
    fn parse_request(body: &[u8]) -> Result<Request, Self::Error>;
}

/// A request compiled whole through a [`Provider`] (see [`compile`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Compiled {
    /// The compact JSON body.
    pub body: Vec<u8>,
    /// Real ↔ wire tool names; pass it to [`Provider::parse_reply`].
    pub names: WireNames,
    /// What could not be expressed as asked, as text, in the provider crate's order.
    pub notices: Vec<String>,
}

/// Why [`compile`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError<E: std::error::Error + 'static> {
    /// The provider crate refused the request.
    #[error(transparent)]
    Provider(E),
    /// The tools could not be serialised.
    #[error("cannot serialise the tools")]
    Tools(#[source] serde_json::Error),
}

/// Compiles `request` through `P` into its whole body: [`Provider::layout`] with the tools
/// converted, and the tools written back where the layout says. The bytes are the
/// provider crate's own `compile` + `to_vec`.
///
/// # Errors
///
/// [`CompileError::Provider`] with what [`Provider::layout`] fails with, and
/// [`CompileError::Tools`].
pub fn compile<P: Provider>(
    request: &Request,
    options: &P::Options,
) -> Result<Compiled, CompileError<P::Error>> {
    let layout =
        P::layout(request, options, ToolPass::Convert, 0).map_err(CompileError::Provider)?;
    let body = if layout.tools.is_empty() {
        layout.body
    } else {
        let tools = serde_json::to_vec(&layout.tools).map_err(CompileError::Tools)?;
        let at = layout.tools_at.min(layout.body.len());
        let (head, tail) = layout.body.split_at(at);
        let (before, after) = crate::layout::tools_separators(head, tail);
        let mut body = Vec::with_capacity(layout.body.len() + tools.len() + 12);
        body.extend_from_slice(head);
        body.extend_from_slice(before);
        body.extend_from_slice(&tools);
        body.extend_from_slice(after);
        body.extend_from_slice(tail);
        body
    };
    Ok(Compiled {
        body,
        names: layout.names,
        notices: layout.notices,
    })
}

/// Declares a provider crate's marker type and implements [`Provider`] on it from the
/// crate's own functions: the one place the shape of an implementation is written.
///
/// The body of each `fn` is the method's; the parameter names are the invocation's. The
/// marker is a unit struct deriving `Debug`, `Clone`, `Copy` and `Default`.
///
/// ```
/// use chef_ir::{Message, NameRule, Request, layout::Layout};
///
/// chef_ir::provider! {
///     /// A provider that sends nothing but an empty object.
///     pub struct Empty = "empty", NameRule::OPENAI;
///     type Options = (); type Error = std::convert::Infallible; type Tool<'a> = ();
///     fn layout(_request, _options, _pass, _offset) { Ok(Layout::new(b"{}".to_vec(), "m", Default::default())) }
///     fn parse_reply(_body, _names, _history) { Ok(Message::assistant("")) }
///     fn parse_request(_body) { Ok(Request::default()) }
/// }
///
/// let compiled = chef_ir::provider::compile::<Empty>(&Request::default(), &())?;
/// assert_eq!(compiled.body, b"{}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! provider {
    (
        $(#[$meta:meta])*
        $vis:vis struct $ty:ident = $name:literal, $rule:expr;
        type Options = $options:ty; type Error = $error:ty; type Tool<$a:lifetime> = $tool:ty;
        fn layout($request:ident, $opts:pat, $pass:pat, $offset:pat) $layout:block
        fn parse_reply($body:pat, $names:pat, $history:pat) $reply:block
        fn parse_request($request_body:pat) $parse_request:block
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default)]
        #[allow(
            clippy::exhaustive_structs,
            reason = "a marker naming a wire format: it has no fields to add"
        )]
        $vis struct $ty;

        impl $crate::provider::Provider for $ty {
            const NAME: &'static str = $name;
            type Options = $options;
            type Tool<$a> = $tool;
            type Error = $error;

            fn name_rule() -> $crate::NameRule {
                $rule
            }

            fn layout<$a>(
                $request: &$a $crate::Request,
                $opts: &$options,
                $pass: $crate::ToolPass,
                $offset: usize,
            ) -> ::std::result::Result<$crate::layout::Layout<$tool>, $error> $layout

            fn parse_reply(
                $body: &[u8],
                $names: &$crate::WireNames,
                $history: &[$crate::Message],
            ) -> ::std::result::Result<$crate::Message, $error> $reply

            fn parse_request(
                $request_body: &[u8],
            ) -> ::std::result::Result<$crate::Request, $error> $parse_request
        }
    };
}
