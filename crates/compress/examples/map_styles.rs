//! Compare the level-3 map styles: characters, o200k tokens, ambiguous lines, largest group.
//!
//! Run with:
//!
//! ```text
//! cargo run -p chef-compress --features tokens --example map_styles
//! ```
//!
//! Prints one Markdown table per corpus (`tests/fixtures/real-mcp-tools.json`, 149 tools,
//! and `tests/fixtures/synthetic-100-tools.json`). "tools + preamble" is what `compress`
//! reports as `compressed_chars` / `compressed_tokens`: the two wire tools as JSON plus the
//! system preamble. Without `--features tokens` the token column reads `n/a`.

use std::{error::Error, path::PathBuf};

use chef_compress::{Level, MapStyle, Options, compress};
use chef_ir::ToolDefinition;

fn load(name: &str) -> Result<Vec<ToolDefinition>, Box<dyn Error>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    Ok(chef_ir::load_tools_from_str(&std::fs::read_to_string(path)?)?.tools)
}

fn main() -> Result<(), Box<dyn Error>> {
    for corpus in ["real-mcp-tools.json", "synthetic-100-tools.json"] {
        let tools = load(corpus)?;
        println!("{corpus} ({} tools)\n", tools.len());
        println!("| style | characters | o200k tokens | ambiguous lines | largest group |");
        println!("|---|---:|---:|---:|---:|");
        for style in MapStyle::ALL {
            let options = Options::new()
                .with_level(Level::Three)
                .with_map_style(style);
            #[cfg(feature = "tokens")]
            let options = options.with_token_counts(true);
            let stats = compress(&tools, &options)?.stats().clone();
            let tokens = stats
                .compressed_tokens
                .map_or_else(|| "n/a".to_owned(), |t| t.to_string());
            let missing = "n/a".to_owned();
            println!(
                "| `{style}` | {} | {tokens} | {} | {} |",
                stats.compressed_chars,
                stats
                    .ambiguous_map_lines
                    .map_or(missing.clone(), |n| n.to_string()),
                stats
                    .largest_lookalike_group
                    .map_or(missing, |n| n.to_string()),
            );
        }
        println!();
    }
    Ok(())
}
