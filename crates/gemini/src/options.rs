//! What a compile can be asked to do differently: thinking, schemas and call ids.

/// What becomes of thinking blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThinkingMode {
    /// Leave them out (spec default); each is reported with [`Notice::ThinkingDropped`](crate::Notice::ThinkingDropped).
    #[default]
    Drop,
    /// Send `"<thinking>\n" + thinking + "\n</thinking>\n\n"` as a text part where the
    /// block was (spec §3.5); signatures are dropped.
    AsText,
    /// Send `{text, thought: true, thoughtSignature}` parts, as Gemini returned them.
    /// Use only for thinking that came from Gemini.
    Native,
}

/// Which field carries a tool's parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaMode {
    /// `parameters`, cleaned into the OpenAPI subset ([`clean_schema`](crate::clean_schema)).
    #[default]
    Parameters,
    /// `parametersJsonSchema`, the schema verbatim (models that accept full JSON Schema).
    JsonSchema,
}

/// Options for [`compile`](fn@crate::compile) and [`envelope`](fn@crate::envelope).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompileOptions {
    /// What becomes of thinking blocks.
    pub thinking: ThinkingMode,
    /// Which field carries a tool's parameters.
    pub schema: SchemaMode,
    /// Send tool-call ids as `functionCall.id` / `functionResponse.id`. Off by default:
    /// Gemini pairs calls and responses by name and order, and ids from another provider
    /// mean nothing to it.
    pub call_ids: bool,
}

impl CompileOptions {
    /// Sets the thinking mode.
    #[must_use]
    pub fn with_thinking(mut self, thinking: ThinkingMode) -> Self {
        self.thinking = thinking;
        self
    }

    /// Sets the schema mode.
    #[must_use]
    pub fn with_schema(mut self, schema: SchemaMode) -> Self {
        self.schema = schema;
        self
    }

    /// Sets whether call ids are sent.
    #[must_use]
    pub fn with_call_ids(mut self, on: bool) -> Self {
        self.call_ids = on;
        self
    }
}
