//! A call's arguments as JSON, whichever way they arrived.

use std::borrow::Cow;

use serde_json::Value;

/// `arguments` as a JSON value: itself, or — when a host or provider left argument text
/// unparsed (a JSON string) — that text parsed, `Null` when it is not JSON.
pub(crate) fn parsed(arguments: &Value) -> Cow<'_, Value> {
    match arguments {
        Value::String(text) => Cow::Owned(serde_json::from_str(text).unwrap_or(Value::Null)),
        other => Cow::Borrowed(other),
    }
}
