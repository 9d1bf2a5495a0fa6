//! One input tool, checked and normalised once ([`ToolCore`]), shared by every
//! compression of its catalogue.

use std::{
    ops::Range,
    sync::{Arc, OnceLock},
};

use chef_ir::ToolDefinition;
use serde_json::Value;

use crate::{
    options::ToolNamespace,
    render::{push_params, required_iter, signature_line},
    source::parse_schema,
    validate::{
        ArgumentValidator, Limits, Normalisation, NormalisedSchema, RootDrops, SchemaError,
    },
};

/// One input tool, checked and normalised once per [`Catalogue`] and shared by every
/// [`Compressed`] made from it (so a schema is parsed, and a validator compiled, at most once
/// per catalogue however many selections of it are compressed).
pub(crate) struct ToolCore {
    /// The input definition, kept by a [`Catalogue`] (level 0 sends it as it is, and the
    /// renderers read its schema when normalisation left it unchanged); `None` when
    /// [`compress`] borrows it from its caller for the one compression it makes.
    ///
    /// [`compress`]: crate::compress()
    pub(crate) tool: Option<ToolDefinition>,
    pub(crate) name: String,
    pub(crate) description: String,
    /// The normalised schema: what the validator compiles and the search index reads. Set
    /// when normalisation changed the schema; otherwise parsed from `source` on first need
    /// (most schemas need no change, and most tools of a large catalogue are never called
    /// or searched).
    pub(crate) schema: OnceLock<Value>,
    /// The schema's text in the catalogue's JSON, when it needed no normalisation.
    pub(crate) source: Option<SchemaSource>,
    /// Compiled on first resolve (compiling is most of what a validator costs, and most
    /// tools of a large catalogue are never called).
    pub(crate) validator: OnceLock<Result<ArgumentValidator, SchemaError>>,
    /// Tags and annotation title, for the `q(s=…)` index.
    pub(crate) tags: Vec<String>,
    pub(crate) title: Option<String>,
    /// The limits the validator is compiled with.
    pub(crate) limits: Limits,
    /// What normalisation changed, for the statistics.
    pub(crate) notes: Vec<Normalisation>,
    /// Characters of the tool's object in the catalogue's JSON (`serde_json` of the
    /// definition): the tool's share of the statistics' `original_chars`.
    pub(crate) chars: usize,
    /// Byte range of that object in the catalogue's text.
    #[cfg_attr(
        not(feature = "tokens"),
        allow(dead_code, reason = "read for token counts")
    )]
    pub(crate) object: Range<usize>,
    /// The name's place in the catalogue's locale-free name order: selections sort by it.
    pub(crate) rank: u32,
    /// The name's default namespace split ([`ToolNamespace::split`]).
    pub(crate) split: ToolNamespace,
    /// That namespace's number in the catalogue (first appearance in input order).
    pub(crate) ns_id: u32,
    /// The map line's body for the required-parameter styles: the required names joined by
    /// `,` (`None` when there are none), rendered on first need.
    pub(crate) required_line: OnceLock<Option<String>>,
    /// The map line's parameter list for the signature style, rendered on first need.
    pub(crate) params_line: OnceLock<String>,
}

/// Where a tool's schema can be parsed from.
pub(crate) struct SchemaSource {
    pub(crate) text: Arc<Vec<u8>>,
    pub(crate) range: Range<usize>,
    /// Root keys normalisation drops.
    pub(crate) drops: RootDrops,
}

impl ToolCore {
    /// What the `q(s=…)` search indexes read of this tool.
    pub(crate) fn doc(&self) -> crate::search::Doc<'_> {
        crate::search::Doc {
            name: &self.name,
            tags: &self.tags,
            description: &self.description,
            title: self.title.as_deref(),
            schema: self.schema(),
        }
    }

    /// The normalised schema, parsed from the catalogue's text on first use when it needed
    /// no normalisation.
    pub(crate) fn schema(&self) -> &Value {
        self.schema.get_or_init(|| match &self.source {
            Some(source) => {
                let mut schema = parse_schema(&source.text, source.range.clone());
                source.drops.apply(&mut schema);
                schema
            }
            // Tools without a source are built with their schema set.
            None => Value::Bool(false),
        })
    }

    /// What the renderers read: the normalised schema where normalisation changed it, else
    /// the input's own (the same document but for a `$schema` or an empty `required`, which
    /// render as their absence does).
    pub(crate) fn view<'a>(&'a self, input: &'a ToolDefinition) -> &'a Value {
        match &self.source {
            Some(_) => &input.input_schema,
            None => self.schema(),
        }
    }

    /// The required parameters of `view` (this tool's [`view`](Self::view)) joined by `,`,
    /// or `None` when there are none.
    pub(crate) fn required_line(&self, view: &Value) -> Option<&str> {
        self.required_line
            .get_or_init(|| {
                let mut required = required_iter(view).peekable();
                required.peek()?;
                let mut line = String::new();
                for (i, r) in required.enumerate() {
                    if i > 0 {
                        line.push(',');
                    }
                    line.push_str(r);
                }
                Some(line)
            })
            .as_deref()
    }

    /// The parameter list of the signature map style (`a,b?:int`) of `view` (this tool's
    /// [`view`](Self::view)).
    pub(crate) fn params_line(&self, view: &Value) -> &str {
        self.params_line.get_or_init(|| {
            let mut line = String::new();
            push_params(&mut line, view);
            line
        })
    }

    /// The tool's validator, compiled on first use; the compile error (a schema the
    /// validator refuses even after normalisation and repair) is kept and returned on every
    /// call.
    pub(crate) fn validator(&self) -> Result<&ArgumentValidator, &SchemaError> {
        self.validator
            .get_or_init(|| {
                let normalised = NormalisedSchema {
                    schema: self.schema().clone(),
                    notes: Vec::new(),
                };
                ArgumentValidator::from_normalised(&self.name, normalised, self.limits)
            })
            .as_ref()
    }

    pub(crate) fn signature(&self) -> String {
        signature_line(&self.name, self.schema())
    }
}
