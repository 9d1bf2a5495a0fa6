//! Why a step on the session failed, held until the session's lock is released and then
//! turned into a Python exception (building one runs Python code).

use chef::ChefError;
use pyo3::prelude::*;

use crate::errors::{chef_error, closed, invalid_input};

/// Why a step run without the GIL failed; turned into a Python exception after.
pub(crate) enum Failure {
    Closed,
    Chef(ChefError),
    Runtime(String),
    NoMemory,
    /// A value from Python that chef cannot use (`chef.InvalidInputError`).
    Invalid(String),
}

impl From<ChefError> for Failure {
    fn from(e: ChefError) -> Self {
        Self::Chef(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Closed => closed(),
            Failure::Chef(e) => chef_error(e),
            Failure::Runtime(m) => pyo3::exceptions::PyRuntimeError::new_err(m),
            Failure::Invalid(m) => invalid_input(m),
            Failure::NoMemory => crate::errors::raise(
                "ChefMemoryError",
                "this session has no memory (create it with Chef(memory=True))".to_owned(),
                "memory",
                "NoMemory",
                Vec::new(),
                String::new(),
            ),
        }
    }
}
