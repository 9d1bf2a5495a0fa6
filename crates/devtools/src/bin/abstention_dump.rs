//! Dumps, for every labelled request of the retrieval sets, what an abstention rule could
//! read: the cosine with every tool of its catalogue (bundled static model), the lexical
//! index's best 30 candidates (never abstaining) and its own verdict, and the shipped
//! hybrid's verdict and best 10. One JSON line per (set, form, request), for analysis
//! outside Rust (issue 44: an abstention rule that carries over between catalogues).
//!
//! ```text
//! python3 scripts/retrieval-sets/pool.py          # target/pool/ (the pooled 421 tools)
//! cargo run --release -p chef-devtools --bin abstention_dump -- OUT.jsonl
//! # all-MiniLM-L6-v2 (the contextual model) instead of the bundled static one:
//! CHEF_MINILM_DIR=/path/to/all-MiniLM-L6-v2 \
//!   cargo run --release -p chef-devtools --features dense --bin abstention_dump -- OUT.jsonl
//! ```

use std::io::Write as _;
use std::sync::Arc;

use chef_compress::search::{
    Abstention,
    dense::{BundledStatic, Embedder, HybridIndex, HybridOptions, ModelKind},
    eval::LabelledQuery,
};
use chef_devtools::{Error, keywords, load_labelled, load_tools, read_jsonl};
use chef_ir::ToolDefinition;
use serde_json::json;

fn round(x: f32) -> f64 {
    (f64::from(x) * 10_000.0).round() / 10_000.0
}

fn dump(
    out: &mut impl std::io::Write,
    set: &str,
    tools: &[ToolDefinition],
    index: &HybridIndex,
    queries: &[LabelledQuery],
) -> Result<(), Error> {
    for q in queries {
        for (form, text) in [
            ("natural", q.query.clone()),
            ("keywords", keywords(&q.query)),
        ] {
            let cosines: Vec<f64> = index.cosines(&text)?.into_iter().map(round).collect();
            let lexical = index.lexical().search_with(&text, 30, &Abstention::NEVER);
            let hybrid = index.search(&text, 10)?;
            let expected: Vec<usize> = q
                .expected
                .iter()
                .filter_map(|e| tools.iter().position(|t| t.name == e.as_str()))
                .collect();
            let line = json!({
                "set": set,
                "split": q.split,
                "form": form,
                "query": text,
                "expected": expected,
                "n": tools.len(),
                "cos": cosines,
                "lex": lexical.hits.iter().map(|h| json!([h.index, round(h.score), round(h.coverage)])).collect::<Vec<_>>(),
                "lex_abstains": index.lexical_abstains(&text),
                "hybrid_abstained": hybrid.abstained,
                "hybrid": hybrid.hits.iter().map(|h| json!([h.index, round(h.score)])).collect::<Vec<_>>(),
            });
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// The bundled static model, or all-MiniLM-L6-v2 where `CHEF_MINILM_DIR` names it (with
/// the `dense` feature).
fn model() -> Result<(Arc<dyn Embedder>, ModelKind), Error> {
    #[cfg(feature = "dense")]
    if let Some(dir) = std::env::var_os("CHEF_MINILM_DIR") {
        let m: Arc<dyn Embedder> = Arc::new(chef_dense::MiniLm::load(std::path::Path::new(&dir))?);
        return Ok((m, ModelKind::Contextual));
    }
    Ok((BundledStatic::shared()?, ModelKind::Static))
}

fn main() -> Result<(), Error> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: abstention_dump OUT.jsonl")?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    let (model, kind) = model()?;
    let build = |tools: &[ToolDefinition]| {
        HybridIndex::build(tools, model.clone(), HybridOptions::for_kind(kind))
    };
    let real = load_tools("real-mcp-tools.json")?;
    let nestful_tools = load_tools("nestful-tools.json")?;
    let pooled: Vec<ToolDefinition> = {
        let text = std::fs::read_to_string("target/pool/pooled-tools.json")?;
        chef_ir::load_tools_from_str(&text)?.tools
    };
    dump(
        &mut out,
        "r149",
        &real,
        &build(&real)?,
        &load_labelled("retrieval-149.jsonl")?,
    )?;
    let pool_index = build(&pooled)?;
    let mut pool_queries = read_jsonl("target/pool/heldout.jsonl")?;
    for q in &mut pool_queries {
        q.split = Some("heldout".into());
    }
    let mut irrelevant = read_jsonl("target/pool/irrelevant-calibrate.jsonl")?;
    for q in &mut irrelevant {
        q.split = Some("calibrate".into());
    }
    pool_queries.extend(irrelevant);
    dump(&mut out, "pool421", &pooled, &pool_index, &pool_queries)?;
    dump(
        &mut out,
        "nestful",
        &nestful_tools,
        &build(&nestful_tools)?,
        &load_labelled("nestful.jsonl")?,
    )?;
    out.flush()?;
    Ok(())
}
