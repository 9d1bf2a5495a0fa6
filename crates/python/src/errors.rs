//! chef's typed errors as Python exceptions (the classes live in `chef/_errors.py`).
//!
//! Every exception raised here is a `chef.ChefError` subclass carrying what the Rust error
//! carries: `message` (its Display text), `kind` (which error), `variant` (the Rust
//! variant), `fields` (the variant's data as a dict), `causes` (the source chain's
//! messages) and `detail` (the Rust error's debug form, every field included).

use chef::ChefError;
use pyo3::{exceptions::PyRuntimeError, prelude::*, types::PyDict};
use serde_json::Value;

use crate::json_out::to_py;

/// Builds an exception of the class `class` of `chef._errors`. Never fails: should the
/// class be missing (a broken install), a `RuntimeError` with the same message is built.
pub(crate) fn raise(
    class: &str,
    message: String,
    kind: &str,
    variant: &str,
    fields: Vec<(&str, Value)>,
    detail: String,
) -> PyErr {
    Python::attach(|py| {
        build(
            py,
            class,
            &message,
            kind,
            variant,
            fields,
            detail,
            Vec::new(),
        )
        .unwrap_or_else(|_| PyRuntimeError::new_err(message))
    })
}

#[allow(clippy::too_many_arguments)]
fn build(
    py: Python<'_>,
    class: &str,
    message: &str,
    kind: &str,
    variant: &str,
    fields: Vec<(&str, Value)>,
    detail: String,
    causes: Vec<String>,
) -> PyResult<PyErr> {
    let cls = py.import("chef._errors")?.getattr(class)?;
    let dict = PyDict::new(py);
    for (k, v) in fields {
        dict.set_item(k, to_py(py, &v)?)?;
    }
    let exc = cls.call1((message, kind, variant, dict, causes, detail))?;
    Ok(PyErr::from_value(exc))
}

/// A value from Python that chef cannot use (`chef.InvalidInputError`, also a
/// `ValueError`).
pub(crate) fn invalid_input(message: impl Into<String>) -> PyErr {
    raise(
        "InvalidInputError",
        message.into(),
        "input",
        "InvalidInput",
        Vec::new(),
        String::new(),
    )
}

/// A call on a closed session (`chef.ClosedError`).
pub(crate) fn closed() -> PyErr {
    raise(
        "ClosedError",
        "this Chef is closed".to_owned(),
        "closed",
        "Closed",
        Vec::new(),
        String::new(),
    )
}

/// The Rust variant's name: the debug form up to its first field.
fn variant_of(debug: &str) -> &str {
    let end = debug
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(debug.len());
    debug.get(..end).unwrap_or(debug)
}

fn causes_of(error: &dyn std::error::Error) -> Vec<String> {
    let mut causes = Vec::new();
    let mut source = error.source();
    while let Some(e) = source {
        causes.push(e.to_string());
        source = e.source();
    }
    causes
}

/// What [`chef_error`] raises for one variant: the class, the kind, the Rust variant and
/// the variant's fields.
type Raised<'a> = (&'a str, &'a str, String, Vec<(&'a str, Value)>);

/// A variant that wraps an inner error: named after the inner error's variant, with no
/// fields of its own.
fn wrapping<'a>(class: &'a str, kind: &'a str, inner: &dyn std::fmt::Debug) -> Raised<'a> {
    (
        class,
        kind,
        variant_of(&format!("{inner:?}")).to_owned(),
        Vec::new(),
    )
}

/// A session error as the `chef.ChefError` subclass of its kind.
pub(crate) fn chef_error(error: ChefError) -> PyErr {
    let message = error.to_string();
    let detail = format!("{error:?}");
    let causes = causes_of(&error);
    let (class, kind, variant, fields): Raised<'_> = match &error {
        ChefError::Registry(e) => wrapping("RegistryError", "registry", e),
        ChefError::Compress(e) => wrapping("CompressError", "compress", e),
        ChefError::Schema(e) => wrapping("SchemaError", "schema", e),
        ChefError::Provider { target, source } => (
            "ProviderError",
            "provider",
            variant_of(&format!("{source:?}")).to_owned(),
            vec![("target", Value::from(target.as_str()))],
        ),
        ChefError::Memory(e) => wrapping("ChefMemoryError", "memory", e),
        ChefError::Store(e) => wrapping("StoreError", "store", e),
        ChefError::Snapshot(e) => wrapping("SnapshotError", "snapshot", e),
        ChefError::Summarize(e) => wrapping("SummarizeError", "summarize", e),
        ChefError::DynamicState(e) => wrapping("DynamicStateError", "dynamic_state", e),
        ChefError::Inject { injector, .. } => (
            "InjectError",
            "inject",
            "Inject".to_owned(),
            vec![("injector", Value::from(injector.as_str()))],
        ),
        ChefError::DuplicateWireTool { name } => (
            "DuplicateWireToolError",
            "duplicate_wire_tool",
            "DuplicateWireTool".to_owned(),
            vec![("name", Value::from(name.as_str()))],
        ),
        ChefError::NotOwned(name) => (
            "NotOwnedError",
            "not_owned",
            "NotOwned".to_owned(),
            vec![("name", Value::from(name.as_str()))],
        ),
        ChefError::UnknownSkill { name, available } => (
            "UnknownSkillError",
            "unknown_skill",
            "UnknownSkill".to_owned(),
            vec![
                ("name", Value::from(name.as_str())),
                ("available", Value::from(available.clone())),
            ],
        ),
        _ => (
            "ChefError",
            "other",
            variant_of(&detail).to_owned(),
            Vec::new(),
        ),
    };
    let fields = with_source_fields(&error, fields);
    Python::attach(|py| {
        build(py, class, &message, kind, &variant, fields, detail, causes)
            .unwrap_or_else(|_| PyRuntimeError::new_err(message))
    })
}

/// The inner errors whose fields a caller acts on, added to `fields`.
fn with_source_fields<'a>(
    error: &ChefError,
    mut fields: Vec<(&'a str, Value)>,
) -> Vec<(&'a str, Value)> {
    use chef::prune::RegistryError;
    if let ChefError::Registry(e) = error {
        match e {
            RegistryError::DuplicateTool { name } => {
                fields.push(("name", Value::from(name.as_str())));
            }
            RegistryError::DuplicateGroup { kind, name } => {
                fields.push(("group_kind", Value::from(*kind)));
                fields.push(("name", Value::from(name.as_str())));
            }
            RegistryError::DuplicateMember { kind, group, tool }
            | RegistryError::NestedGroup { kind, group, tool } => {
                fields.push(("group_kind", Value::from(*kind)));
                fields.push(("group", Value::from(group.as_str())));
                fields.push(("tool", Value::from(tool.as_str())));
            }
            RegistryError::ReservedName { kind, group, name } => {
                fields.push(("group_kind", Value::from(*kind)));
                fields.push(("group", Value::from(group.as_str())));
                fields.push(("name", Value::from(name.as_str())));
            }
            RegistryError::ReservedToolName { name, owner } => {
                fields.push(("name", Value::from(name.as_str())));
                fields.push(("owner", Value::from(*owner)));
            }
            RegistryError::BlankToolName { index } => {
                fields.push(("index", Value::from(*index)));
            }
            RegistryError::ControlCharacter { name, parameter } => {
                fields.push(("name", Value::from(name.as_str())));
                fields.push(("parameter", Value::from(parameter.clone())));
            }
            RegistryError::NameClash {
                name,
                first,
                second,
            } => {
                fields.push(("name", Value::from(name.as_str())));
                fields.push(("first", Value::from(first.as_str())));
                fields.push(("second", Value::from(second.as_str())));
            }
            _ => {}
        }
    }
    if let ChefError::Compress(e) = error {
        use chef_compress::CompressError as C;
        match e {
            C::TooManyTools { count, limit } => {
                fields.push(("count", Value::from(*count)));
                fields.push(("limit", Value::from(*limit)));
            }
            C::NameTooLong {
                index,
                bytes,
                limit,
            } => {
                fields.push(("index", Value::from(*index)));
                fields.push(("bytes", Value::from(*bytes)));
                fields.push(("limit", Value::from(*limit)));
            }
            C::ControlCharacter {
                index,
                tool,
                parameter,
            } => {
                fields.push(("index", Value::from(*index)));
                fields.push(("tool", Value::from(tool.as_str())));
                fields.push(("parameter", Value::from(parameter.clone())));
            }
            C::MissingName { index } => {
                fields.push(("index", Value::from(*index)));
            }
            _ => {}
        }
    }
    if let ChefError::Memory(e) = error {
        use chef::memory::MemoryError as M;
        match e {
            M::TooLong {
                key,
                field,
                chars,
                limit,
            } => {
                fields.push(("key", Value::from(key.as_str())));
                fields.push(("field", Value::from(*field)));
                fields.push(("chars", Value::from(*chars)));
                fields.push(("limit", Value::from(*limit)));
            }
            M::NotAllowed { key, allowed } => {
                fields.push(("key", Value::from(key.as_str())));
                fields.push(("allowed", Value::from(allowed.clone())));
            }
            M::NotFound { key } | M::CorruptEntry { key, .. } => {
                fields.push(("key", Value::from(key.as_str())));
            }
            M::Rejected { key, reason } => {
                fields.push(("key", Value::from(key.as_str())));
                fields.push(("reason", Value::from(reason.as_str())));
            }
            M::InvalidKey(invalid) => {
                fields.push(("key", Value::from(invalid.key.as_str())));
                fields.push(("reason", Value::from(invalid.problem.to_string())));
            }
            _ => {}
        }
    }
    if let ChefError::Snapshot(e) = error {
        use chef::snapshot::SnapshotError as S;
        match e {
            S::Io { path, source } => {
                fields.push(("path", Value::from(path.display().to_string())));
                fields.push(("reason", Value::from(source.to_string())));
            }
            S::Corrupt { origin, source } => {
                fields.push(("origin", Value::from(origin.to_string())));
                fields.push(("reason", Value::from(source.to_string())));
            }
            S::NewerVersion {
                origin,
                found,
                supported,
            } => {
                fields.push(("origin", Value::from(origin.to_string())));
                fields.push(("found", Value::from(*found)));
                fields.push(("supported", Value::from(*supported)));
            }
            S::NotASnapshot { origin } => {
                fields.push(("origin", Value::from(origin.to_string())));
            }
            S::TooDeep { depth, limit } => {
                fields.push(("depth", Value::from(*depth)));
                fields.push(("limit", Value::from(*limit)));
            }
            _ => {}
        }
    }
    fields
}

/// A tool document chef could not load (`chef.ToolLoadError`), with its location.
pub(crate) fn load_error(error: &chef_ir::LoadError) -> PyErr {
    use chef_ir::LoadError as L;
    let fields: Vec<(&str, Value)> = match error {
        L::Json {
            line,
            column,
            message,
        } => vec![
            ("line", Value::from(*line)),
            ("column", Value::from(*column)),
            ("reason", Value::from(message.as_str())),
        ],
        L::NotAToolList { found } => vec![("found", Value::from(*found))],
        L::InvalidEntry { at, field, problem } => vec![
            ("index", Value::from(at.index)),
            ("declaration", Value::from(at.declaration)),
            ("field", Value::from(field.as_str())),
            ("reason", Value::from(problem.as_str())),
        ],
        L::NotAnObject { at, found } => vec![
            ("index", Value::from(at.index)),
            ("declaration", Value::from(at.declaration)),
            ("found", Value::from(*found)),
        ],
        L::DuplicateName {
            name,
            first,
            second,
        } => vec![
            ("name", Value::from(name.as_str())),
            ("first", Value::from(first.index)),
            ("second", Value::from(second.index)),
        ],
        _ => Vec::new(),
    };
    let detail = format!("{error:?}");
    raise(
        "ToolLoadError",
        error.to_string(),
        "tool_load",
        variant_of(&detail),
        fields,
        detail.clone(),
    )
}

/// A provider reply chef could not parse (`chef.ResponseError`).
pub(crate) fn response_error(target: chef_ir::Target, error: &dyn std::error::Error) -> PyErr {
    let detail = format!("{error:?}");
    raise(
        "ResponseError",
        format!("cannot parse the {target} reply: {error}"),
        "response",
        variant_of(&detail),
        vec![("target", Value::from(target.as_str()))],
        detail.clone(),
    )
}
