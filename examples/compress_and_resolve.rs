//! Compress a real tool catalogue and resolve a model's calls back to real tools.
//!
//! Run with `cargo run -p chef-examples --example compress_and_resolve`.

mod common;

use chef_compress::{Level, Options, Resolution, compress};
use serde_json::json;

use common::Error;

fn run() -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/real-mcp-tools.json"
    ))?;
    let tools = chef_ir::load_tools_from_str(&text)?.tools;
    let mut out = Vec::new();
    let c = compress(&tools, &Options::new().with_level(Level::Three))?;
    out.push(format!(
        "{} tools -> {} wire tools, {} characters of preamble",
        tools.len(),
        c.tools().len(),
        c.system().chars().count()
    ));
    let code = c.code_for("active_locations")?.to_owned();
    for (name, args) in [
        ("t", json!({"f": code, "a": {}})),
        ("q", json!({"s": "revenue"})),
        ("t", json!({"f": code, "a": {"schema_onyl": true}})),
    ] {
        let line = match c.resolve(name, &args) {
            Resolution::Call { name, args } => format!("call {name}({args})"),
            Resolution::Meta { result, .. } => {
                format!("lookup: {}", result.lines().next().unwrap_or(""))
            }
            Resolution::Error(e) => format!("error for the model: {}", e.message()),
        };
        out.push(line);
    }
    Ok(out)
}

fn main() -> Result<(), Error> {
    common::print_log(&run()?);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn resolves_a_code_a_lookup_and_explains_a_typo() {
        let out = super::run().unwrap();
        assert!(out[0].starts_with("149 tools -> 2 wire tools"), "{out:?}");
        assert_eq!(out[1], "call active_locations({})");
        assert!(out[2].starts_with("lookup: "), "{out:?}");
        assert!(out[3].contains("schema_only"), "{out:?}");
    }
}
