//! Known-or-unknown values dispatched on their `type` tag.
//!
//! OpenAI keeps adding kinds of tools, content parts and items. A `#[serde(untagged)]`
//! catch-all would hide drift (a known kind with a changed field would silently land in
//! the catch-all), so the tag is read by hand: a tag we model is decoded into the typed
//! form and a decoding failure is an error; any other tag is kept verbatim.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::DeserializeOwned};
use serde_json::Value;

/// A wire type whose variants are selected by a `"type"` tag.
pub trait KnownTags {
    /// What the value is, for error messages (`"tool"`, `"content part"`, `"item"`).
    const KIND: &'static str;
    /// The tags this type models.
    const TAGS: &'static [&'static str];
    /// The tag a value that has no `type` member is read as, if any (a Chat function call:
    /// some OpenAI-compatible servers leave its `type` out).
    const UNTAGGED: Option<&'static str> = None;
}

/// A value of a kind we model, or one we keep verbatim.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Tagged<'a, K> {
    /// A kind we model.
    Known(K),
    /// Any other kind, exactly as received (or as the caller gave it).
    Unknown(Cow<'a, Value>),
}

impl<K: Serialize> Serialize for Tagged<'_, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Known(known) => known.serialize(serializer),
            Self::Unknown(value) => value.serialize(serializer),
        }
    }
}

impl<'de, K: KnownTags + DeserializeOwned> Deserialize<'de> for Tagged<'_, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        decode(value).map_err(serde::de::Error::custom)
    }
}

/// Decodes one value: a known tag into `K`, anything else kept.
pub(crate) fn decode<'a, K: KnownTags + DeserializeOwned>(
    mut value: Value,
) -> Result<Tagged<'a, K>, crate::Error> {
    if let (Some(tag), Some(object)) = (K::UNTAGGED, value.as_object_mut())
        && !object.contains_key("type")
    {
        object.insert("type".to_owned(), Value::from(tag));
    }
    let tag = value.get("type").and_then(Value::as_str);
    match tag {
        Some(tag) if K::TAGS.contains(&tag) => {
            let tag = tag.to_owned();
            serde_json::from_value(value)
                .map(Tagged::Known)
                .map_err(|source| crate::Error::CorruptKnownKind {
                    kind: K::KIND,
                    tag,
                    source,
                })
        }
        _ => Ok(Tagged::Unknown(Cow::Owned(value))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A wire type of this module's own with one modelled kind, `{"type":"text","text":…}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Part {
        Text { text: String },
    }

    impl KnownTags for Part {
        const KIND: &'static str = "content part";
        const TAGS: &'static [&'static str] = &["text"];
    }

    #[test]
    fn known_tags_decode_and_unknown_tags_are_kept() {
        let known: Tagged<'_, Part> = decode(json!({"type":"text","text":"a"})).unwrap();
        assert!(matches!(known, Tagged::Known(Part::Text { .. })));
        let value = json!({"type":"input_audio","z":1,"a":[2]});
        let unknown: Tagged<'_, Part> = decode(value.clone()).unwrap();
        assert_eq!(unknown, Tagged::Unknown(Cow::Owned(value.clone())));
        assert_eq!(
            serde_json::to_string(&unknown).unwrap(),
            r#"{"type":"input_audio","z":1,"a":[2]}"#
        );
        let untagged: Tagged<'_, Part> = decode(json!([1])).unwrap();
        assert!(matches!(untagged, Tagged::Unknown(_)));
    }

    #[test]
    fn a_known_tag_with_the_wrong_shape_is_an_error() {
        let err = decode::<Part>(json!({"type":"text"})).unwrap_err();
        assert!(matches!(
            err,
            crate::Error::CorruptKnownKind {
                kind: "content part",
                ..
            }
        ));
    }
}
