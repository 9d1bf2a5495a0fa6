//! Compile the shared tool-heavy conversation into a Gemini `generateContent` body, print
//! it with the notices, then parse a reply. Offline.
//!
//! Run with `cargo run -p chef-gemini --example gemini_request`.

use chef_gemini::{CompileOptions, compile, parse_response, to_vec};
use chef_ir::Request;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/conversation-tool-heavy.json"
    );
    let request: Request = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let compiled = compile(&request, &CompileOptions::default())?;
    println!("{}", String::from_utf8(to_vec(&compiled)?)?);
    for notice in &compiled.notices {
        eprintln!("notice: {notice}");
    }
    eprintln!("cache-stable contents: {:?}", compiled.cache_prefix);

    let reply = br#"{"candidates":[{"content":{"role":"model","parts":[
        {"text":"{\"locations\":[\"Oslo hub\"]}","thoughtSignature":"c2ln"}
    ]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":812,"totalTokenCount":830}}"#;
    let parsed = parse_response(reply, &compiled.names, &request.messages)?;
    eprintln!(
        "reply: {} ({:?})",
        parsed.message.text(),
        parsed.finish_reason
    );
    Ok(())
}
