//! Python objects → JSON values, and the small parsers of Python-side arguments (JSON
//! values → Python objects: `json_out`).

use chef_ir::Target;
use pyo3::{
    prelude::*,
    types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple},
};
use serde_json::{Map, Number, Value};

use crate::errors::invalid_input;

/// How deep a Python structure may nest before it is refused (a cycle, or hostile input,
/// would otherwise recurse without end).
const MAX_DEPTH: usize = 256;

/// A Python object as JSON: `dict` (string keys, insertion order kept), `list` / `tuple`,
/// `str`, `int`, `float` (finite), `bool`, `None`.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value_at(obj, 0)
}

fn to_value_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(invalid_input(format!(
            "the value nests deeper than {MAX_DEPTH} levels (a cycle?)"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract::<bool>()?));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        return Err(invalid_input("an integer does not fit in 64 bits"));
    }
    if obj.is_instance_of::<PyFloat>() {
        let f: f64 = obj.extract()?;
        return Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| invalid_input(format!("{f} is not a JSON number")));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(invalid_input(format!(
                    "a JSON object's keys are strings, not {}",
                    type_name(&k)
                )));
            };
            map.insert(key.to_cow()?.into_owned(), to_value_at(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return array_at(list.iter(), depth);
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return array_at(tuple.iter(), depth);
    }
    Err(invalid_input(format!(
        "{} is not JSON (use dict, list, str, int, float, bool or None)",
        type_name(obj)
    )))
}

/// A list's or a tuple's items (at `depth`) as a JSON array.
fn array_at<'py>(items: impl Iterator<Item = Bound<'py, PyAny>>, depth: usize) -> PyResult<Value> {
    items
        .map(|v| to_value_at(&v, depth + 1))
        .collect::<PyResult<Vec<_>>>()
        .map(Value::Array)
}

/// A JSON document given as text (`str`, `bytes`, `bytearray`) or as Python objects.
pub(crate) fn document(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    if let Ok(s) = obj.cast::<PyString>() {
        return parse_json(s.to_cow()?.as_bytes(), what);
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return parse_json(b.as_bytes(), what);
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return parse_json(&b.to_vec(), what);
    }
    to_value(obj)
}

/// Raw bytes of a JSON text (`bytes`, `bytearray`, `str`), or Python objects serialised.
pub(crate) fn json_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    serde_json::to_vec(&to_value(obj)?).map_err(|e| invalid_input(e.to_string()))
}

fn parse_json(bytes: &[u8], what: &str) -> PyResult<Value> {
    serde_json::from_slice(bytes).map_err(|e| {
        crate::errors::raise(
            "InvalidInputError",
            format!("{what} is not valid JSON: {e}"),
            "input",
            "MalformedJson",
            vec![
                ("line", Value::from(e.line())),
                ("column", Value::from(e.column())),
            ],
            String::new(),
        )
    })
}

/// A target from its name (`anthropic`, `openai`, `openai-responses`, `gemini`).
pub(crate) fn target(name: &str) -> PyResult<Target> {
    Target::from_name(name).ok_or_else(|| {
        invalid_input(format!(
            "unknown target \"{name}\" (one of: {})",
            Target::ALL.map(Target::as_str).join(", ")
        ))
    })
}

/// The Python type's name, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".to_owned(), |n| n.to_string())
}
