//! The registered tools inside a session snapshot, shared instead of copied.

use std::fmt;
use std::sync::Arc;

use chef_ir::ToolDefinition;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// The JSON text of a tool list, as serialising it gives.
pub(crate) type ToolsJson = Arc<RawValue>;

/// The flat tools of a [`SessionState`](crate::SessionState): a JSON array of tool
/// definitions on disk, shared or still unparsed in memory.
///
/// Tool definitions are most of a session snapshot's bytes (the 149-tool corpus is 163 KB of
/// a 206 KB file) and, as JSON schemas, the costliest part to copy and to parse. Yet they
/// rarely change between a save and the load that follows, and a session loading a
/// snapshot usually has the same tools registered already. So they are kept in the
/// cheapest form at hand:
///
/// * taken from a session, the registry's tools are shared (an `Arc`, no copy) with their
///   JSON text, serialised once per registration and reused by every later save;
/// * read from a file, the field stays JSON text. [`Chef::restore`](crate::Chef::restore)
///   compares it with the restoring session's registry: the same bytes keep the registry's
///   tools as they are; otherwise the text is parsed then, and a field that does not parse
///   fails the restore before anything is changed.
///
/// The file format is the same either way: the field is the JSON array of tool definitions.
///
/// Serialize it with `serde_json` only: the unparsed form is written as raw JSON text,
/// which other serializers do not support.
///
/// ```
/// use chef::snapshot::SnapshotTools;
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools = SnapshotTools::new(vec![ToolDefinition::new("read_file", json!({"type": "object"}))]);
/// let text = serde_json::to_string(&tools)?;
/// assert_eq!(text, r#"[{"name":"read_file","description":"","input_schema":{"type":"object"}}]"#);
///
/// // Read back, the field stays text until something asks for the tools.
/// let read: SnapshotTools = serde_json::from_str(&text)?;
/// assert_eq!(read.json(), Some(text.as_str()));
/// assert_eq!(read.tools()?[0].name.as_str(), "read_file");
/// assert_eq!(read, tools);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct SnapshotTools(Repr);

#[derive(Clone)]
enum Repr {
    /// Tools in memory, with their JSON text when it has been made.
    Parsed {
        tools: Arc<[ToolDefinition]>,
        json: Option<Arc<RawValue>>,
    },
    /// The JSON text of a snapshot field, not parsed yet.
    Unparsed(Arc<RawValue>),
}

impl SnapshotTools {
    /// Tools in memory.
    pub fn new(tools: impl Into<Arc<[ToolDefinition]>>) -> Self {
        Self(Repr::Parsed {
            tools: tools.into(),
            json: None,
        })
    }

    /// Tools in memory with their JSON text, which must be what serialising them gives.
    pub(crate) fn shared(tools: Arc<[ToolDefinition]>, json: Option<Arc<RawValue>>) -> Self {
        Self(Repr::Parsed { tools, json })
    }

    /// The tools, parsing the JSON text if they were read from a snapshot and not parsed
    /// yet (each call parses again; a restore into a session with the same tools registered
    /// does not parse at all).
    ///
    /// # Errors
    ///
    /// The field's text is not an array of tool definitions.
    pub fn tools(&self) -> Result<Arc<[ToolDefinition]>, serde_json::Error> {
        match &self.0 {
            Repr::Parsed { tools, .. } => Ok(Arc::clone(tools)),
            Repr::Unparsed(raw) => parse(raw),
        }
    }

    /// The JSON text, when it is at hand: read from a snapshot, or taken from a session
    /// that had already serialised its tools.
    pub fn json(&self) -> Option<&str> {
        match &self.0 {
            Repr::Parsed { json, .. } => json.as_deref().map(RawValue::get),
            Repr::Unparsed(raw) => Some(raw.get()),
        }
    }

    /// Whether the tools are in memory (taken from a session, or [`new`](Self::new)) rather
    /// than JSON text still to parse.
    pub fn is_parsed(&self) -> bool {
        matches!(self.0, Repr::Parsed { .. })
    }

    /// The tools a restore registers, given the restoring registry's tools and their JSON
    /// text (`registry_json` is called only when the text is needed). Returns the tools
    /// and their text when known.
    ///
    /// Same text as the registry: the registry's own `Arc`, nothing parsed. The text is what
    /// serialising the registry gives, and parsing it back gives tools equal to the
    /// registry's (serde_json round-trips every value, `preserve_order` keeps key order), so
    /// this is exactly what parsing would have registered.
    pub(crate) fn resolve(
        &self,
        registry: &Arc<[ToolDefinition]>,
        registry_json: impl FnOnce() -> Option<ToolsJson>,
    ) -> Result<(Arc<[ToolDefinition]>, Option<ToolsJson>), serde_json::Error> {
        match &self.0 {
            Repr::Parsed { tools, json } => Ok((Arc::clone(tools), json.clone())),
            Repr::Unparsed(raw) => match registry_json() {
                Some(own) if own.get() == raw.get() => Ok((Arc::clone(registry), Some(own))),
                _ => match known::find(raw) {
                    Some(tools) => Ok((tools, None)),
                    None => {
                        let tools = parse(raw)?;
                        known::remember(&tools, raw);
                        Ok((tools, None))
                    }
                },
            },
        }
    }
}

/// Tool lists parsed from snapshots that some session in this process still holds, so that
/// restoring another snapshot with the same tools into a fresh session (a gateway or worker
/// resuming many sessions of one catalogue) shares them instead of parsing them again.
///
/// Entries are weak: a list lives only as long as a session holds it, and the table keeps
/// at most [`CAPACITY`](known::CAPACITY) lists. A hit is decided by the whole JSON text,
/// byte for byte (its CRC-32 only picks the candidates), so it registers exactly what
/// parsing would have.
mod known {
    use std::sync::{Arc, Weak};

    use chef_ir::ToolDefinition;
    use parking_lot::Mutex;
    use serde_json::value::RawValue;

    pub(super) const CAPACITY: usize = 16;

    struct Known {
        crc: u32,
        /// The text the tools were parsed from (kept until the tools are gone).
        text: Arc<RawValue>,
        tools: Weak<[ToolDefinition]>,
    }

    static KNOWN: Mutex<Vec<Known>> = Mutex::new(Vec::new());

    /// The tools of a live list parsed from the same text as `raw`.
    pub(super) fn find(raw: &RawValue) -> Option<Arc<[ToolDefinition]>> {
        let crc = crc32fast::hash(raw.get().as_bytes());
        let known = KNOWN.lock();
        known
            .iter()
            .filter(|k| k.crc == crc && k.text.get() == raw.get())
            .find_map(|k| k.tools.upgrade())
    }

    /// Remembers a list just parsed from `raw`, forgetting lists no session holds.
    pub(super) fn remember(tools: &Arc<[ToolDefinition]>, raw: &Arc<RawValue>) {
        let crc = crc32fast::hash(raw.get().as_bytes());
        let mut known = KNOWN.lock();
        known.retain(|k| k.tools.strong_count() > 0);
        if known.len() >= CAPACITY {
            known.remove(0);
        }
        known.push(Known {
            crc,
            text: Arc::clone(raw),
            tools: Arc::downgrade(tools),
        });
    }
}

fn parse(raw: &RawValue) -> Result<Arc<[ToolDefinition]>, serde_json::Error> {
    super::file::from_slice_deep::<Vec<ToolDefinition>>(raw.get().as_bytes()).map(Arc::from)
}

impl From<Vec<ToolDefinition>> for SnapshotTools {
    fn from(tools: Vec<ToolDefinition>) -> Self {
        Self::new(tools)
    }
}

impl fmt::Debug for SnapshotTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Parsed { tools, .. } => f.debug_list().entries(tools.iter()).finish(),
            Repr::Unparsed(raw) => f
                .debug_struct("SnapshotTools")
                .field("unparsed_bytes", &raw.get().len())
                .finish(),
        }
    }
}

/// Equal when they hold the same tools: the same JSON text, or equal definitions once
/// parsed. Text that does not parse equals only the same text.
impl PartialEq for SnapshotTools {
    fn eq(&self, other: &Self) -> bool {
        if let (Repr::Parsed { tools: a, .. }, Repr::Parsed { tools: b, .. }) = (&self.0, &other.0)
        {
            return Arc::ptr_eq(a, b) || a == b;
        }
        if let (Some(a), Some(b)) = (self.json(), other.json())
            && a == b
        {
            return true;
        }
        match (self.tools(), other.tools()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl Serialize for SnapshotTools {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Parsed {
                json: Some(json), ..
            } => json.serialize(serializer),
            Repr::Parsed { tools, json: None } => tools.serialize(serializer),
            Repr::Unparsed(raw) => raw.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SnapshotTools {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        // The shape is checked when the tools are needed; an obvious non-array fails now.
        if !raw.get().trim_start().starts_with('[') {
            return Err(serde::de::Error::invalid_type(
                serde::de::Unexpected::Other(raw.get()),
                &"an array of tool definitions",
            ));
        }
        Ok(Self(Repr::Unparsed(Arc::from(raw))))
    }
}
