//! The compiled body as bytes, and where its `tools` member goes.

use crate::{
    compile::Compiled,
    error::{Error, Result},
};

/// Serialises the body as compact JSON. Identical requests give identical bytes.
pub fn to_vec(compiled: &Compiled<'_>) -> Result<Vec<u8>> {
    to_vec_with_tools_at(compiled).map(|(bytes, _)| bytes)
}

/// Like [`to_vec`], also returning where the `tools` member starts: just after `{` and
/// the `systemInstruction` member with its comma. When the body has no tools, inserting
/// `"tools":[…],` there gives the body with them (for a caller that keeps the serialised
/// tools of a [`ToolPass::Skip`](crate::ToolPass::Skip) compile).
///
/// ```
/// use chef_ir::{Message, Request};
///
/// let request = Request::new(vec![Message::system("Be terse."), Message::user("Hi")]);
/// let compiled = chef_gemini::compile(&request, &Default::default())?;
/// let (body, at) = chef_gemini::to_vec_with_tools_at(&compiled)?;
/// assert_eq!(body, chef_gemini::to_vec(&compiled)?);
/// assert!(body[at..].starts_with(br#""contents":"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_vec_with_tools_at(compiled: &Compiled<'_>) -> Result<(Vec<u8>, usize)> {
    // The members in the order `wire::Request` declares (and derives) them; a test pins
    // the bytes to its `Serialize`.
    let body = &compiled.body;
    let mut bytes = Vec::with_capacity(64 * 1024);
    bytes.push(b'{');
    if let Some(system) = &body.system_instruction {
        bytes.extend_from_slice(b"\"systemInstruction\":");
        serde_json::to_writer(&mut bytes, system).map_err(Error::Serialize)?;
        bytes.push(b',');
    }
    let tools_at = bytes.len();
    if !body.tools.is_empty() {
        bytes.extend_from_slice(b"\"tools\":");
        serde_json::to_writer(&mut bytes, &body.tools).map_err(Error::Serialize)?;
        bytes.push(b',');
    }
    bytes.extend_from_slice(b"\"contents\":");
    serde_json::to_writer(&mut bytes, &body.contents).map_err(Error::Serialize)?;
    bytes.push(b'}');
    Ok((bytes, tools_at))
}
