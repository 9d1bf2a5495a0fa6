//! Link arguments of an extension module that does not link libpython: on macOS the
//! cdylib needs `-undefined dynamic_lookup` (maturin passes it; a plain `cargo build` or
//! `cargo test --workspace` gets it from here). Nothing on Linux and Windows.

fn main() {
    pyo3_build_config::add_extension_module_link_args();
}
