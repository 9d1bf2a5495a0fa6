//! What the search benchmarks share: a catalogue of `n` tools made by repeating the 149
//! real ones.

use std::path::Path;

use chef_ir::{ToolDefinition, ToolName};

/// `n` tools cycling through tests/fixtures/real-mcp-tools.json (none when it cannot be
/// read). The first `keep` keep their real names; every later one is renamed
/// `s{pass}_{name}`, so names stay unique.
pub(crate) fn catalogue(n: usize, keep: usize) -> Vec<ToolDefinition> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/real-mcp-tools.json");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let real = chef_ir::load_tools_from_str(&text)
        .map(|loaded| loaded.tools)
        .unwrap_or_default();
    real.iter()
        .cycle()
        .take(if real.is_empty() { 0 } else { n })
        .enumerate()
        .map(|(i, tool)| {
            let mut tool = tool.clone();
            if i >= keep.min(real.len()) {
                tool.name = ToolName::new(format!("s{}_{}", i / real.len(), tool.name));
            }
            tool
        })
        .collect()
}
