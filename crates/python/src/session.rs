//! `chef.Chef`: one agent session over the Rust [`chef::Chef`].
//!
//! The session sits behind a mutex, so the class is safe to share between threads; the
//! lock is taken with the GIL released wherever chef does real work (compile, search,
//! snapshots, owned tools), and no Python object is touched while it is held.

use chef::{
    ChefConfig, ChefError, PrunePolicy, ToolGroup, ToolsMode, memory::Memory,
    overflow::OverflowConfig,
};
use chef_compress::Level;
use chef_ir::{Message, Target, ToolDefinition, WireNames, provider::Provider};
use parking_lot::Mutex;
use pyo3::{
    exceptions::PyTypeError,
    prelude::*,
    types::{PyBytes, PyDict, PyList, PyString},
};
use serde_json::Value;

use crate::{
    convert::{document, json_bytes, target, to_value, type_name},
    errors::{invalid_input, load_error, response_error},
    failure::Failure,
    json_out::to_py,
    layers, offload, overflow,
    types::{Owned, OwnedReply, Payload, ToolCall, calls_list, outcome},
};

struct Inner {
    chef: chef::Chef,
    /// Each target's latest compile's wire-name table, for parsing its reply (a reply
    /// answers the request compiled for its target, whatever was compiled for another).
    names: Vec<(Target, WireNames)>,
    /// For the async parts of the session (owned tools), built on first use.
    runtime: Option<tokio::runtime::Runtime>,
}

/// One agent session: tools, conversation, blocklist, memory; `compile(target)` once per
/// turn, `route(call)` for every call the model makes.
///
/// >>> import chef
/// >>> with chef.Chef(level=3) as session:
/// ...     names = session.register_tools([{"name": "get_weather", "inputSchema": {"type": "object"}}])
/// ...     session.push_user("Weather in Oslo?")
/// ...     payload = session.compile("openai")
#[pyclass(module = "chef", frozen)]
pub(crate) struct Chef {
    inner: Mutex<Option<Inner>>,
    /// The summariser callable (see [`overflow::Slot`]).
    summarizer: overflow::Slot,
}

impl Chef {
    fn from_chef(chef: chef::Chef) -> Self {
        Self {
            inner: Mutex::new(Some(Inner {
                chef,
                names: Vec::new(),
                runtime: None,
            })),
            summarizer: overflow::Slot::default(),
        }
    }

    /// Runs `f` on the open session, with the GIL held (for quick steps). A failure
    /// becomes a Python exception only after the lock is released: building one runs
    /// Python code, which may let another thread take the GIL and wait for this lock.
    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> Result<T, Failure>) -> PyResult<T> {
        let result = self.lock().and_then(|mut guard| match guard.as_mut() {
            Some(inner) => f(inner),
            None => Err(Failure::Closed),
        });
        result.map_err(PyErr::from)
    }

    /// The session's lock, waited for with the GIL released: the thread that holds it may
    /// need the GIL to finish (a summariser is Python code). Refused on the thread whose
    /// overflow step holds it (the summariser calling back in would wait for itself).
    fn lock(&self) -> Result<parking_lot::MutexGuard<'_, Option<Inner>>, Failure> {
        overflow::not_summarising(self.address())?;
        if let Some(guard) = self.inner.try_lock() {
            return Ok(guard);
        }
        Ok(Python::attach(|py| {
            loop {
                py.detach(|| drop(self.inner.lock()));
                if let Some(guard) = self.inner.try_lock() {
                    break guard;
                }
            }
        }))
    }

    /// This session's identity on this process (its lock's address).
    fn address(&self) -> usize {
        std::ptr::from_ref(&self.inner).addr()
    }

    /// Runs `f` on the open session with the GIL released (compile, search, files).
    fn without_gil<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Inner) -> Result<T, Failure> + Send,
    ) -> PyResult<T> {
        overflow::not_summarising(self.address())?;
        py.detach(|| match self.inner.lock().as_mut() {
            Some(inner) => f(inner),
            None => Err(Failure::Closed),
        })
        .map_err(PyErr::from)
    }
}

fn level(n: i64) -> PyResult<Level> {
    u8::try_from(n)
        .ok()
        .and_then(|n| Level::try_from(n).ok())
        .ok_or_else(|| invalid_input(format!("level {n} is not one of 0, 1, 2, 3, 4")))
}

/// `trigger_ratio`, refused rather than clamped when it is not a share in 0.01–1 (the Rust
/// builder clamps, and replaces NaN by the default: a Python caller gets told instead).
fn ratio(r: f64) -> PyResult<f64> {
    if r.is_finite() && (0.01..=1.0).contains(&r) {
        Ok(r)
    } else {
        Err(invalid_input(format!(
            "trigger_ratio {r} is not a share of the window between 0.01 and 1"
        )))
    }
}

/// `memory_max_value_chars`: a number of characters, 0 or more.
fn chars(n: i64) -> PyResult<usize> {
    usize::try_from(n).map_err(|_| {
        invalid_input(format!(
            "memory_max_value_chars {n} is not a number of characters (0 or more, or None)"
        ))
    })
}

/// `context_window`: a positive number of tokens.
fn window(tokens: i64) -> PyResult<u64> {
    u64::try_from(tokens)
        .ok()
        .filter(|&t| t > 0)
        .ok_or_else(|| {
            invalid_input(format!(
                "context_window {tokens} is not a positive number of tokens"
            ))
        })
}

fn tools_mode(name: &str) -> PyResult<ToolsMode> {
    match name {
        "legacy" => Ok(ToolsMode::Legacy),
        "unified" => Ok(ToolsMode::Unified),
        other => Err(invalid_input(format!(
            "tools_mode \"{other}\" is not \"legacy\" or \"unified\""
        ))),
    }
}

/// Tools in any shape chef loads (MCP, OpenAI Chat or Responses, Anthropic, Gemini,
/// bare), as Python objects or JSON text; one tool dict alone is a list of one.
fn tool_definitions(tools: &Bound<'_, PyAny>) -> PyResult<Vec<ToolDefinition>> {
    let mut value = if tools.is_instance_of::<PyString>()
        || tools.is_instance_of::<PyBytes>()
        || tools.is_instance_of::<pyo3::types::PyByteArray>()
    {
        let bytes = json_bytes(tools)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| load_error(&chef_ir::LoadError::from_json(&e)))?
    } else {
        to_value(tools)?
    };
    if let Value::Object(map) = &value
        && !map.contains_key("tools")
        && !map.contains_key("functionDeclarations")
        && !map.contains_key("function_declarations")
    {
        value = Value::Array(vec![value]);
    }
    chef_ir::load_tools(&value)
        .map(|loaded| loaded.tools)
        .map_err(|e| load_error(&e))
}

/// One `chef.SchemaWarning` per tool whose schema normalisation changed, listing the
/// changes (but for a `$schema` dropped; a schema that does not normalise at all is left
/// to registration's error).
fn warn_normalised(py: Python<'_>, tools: &[ToolDefinition]) -> PyResult<()> {
    let mut category = None;
    for tool in tools {
        let Ok(normalised) =
            chef_compress::validate::normalise_schema(tool.name.as_str(), &tool.input_schema)
        else {
            continue;
        };
        // A `$schema` naming an older draft is what most MCP servers send, and reading the
        // schema as 2020-12 changes nothing a model sees: not worth a warning.
        let changes: Vec<String> = normalised
            .notes
            .iter()
            .filter(|n| n.path != "$schema")
            .map(|n| {
                if n.path.is_empty() {
                    n.what.clone()
                } else {
                    format!("{}: {}", n.path, n.what)
                }
            })
            .collect();
        if changes.is_empty() {
            continue;
        }
        let text = format!(
            "tool {}: its input schema was read with changes ({}); it is validated as read",
            tool.name,
            changes.join("; ")
        );
        let category = match &category {
            Some(c) => c,
            None => category.insert(py.import("chef._errors")?.getattr("SchemaWarning")?),
        };
        let text = std::ffi::CString::new(text.replace('\0', "\\0"))
            .map_err(|e| invalid_input(e.to_string()))?;
        PyErr::warn(py, category, &text, 1)?;
    }
    Ok(())
}

/// Groups as `[{"name", "description", "tools": [...]}]`.
fn groups(groups: &Bound<'_, PyAny>) -> PyResult<Vec<ToolGroup>> {
    let list = groups
        .cast::<PyList>()
        .map_err(|_| PyTypeError::new_err("groups must be a list of dicts"))?;
    let mut out = Vec::with_capacity(list.len());
    for item in list.iter() {
        let dict = item.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!(
                "a group is a dict with name, description and tools, not {}",
                type_name(&item)
            ))
        })?;
        let name: String = dict
            .get_item("name")?
            .ok_or_else(|| invalid_input("a group has no \"name\""))?
            .extract()?;
        let description: String = match dict.get_item("description")? {
            Some(d) => d.extract()?,
            None => String::new(),
        };
        let tools = dict
            .get_item("tools")?
            .ok_or_else(|| invalid_input(format!("group \"{name}\" has no \"tools\"")))?;
        out.push(ToolGroup::new(name, description, tool_definitions(&tools)?));
    }
    Ok(out)
}

/// A message as chef's IR dict (`{"role", "content": [blocks]}`), its JSON text, or
/// `{"role", "content": "text"}`.
fn message(obj: &Bound<'_, PyAny>) -> PyResult<Message> {
    let mut value = document(obj, "the message")?;
    if let Value::Object(map) = &mut value
        && let Some(Value::String(text)) = map.get("content")
    {
        let block = serde_json::json!([{"type": "text", "text": text}]);
        map.insert("content".to_owned(), block);
    }
    serde_json::from_value(value).map_err(|e| invalid_input(format!("not a chef message: {e}")))
}

/// A policy by name (`all`, `by_task`) or as a dict (`{"policy": "ranked", "top_k": 8,
/// "always_keep": [...]}`, `{"policy": "allowlist", "names": [...]}`, …).
fn prune_policy(obj: &Bound<'_, PyAny>) -> PyResult<PrunePolicy> {
    let value = match obj.cast::<PyString>() {
        Ok(s) => serde_json::json!({"policy": s.to_cow()?}),
        Err(_) => to_value(obj)?,
    };
    serde_json::from_value(value).map_err(|e| invalid_input(format!("not a prune policy: {e}")))
}

/// A call as a `ToolCall` or a dict `{"id", "name", "arguments"}` (arguments as a dict or
/// as JSON text; text that is not JSON is kept as a string, as a provider parser does).
fn tool_call(obj: &Bound<'_, PyAny>) -> PyResult<chef_ir::ToolCall> {
    if let Ok(call) = obj.cast::<ToolCall>() {
        return Ok(call.get().call.clone());
    }
    let Ok(dict) = obj.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "a call is a chef.ToolCall or a dict with id, name and arguments, not {}",
            type_name(obj)
        )));
    };
    let id: String = match dict.get_item("id")? {
        Some(id) => id.extract()?,
        None => String::new(),
    };
    let name: String = dict
        .get_item("name")?
        .ok_or_else(|| invalid_input("the call has no \"name\""))?
        .extract()?;
    let arguments = match dict.get_item("arguments")? {
        None => Value::Object(serde_json::Map::new()),
        Some(a) => match a.cast::<PyString>() {
            Ok(text) => {
                let text = text.to_cow()?;
                serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.into_owned()))
            }
            Err(_) => to_value(&a)?,
        },
    };
    Ok(chef_ir::ToolCall::new(id, name, arguments))
}

#[pymethods]
impl Chef {
    /// A new session.
    ///
    /// level: the compression level, 0–4 (1, signature lines, is chef's default; 3 sends
    ///     the `t`/`q` dispatcher and a code map).
    /// tools_mode: "legacy" (memory tools) or "unified" (the `context` tool).
    /// cache: place chef's cache breakpoints.
    /// memory: give the session memory (the model writes it through owned tools).
    /// announce_tool_changes: tell the model when tools are added, removed or blocked.
    /// repeat_notice: the loop guard — tell the model, at the next compile, when its latest
    ///     calls only repeat calls it already had answered (see `repeated_calls()`).
    /// compiled: the compiled map (tool name → its `def` line, as `chef compile-map`
    ///     writes it), which level 4 needs and level 1 uses for descriptions.
    /// answer_tool: offer chef's `final_answer(answer)` tool, through which a constrained
    ///     small model ends its task (`push_reply(..., recover_text_calls=True)` turns a call
    ///     to it into the reply's text). Off by default: measure it on your model first.
    /// context_window: the model's context window in tokens; `overflow()` summarises (with
    ///     `set_summarizer`'s callable) or archives and drops older turns once the history
    ///     passes `trigger_ratio` of it. None (the default): only `request_new_context()`
    ///     makes it act.
    /// trigger_ratio: the share of the window at which `overflow()` acts (0.01–1).
    /// memory_max_value_chars: the longest value (or description), in characters, the
    ///     model's memory tools may store (8,000 by default; every entry is shown in every
    ///     request); a longer write is refused with a message for the model. None: no
    ///     limit. `memory_set` is not limited.
    /// skill_tool: offer chef's `load_skill` tool (the model activates a skill by name; put
    ///     `skill_listing()` in the system prompt). Off by default.
    /// skill_pruning: keep only the active skill's `allowed-tools` among the flat tools.
    #[new]
    #[pyo3(signature = (*, level = 1, tools_mode = "legacy", cache = true, memory = false, announce_tool_changes = false, repeat_notice = true, compiled = None, answer_tool = false, context_window = None, trigger_ratio = 0.7, memory_max_value_chars = Some(chef::memory::DEFAULT_MAX_VALUE_CHARS as i64), skill_tool = false, skill_pruning = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        level: i64,
        tools_mode: &str,
        cache: bool,
        memory: bool,
        announce_tool_changes: bool,
        repeat_notice: bool,
        compiled: Option<std::collections::BTreeMap<String, String>>,
        answer_tool: bool,
        context_window: Option<i64>,
        trigger_ratio: f64,
        memory_max_value_chars: Option<i64>,
        skill_tool: bool,
        skill_pruning: bool,
    ) -> PyResult<Self> {
        let max_value_chars = memory_max_value_chars.map(self::chars).transpose()?;
        let mut overflow =
            OverflowConfig::default().with_trigger_ratio(self::ratio(trigger_ratio)?);
        if let Some(tokens) = context_window {
            overflow = overflow.with_context_window(self::window(tokens)?);
        }
        let mut options = chef_compress::Options::new().with_level(self::level(level)?);
        if let Some(map) = compiled {
            options = options.with_compiled(map);
        }
        let config = ChefConfig::default()
            .with_compress(options)
            .with_tools_mode(self::tools_mode(tools_mode)?)
            .with_cache(cache)
            .with_tool_change_announcements(announce_tool_changes)
            .with_repeat_notice(repeat_notice)
            .with_answer_tool(answer_tool)
            .with_skill_tool(skill_tool)
            .with_skill_pruning(skill_pruning)
            .with_overflow(overflow);
        let mut chef = chef::Chef::new(config);
        if memory {
            chef = chef.with_memory(Memory::new().with_max_value_chars(max_value_chars));
        }
        Ok(Self::from_chef(chef))
    }

    /// A new session (same settings as `Chef(...)`) restored from a snapshot file.
    #[staticmethod]
    #[pyo3(signature = (path, *, level = 1, tools_mode = "legacy", cache = true, memory = false, announce_tool_changes = false, repeat_notice = true, compiled = None, answer_tool = false, context_window = None, trigger_ratio = 0.7, memory_max_value_chars = Some(chef::memory::DEFAULT_MAX_VALUE_CHARS as i64), skill_tool = false, skill_pruning = false))]
    #[allow(clippy::too_many_arguments)]
    fn from_snapshot(
        py: Python<'_>,
        path: std::path::PathBuf,
        level: i64,
        tools_mode: &str,
        cache: bool,
        memory: bool,
        announce_tool_changes: bool,
        repeat_notice: bool,
        compiled: Option<std::collections::BTreeMap<String, String>>,
        answer_tool: bool,
        context_window: Option<i64>,
        trigger_ratio: f64,
        memory_max_value_chars: Option<i64>,
        skill_tool: bool,
        skill_pruning: bool,
    ) -> PyResult<Self> {
        let session = Self::new(
            level,
            tools_mode,
            cache,
            memory,
            announce_tool_changes,
            repeat_notice,
            compiled,
            answer_tool,
            context_window,
            trigger_ratio,
            memory_max_value_chars,
            skill_tool,
            skill_pruning,
        )?;
        session.load(py, path)?;
        Ok(session)
    }

    /// The compression level (0–4).
    #[getter]
    fn level(&self) -> PyResult<u8> {
        self.with(|i| Ok(i.chef.config().compress.level().as_u8()))
    }

    /// The session's turn counter (one per compile).
    #[getter]
    fn turn(&self) -> PyResult<u64> {
        self.with(|i| Ok(i.chef.turn()))
    }

    /// The loop guard's finding: the tool names of the latest reply (as the model wrote
    /// them, each once) when every call in it repeats a call the model already made for the
    /// same request, with equal arguments and a result that was not an error; None when the
    /// latest reply with calls made a new one. An agent loop may stop on it.
    fn repeated_calls(&self) -> PyResult<Option<Vec<String>>> {
        self.with(|i| Ok(i.chef.repeated_calls()))
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> PyResult<bool> {
        Ok(self.lock()?.is_none())
    }

    /// Registers the flat tools (replacing those registered before), in any shape chef reads (MCP `inputSchema`, OpenAI Chat
    /// `{"type": "function", "function": …}`, OpenAI Responses, Anthropic `input_schema`,
    /// Gemini `functionDeclarations`, bare `parameters`), as a list of dicts, one dict, or
    /// JSON text. Returns the real names registered, in order. A schema read with changes
    /// (an unknown `type` dropped, `float` read as `number`, …) raises one
    /// `chef.SchemaWarning` per tool, listing them.
    fn register_tools(&self, py: Python<'_>, tools: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let tools = tool_definitions(tools)?;
        let names = tools.iter().map(|t| t.name.as_str().to_owned()).collect();
        warn_normalised(py, &tools)?;
        self.with(|i| {
            i.chef.register_tools(tools)?;
            Ok(names)
        })
    }

    /// Registers namespaces: `[{"name", "description", "tools": [...]}]`; each is sent as
    /// one tool whose `action` picks the member.
    fn register_namespaces(&self, groups: &Bound<'_, PyAny>) -> PyResult<()> {
        let groups = self::groups(groups)?;
        self.with(|i| {
            i.chef.tools_mut().register_namespaces(groups)?;
            Ok(())
        })
    }

    /// Registers lazy toolkits (same shape as namespaces); the model loads one with
    /// `load_toolkit`, and its tools are offered from the next compile on.
    fn register_toolkits(&self, groups: &Bound<'_, PyAny>) -> PyResult<()> {
        let groups = self::groups(groups)?;
        self.with(|i| {
            i.chef.tools_mut().register_toolkits(groups)?;
            Ok(())
        })
    }

    /// The registered flat tools' real names, in registration order.
    #[getter]
    fn tool_names(&self) -> PyResult<Vec<String>> {
        self.with(|i| {
            Ok(i.chef
                .tools()
                .pruner()
                .all_tools()
                .iter()
                .map(|t| t.name.as_str().to_owned())
                .collect())
        })
    }

    /// Replaces the blocklist (tools, namespaces, toolkits, owned tools; matched in any
    /// case and separator style). Returns the entries that match nothing registered (most
    /// likely typos; they stay on the list). Blocking never changes the request bytes.
    fn set_blocked_tools(&self, names: Vec<String>) -> PyResult<Vec<String>> {
        self.with(|i| Ok(i.chef.tools_mut().set_blocked(names).unmatched))
    }

    /// The blocklist.
    #[getter]
    fn blocked_tools(&self) -> PyResult<Vec<String>> {
        self.with(|i| Ok(i.chef.tools().pruner().blocked_tools().to_vec()))
    }

    /// Sets which flat tools each compile keeps: "all", "by_task", or a dict such as
    /// `{"policy": "ranked", "top_k": 8, "always_keep": ["ask_user"]}`,
    /// `{"policy": "discover", "top_k": 10}` (find, then call by real name: the ranked
    /// tools plus `find_tools`, whose calls `route` answers as a `Lookup`) or
    /// `{"policy": "allowlist", "names": [...]}`.
    fn set_prune_policy(&self, policy: &Bound<'_, PyAny>) -> PyResult<()> {
        let policy = prune_policy(policy)?;
        self.with(|i| {
            i.chef.tools_mut().set_prune_policy(policy);
            Ok(())
        })
    }

    /// The task pruning ranks against (None: the latest user request).
    #[pyo3(signature = (task))]
    fn set_task(&self, task: Option<String>) -> PyResult<()> {
        self.with(|i| {
            i.chef.tools_mut().set_task(task);
            Ok(())
        })
    }

    /// Bounds the flat tools to these names (None lifts the bound).
    #[pyo3(signature = (names))]
    fn set_allowlist(&self, names: Option<Vec<String>>) -> PyResult<()> {
        self.with(|i| {
            i.chef.tools_mut().set_allowlist(names);
            Ok(())
        })
    }

    /// Searches the registered tools for a task as `find_tools` does; returns up to `k`
    /// `(name, score)` pairs, best first (none when nothing fits). Blocked tools and tools
    /// off the allowlist are left out (ranked, then dropped: they cost no place). A
    /// sentence on which the index abstains as a whole is searched by the words of it the
    /// catalogue uses ([`chef::Tools::search`]). Runs without the GIL.
    #[pyo3(signature = (query, k = 5))]
    fn search(&self, py: Python<'_>, query: String, k: usize) -> PyResult<Vec<(String, f64)>> {
        self.without_gil(py, move |i| {
            Ok(i.chef
                .tools()
                .search(&query, k)
                .into_iter()
                .map(|(t, score)| (t.name.as_str().to_owned(), score))
                .collect())
        })
    }

    /// Sets the system prompt: a string, or a list of messages.
    fn set_system_prompt(&self, prompt: &Bound<'_, PyAny>) -> PyResult<()> {
        let messages = match prompt.cast::<PyString>() {
            // No text, no system prompt (an empty block is refused by Anthropic's API).
            Ok(text) if text.to_cow()?.trim().is_empty() => Vec::new(),
            Ok(text) => vec![Message::system(text.to_cow()?.into_owned())],
            Err(_) => {
                let list = prompt.cast::<PyList>().map_err(|_| {
                    PyTypeError::new_err("the system prompt is a str or a list of messages")
                })?;
                list.iter()
                    .map(|m| message(&m))
                    .collect::<PyResult<Vec<_>>>()?
            }
        };
        self.with(|i| {
            i.chef.set_system_prompt(messages);
            Ok(())
        })
    }

    /// Appends a message: chef's IR dict (`{"role": "user", "content": [{"type": "text",
    /// "text": "…"}]}`, or `"content": "text"`), or its JSON text.
    fn push(&self, message: &Bound<'_, PyAny>) -> PyResult<()> {
        let message = self::message(message)?;
        self.with(|i| {
            i.chef.push(message);
            Ok(())
        })
    }

    /// Appends a user message.
    fn push_user(&self, text: String) -> PyResult<()> {
        self.with(|i| {
            i.chef.push(Message::user(text));
            Ok(())
        })
    }

    /// Parses a provider's reply (its JSON bytes or text, a dict, or an SDK response
    /// object with `model_dump_json`) for `target`, with the wire names of the latest
    /// compile for that target, appends the assistant message, and returns its calls.
    /// With `recover_text_calls`, calls the model wrote as text (a small model behind a
    /// local server) become calls first, and a `final_answer` call the reply's text (see
    /// the Rust `Chef::recover_text_calls`). A reply of nothing but blank text (a model
    /// that stopped at once) appends nothing: no API takes an empty assistant turn back.
    #[pyo3(signature = (target, reply, *, recover_text_calls = false))]
    fn push_reply<'py>(
        &self,
        py: Python<'py>,
        target: &str,
        reply: &Bound<'py, PyAny>,
        recover_text_calls: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let target = self::target(target)?;
        // `bytes` are read where they are (the usual case: an SDK's raw response body);
        // anything else is turned into JSON text first.
        let owned;
        let bytes: &[u8] = if let Ok(b) = reply.cast::<PyBytes>() {
            b.as_bytes()
        } else if reply.hasattr("model_dump_json")? {
            let kwargs = PyDict::new(py);
            kwargs.set_item("exclude_unset", true)?;
            let text = reply.call_method("model_dump_json", (), Some(&kwargs))?;
            owned = json_bytes(&text)?;
            &owned
        } else {
            owned = json_bytes(reply)?;
            &owned
        };
        let parsed = self.with(|i| {
            let names = i
                .names
                .iter()
                .find(|(t, _)| *t == target)
                .map(|(_, names)| names.clone())
                .unwrap_or_default();
            let history = i.chef.history();
            let message = match target {
                Target::Anthropic => {
                    parse_reply::<chef::anthropic::Anthropic>(bytes, &names, history)
                }
                Target::OpenAiChat => parse_reply::<chef::openai::Chat>(bytes, &names, history),
                Target::OpenAiResponses => {
                    parse_reply::<chef::openai::Responses>(bytes, &names, history)
                }
                Target::Gemini => parse_reply::<chef::gemini::Gemini>(bytes, &names, history),
            };
            Ok(message.map(|mut message| {
                if recover_text_calls {
                    i.chef.recover_text_calls(&mut message);
                }
                let calls: Vec<_> = message.tool_calls().cloned().collect();
                let blank = message
                    .content
                    .iter()
                    .all(|c| c.as_text().is_some_and(|t| t.trim().is_empty()));
                if !blank {
                    i.chef.push(message);
                }
                calls
            }))
        })?;
        match parsed {
            Ok(calls) => calls_list(py, calls),
            Err(e) => Err(response_error(target, &*e)),
        }
    }

    /// The JSON-schema `response_format` that constrains the next Chat Completions reply to
    /// one call of the latest compile's tools, each tool's arguments by its own schema
    /// (plus the branches chef adds: see the Rust `Chef::response_format`), as a dict for
    /// the request body; None before any tool is offered.
    fn response_format<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = self.with(|i| {
            serde_json::to_value(i.chef.response_format())
                .map_err(|e| Failure::Runtime(e.to_string()))
        })?;
        to_py(py, &value)
    }

    /// Appends the result of a call (as an error result when `is_error`); `InvalidInputError`
    /// when no tool call in the history has that id, or when that call already has its
    /// result.
    #[pyo3(signature = (call_id, text, is_error = false))]
    fn push_tool_result(
        &self,
        py: Python<'_>,
        call_id: String,
        text: String,
        is_error: bool,
    ) -> PyResult<()> {
        let result = if is_error {
            chef_ir::ToolResult::error(call_id, text)
        } else {
            chef_ir::ToolResult::text(call_id, text)
        };
        // Without the GIL: with offloading on, a large result is hashed and cut here
        // (1.8 s for 10 MB, every other Python thread held before).
        self.without_gil(py, move |i| {
            // A result no call of the history asked for is refused here: every provider
            // refuses the request that carries it, later and further from the cause.
            let id = result.tool_call_id.as_str();
            let history = i.chef.history();
            let asked = history
                .iter()
                .flat_map(Message::tool_calls)
                .filter(|c| c.id.as_str() == id)
                .count();
            let answered = history
                .iter()
                .flat_map(Message::tool_results_iter)
                .filter(|r| r.tool_call_id.as_str() == id)
                .count();
            if asked > 0 && answered >= asked {
                return Err(Failure::Invalid(format!(
                    "the tool call \"{id}\" already has its result in the history: every \
                     provider refuses a request with two results for one call"
                )));
            }
            if asked == 0 {
                return Err(Failure::Invalid(format!(
                    "no tool call in the history has the id \"{}\": push the reply that made \
                     the call first (push_reply), then its result",
                    result.tool_call_id.as_str()
                )));
            }
            i.chef.push(Message::tool_results(vec![result]));
            Ok(())
        })
    }

    /// The conversation, as chef's IR dicts.
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = self.with(|i| {
            serde_json::to_value(i.chef.history()).map_err(|e| Failure::Runtime(e.to_string()))
        })?;
        to_py(py, &value)
    }

    /// Compiles the session for `target` ("anthropic", "openai", "openai-responses",
    /// "gemini"): the request body as bytes (built straight into the `bytes` object, no
    /// intermediate copy), ready to send. Runs without the GIL.
    fn compile(&self, py: Python<'_>, target: &str) -> PyResult<Payload> {
        let target = self::target(target)?;
        let payload = self.without_gil(py, move |i| {
            let payload = i.chef.compile_chunked(target)?;
            i.names.retain(|(t, _)| *t != target);
            i.names.push((target, payload.names.clone()));
            Ok(payload)
        })?;
        let body = PyBytes::new_with(py, payload.body.len(), |buf| {
            let mut at = 0;
            for chunk in payload.body.chunks() {
                let end = at + chunk.len();
                if let Some(dst) = buf.get_mut(at..end) {
                    dst.copy_from_slice(chunk);
                }
                at = end;
            }
            Ok(())
        })?;
        let names = PyDict::new(py);
        for (real, wire) in payload.names.renamed() {
            names.set_item(wire, real)?;
        }
        Ok(Payload {
            target: target.as_str(),
            body: body.unbind(),
            names: names.unbind(),
            notices: payload.notices,
            turn: payload.meta.turn,
            wire_tools: payload
                .meta
                .wire_tools
                .iter()
                .map(|t| t.as_str().to_owned())
                .collect(),
        })
    }

    /// Routes a model's call: the one dispatch entry point. Returns `Call` (dispatch it),
    /// `Owned` (run `handle_tool`), `ToolkitLoaded`, `Lookup`, `Blocked` or `Rejected`
    /// (send their `reply` back). The gate runs on the resolved real name on every route.
    fn route(&self, py: Python<'_>, call: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let call = tool_call(call)?;
        // Without the GIL: a name no tool has is compared with every registered name
        // (68 ms at 10,000 tools), which held every other Python thread.
        let routed = self.without_gil(py, |i| Ok(i.chef.route(&call)))?;
        outcome(py, routed)
    }

    /// Classifies a call exactly as `route` does, but changes nothing (a `load_toolkit`
    /// is reported, not loaded).
    fn check_tool_call(&self, py: Python<'_>, call: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let call = tool_call(call)?;
        let routed = self.without_gil(py, |i| Ok(i.chef.check_tool_call(&call)))?;
        outcome(py, routed)
    }

    /// Answers a library-owned call (`Owned` from `route`): memory, the context store,
    /// `new_context`. Runs without the GIL.
    fn handle_tool(&self, py: Python<'_>, call: &Bound<'_, Owned>) -> PyResult<OwnedReply> {
        let call = call.get().call.clone();
        let reply = self.without_gil(py, move |i| {
            let Inner { chef, runtime, .. } = i;
            Ok(started(runtime)?.block_on(chef.handle_tool(&call))?)
        })?;
        Ok(OwnedReply {
            text: reply.text,
            is_error: reply.is_error,
        })
    }

    /// The level-3/4 code of a tool or group in the latest compile's map, if it has one.
    fn code_for(&self, name: &str) -> PyResult<Option<String>> {
        self.with(|i| Ok(i.chef.tools().code_for(name)))
    }

    /// The call a model would make to reach `name` with `arguments` at this level (a
    /// `t` call at level 3, a compound call at level 2), if the tool is offered.
    fn encode_call(&self, name: &str, arguments: &Bound<'_, PyAny>) -> PyResult<Option<ToolCall>> {
        let arguments = to_value(arguments)?;
        self.with(|i| {
            Ok(i.chef
                .tools()
                .encode_call(name, arguments)
                .map(|call| ToolCall { call }))
        })
    }

    /// The toolkits loaded so far.
    #[getter]
    fn loaded_toolkits(&self) -> PyResult<Vec<String>> {
        self.with(|i| Ok(i.chef.tools().loaded_toolkits().to_vec()))
    }

    /// Sets the dynamic state: any JSON value, rendered as XML under `<dynamic_state>` at
    /// every compile until replaced or cleared (`None` clears it). placement: "last_user"
    /// (stitched into the last user message, after the cached prefix) or "system" (a
    /// system message after the history on OpenAI Chat Completions; the system prompt,
    /// ahead of the cached history, on Anthropic, Responses and Gemini).
    #[pyo3(signature = (state, placement = "last_user"))]
    fn set_dynamic_state(&self, state: &Bound<'_, PyAny>, placement: &str) -> PyResult<()> {
        let state = to_value(state)?;
        self.with(|i| {
            let placement = layers::placement(placement)?;
            i.chef.layers_mut().set_dynamic_state(&state, placement)?;
            Ok(())
        })
    }

    /// Clears the dynamic state; whether there was one.
    fn clear_dynamic_state(&self) -> PyResult<bool> {
        self.with(|i| Ok(i.chef.layers_mut().clear_dynamic_state()))
    }

    /// The dynamic state as `{"state": …, "placement": …, "xml": …}`, or None.
    fn dynamic_state<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let state = self.with(|i| Ok(layers::dynamic_state(&i.chef)))?;
        state.map(|s| to_py(py, &s)).transpose()
    }

    /// Sets the output guardrail: the answer inside one `<tag>…</tag>` pair (`tag=`), or a
    /// JSON object valid against `schema=`; neither clears it. Its instruction is the last
    /// message of every request; check the model's answer with `check_reply`.
    #[pyo3(signature = (*, tag = None, schema = None))]
    fn set_guardrail(
        &self,
        tag: Option<String>,
        schema: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let schema = schema.map(to_value).transpose()?;
        self.with(|i| {
            let guardrail = layers::guardrail(tag, schema)?;
            i.chef.layers_mut().set_guardrail(guardrail);
            Ok(())
        })
    }

    /// Sets the text the model's reply must start with, or clears it with None
    /// (Anthropic takes it natively; the other targets get an instruction and a notice).
    fn set_prefill(&self, text: Option<String>) -> PyResult<()> {
        self.with(|i| {
            i.chef.layers_mut().set_prefill(text);
            Ok(())
        })
    }

    /// The prefill in force, or None.
    #[getter]
    fn prefill(&self) -> PyResult<Option<String>> {
        self.with(|i| Ok(i.chef.layers().prefill().map(str::to_owned)))
    }

    /// Checks the model's answer against the guardrail: `{"ok": True, "content": …}` or
    /// `{"ok": False, "problem": …, "retry": …}` (`retry` is the message to send the model);
    /// None without a guardrail. With a prefill, pass the reply with the prefill in front.
    fn check_reply<'py>(
        &self,
        py: Python<'py>,
        reply: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let verdict = self.with(|i| Ok(layers::check_reply(&i.chef, reply)))?;
        verdict.map(|v| to_py(py, &v)).transpose()
    }

    /// Loads skills — each path a `SKILL.md` file or a directory of skill folders
    /// (`<dir>/<name>/SKILL.md`), earlier paths winning a name clash — and registers them
    /// in place of the session's. Returns `{"loaded": [names], "problems": [{"path",
    /// "line", "message"}], "shadowed": [{"name", "kept", "hidden"}]}`: a file that does
    /// not load is reported and the others load.
    fn load_skills<'py>(
        &self,
        py: Python<'py>,
        paths: Vec<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let loaded = self.without_gil(py, |i| Ok(layers::load_skills(&mut i.chef, &paths)))?;
        to_py(py, &loaded.to_json())
    }

    /// The registered skills' names.
    fn skill_names(&self) -> PyResult<Vec<String>> {
        self.with(|i| {
            Ok(i.chef
                .skills()
                .names()
                .into_iter()
                .map(str::to_owned)
                .collect())
        })
    }

    /// The listing of the registered skills, to put in the system prompt.
    fn skill_listing(&self) -> PyResult<String> {
        self.with(|i| Ok(i.chef.skills().listing()))
    }

    /// Makes a registered skill active (its instructions join every request), rendered
    /// with `arguments` (`$ARGUMENTS`, `$0`, `$1`, …) when given.
    #[pyo3(signature = (name, arguments = Vec::new()))]
    fn activate_skill(&self, name: &str, arguments: Vec<String>) -> PyResult<()> {
        self.with(|i| layers::activate_skill(&mut i.chef, name, &arguments))
    }

    /// Deactivates the active skill; its name, or None.
    fn deactivate_skill(&self) -> PyResult<Option<String>> {
        self.with(|i| {
            Ok(i.chef
                .skills_mut()
                .deactivate()
                .map(|s| s.name().to_owned()))
        })
    }

    /// The active skill's name, or None.
    #[getter]
    fn active_skill(&self) -> PyResult<Option<String>> {
        self.with(|i| Ok(i.chef.skills().active().map(|s| s.name().to_owned())))
    }

    /// Offloads large tool results: from now on a result pushed whose text is over
    /// `chars` characters (or `tokens` tokens) is stored whole in the session's store and
    /// replaced in the history by its first `head` and last `tail` characters and its
    /// `context://vfs/…` address (both 0: the address alone); neither turns it off. The
    /// model reads it back with the owned `context` tool: use `tools_mode="unified"`.
    #[pyo3(signature = (*, chars = None, tokens = None, head = 1500, tail = 500))]
    fn set_offload_policy(
        &self,
        chars: Option<usize>,
        tokens: Option<usize>,
        head: usize,
        tail: usize,
    ) -> PyResult<()> {
        self.with(|i| {
            let policy = offload::policy(chars, tokens, head, tail)?;
            i.chef.offloads_mut().set_policy(policy);
            Ok(())
        })
    }

    /// The offload policy in force as a dict (`threshold`, `keep`, `tools`), or None.
    fn offload_policy<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let policy = self.with(|i| {
            i.chef
                .offloads()
                .policy()
                .map(serde_json::to_value)
                .transpose()
                .map_err(|e| Failure::Runtime(e.to_string()))
        })?;
        policy.map(|p| to_py(py, &p)).transpose()
    }

    /// How many offloaded results wait to be written to the store (`flush_offloads` and
    /// `handle_tool` write them; a snapshot carries them).
    fn pending_offloads(&self) -> PyResult<usize> {
        self.with(|i| Ok(i.chef.offloads().pending().len()))
    }

    /// Writes the pending offloads: `{"stored": [addresses], "deduplicated": n,
    /// "kept_whole": [{"uri", "error"}]}` (a result the store refuses goes back whole into
    /// the history).
    fn flush_offloads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let report = self.without_gil(py, |i| {
            let Inner { chef, runtime, .. } = i;
            Ok(started(runtime)?.block_on(chef.offloads_mut().flush())?)
        })?;
        to_py(py, &offload::flush_report(&report))
    }

    /// Sets the summariser `overflow()` uses, or None (older turns are then archived and
    /// dropped). It is called with one dict — `span` (the messages to summarise, as
    /// `history()` gives them), `instruction` (what the summary must hold), `window`, and
    /// `messages` (the span followed by the instruction as a user message, ready to send to
    /// a chat model) — and returns the summary text. An exception, a non-`str`, an empty
    /// summary or one that does not shrink the span is a failed step: the history stays as
    /// it was, and after three in a row `overflow()` stops trying until the next window.
    /// It runs while this session is locked: it must not call this session (that raises).
    fn set_summarizer(&self, summarizer: &Bound<'_, PyAny>) -> PyResult<()> {
        self.with(|i| {
            let summarizer = if summarizer.is_none() {
                // Dropped after the slot's lock: dropping a callable can run Python code.
                let old = self.summarizer.lock().take();
                drop(old);
                None
            } else {
                Some(overflow::PySummarizer::shared(
                    summarizer,
                    &self.summarizer,
                )?)
            };
            i.chef.set_summarizer(summarizer);
            Ok(())
        })
    }

    /// Records the prompt tokens the provider reported for the last request (its usage):
    /// the budget reads it until the next `overflow()`.
    fn report_token_usage(&self, tokens: u64) -> PyResult<()> {
        self.with(|i| {
            i.chef.report_token_usage(tokens);
            Ok(())
        })
    }

    /// Where the history stands against the context window: `{"limit", "trigger",
    /// "current", "remaining", "over"}` (tokens; `limit`, `trigger` and `remaining` are None
    /// without a `context_window`).
    fn budget<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let budget = self.with(|i| Ok(overflow::budget(&i.chef.budget())))?;
        to_py(py, &budget)
    }

    /// Asks for a fresh context window: the next `overflow()` summarises (or archives)
    /// everything before the last turn, whatever the budget.
    fn request_new_context(&self) -> PyResult<()> {
        self.with(|i| {
            i.chef.request_new_context();
            Ok(())
        })
    }

    /// The overflow step, to call before `compile` each turn: when the history is past the
    /// trigger (or a new context was requested) the older turns are summarised by the
    /// summariser, or archived and dropped without one. Returns what it did, its kind under
    /// `"outcome"`: `not_needed` (with `budget`), `summarized` (`replaced`, `pinned_kept`,
    /// `window`, `archive`), `dropped` (`dropped`, `window`, `archive`), `failed`
    /// (`reason`, `failures`; the history unchanged), `breaker_open` (`failures`) or
    /// `nothing_to_compress`. `archive` is the `context://archive/…` address of the
    /// replaced messages in the session's store.
    fn overflow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let address = self.address();
        let outcome = self.without_gil(py, move |i| {
            let _summarising = overflow::Summarising::start(address);
            let Inner { chef, runtime, .. } = i;
            Ok(started(runtime)?.block_on(chef.overflow())?)
        });
        if let Some(interrupt) = overflow::take_interrupt() {
            return Err(interrupt);
        }
        to_py(py, &overflow::outcome(&outcome?))
    }

    /// Writes a memory entry (the session needs `memory=True`). `ttl`: the compiles it is
    /// shown in before it expires (None: never).
    #[pyo3(signature = (key, value, ttl = None))]
    fn memory_set(&self, key: &str, value: &str, ttl: Option<u64>) -> PyResult<()> {
        let ttl = match ttl {
            Some(turns) => chef::memory::Ttl::Turns(turns),
            None => chef::memory::Ttl::Default,
        };
        self.with(|i| {
            let memory = i.chef.memory_mut().ok_or_else(no_memory)?;
            memory
                .set(key, value, chef::memory::SetOptions::new().with_ttl(ttl))
                .map_err(|e| Failure::Chef(ChefError::Memory(e)))?;
            Ok(())
        })
    }

    /// A memory entry's value, or None (`chef.ChefMemoryError` for a key `memory_set`
    /// would refuse: no such key can be stored).
    fn memory_get(&self, key: &str) -> PyResult<Option<String>> {
        self.with(|i| {
            let memory = i.chef.memory().ok_or_else(no_memory)?;
            check_memory_key(key)?;
            Ok(memory.get(key).map(|e| e.value().to_owned()))
        })
    }

    /// Deletes a memory entry; whether it existed (`chef.ChefMemoryError` for a key
    /// `memory_set` would refuse).
    fn memory_delete(&self, key: &str) -> PyResult<bool> {
        self.with(|i| {
            let memory = i.chef.memory_mut().ok_or_else(no_memory)?;
            check_memory_key(key)?;
            Ok(memory.delete(key).is_some())
        })
    }

    /// Every memory entry as a dict, key → value, in the memory's order.
    fn memory<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let entries: Vec<(String, String)> = self.with(|i| {
            let memory = i.chef.memory().ok_or_else(no_memory)?;
            Ok(memory
                .entries()
                .map(|e| (e.key().as_str().to_owned(), e.value().to_owned()))
                .collect())
        })?;
        let dict = PyDict::new(py);
        for (k, v) in entries {
            dict.set_item(k, v)?;
        }
        Ok(dict)
    }

    /// Saves a snapshot of the session to a file, atomically. Runs without the GIL.
    #[pyo3(signature = (path, label = None))]
    fn save(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        label: Option<String>,
    ) -> PyResult<()> {
        self.without_gil(py, move |i| Ok(i.chef.save(&path, label.as_deref())?))
    }

    /// Restores the session from a snapshot file (`chef.SnapshotError` when the file is
    /// missing, corrupt, newer, or not a snapshot). Runs without the GIL.
    fn load(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        self.without_gil(py, move |i| {
            i.chef.load(&path)?;
            i.names.clear();
            Ok(())
        })
    }

    /// An independent session that starts where this one is, sharing what was prepared
    /// from the tools.
    fn fork(&self, py: Python<'_>) -> PyResult<Chef> {
        self.with(|i| {
            let fork = Chef::from_chef(i.chef.fork());
            // The fork's own slot, holding its own reference: each session's collector
            // support sees only what it holds.
            let callable = self.summarizer.lock().as_ref().map(|c| c.clone_ref(py));
            if let Some(callable) = callable {
                let shared = overflow::PySummarizer::shared(callable.bind(py), &fork.summarizer)?;
                if let Some(inner) = fork.inner.lock().as_mut() {
                    inner.chef.set_summarizer(Some(shared));
                }
            }
            Ok(fork)
        })
    }

    /// Drops the session and what it holds; any later call raises `chef.ClosedError`.
    fn close(&self) -> PyResult<()> {
        drop(self.lock()?.take());
        let callable = self.summarizer.lock().take();
        drop(callable);
        Ok(())
    }

    /// What the garbage collector may follow: the summariser callable.
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        // Never wait here: a thread that holds the slot waits for the GIL the collector
        // holds. A slot held now is skipped (the callable is then reachable from that
        // thread anyway).
        if let Some(slot) = self.summarizer.try_lock()
            && let Some(callable) = slot.as_ref()
        {
            visit.call(callable)?;
        }
        Ok(())
    }

    /// Breaks a reference cycle through the summariser (the collector's last step).
    fn __clear__(&self) {
        // Dropped after the slot's lock: dropping the callable can run Python code.
        let callable = self.summarizer.try_lock().and_then(|mut slot| slot.take());
        drop(callable);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let Ok(guard) = self.lock() else {
            return "Chef(summarising)".to_owned();
        };
        match guard.as_ref() {
            None => "Chef(closed)".to_owned(),
            Some(i) => format!(
                "Chef(level={}, tools={}, messages={}, turn={}, blocked={})",
                i.chef.config().compress.level().as_u8(),
                i.chef.tools().pruner().all_tools().len(),
                i.chef.history().len(),
                i.chef.turn(),
                i.chef.tools().pruner().blocked_tools().len()
            ),
        }
    }
}

/// The session's runtime for its async steps, built on first use.
fn started(
    slot: &mut Option<tokio::runtime::Runtime>,
) -> Result<&tokio::runtime::Runtime, Failure> {
    if slot.is_none() {
        *slot = Some(
            tokio::runtime::Builder::new_current_thread()
                .build()
                .map_err(|e| Failure::Runtime(e.to_string()))?,
        );
    }
    slot.as_ref()
        .ok_or_else(|| Failure::Runtime("no runtime".to_owned()))
}

fn no_memory() -> Failure {
    Failure::NoMemory
}

/// `key` as a memory key, refused as `memory_set` refuses it (a key no entry can have is a
/// caller's mistake, not a missing entry).
fn check_memory_key(key: &str) -> Result<(), Failure> {
    chef::store::StoreKey::new(key)
        .map(drop)
        .map_err(|e| Failure::Chef(ChefError::Memory(chef::memory::MemoryError::InvalidKey(e))))
}

/// A reply read through the target's provider crate ([`Provider::parse_reply`]), its error
/// kept whole for the Python exception (its variant, text and causes).
fn parse_reply<P: Provider>(
    bytes: &[u8],
    names: &WireNames,
    history: &[Message],
) -> Result<Message, Box<dyn std::error::Error + Send + Sync>> {
    P::parse_reply(bytes, names, history).map_err(Into::into)
}
