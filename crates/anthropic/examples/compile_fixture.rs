//! Compile the shared tool-heavy conversation for Anthropic and print the request body and
//! the notices, offline.
//!
//! Run with `cargo run -p chef-anthropic --example compile_fixture`.

use chef_anthropic::{CompileOptions, compile};
use chef_ir::Request;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/conversation-tool-heavy.json"
    );
    let request: Request = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let options = CompileOptions::default()
        .with_model("claude-sonnet-4-5")
        .with_max_tokens(1024);
    let compiled = compile(&request, &options)?;
    println!("{}", String::from_utf8(compiled.to_vec()?)?);
    for notice in &compiled.notices {
        eprintln!("notice: {notice}");
    }
    if let Some(breakpoint) = compiled.last_breakpoint() {
        eprintln!("cache-stable prefix ends at {breakpoint:?}");
    }
    Ok(())
}
