//! Writes a large tool catalogue for timing `chef search` (docs/PERFORMANCE.md, "`chef
//! search` over 100,000 tools"): the 149 real tools of `tests/fixtures/real-mcp-tools.json`
//! replicated, in order, under new names (`s{copy}_{name}`), every other field as it is.
//!
//! Run with:
//!
//! ```text
//! cargo run --release -p chef-devtools --bin big_catalogue -- [TOOLS] OUT.json
//! ```
//!
//! `TOOLS` defaults to 100,000 (a 118 MB file). The output is compact JSON (one array, no
//! indentation), byte for byte the same on every run.

use std::io::{BufWriter, Write};

use serde_json::Value;

fn main() -> Result<(), chef_devtools::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (tools, out): (usize, &str) = match args.as_slice() {
        [out] => (100_000, out),
        [tools, out] => (tools.parse()?, out),
        _ => return Err("usage: big_catalogue [TOOLS] OUT.json".into()),
    };
    let text = std::fs::read_to_string(chef_devtools::fixture("real-mcp-tools.json"))?;
    let Value::Array(base) = serde_json::from_str(&text)? else {
        return Err("real-mcp-tools.json is not a JSON array".into());
    };
    let mut file = BufWriter::new(std::fs::File::create(out)?);
    file.write_all(b"[")?;
    for (i, tool) in base.iter().cycle().take(tools).enumerate() {
        let mut tool = tool.clone();
        let Some(Value::String(name)) = tool.get_mut("name") else {
            return Err(format!("tool {} has no string name", i % base.len()).into());
        };
        *name = format!("s{}_{name}", i / base.len());
        if i > 0 {
            file.write_all(b",")?;
        }
        serde_json::to_writer(&mut file, &tool)?;
    }
    file.write_all(b"]\n")?;
    file.flush()?;
    Ok(())
}
