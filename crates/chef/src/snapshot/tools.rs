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

/// Tool lists at least this long are parsed in two halves when the machine has a second
/// core (the 149-tool corpus is 164 KB).
const PARSE_IN_HALVES_FROM: usize = 32 * 1024;

fn parse(raw: &RawValue) -> Result<Arc<[ToolDefinition]>, serde_json::Error> {
    let text = raw.get();
    if text.len() >= PARSE_IN_HALVES_FROM
        && let Some(tools) = parse_in_halves(text)
    {
        return Ok(tools);
    }
    serde_json::from_str::<Vec<ToolDefinition>>(text).map(Arc::from)
}

/// Parses a tool list as two arrays split between two tools near the middle of the text:
/// the first half on the calling thread while [`helper`] parses the second, or the caller
/// parses both when the helper has not started on it by then (a busy machine), so a loaded
/// machine costs no more than one thread would. `None` when there is no second core, no
/// split point, or a half does not parse; the caller then parses the whole text, which
/// gives the same tools or the error with its real position.
///
/// The split point is the compact separator serde_json writes between two tool objects,
/// `},{"name":"`, followed by a name and `","description":`. The separator cannot lie
/// inside a JSON string (an unescaped `"` would end the string before `name`), so it
/// separates two values of some array; when that array is not the top-level one, the
/// first half (`text[..=split]` + `]`) leaves an object open and fails to parse. Halves
/// that both parse are therefore the top-level list cut between two elements, and their
/// concatenation is exactly what parsing the whole text gives.
fn parse_in_halves(text: &str) -> Option<Arc<[ToolDefinition]>> {
    const SEPARATOR: &str = "},{\"name\":\"";
    if !helper::available() {
        return None;
    }
    let mut middle = text.len() / 2;
    while !text.is_char_boundary(middle) {
        middle += 1;
    }
    // A tool as serialised starts `{"name":"<name>","description":"`; a nested object
    // with a `name` rarely goes on like that, so this picks the top-level cut first time.
    let starts_a_tool = |at: &usize| {
        let rest = text.get(at + SEPARATOR.len()..).unwrap_or_default();
        rest.find(['"', '\\']).is_some_and(|end| {
            rest.get(end..)
                .is_some_and(|r| r.starts_with("\",\"description\":"))
        })
    };
    let split = text
        .get(middle..)?
        .match_indices(SEPARATOR)
        .map(|(at, _)| middle + at)
        .find(starts_a_tool)
        .or_else(|| {
            text.get(..middle)?
                .rmatch_indices(SEPARATOR)
                .map(|(at, _)| at)
                .find(starts_a_tool)
        })?;
    let mut first = String::with_capacity(split + 2);
    first.push_str(text.get(..=split)?);
    first.push(']');
    let mut second = String::with_capacity(text.len() - split);
    second.push('[');
    second.push_str(text.get(split + 2..)?);
    let job = helper::offer(second)?;
    let first = serde_json::from_str::<Vec<ToolDefinition>>(&first);
    let rest = job.finish();
    let (mut tools, rest) = (first.ok()?, rest?);
    tools.reserve_exact(rest.len());
    tools.extend(rest);
    Some(Arc::from(tools))
}

/// One long-lived thread that parses the second half of large tool lists, started on the
/// first such restore on a machine with more than one core.
///
/// A job is claimed once, by whichever side gets to it first: the helper when it picks
/// the job up, or the caller when it has finished its own half and the helper has not
/// started (every core busy). So a caller never waits for a thread to be scheduled, only
/// for a parse already running; and many sessions restoring at once each fall back to
/// their own thread rather than queue behind one helper.
mod helper {
    use std::panic::AssertUnwindSafe;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{Sender, channel};
    use std::sync::{Arc, OnceLock};

    use chef_ir::ToolDefinition;
    use parking_lot::{Condvar, Mutex};

    type Parsed = Option<Vec<ToolDefinition>>;

    struct Job {
        text: String,
        claimed: AtomicBool,
        /// `Some` once the helper has parsed it (`Some(None)`: it did not parse).
        done: Mutex<Option<Parsed>>,
        ready: Condvar,
    }

    impl Job {
        fn parse(&self) -> Parsed {
            serde_json::from_str(&self.text).ok()
        }
    }

    /// A job handed to the helper.
    pub(super) struct Offered(Arc<Job>);

    static HELPER: OnceLock<Option<Mutex<Sender<Arc<Job>>>>> = OnceLock::new();

    fn helper() -> Option<&'static Mutex<Sender<Arc<Job>>>> {
        HELPER
            .get_or_init(|| {
                if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
                    return None;
                }
                let (send, receive) = channel::<Arc<Job>>();
                std::thread::Builder::new()
                    .name("chef-snapshot-tools".into())
                    .spawn(move || {
                        for job in receive {
                            if job.claimed.swap(true, Ordering::AcqRel) {
                                continue;
                            }
                            // Parsing does not panic; were it to, the caller still gets
                            // an answer (and parses the whole text itself).
                            let parsed = std::panic::catch_unwind(AssertUnwindSafe(|| job.parse()))
                                .unwrap_or(None);
                            *job.done.lock() = Some(parsed);
                            job.ready.notify_one();
                        }
                    })
                    .ok()?;
                Some(Mutex::new(send))
            })
            .as_ref()
    }

    /// Whether there is a helper (a second core, and the thread started).
    pub(super) fn available() -> bool {
        helper().is_some()
    }

    /// Hands `text` (a JSON array of tools) to the helper; `None` when there is none.
    pub(super) fn offer(text: String) -> Option<Offered> {
        let job = Arc::new(Job {
            text,
            claimed: AtomicBool::new(false),
            done: Mutex::new(None),
            ready: Condvar::new(),
        });
        helper()?.lock().send(Arc::clone(&job)).ok()?;
        Some(Offered(job))
    }

    impl Offered {
        /// The parsed tools: parsed here if the helper has not started on them, otherwise
        /// the helper's result once it is ready. `None`: the text is not a tool list.
        pub(super) fn finish(self) -> Parsed {
            let job = self.0;
            if !job.claimed.swap(true, Ordering::AcqRel) {
                return job.parse();
            }
            let mut done = job.done.lock();
            loop {
                if let Some(parsed) = done.take() {
                    return parsed;
                }
                job.ready.wait(&mut done);
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text_of(tools: &[ToolDefinition]) -> String {
        serde_json::to_string(tools).unwrap()
    }

    fn whole(text: &str) -> Vec<ToolDefinition> {
        serde_json::from_str(text).unwrap()
    }

    /// `n` tools whose schemas nest arrays of `{"name": …}` objects (the separator's
    /// shape one level down) and whose descriptions quote it, with non-ASCII text.
    fn tricky(n: usize) -> Vec<ToolDefinition> {
        (0..n)
            .map(|i| {
                let mut tool = ToolDefinition::new(
                    format!("tool_{i}"),
                    json!({
                        "type": "object",
                        "properties": {
                            "items": {"type": "array", "examples": [[{"name": "a"}, {"name": "b"}]]},
                            "mode": {"enum": [{"name": "x"}, {"name": "y"}]},
                        },
                    }),
                );
                tool.description = format!("Tool {i} — écrit `}},{{\"name\":\"` verbatim. ✓");
                tool
            })
            .collect()
    }

    #[test]
    fn halves_give_exactly_the_whole_parse() {
        let tools = tricky(400);
        let text = text_of(&tools);
        assert!(text.len() >= PARSE_IN_HALVES_FROM);
        if !helper::available() {
            return; // one core: always the whole parse (the other tests cover it)
        }
        let halves = parse_in_halves(&text).expect("a top-level split point exists");
        assert_eq!(&*halves, whole(&text).as_slice());
        assert_eq!(&*halves, tools.as_slice());
    }

    #[test]
    fn many_restores_at_once_each_get_their_own_tools() {
        // Eight threads race the one helper for their second halves: whichever side
        // claims a job, every caller gets exactly its own list.
        let lists: Vec<Vec<ToolDefinition>> = (0..8)
            .map(|k| {
                let mut tools = tricky(300);
                tools
                    .iter_mut()
                    .for_each(|t| t.tags = vec![format!("list {k}")]);
                tools
            })
            .collect();
        std::thread::scope(|scope| {
            for tools in &lists {
                scope.spawn(move || {
                    for _ in 0..5 {
                        let raw = RawValue::from_string(text_of(tools)).unwrap();
                        assert_eq!(&*parse(&raw).unwrap(), tools.as_slice());
                    }
                });
            }
        });
    }

    #[test]
    fn a_nested_separator_near_the_middle_falls_back_to_the_whole_parse() {
        // One tool whose schema is nothing but objects that start like a tool: the split
        // point nearest the middle is nested, so the first half leaves an object open.
        let big = ToolDefinition::new(
            "big",
            json!({"examples": (0..4000)
                .map(|i| json!({"name": i.to_string(), "description": ""}))
                .collect::<Vec<_>>()}),
        );
        let tools = vec![
            ToolDefinition::new("a", json!({})),
            big,
            ToolDefinition::new("z", json!({})),
        ];
        let text = text_of(&tools);
        assert!(text.len() >= PARSE_IN_HALVES_FROM);
        assert!(parse_in_halves(&text).is_none());
        let raw = RawValue::from_string(text.clone()).unwrap();
        assert_eq!(&*parse(&raw).unwrap(), tools.as_slice());
    }

    #[test]
    fn text_without_a_split_point_or_not_compact_parses_whole() {
        let tools = tricky(400);
        let pretty = serde_json::to_string_pretty(&tools).unwrap();
        assert!(parse_in_halves(&pretty).is_none());
        let raw = RawValue::from_string(pretty).unwrap();
        assert_eq!(&*parse(&raw).unwrap(), tools.as_slice());
    }

    #[test]
    fn a_list_that_is_not_tools_gives_the_whole_parses_error() {
        let mut text = text_of(&tricky(400));
        // Break the last tool: the second half fails, and the error is the whole text's.
        let at = text.rfind("\"input_schema\"").unwrap();
        text.replace_range(at..at + "\"input_schema\"".len(), "\"input_schemx\"");
        let expected = serde_json::from_str::<Vec<ToolDefinition>>(&text).unwrap_err();
        let raw = RawValue::from_string(text).unwrap();
        let got = parse(&raw).unwrap_err();
        assert_eq!(got.to_string(), expected.to_string());
    }
}
