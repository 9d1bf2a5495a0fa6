//! Tool-schema compression for chef: shrink the tool definitions an agent sends a model,
//! and translate the model's calls back to real tools with arguments validated against
//! the original schemas.
//!
//! ```
//! use chef_compress::{compress, recommend_level, Options, Resolution};
//! use chef_ir::ToolDefinition;
//! use serde_json::json;
//!
//! let tools = vec![
//!     ToolDefinition::new("slack_post_message", json!({
//!         "type": "object",
//!         "properties": {
//!             "channel": {"type": "string", "description": "Channel id, e.g. C024BE91L."},
//!             "text": {"type": "string", "description": "Message text (mrkdwn)."}
//!         },
//!         "required": ["channel", "text"]
//!     }))
//!     .with_description("Post a message to a Slack channel on behalf of the app."),
//! ];
//!
//! let advice = recommend_level(&tools)?;          // advice only: 0, 1 or 3
//! let c = compress(&tools, &Options::new().with_level(advice.level))?;
//! // Send c.tools() and append c.system() to the system prompt; then, per tool call:
//! match c.resolve("slack_post_message", &json!({"channel": "C1", "text": "hi"})) {
//!     Resolution::Call { name, args } => assert_eq!((name.as_str(), &args["text"]), ("slack_post_message", &json!("hi"))),
//!     Resolution::Meta { result, .. } => { /* answer the model with `result` */ }
//!     Resolution::Error(e) => { /* answer the model with e.message(), flagged as an error */ let _ = e.recoverable(); }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Levels
//!
//! | level | wire | the model sees | provider enforces the schema |
//! |---|---|---|---|
//! | 0 | tools unchanged | real names | yes |
//! | 1 (default) | prose stripped, `name(a,b?) — first sentence` descriptions | real names | yes |
//! | 2 | one `ns(op, args)` tool per namespace plus `describe_op` | namespace + op | no |
//! | 3 | `t(f, a)` and `q(c, s)` plus a `<toolmap>` of codes in the system prompt | codes | no |
//! | 4 | `t` and `q` plus a Python block of model-compiled `def` lines (verified at every compress) | real names | no |
//!
//! [`compress`] never changes the level on its own; [`recommend_level`] advises. Below
//! the provider, arguments are checked by [`Compressed::resolve`] against the tool's
//! original schema as normalised for validation (keywords the validator refuses and
//! patterns it cannot run are left out; [`Options::with_validate`]`(false)` turns the check
//! off), and failures come back as text written for the model.
//!
//! # Determinism
//!
//! Tools are sorted by name in a fixed, locale-free order (case-insensitively by a fixed
//! rank: punctuation, then digits, then letters, then any other character by its lower-case
//! code point; names that differ only in case put lower case first; never the process
//! locale), codes and namespaces derive from that order, and every JSON
//! object keeps its authored key order, so identical tools in any order give identical
//! bytes on every machine.
//!
//! # Features
//!
//! - `compile`: `compile_tools` writes a level-4 compiled map with a caller-supplied
//!   async `Completer` (any model client), verifying every line.
//! - `tokens`: o200k_base token counts ([`tokens::count_o200k`]), token figures in
//!   [`Stats`] when asked for with `Options::with_token_counts`, and the level-1 block's
//!   o200k_base count in [`Recommendation::level1_tokens`].

mod compile;
mod compress;
mod error;
mod levels;
mod measured;
mod options;
mod order;
mod pipeline;
mod policy;
mod read;
mod recommend;
mod render;
mod resolve;
pub mod similarity;
mod source;
mod stats;
pub mod validate;

pub mod search;
#[cfg(feature = "tokens")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
pub mod tokens;

pub use crate::{
    compile::{
        DEFAULT_MAX_DOC_CHARS, DanglingReference, VerifyError, compile_prompt, compiled_docstring,
        dangling_references, describe_for_compile, verify_compiled_line,
    },
    compress::{Compressed, EncodedCall},
    error::{CodeError, CompressError, check_names},
    measured::{MEASURED, Measured, map_style_sweeps},
    options::{
        AliasFn, Level, MapStyle, NamespaceFn, Objective, Options, ToolNamespace, UnsupportedLevel,
        UnsupportedMapStyle, UnsupportedObjective,
    },
    pipeline::{Catalogue, check_tool, compress},
    policy::{
        BROKEN, BrokenEntry, CONSERVATIVE_DEFAULT, MAP_STYLE_MARGIN_PCT, POLICY, PolicyEntry,
        StyleSelection, select_map_style, select_map_style_with, style_winner,
    },
    recommend::{
        Recommendation, recommend_level, recommend_level_with, recommend_level_with_limits,
    },
    render::{first_sentence, flatten_schema, parameter_lines, parameter_type, signature_line},
    resolve::{Resolution, ResolveError, real_name_of_wire},
    stats::{Stats, thousands},
};

#[cfg(feature = "compile")]
#[cfg_attr(docsrs, doc(cfg(feature = "compile")))]
pub use crate::compile::{
    CompileOptions, CompileProgress, CompileReport, CompileStats, CompiledSink, Completer,
    CompleterError, ProgressFn, compile_tools,
};

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Compressed>();
    assert_send_sync::<Catalogue>();
    assert_send_sync::<Options>();
    assert_send_sync::<CompressError>();
    assert_send_sync::<ResolveError>();
};
