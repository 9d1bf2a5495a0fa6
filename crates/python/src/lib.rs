//! `chef._chef`: the Python extension module of the `chef` wheel (PyO3, abi3).
//!
//! The Python package (`python/chef/`) re-exports these classes and defines the exception
//! hierarchy; `python/chef/__init__.pyi` types them. Build with maturin
//! (`maturin develop` or `maturin build` in this directory); docs/PYTHON.md has the rest.

mod convert;
mod errors;
mod failure;
mod json_out;
mod layers;
mod offload;
mod overflow;
mod session;
mod types;

use pyo3::prelude::*;

/// chef in Python: compile a session into request bytes, route a reply's calls through the
/// gate, snapshot to disk.
#[pymodule]
fn _chef(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<session::Chef>()?;
    m.add_class::<types::ToolCall>()?;
    m.add_class::<types::Payload>()?;
    m.add_class::<types::Call>()?;
    m.add_class::<types::Owned>()?;
    m.add_class::<types::ToolkitLoaded>()?;
    m.add_class::<types::Lookup>()?;
    m.add_class::<types::Blocked>()?;
    m.add_class::<types::Rejected>()?;
    m.add_class::<types::OwnedReply>()?;
    m.add(
        "TARGETS",
        chef_ir::Target::ALL.map(chef_ir::Target::as_str).to_vec(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
