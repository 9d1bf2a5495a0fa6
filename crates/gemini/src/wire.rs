//! Serde mirror of the Gemini `generateContent` JSON (REST, `v1beta`), field for field.
//!
//! Names follow Google's reference for `models.generateContent`; doc comments quote it
//! where that helps. Types Gemini keeps extending are `#[non_exhaustive]` with a `new`
//! constructor.
//!
//! # Parts
//!
//! A Gemini `Part` is a union: exactly one data field (`text`, `inlineData`, `fileData`,
//! `functionCall`, `functionResponse`, `executableCode`, …) plus metadata (`thought`,
//! `thoughtSignature`, …). [`Part`] models the data fields chef maps to its IR and keeps
//! every other part as [`Part::Unknown`], byte for byte. Dispatch is by hand (see
//! [`Part`]'s `Deserialize`): a part whose keys are all modelled is decoded into
//! [`Part::Known`] (a wrong-typed modelled field is an error), anything else is kept raw.
//!
//! ```json
//! {"text":"Checking.","thoughtSignature":"c2ln"}
//! {"functionCall":{"name":"get_weather","args":{"city":"Oslo"}},"thoughtSignature":"c2ln"}
//! {"functionResponse":{"name":"get_weather","response":{"output":"-3 °C"}}}
//! {"inlineData":{"mimeType":"image/png","data":"iVBORw0…"}}
//! {"fileData":{"mimeType":"application/pdf","fileUri":"gs://bucket/contract.pdf"}}
//! ```

use std::borrow::Cow;

use serde::{
    Deserialize, Deserializer, Serialize, Serializer,
    de::Error as _,
    ser::{SerializeMap, SerializeStruct},
};
use serde_json::{Map, Value};

/// A wire string from an open set Google owns: the type (unknown values survive parsing
/// unchanged), `new` (any value), `as_str`, and the known values as constants.
macro_rules! open_set {
    (
        $(#[$meta:meta])*
        pub struct $name:ident;
        new($arg:ident): $new_doc:literal;
        as_str: $as_str_doc:literal;
        $($(#[$known_meta:meta])* $known:ident = $value:literal;)+
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Cow<'static, str>);

        impl $name {
            $($(#[$known_meta])* pub const $known: Self = Self(Cow::Borrowed($value));)+

            #[doc = $new_doc]
            pub fn new($arg: impl Into<String>) -> Self {
                Self(Cow::Owned($arg.into()))
            }

            #[doc = $as_str_doc]
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
    };
}

/// The body of `POST …/models/{model}:generateContent`.
///
/// Field order is chosen for prompt caching: the parts that change least
/// (`systemInstruction`, then `tools`) serialise first and `contents` last, so the bytes of
/// an unchanged prefix stay identical from turn to turn. Gemini ignores key order.
///
/// ```json
/// {"systemInstruction":{"parts":[{"text":"Be terse."}]},
///  "tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{…}}]}],
///  "contents":[{"role":"user","parts":[{"text":"Weather in Oslo?"}]}]}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Request<'a> {
    /// "Developer set system instruction(s). Currently, text only."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Content<'a>>,
    /// "A list of Tools the Model may use to generate the next response." All function
    /// declarations sit in one tool object; native tools follow as their own objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    /// "The content of the current conversation with the model."
    pub contents: Vec<Content<'a>>,
}

impl<'a> Request<'a> {
    /// A request with contents only.
    pub fn new(contents: Vec<Content<'a>>) -> Self {
        Self {
            system_instruction: None,
            tools: Vec::new(),
            contents,
        }
    }
}

open_set! {
    /// Who produced a [`Content`]: an open set owned by Google.
    ///
    /// "Must be either 'user' or 'model'." Other values survive parsing unchanged.
    pub struct Role;
    new(role): "Wraps any role string.";
    as_str: "The role as a string slice.";
    /// The user (and tool results).
    USER = "user";
    /// The model.
    MODEL = "model";
}

/// "The base structured datatype containing multi-part content of a message."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Content<'a> {
    /// "The producer of the content." Absent on `systemInstruction`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// "Ordered Parts that constitute a single message."
    #[serde(default)]
    pub parts: Vec<Part<'a>>,
}

impl<'a> Content<'a> {
    /// A content with a role and parts.
    pub fn new(role: Role, parts: Vec<Part<'a>>) -> Self {
        Self {
            role: Some(role),
            parts,
        }
    }

    /// A content without a role (the shape of `systemInstruction`).
    pub fn without_role(parts: Vec<Part<'a>>) -> Self {
        Self { role: None, parts }
    }
}

/// One part of a [`Content`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Part<'a> {
    /// A part chef models.
    Known(KnownPart<'a>),
    /// Any other part (`executableCode`, `codeExecutionResult`, a part with metadata chef
    /// does not model, a kind Google adds later), kept exactly as received.
    Unknown(Cow<'a, Value>),
}

impl<'a> Part<'a> {
    /// A plain text part.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Self {
        Self::Known(KnownPart::new(Data::Text(text.into())))
    }
}

/// A part chef models: one data field plus the metadata Gemini attaches to it.
///
/// Parsing yields `thought: true` only on text parts and a `thoughtSignature` only on text
/// and function-call parts; other combinations are kept as [`Part::Unknown`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct KnownPart<'a> {
    /// The data field.
    pub data: Data<'a>,
    /// "Indicates if the part is thought from the model." Serialised only when true.
    pub thought: bool,
    /// "An opaque signature for the thought so it can be reused in subsequent requests."
    pub thought_signature: Option<Cow<'a, str>>,
}

impl<'a> KnownPart<'a> {
    /// A part with data and no metadata.
    pub fn new(data: Data<'a>) -> Self {
        Self {
            data,
            thought: false,
            thought_signature: None,
        }
    }

    /// Sets `thought`.
    #[must_use]
    pub fn with_thought(mut self, thought: bool) -> Self {
        self.thought = thought;
        self
    }

    /// Sets `thoughtSignature`.
    #[must_use]
    pub fn with_thought_signature(mut self, signature: Option<Cow<'a, str>>) -> Self {
        self.thought_signature = signature;
        self
    }
}

/// The data field of a [`KnownPart`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Data<'a> {
    /// `text`: "Inline text."
    Text(Cow<'a, str>),
    /// `inlineData`: "Inline media bytes."
    InlineData(Blob<'a>),
    /// `fileData`: "URI based data."
    FileData(FileData<'a>),
    /// `functionCall`: "A predicted FunctionCall returned from the model."
    FunctionCall(FunctionCall<'a>),
    /// `functionResponse`: "The result output of a FunctionCall."
    FunctionResponse(FunctionResponse<'a>),
}

impl Data<'_> {
    /// The JSON key of this data field.
    pub fn key(&self) -> &'static str {
        match self {
            Self::Text(_) => "text",
            Self::InlineData(_) => "inlineData",
            Self::FileData(_) => "fileData",
            Self::FunctionCall(_) => "functionCall",
            Self::FunctionResponse(_) => "functionResponse",
        }
    }
}

/// "Raw media bytes." Text should not be sent as raw bytes; use `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Blob<'a> {
    /// "The IANA standard MIME type of the source data."
    pub mime_type: Cow<'a, str>,
    /// "Raw bytes for media formats", base64-encoded in JSON.
    pub data: Cow<'a, str>,
}

impl<'a> Blob<'a> {
    /// A blob from a MIME type and base64 data.
    pub fn new(mime_type: impl Into<Cow<'a, str>>, data: impl Into<Cow<'a, str>>) -> Self {
        Self {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }
}

/// "URI based data": a Files API URI, a `gs://` object or an `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct FileData<'a> {
    /// "Optional. The IANA standard MIME type of the source data."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<Cow<'a, str>>,
    /// "Required. URI."
    pub file_uri: Cow<'a, str>,
}

impl<'a> FileData<'a> {
    /// File data from an optional MIME type and a URI.
    pub fn new(mime_type: Option<Cow<'a, str>>, file_uri: impl Into<Cow<'a, str>>) -> Self {
        Self {
            mime_type,
            file_uri: file_uri.into(),
        }
    }
}

/// "A predicted FunctionCall returned from the model that contains a string representing
/// the FunctionDeclaration.name with the arguments and their values."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct FunctionCall<'a> {
    /// "Optional. The unique id of the function call."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Cow<'a, str>>,
    /// "Required. The name of the function to call."
    pub name: Cow<'a, str>,
    /// "Optional. The function parameters and values in JSON object format."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Cow<'a, Map<String, Value>>>,
}

impl<'a> FunctionCall<'a> {
    /// A call by name with arguments.
    pub fn new(name: impl Into<Cow<'a, str>>, args: Option<Cow<'a, Map<String, Value>>>) -> Self {
        Self {
            id: None,
            name: name.into(),
            args,
        }
    }

    /// Sets the call id.
    #[must_use]
    pub fn with_id(mut self, id: Option<Cow<'a, str>>) -> Self {
        self.id = id;
        self
    }
}

/// "The result output from a FunctionCall … used as context to the model."
///
/// "Use "output" key to specify function output and "error" key to specify error details
/// (if any). If "output" and "error" keys are not specified, then whole "response" is
/// treated as function output."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct FunctionResponse<'a> {
    /// "Optional. The id of the function call this response is for."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Cow<'a, str>>,
    /// "Required. The name of the function to call."
    pub name: Cow<'a, str>,
    /// "Required. The function response in JSON object format."
    pub response: Map<String, Value>,
}

impl<'a> FunctionResponse<'a> {
    /// A response by function name.
    pub fn new(name: impl Into<Cow<'a, str>>, response: Map<String, Value>) -> Self {
        Self {
            id: None,
            name: name.into(),
            response,
        }
    }

    /// Sets the call id.
    #[must_use]
    pub fn with_id(mut self, id: Option<Cow<'a, str>>) -> Self {
        self.id = id;
        self
    }
}

impl Serialize for Part<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let part = match self {
            Self::Unknown(value) => return value.serialize(serializer),
            Self::Known(part) => part,
        };
        let len = 1 + usize::from(part.thought) + usize::from(part.thought_signature.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        match &part.data {
            Data::Text(text) => map.serialize_entry("text", text)?,
            Data::InlineData(blob) => map.serialize_entry("inlineData", blob)?,
            Data::FileData(file) => map.serialize_entry("fileData", file)?,
            Data::FunctionCall(call) => map.serialize_entry("functionCall", call)?,
            Data::FunctionResponse(resp) => map.serialize_entry("functionResponse", resp)?,
        }
        if part.thought {
            map.serialize_entry("thought", &true)?;
        }
        if let Some(signature) = &part.thought_signature {
            map.serialize_entry("thoughtSignature", signature)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Part<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Part::from_value(value).map_err(D::Error::custom)
    }
}

impl Part<'_> {
    /// Dispatches a raw part: all keys modelled → [`Part::Known`], otherwise
    /// [`Part::Unknown`] with the value untouched. A modelled field of the wrong shape is
    /// an error rather than a silent `Unknown`.
    pub fn from_value(value: Value) -> Result<Self, crate::Error> {
        let Value::Object(map) = &value else {
            return Ok(Self::Unknown(Cow::Owned(value)));
        };
        const DATA: [&str; 5] = [
            "text",
            "inlineData",
            "fileData",
            "functionCall",
            "functionResponse",
        ];
        let mut data_key = None;
        for key in map.keys() {
            if DATA.contains(&key.as_str()) {
                if data_key.is_some() {
                    return Ok(Self::Unknown(Cow::Owned(value)));
                }
                data_key = Some(key.as_str());
            } else if key != "thought" && key != "thoughtSignature" {
                return Ok(Self::Unknown(Cow::Owned(value)));
            }
        }
        let Some(key) = data_key else {
            return Ok(Self::Unknown(Cow::Owned(value)));
        };
        let kind = match key {
            "text" => "text",
            "inlineData" => "inlineData",
            "fileData" => "fileData",
            "functionCall" => "functionCall",
            _ => "functionResponse",
        };
        let malformed = |reason: String| crate::Error::MalformedPart { kind, reason };
        let unreadable = |source| crate::Error::MalformedPartData { kind, source };
        let thought = match map.get("thought") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(malformed(format!("thought is {other}, not a boolean"))),
        };
        let thought_signature = match map.get("thoughtSignature") {
            None => None,
            Some(Value::String(s)) => Some(Cow::Owned(s.clone())),
            Some(other) => {
                return Err(malformed(format!(
                    "thoughtSignature is {other}, not a string"
                )));
            }
        };
        // Metadata the IR cannot carry on this kind of part keeps the part raw too: a
        // `thought` flag only on text, a signature only on text and function calls.
        let carried = match kind {
            "text" => true,
            "functionCall" => !thought,
            _ => !thought && thought_signature.is_none(),
        };
        if !carried {
            return Ok(Self::Unknown(Cow::Owned(value)));
        }
        let inner = map.get(key).cloned().unwrap_or(Value::Null);
        // Unknown nested fields (a new `functionCall` field, `videoMetadata`, …) keep the
        // whole part raw, so nothing is dropped on the way back.
        let fields: &[&str] = match kind {
            "inlineData" => &["mimeType", "data"],
            "fileData" => &["mimeType", "fileUri"],
            "functionCall" => &["id", "name", "args"],
            "functionResponse" => &["id", "name", "response"],
            _ => &[],
        };
        if let Value::Object(inner) = &inner
            && inner.keys().any(|k| !fields.contains(&k.as_str()))
        {
            return Ok(Self::Unknown(Cow::Owned(value)));
        }
        let data = match kind {
            "text" => match inner {
                Value::String(s) => Data::Text(Cow::Owned(s)),
                other => return Err(malformed(format!("text is {other}, not a string"))),
            },
            "inlineData" => Data::InlineData(decode(inner).map_err(unreadable)?),
            "fileData" => Data::FileData(decode(inner).map_err(unreadable)?),
            "functionCall" => Data::FunctionCall(decode(inner).map_err(unreadable)?),
            _ => Data::FunctionResponse(decode(inner).map_err(unreadable)?),
        };
        Ok(Self::Known(KnownPart {
            data,
            thought,
            thought_signature,
        }))
    }
}

fn decode<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(value)
}

/// "Tool details that the model may use to generate response."
///
/// chef writes all function declarations into one `Tool` object and each native tool
/// (`{"googleSearch":{}}`, `{"codeExecution":{}}`, …) as its own object after it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Tool<'a> {
    /// `{"functionDeclarations":[…]}`.
    FunctionDeclarations(Vec<FunctionDeclaration<'a>>),
    /// Any other tool object, passed through untouched.
    Native(Cow<'a, Value>),
}

impl Serialize for Tool<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::FunctionDeclarations(decls) => {
                let mut s = serializer.serialize_struct("Tool", 1)?;
                s.serialize_field("functionDeclarations", decls)?;
                s.end()
            }
            Self::Native(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Tool<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match &value {
            Value::Object(map) if map.len() == 1 && map.contains_key("functionDeclarations") => {
                let decls = map.get("functionDeclarations").cloned().unwrap_or_default();
                serde_json::from_value(decls)
                    .map(Self::FunctionDeclarations)
                    .map_err(D::Error::custom)
            }
            _ => Ok(Self::Native(Cow::Owned(value))),
        }
    }
}

/// "Structured representation of a function declaration as defined by the OpenAPI 3.03
/// specification."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FunctionDeclaration<'a> {
    /// "Required. The name of the function. Must be a-z, A-Z, 0-9, or contain underscores,
    /// colons, dots, and dashes, with a maximum length of 64."
    pub name: Cow<'a, str>,
    /// "Required. A brief description of the function." Omitted when the tool has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Cow<'a, str>>,
    /// "Optional. Describes the parameters to this function" (the OpenAPI `Schema` subset;
    /// see [`clean_schema`](crate::clean_schema)). Absent for a tool without parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Schema<'a>>,
    /// "Optional. Describes the parameters to the function in JSON Schema format. …
    /// mutually exclusive with `parameters`."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_json_schema: Option<Cow<'a, Value>>,
}

impl<'a> FunctionDeclaration<'a> {
    /// A declaration by name, with no description or parameters.
    pub fn new(name: impl Into<Cow<'a, str>>) -> Self {
        Self {
            name: name.into(),
            description: None,
            parameters: None,
            parameters_json_schema: None,
        }
    }
}

/// A function's parameter schema on the wire.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Schema<'a> {
    /// A tool's JSON Schema, cleaned for Gemini while it is serialised: the bytes are
    /// exactly those of [`clean_schema`](crate::clean_schema), without building a copy.
    Cleaned(&'a Value),
    /// A schema sent exactly as it is (for example one parsed from a request body).
    Raw(Cow<'a, Value>),
}

impl Schema<'_> {
    /// The schema as it is sent.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Cleaned(schema) => crate::clean_schema(schema).unwrap_or_default(),
            Self::Raw(schema) => schema.as_ref().clone(),
        }
    }
}

impl Serialize for Schema<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Cleaned(schema) => crate::schema::Root(schema).serialize(serializer),
            Self::Raw(schema) => schema.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Schema<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|v| Self::Raw(Cow::Owned(v)))
    }
}

/// The body `generateContent` returns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Response {
    /// "Candidate responses from the model."
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// "Returns the prompt's feedback related to the content filters."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_feedback: Option<Value>,
    /// "Output only. Metadata on the generation requests' token usage."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    /// "Output only. The model version used to generate the response."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_version: Option<String>,
    /// "Output only. responseId is used to identify each response."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

/// "A response candidate generated from the model."
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Candidate {
    /// "Output only. Generated content returned from the model." Absent when blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content<'static>>,
    /// "Optional. Output only. The reason why the model stopped generating tokens."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// "Output only. Index of the candidate in the list of response candidates."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Every other field, as received: `safetyRatings`, `citationMetadata`,
    /// `groundingMetadata` (Google Search results), `urlContextMetadata`, `finishMessage`, ….
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

open_set! {
    /// "Defines the reason why the model stopped generating tokens": an open set.
    pub struct FinishReason;
    new(reason): "Wraps any reason string.";
    as_str: "The reason as a string slice.";
    /// "Natural stop point of the model or provided stop sequence."
    STOP = "STOP";
    /// "The maximum number of tokens as specified in the request was reached."
    MAX_TOKENS = "MAX_TOKENS";
    /// "The response candidate content was flagged for safety reasons."
    SAFETY = "SAFETY";
    /// "The response candidate content was flagged for recitation reasons."
    RECITATION = "RECITATION";
    /// "The function call generated by the model is invalid."
    MALFORMED_FUNCTION_CALL = "MALFORMED_FUNCTION_CALL";
    /// "Unknown reason."
    OTHER = "OTHER";
}

/// "Metadata on the generation request's token usage."
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UsageMetadata {
    /// "Number of tokens in the prompt. When cachedContent is set, this is still the total
    /// effective prompt size."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_token_count: Option<u64>,
    /// "Number of tokens in the cached part of the prompt (the cached content)."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_content_token_count: Option<u64>,
    /// "Total number of tokens across all the generated response candidates."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates_token_count: Option<u64>,
    /// "Number of tokens present in tool-use prompt(s)."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_prompt_token_count: Option<u64>,
    /// "Number of tokens of thoughts for thinking models."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thoughts_token_count: Option<u64>,
    /// "Total token count for the generation request (prompt + response candidates)."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_token_count: Option<u64>,
}
