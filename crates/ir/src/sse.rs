//! Server-sent events: a byte stream cut into events, however its bytes were split.
//!
//! Every provider that streams (Anthropic Messages, OpenAI Chat Completions and Responses)
//! frames its events as server-sent events, so the decoder lives here, once; what an
//! event's `data` means is the provider crate's business.
//!
//! ```
//! use chef_ir::sse::SseDecoder;
//!
//! let mut decoder = SseDecoder::new();
//! let mut events = decoder.push(b"event: ping\ndata: {\"type\"")?;
//! events.extend(decoder.push(b":\"ping\"}\n\ndata: [DONE]\n\n")?);
//! assert_eq!(events.len(), 2);
//! assert_eq!(events[0].event.as_deref(), Some("ping"));
//! assert_eq!(events[1].data, "[DONE]");
//! assert!(decoder.finish()?.is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// Why a stream could not be cut into events.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// A line is not UTF-8.
    #[error("an event-stream line is not UTF-8")]
    NotUtf8(#[source] std::string::FromUtf8Error),
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The `event:` field, when present.
    pub event: Option<String>,
    /// The `data:` lines, joined with `"\n"`.
    pub data: String,
}

impl SseEvent {
    /// An event with this `event:` field (when present) and `data`.
    pub fn new(event: Option<String>, data: impl Into<String>) -> Self {
        Self {
            event,
            data: data.into(),
        }
    }
}

/// Cuts a byte stream into server-sent events, independent of how the bytes are chunked.
#[derive(Debug, Clone, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        for &byte in chunk {
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = std::mem::take(&mut self.line);
            let line = String::from_utf8(line).map_err(SseError::NotUtf8)?;
            if let Some(event) = self.line_done(&line) {
                events.push(event);
            }
        }
        Ok(events)
    }

    /// Ends the stream; returns the last event if the stream did not end with a blank line.
    pub fn finish(mut self) -> Result<Option<SseEvent>, SseError> {
        if !self.line.is_empty() {
            let line =
                String::from_utf8(std::mem::take(&mut self.line)).map_err(SseError::NotUtf8)?;
            if let Some(event) = self.line_done(&line) {
                return Ok(Some(event));
            }
        }
        Ok(self.line_done(""))
    }

    fn line_done(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let data = self.data.take();
            let event = self.event.take();
            return data.map(|data| SseEvent { event, data });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {}
        }
        None
    }
}

/// Appends one event holding only `data:` (the JSON of `value`) to `out`.
pub fn write_data(out: &mut Vec<u8>, value: &impl serde::Serialize) {
    out.extend_from_slice(b"data: ");
    // A value that cannot be serialised (no JSON value or wire type can fail) is sent empty.
    out.extend_from_slice(&serde_json::to_vec(value).unwrap_or_default());
    out.extend_from_slice(b"\n\n");
}

/// Appends one named event (`event: NAME`, `data:` the JSON of `value`) to `out`.
pub fn write_event(out: &mut Vec<u8>, name: &str, value: &impl serde::Serialize) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.push(b'\n');
    write_data(out, value);
}
