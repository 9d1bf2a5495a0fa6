//! Writes the static model chef bundles (`crates/compress/models/minilm-static-256.chefstm`)
//! from a model `chef embed distill` made: its `f32` rows quantised to `i8` with one scale
//! per row, and its WordPiece vocabulary (the format is in
//! `chef_compress::search::dense::BundledStatic`'s module docs).
//!
//! `cargo run --release -p chef-devtools --bin bundle_static -- "$CHEF_STATIC_DIR" OUT`
//!
//! The output is the same bytes for the same model; its SHA-256 is printed.
#![allow(
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "a developer tool with broken input should stop loudly"
)]

use std::path::PathBuf;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Tokens per text (as chef-dense's static model): a text is cut to this many times the
/// vocabulary's median token length, in characters.
const MAX_TOKENS: usize = 512;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("usage: bundle_static MODEL_DIR OUT"));
    let out = PathBuf::from(args.next().expect("usage: bundle_static MODEL_DIR OUT"));

    let tokenizer: Value =
        serde_json::from_slice(&std::fs::read(dir.join("tokenizer.json")).expect("tokenizer"))
            .expect("tokenizer.json is JSON");
    let model = &tokenizer["model"];
    assert_eq!(model["type"], "WordPiece", "a WordPiece tokenizer");
    assert_eq!(model["continuing_subword_prefix"], "##");
    assert_eq!(model["max_input_chars_per_word"], 100);
    assert_eq!(tokenizer["normalizer"]["type"], "BertNormalizer");
    assert_eq!(tokenizer["normalizer"]["lowercase"], true);
    assert_eq!(tokenizer["pre_tokenizer"]["type"], "BertPreTokenizer");
    let vocab = model["vocab"].as_object().expect("a vocabulary");
    let mut tokens = vec![""; vocab.len()];
    for (token, id) in vocab {
        let id = usize::try_from(id.as_u64().expect("ids are numbers")).expect("id fits");
        assert!(!token.contains('\n'), "a token with a line break");
        tokens[id] = token;
    }
    let unknown = vocab[model["unk_token"].as_str().expect("unk_token")]
        .as_u64()
        .expect("unknown id");
    let mut lengths: Vec<usize> = tokens.iter().map(|t| t.len()).collect();
    lengths.sort_unstable();
    let max_chars = MAX_TOKENS * lengths[lengths.len() / 2];

    // safetensors: an 8-byte header length, a JSON header, the data.
    let weights = std::fs::read(dir.join("model.safetensors")).expect("model.safetensors");
    let header_len = usize::try_from(u64::from_le_bytes(
        weights[..8].try_into().expect("8 bytes"),
    ))
    .expect("fits");
    let header: Value = serde_json::from_slice(&weights[8..8 + header_len]).expect("header");
    let matrix = &header["embeddings"];
    assert_eq!(matrix["dtype"], "F32", "f32 embeddings");
    let shape = sizes(&matrix["shape"], "shape");
    let (rows, dims) = (shape[0], shape[1]);
    assert_eq!(rows, tokens.len(), "one row per token");
    let offsets = sizes(&matrix["data_offsets"], "offsets");
    let data = &weights[8 + header_len + offsets[0]..8 + header_len + offsets[1]];
    let values: Vec<f32> = data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(values.len(), rows * dims);

    let mut scales = Vec::with_capacity(rows * 4);
    let mut table = Vec::with_capacity(rows * dims);
    let mut worst = 0.0_f32;
    for row in values.chunks_exact(dims) {
        let peak = row.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
        let scale = peak / 127.0;
        scales.extend_from_slice(&scale.to_le_bytes());
        for &x in row {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "rounded and clamped to the i8 range first"
            )]
            let q = if scale > 0.0 {
                (x / scale).round().clamp(-127.0, 127.0) as i8
            } else {
                0
            };
            worst = worst.max((f32::from(q) * scale - x).abs());
            table.extend_from_slice(&q.to_le_bytes());
        }
    }

    let vocab_text = tokens.join("\n");
    let mut body = Vec::new();
    for n in [
        dims,
        rows,
        usize::try_from(unknown).expect("fits"),
        max_chars,
        vocab_text.len(),
    ] {
        body.extend_from_slice(&u32::try_from(n).expect("fits u32").to_le_bytes());
    }
    body.extend_from_slice(vocab_text.as_bytes());
    body.extend_from_slice(&scales);
    body.extend_from_slice(&table);
    let digest = Sha256::digest(&body);
    let id = hex(&digest[..8]);
    let mut file = b"CHEFSTM1".to_vec();
    file.extend_from_slice(id.as_bytes());
    file.extend_from_slice(&body);
    std::fs::write(&out, &file).expect("write");
    let sha = hex(&Sha256::digest(&file));
    println!(
        "{}: {} bytes, {rows} rows × {dims}, max chars {max_chars}, id {id}, worst error {worst:.2e}\nsha256 {sha}",
        out.display(),
        file.len()
    );
}

/// A JSON array of sizes (the safetensors header's `shape`, `data_offsets`), `what` naming
/// it when it is not one.
fn sizes(array: &Value, what: &str) -> Vec<usize> {
    array
        .as_array()
        .expect(what)
        .iter()
        .map(|n| usize::try_from(n.as_u64().expect("n")).expect("fits"))
        .collect()
}

/// `bytes` in lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
