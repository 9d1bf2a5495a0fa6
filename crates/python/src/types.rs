//! The value classes the Python API returns: a tool call, a compiled payload, and the
//! outcomes of routing a call.

use chef::Routed;
use pyo3::{
    prelude::*,
    types::{PyBytes, PyDict, PyList, PyString},
};

use crate::{convert::to_value, json_out::to_py};

/// The Python repr of a string (quotes and escapes as Python writes them).
fn r(py: Python<'_>, s: &str) -> String {
    PyString::new(py, s)
        .repr()
        .map_or_else(|_| format!("{s:?}"), |r| r.to_string())
}

fn r_obj(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map_or_else(|_| "<?>".to_owned(), |r| r.to_string())
}

/// A call the model made: `id`, `name` as the model wrote it, and `arguments` (any JSON
/// value; a string holds argument text that was not JSON, kept as sent).
#[pyclass(module = "chef", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub(crate) call: chef_ir::ToolCall,
}

#[pymethods]
impl ToolCall {
    #[new]
    #[pyo3(signature = (id, name, arguments = None))]
    fn new(id: String, name: String, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let arguments = match arguments {
            Some(a) => to_value(a)?,
            None => serde_json::Value::Object(serde_json::Map::new()),
        };
        Ok(Self {
            call: chef_ir::ToolCall::new(id, name, arguments),
        })
    }

    /// The provider's id for the call.
    #[getter]
    fn id(&self) -> &str {
        self.call.id.as_str()
    }

    /// The tool name exactly as the model wrote it.
    #[getter]
    fn name(&self) -> &str {
        self.call.name.as_str()
    }

    /// The arguments (a new Python object on each access).
    #[getter]
    fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.call.arguments)
    }

    /// The call as a dict: `{"id", "name", "arguments"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("id", self.call.id.as_str())?;
        d.set_item("name", self.call.name.as_str())?;
        d.set_item("arguments", to_py(py, &self.call.arguments)?)?;
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ToolCall(id={}, name={}, arguments={})",
            r(py, self.call.id.as_str()),
            r(py, self.call.name.as_str()),
            r_obj(&to_py(py, &self.call.arguments)?)
        ))
    }
}

/// One compiled request: `body` is the request's bytes (send them as they are), `names`
/// maps each renamed wire tool name back to its real name.
#[pyclass(module = "chef", frozen)]
pub(crate) struct Payload {
    /// The target's name.
    #[pyo3(get)]
    pub(crate) target: &'static str,
    /// The request body (built once, straight into this `bytes` object).
    #[pyo3(get)]
    pub(crate) body: Py<PyBytes>,
    /// Wire name → real name, for the tools the target renamed (empty when none were).
    #[pyo3(get)]
    pub(crate) names: Py<PyDict>,
    /// Notices for the developer (cache audit, overflow due, …).
    #[pyo3(get)]
    pub(crate) notices: Vec<String>,
    /// The session's turn counter at this compile.
    #[pyo3(get)]
    pub(crate) turn: u64,
    /// The tools sent, in wire order, by real name (`names` maps the renamed ones).
    #[pyo3(get)]
    pub(crate) wire_tools: Vec<String>,
}

#[pymethods]
impl Payload {
    /// The body parsed into Python objects (a new dict on each call).
    fn json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .getattr("loads")?
            .call1((self.body.bind(py),))
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.body.bind(py).as_bytes().len()
    }

    fn __bytes__(&self, py: Python<'_>) -> Py<PyBytes> {
        self.body.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Payload(target={}, body=<{} bytes>, wire_tools={:?}, turn={})",
            r(py, self.target),
            self.body.bind(py).as_bytes().len(),
            self.wire_tools,
            self.turn
        )
    }
}

/// A validated call of one of your tools: dispatch it, and answer with a tool result of
/// this `id`.
#[pyclass(module = "chef", frozen)]
pub(crate) struct Call {
    #[pyo3(get)]
    id: String,
    /// The tool's real name.
    #[pyo3(get)]
    name: String,
    /// The arguments, validated against the tool's original schema.
    #[pyo3(get)]
    arguments: Py<PyAny>,
    /// The namespace or toolkit the call came through, if any.
    #[pyo3(get)]
    via: Option<String>,
}

/// A call of a library-owned tool (memory, the context store, `new_context`): run
/// `Chef.handle_tool` for the reply.
#[pyclass(module = "chef", frozen)]
pub(crate) struct Owned {
    #[pyo3(get)]
    id: String,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    arguments: Py<PyAny>,
    pub(crate) call: chef::OwnedCall,
}

/// A toolkit was loaded; its tools are offered from the next compile on.
#[pyclass(module = "chef", frozen)]
pub(crate) struct ToolkitLoaded {
    #[pyo3(get)]
    id: String,
    #[pyo3(get)]
    toolkit: String,
    #[pyo3(get)]
    tools: Vec<String>,
    #[pyo3(get)]
    reply: String,
}

/// A lookup (`q`, `describe_op`) chef answered itself: send `reply` back.
#[pyclass(module = "chef", frozen)]
pub(crate) struct Lookup {
    #[pyo3(get)]
    id: String,
    #[pyo3(get)]
    reply: String,
}

/// The call reached a blocked tool, namespace or toolkit: send `reply` back as an error.
#[pyclass(module = "chef", frozen)]
pub(crate) struct Blocked {
    #[pyo3(get)]
    id: String,
    /// The blocked name (a tool, namespace or toolkit).
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    reply: String,
}

/// The call cannot be honoured (unknown tool, invalid arguments, a changed list): send
/// `reply` back as an error; `error` names the cause for the program.
#[pyclass(module = "chef", frozen)]
pub(crate) struct Rejected {
    #[pyo3(get)]
    id: String,
    /// The cause's kind: `malformed`, `resolve`, `namespace`, `tool_list_changed`,
    /// `unavailable`.
    #[pyo3(get)]
    error: &'static str,
    /// The cause, as a sentence for the developer.
    #[pyo3(get)]
    message: String,
    /// The real tool the error is about, when it reached one.
    #[pyo3(get)]
    tool: Option<String>,
    #[pyo3(get)]
    reply: String,
}

macro_rules! outcome_class {
    ($ty:ident, $is_error:expr, [$($field:literal),*], { $($rest:tt)* }) => {
        #[pymethods]
        impl $ty {
            /// Whether the reply reports a failure (send it as an error tool result).
            #[getter]
            fn is_error(&self) -> bool {
                $is_error
            }

            #[classattr]
            fn __match_args__(py: Python<'_>) -> PyResult<Py<pyo3::types::PyTuple>> {
                Ok(pyo3::types::PyTuple::new(py, [$($field),*])?.unbind())
            }

            $($rest)*
        }
    };
}

outcome_class!(Call, false, ["id", "name", "arguments", "via"], {
    /// Call outcomes carry no reply: you dispatch them.
    #[getter]
    fn reply(&self) -> Option<String> {
        None
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Call(id={}, name={}, arguments={}, via={})",
            r(py, &self.id),
            r(py, &self.name),
            r_obj(self.arguments.bind(py)),
            self.via.as_deref().map_or("None".to_owned(), |v| r(py, v))
        )
    }
});

outcome_class!(Owned, false, ["id", "name", "arguments"], {
    /// Owned calls are answered by `Chef.handle_tool`.
    #[getter]
    fn reply(&self) -> Option<String> {
        None
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Owned(id={}, name={}, arguments={})",
            r(py, &self.id),
            r(py, &self.name),
            r_obj(self.arguments.bind(py))
        )
    }
});

outcome_class!(ToolkitLoaded, false, ["id", "toolkit", "tools", "reply"], {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ToolkitLoaded(id={}, toolkit={}, tools={:?})",
            r(py, &self.id),
            r(py, &self.toolkit),
            self.tools
        )
    }
});

outcome_class!(Lookup, false, ["id", "reply"], {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Lookup(id={}, reply={})",
            r(py, &self.id),
            r(py, &self.reply)
        )
    }
});

outcome_class!(Blocked, true, ["id", "name", "reply"], {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Blocked(id={}, name={}, reply={})",
            r(py, &self.id),
            r(py, &self.name),
            r(py, &self.reply)
        )
    }
});

outcome_class!(
    Rejected,
    true,
    ["id", "error", "message", "tool", "reply"],
    {
        fn __repr__(&self, py: Python<'_>) -> String {
            format!(
                "Rejected(id={}, error={}, tool={}, reply={})",
                r(py, &self.id),
                r(py, self.error),
                self.tool.as_deref().map_or("None".to_owned(), |t| r(py, t)),
                r(py, &self.reply)
            )
        }
    }
);

/// A routing outcome as its Python class.
pub(crate) fn outcome(py: Python<'_>, routed: Routed) -> PyResult<Py<PyAny>> {
    use chef::RouteError as E;
    Ok(match routed {
        Routed::Call(c) => Py::new(
            py,
            Call {
                id: c.id.as_str().to_owned(),
                name: c.name.as_str().to_owned(),
                arguments: to_py(py, &c.arguments)?.unbind(),
                via: c.via,
            },
        )?
        .into_any(),
        Routed::Owned(c) => Py::new(
            py,
            Owned {
                id: c.id.as_str().to_owned(),
                name: c.name.clone(),
                arguments: to_py(py, &c.arguments)?.unbind(),
                call: c,
            },
        )?
        .into_any(),
        Routed::ToolkitLoaded {
            id,
            toolkit,
            tools,
            reply,
        } => Py::new(
            py,
            ToolkitLoaded {
                id: id.as_str().to_owned(),
                toolkit,
                tools: tools.into_iter().map(|t| t.as_str().to_owned()).collect(),
                reply,
            },
        )?
        .into_any(),
        Routed::Lookup { id, reply } => Py::new(
            py,
            Lookup {
                id: id.as_str().to_owned(),
                reply,
            },
        )?
        .into_any(),
        Routed::Blocked { id, name, reply } => Py::new(
            py,
            Blocked {
                id: id.as_str().to_owned(),
                name,
                reply,
            },
        )?
        .into_any(),
        Routed::Error { id, error, reply } => {
            let kind = match &error {
                E::Malformed => "malformed",
                E::Resolve(_) => "resolve",
                E::Namespace(_) => "namespace",
                E::ToolListChanged { .. } => "tool_list_changed",
                E::Unavailable(_) => "unavailable",
                _ => "other",
            };
            Py::new(
                py,
                Rejected {
                    id: id.as_str().to_owned(),
                    error: kind,
                    message: error.to_string(),
                    tool: error.tool().map(str::to_owned),
                    reply,
                },
            )?
            .into_any()
        }
        // `Routed` is exhaustive today; a new outcome is refused, never dispatched.
        #[allow(unreachable_patterns)]
        _ => {
            return Err(crate::errors::invalid_input(
                "an outcome this build of the bindings does not know",
            ));
        }
    })
}

/// The reply of a library-owned tool (`Chef.handle_tool`).
#[pyclass(module = "chef", frozen)]
pub(crate) struct OwnedReply {
    /// The text for the model.
    #[pyo3(get)]
    pub(crate) text: String,
    /// Whether the text reports a mistake (send it as an error tool result).
    #[pyo3(get)]
    pub(crate) is_error: bool,
}

#[pymethods]
impl OwnedReply {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "OwnedReply(text={}, is_error={})",
            r(py, &self.text),
            if self.is_error { "True" } else { "False" }
        )
    }
}

/// A list of calls as Python `ToolCall`s.
pub(crate) fn calls_list<'py>(
    py: Python<'py>,
    calls: Vec<chef_ir::ToolCall>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for call in calls {
        list.append(Py::new(py, ToolCall { call })?)?;
    }
    Ok(list)
}
