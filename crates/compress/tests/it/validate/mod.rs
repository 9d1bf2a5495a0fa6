//! Argument validation: spec §5 messages, nested paths, schemas from the wild, the real
//! corpora, hostile inputs.

mod corpus;
mod hostile;
mod messages;
mod nested;
mod several;
mod wild;

use chef_compress::validate::{ArgumentProblem, ArgumentValidator};
use serde_json::Value;

pub(crate) fn validator(tool: &str, schema: Value) -> ArgumentValidator {
    ArgumentValidator::new(tool, &schema).unwrap()
}

/// The model-facing message of a call that must fail.
pub(crate) fn message(v: &ArgumentValidator, args: Value) -> String {
    v.validate(&args)
        .expect_err("the call should be refused")
        .message()
}

/// Asserts the call `args` fails with exactly the model-facing message `want`.
#[track_caller]
pub(crate) fn assert_message(v: &ArgumentValidator, args: Value, want: &str) {
    assert_eq!(message(v, args), want);
}

/// The typed problem of a call that must fail.
pub(crate) fn problem(v: &ArgumentValidator, args: Value) -> ArgumentProblem {
    v.validate(&args)
        .expect_err("the call should be refused")
        .problem
}
