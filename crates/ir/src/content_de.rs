//! Reading a [`Content`] block without buffering it.
//!
//! `Content` is written as an internally tagged object (`{"type":"text","text":…}`). serde's
//! derived reader for such enums first buffers every block into an intermediate tree, then
//! reads the variant from that tree: for a session's history that doubles the work of
//! reading it (snapshots, journals, the gateway's request bodies). chef writes the tag
//! first, so this reader takes the tag from the first member and reads the rest of the
//! object straight into the variant. An object whose tag comes later (written by hand or
//! by another tool) is read into a `serde_json` map, its tag moved to the front, and read
//! again the same way: the same values are accepted either way, as the derived reader
//! accepted them (unknown members ignored, the same errors for a missing or unknown tag).

use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::message::{Attachment, Content, ToolResult};
use crate::request::Target;
use crate::tool::ToolCall;

/// The `type` values, as written.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Tag {
    Text,
    Attachment,
    ToolCall,
    ToolResult,
    Thinking,
    RedactedThinking,
    Unknown,
}

#[derive(Deserialize)]
struct Text {
    text: String,
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
struct Thinking {
    thinking: String,
    #[serde(default)]
    signature: Option<String>,
}

#[derive(Deserialize)]
struct RedactedThinking {
    data: String,
}

#[derive(Deserialize)]
struct Unknown {
    #[serde(default)]
    target: Option<Target>,
    value: Value,
}

/// The variant `tag` names, read from the rest of the object.
fn variant<'de, A: MapAccess<'de>>(tag: Tag, rest: A) -> Result<Content, A::Error> {
    let rest = MapAccessDeserializer::new(rest);
    Ok(match tag {
        Tag::Text => {
            let Text {
                text,
                thought_signature,
            } = Text::deserialize(rest)?;
            Content::Text {
                text,
                thought_signature,
            }
        }
        Tag::Attachment => Content::Attachment(Attachment::deserialize(rest)?),
        Tag::ToolCall => Content::ToolCall(ToolCall::deserialize(rest)?),
        Tag::ToolResult => Content::ToolResult(ToolResult::deserialize(rest)?),
        Tag::Thinking => {
            let Thinking {
                thinking,
                signature,
            } = Thinking::deserialize(rest)?;
            Content::Thinking {
                thinking,
                signature,
            }
        }
        Tag::RedactedThinking => Content::RedactedThinking {
            data: RedactedThinking::deserialize(rest)?.data,
        },
        Tag::Unknown => {
            let Unknown { target, value } = Unknown::deserialize(rest)?;
            Content::Unknown { target, value }
        }
    })
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block: an object with a \"type\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        let Some(first) = map.next_key::<std::borrow::Cow<'de, str>>()? else {
            return Err(de::Error::missing_field("type"));
        };
        if first == "type" {
            let tag = map.next_value::<Tag>()?;
            return variant(tag, map);
        }
        // The tag comes later: gather the object, move the tag to the front, read again.
        let mut object = serde_json::Map::new();
        object.insert(first.into_owned(), map.next_value::<Value>()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        let Some(tag) = object.shift_remove("type") else {
            return Err(de::Error::missing_field("type"));
        };
        let mut ordered = serde_json::Map::with_capacity(object.len() + 1);
        ordered.insert("type".to_owned(), tag);
        ordered.extend(object);
        Content::deserialize(Value::Object(ordered)).map_err(de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ContentVisitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Attachment, Content, Message, ToolCall, ToolResult};

    fn blocks() -> Vec<Content> {
        vec![
            Content::text("hello"),
            Content::Text {
                text: "signed".into(),
                thought_signature: Some("sig".into()),
            },
            Content::Attachment(Attachment::base64("image/png", "AAAA").with_filename("a.png")),
            Content::Attachment(Attachment::url("application/pdf", "https://x/y.pdf")),
            Content::ToolCall(ToolCall::new("c1", "get", json!({"a": [1, {"b": null}]}))),
            Content::ToolResult(ToolResult {
                tool_call_id: "c1".into(),
                name: Some("get".into()),
                content: vec![
                    Content::text("nested"),
                    Content::Attachment(Attachment::base64("image/png", "BB")),
                ],
                is_error: true,
            }),
            Content::Thinking {
                thinking: "hmm".into(),
                signature: None,
            },
            Content::RedactedThinking { data: "xyz".into() },
            Content::Unknown {
                target: Some(crate::Target::Anthropic),
                value: json!({"type": "server_tool_use", "id": 1}),
            },
            Content::Unknown {
                target: None,
                value: json!([1, 2]),
            },
        ]
    }

    #[test]
    fn every_block_reads_back_as_written() {
        for block in blocks() {
            let text = serde_json::to_string(&block).unwrap();
            assert!(text.starts_with("{\"type\":"), "{text}");
            let read: Content = serde_json::from_str(&text).unwrap();
            assert_eq!(read, block, "{text}");
            // Through a `Value` (another deserializer) too.
            let value = serde_json::to_value(&block).unwrap();
            assert_eq!(serde_json::from_value::<Content>(value).unwrap(), block);
        }
        let message = Message::assistant_with(blocks());
        let text = serde_json::to_string(&message).unwrap();
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), message);
    }

    #[test]
    fn the_tag_may_come_anywhere_and_unknown_members_are_ignored() {
        let read: Content =
            serde_json::from_str(r#"{"text":"late","extra":[1],"type":"text"}"#).unwrap();
        assert_eq!(read, Content::text("late"));
        let read: Content = serde_json::from_str(
            r#"{"type":"tool_call","id":"c","name":"n","arguments":{},"future":true}"#,
        )
        .unwrap();
        assert_eq!(read, Content::ToolCall(ToolCall::new("c", "n", json!({}))));
    }

    #[test]
    fn bad_blocks_are_errors_that_say_why() {
        for (text, says) in [
            (r#"{"text":"no tag"}"#, "missing field `type`"),
            (r#"{}"#, "missing field `type`"),
            (r#"{"type":"video","url":"x"}"#, "unknown variant `video`"),
            (r#"{"type":"text"}"#, "missing field `text`"),
            (r#"{"type":"text","text":5}"#, "invalid type"),
            (r#""text""#, "invalid type"),
            (r#"{"text":"x","type":"tool_call"}"#, "missing field `id`"),
        ] {
            let err = serde_json::from_str::<Content>(text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
