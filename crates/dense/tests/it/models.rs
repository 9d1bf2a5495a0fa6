//! The real models, from the directories named by `CHEF_MINILM_DIR` (all-MiniLM-L6-v2:
//! `config.json`, `model.safetensors`, `tokenizer.json`) and `CHEF_STATIC_DIR` (a static
//! model made by `chef embed distill`). `.ci/run` fetches and prepares both.
//!
//! A test whose directory is not set prints a loud SKIPPED line and returns, unless
//! `CHEF_REQUIRE_MODELS=1`, when it fails instead: CI sets that once the fetch worked, so
//! a lost variable cannot turn into a silent pass.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, OnceLock},
};

use chef_compress::search::{
    CatalogIndex,
    dense::{self, Embedder, HybridIndex, HybridOptions, ModelKind},
    eval::{self, LabelledQuery, Metrics},
};
use chef_dense::{MiniLm, ModelFormat, StaticEmbedder};

use crate::fixtures::{fixture, real_tools};

fn model_dir(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(dir) if Path::new(&dir).is_dir() => Some(PathBuf::from(dir)),
        _ => {
            let message = format!(
                "SKIPPED: {var} is not set to a model directory, so this test did not run \
                 (see .ci/run for how to fetch the model)"
            );
            assert!(
                std::env::var("CHEF_REQUIRE_MODELS").as_deref() != Ok("1"),
                "{message}, and CHEF_REQUIRE_MODELS=1"
            );
            eprintln!("\n!!!!!!!! {message} !!!!!!!!\n");
            None
        }
    }
}

/// The model in the directory `var` names, loaded by `load` once per test run (`None`
/// when the directory is not set, see [`model_dir`]).
fn loaded_once<M>(
    cell: &'static OnceLock<Option<Arc<M>>>,
    var: &str,
    load: impl FnOnce(&Path) -> M,
) -> Option<Arc<M>> {
    cell.get_or_init(|| model_dir(var).map(|dir| Arc::new(load(&dir))))
        .clone()
}

fn minilm() -> Option<Arc<MiniLm>> {
    static MODEL: OnceLock<Option<Arc<MiniLm>>> = OnceLock::new();
    loaded_once(&MODEL, "CHEF_MINILM_DIR", |dir| MiniLm::load(dir).unwrap())
}

fn static_model() -> Option<Arc<StaticEmbedder>> {
    static MODEL: OnceLock<Option<Arc<StaticEmbedder>>> = OnceLock::new();
    loaded_once(&MODEL, "CHEF_STATIC_DIR", |dir| {
        StaticEmbedder::load(dir).unwrap()
    })
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

/// The `calibrate` and `heldout` halves of retrieval-149.
fn halves() -> (Vec<LabelledQuery>, Vec<LabelledQuery>) {
    let all: Vec<LabelledQuery> = std::fs::read_to_string(fixture("retrieval-149.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<LabelledQuery>(l).unwrap())
        .collect();
    let part = |split: &str| {
        all.iter()
            .filter(|q| q.split.as_deref() == Some(split))
            .cloned()
            .collect()
    };
    (part("calibrate"), part("heldout"))
}

fn sanity(model: &dyn Embedder, dims: usize) {
    let texts = [
        "book me a ride to the airport",
        "uber request: request a car to a destination",
        "current weather and forecast for a city",
    ];
    let v = model.embed(&texts).unwrap();
    assert!(v.iter().all(|x| x.len() == dims));
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.05);
    // Alone or in a batch with longer texts (padding), the same vector.
    let alone = model.embed(&texts[..1]).unwrap();
    assert!(
        cosine(&alone[0], &v[0]) > 0.99999,
        "{}",
        cosine(&alone[0], &v[0])
    );
    for (a, b) in alone[0].iter().zip(&v[0]) {
        assert!((a - b).abs() < 1e-4);
    }
    // Deterministic.
    assert_eq!(model.embed(&texts).unwrap(), v);
}

#[test]
fn minilm_embeds_paraphrases_closer_than_unrelated_text() {
    let Some(model) = minilm() else { return };
    assert_eq!(model.kind(), ModelKind::Contextual);
    assert!(model.model_id().starts_with("minilm-mean-256:"));
    sanity(model.as_ref(), 384);
    let dir = model_dir("CHEF_MINILM_DIR").unwrap();
    assert_eq!(chef_dense::detect(&dir).unwrap(), ModelFormat::Bert);
}

#[test]
fn static_model_embeds_paraphrases_closer_than_unrelated_text() {
    let Some(model) = static_model() else { return };
    assert_eq!(model.kind(), ModelKind::Static);
    sanity(model.as_ref(), 256);
    let dir = model_dir("CHEF_STATIC_DIR").unwrap();
    assert_eq!(chef_dense::detect(&dir).unwrap(), ModelFormat::Static);
    let loaded = chef_dense::load(&dir).unwrap();
    assert_eq!(loaded.model_id(), model.model_id());
}

/// Hybrid indexes over the 149 real tools with their kind's defaults, MiniLM first, for the
/// models that are set; built once (embedding the catalogue with MiniLM takes seconds).
fn hybrid_indexes() -> Vec<HybridIndex> {
    static INDEXES: OnceLock<Vec<HybridIndex>> = OnceLock::new();
    INDEXES
        .get_or_init(|| {
            let tools = real_tools();
            [
                minilm().map(|m| m as Arc<dyn Embedder>),
                static_model().map(|m| m as Arc<dyn Embedder>),
            ]
            .into_iter()
            .flatten()
            .map(|model| {
                let options = HybridOptions::for_kind(model.kind());
                HybridIndex::build(&tools, model, options).unwrap()
            })
            .collect()
        })
        .clone()
}

/// On the held-out half of retrieval-149, the hybrid ranks about as well as the lexical
/// index or better (the lexical index is strong on this set: its requests were written
/// against these descriptions), and a threshold calibrated on the other half refuses most
/// unanswerable requests, for both models.
#[test]
fn hybrid_ranks_heldout_requests_and_calibrated_abstention_works() {
    let tools = real_tools();
    let (calibration, queries) = halves();
    let lexical = eval::evaluate(
        &CatalogIndex::build(&tools),
        &queries,
        &chef_compress::search::Abstention::NEVER,
    );
    for index in hybrid_indexes() {
        let kind = index.embedder().kind();
        let hybrid = dense::evaluate(&index, &queries, -1.0).unwrap();
        eprintln!("{kind:?}: lexical {lexical:?}\nhybrid {hybrid:?}");
        assert!(hybrid.recall_at_5 >= lexical.recall_at_5 - 0.05, "{kind:?}");
        assert!(hybrid.mrr >= lexical.mrr - 0.05, "{kind:?}");
        let (threshold, _) =
            dense::calibrate_to_share(&index, &calibration, dense::DEFAULT_ABSTAIN_SHARE).unwrap();
        let calibrated = dense::evaluate(&index, &queries, threshold).unwrap();
        eprintln!("{kind:?}: min_cosine {threshold} -> {calibrated:?}");
        assert!(calibrated.true_abstention >= 0.5, "{kind:?} {calibrated:?}");
        assert!(
            calibrated.false_abstention <= 0.25,
            "{kind:?} {calibrated:?}"
        );
    }
}

/// The documented defaults (`ModelKind::default_dense_weight`, `default_min_cosine`) are
/// what calibration picks on the `calibrate` half of retrieval-149 for these two models:
/// the dense weight by `dense::calibrate_weight`, then `min_cosine` at the default weight,
/// with joint abstention (the default), by `dense::calibrate_to_share`: the lowest
/// threshold that abstains on 90% of the unanswerable requests. If a model or the ranking changes, this fails until the defaults (and
/// docs/PERFORMANCE.md, from chef-devtools' `dense_eval`) are updated.
///
/// The static model's best weights are a near tie (0.4 beats 0.2 and 0.3 by 0.001 of the
/// objective, from ranks below the first), and CI distils the model afresh in every run
/// (bit-identical run to run on the development machine, but another CPU may sum floats
/// in another order), so a weight other than the default is accepted when the default's
/// objective is within 0.002 of the best; a real change (one request gained or lost at
/// rank 1 moves the objective by about 0.01) still fails. The threshold must match exactly.
#[test]
fn the_default_weight_and_threshold_are_what_calibration_on_the_calibration_half_picks() {
    let (calibration, _) = halves();
    let objective = |m: &Metrics| (m.recall_at_1 + m.mrr) / 2.0;
    for index in hybrid_indexes() {
        let kind = index.embedder().kind();
        let default_weight = kind.default_dense_weight();
        let (weight, best) = dense::calibrate_weight(&index, &calibration).unwrap();
        eprintln!("{kind:?}: calibration picks weight {weight} ({best:?})");
        if weight != default_weight {
            let curve = dense::weight_curve(&index, &calibration).unwrap();
            let (_, at_default) = curve
                .iter()
                .find(|(w, _)| *w == default_weight)
                .expect("the default weight is one calibration tries");
            assert!(
                objective(at_default) >= objective(&best) - 0.002,
                "{kind:?}: calibration picks weight {weight}, the default is {default_weight}: \
                 {curve:?}"
            );
        }
        let (min_cosine, m) =
            dense::calibrate_to_share(&index, &calibration, dense::DEFAULT_ABSTAIN_SHARE).unwrap();
        eprintln!("{kind:?}: calibration picks min_cosine {min_cosine} ({m:?})");
        assert_eq!(min_cosine, kind.default_min_cosine(), "{kind:?}");
    }
}

/// Every text the bundled corpora give a ranker: the tool texts of the 149 real tools, the
/// synthetic 100 and NESTFUL's 173, and the requests of retrieval-149, NESTFUL and the
/// toolgz scenarios, plus a few written to reach the tokenizer's corners.
fn corpus_texts() -> Vec<String> {
    let tools = |name: &str| {
        chef_ir::load_tools_from_str(&crate::fixtures::fixture_text(name))
            .unwrap()
            .tools
    };
    let mut texts: Vec<String> = [
        "real-mcp-tools.json",
        "synthetic-100-tools.json",
        "nestful-tools.json",
    ]
    .iter()
    .flat_map(|name| tools(name))
    .map(|tool| dense::tool_text(&tool))
    .collect();
    for name in ["retrieval-149.jsonl", "nestful.jsonl"] {
        for line in crate::fixtures::fixture_text(name)
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            texts.extend(v["query"].as_str().map(str::to_owned));
        }
    }
    let scenarios: serde_json::Value =
        serde_json::from_str(&crate::fixtures::fixture_text("toolgz-scenarios.json")).unwrap();
    for s in scenarios["scenarios"].as_array().unwrap() {
        texts.extend(s["prompt"].as_str().map(str::to_owned));
    }
    texts.extend(
        [
            "Crème brûlée à la CAFÉ — naïve façade, Ångström, İstanbul, ß",
            "東京の天気 and 北京 weather; 한국어 text; emoji 🚀🔥 in a request",
            "tabs\tand\nnew lines\r\nand zero\u{0}width\u{200b}joiner\u{200d} and \u{fffd}",
            "snake_case_name, kebab-case-name, CamelCaseName, dotted.name/path?q=1&x=2",
            "supercalifragilisticexpialidocioussupercalifragilisticexpialidocioussupercalifragilisticexpialidocious!",
            "Ελληνικά, русский текст, עברית, العربية, हिन्दी में",
            "special tokens in text: a[SEP]b [CLS] [MASK]x [unk] [PAD][PAD]",
        ]
        .map(str::to_owned),
    );
    texts
}

/// The bundled model's own tokenizer (`chef_compress`, no `tokenizers` crate) gives the
/// ids the `tokenizers` crate gives with the distilled model's `tokenizer.json`, on every
/// text of the corpora.
#[test]
fn the_bundled_tokenizer_gives_the_ids_tokenizers_gives() {
    let Some(dir) = model_dir("CHEF_STATIC_DIR") else {
        return;
    };
    let reference = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    let bundled = dense::BundledStatic::shared().unwrap();
    let texts = corpus_texts();
    assert!(texts.len() > 1_500, "{}", texts.len());
    for text in &texts {
        let expected = reference.encode_fast(text.as_str(), false).unwrap();
        assert_eq!(bundled.token_ids(text), expected.get_ids(), "{text}");
    }
}

/// The bundled model is the distilled one quantised: the same vector up to the 8-bit
/// rounding and each dimension's sign, on every text of the corpora; and its file is the
/// one pinned (its id is the SHA-256 of what follows the id, as the format says).
///
/// Up to each dimension's sign: a principal component is defined only up to its sign, and
/// the bundled model was distilled before `distill` fixed one (the largest entry
/// positive), on a CPU whose kernels ended the eigen solver on other signs for about half
/// of the components. A dimension's sign is taken from its correlation over the texts;
/// flipping a dimension changes no cosine within a model, so no ranking.
#[test]
fn the_bundled_model_is_the_distilled_model_quantised() {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../compress/models/minilm-static-256.chefstm"),
    )
    .unwrap();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let bundled = dense::BundledStatic::shared().unwrap();
    assert_eq!(
        bundled.model_id(),
        format!("static-bundled:{}", hex(&Sha256::digest(&bytes[24..])[..8]))
    );
    let Some(model) = static_model() else { return };
    let texts = corpus_texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let (ours, theirs) = (bundled.embed(&refs).unwrap(), model.embed(&refs).unwrap());
    let dims = ours.first().map_or(0, Vec::len);
    let signs: Vec<f32> = (0..dims)
        .map(|d| {
            let dot: f32 = ours.iter().zip(&theirs).map(|(a, b)| a[d] * b[d]).sum();
            if dot < 0.0 { -1.0 } else { 1.0 }
        })
        .collect();
    let theirs: Vec<Vec<f32>> = theirs
        .iter()
        .map(|v| v.iter().zip(&signs).map(|(x, s)| x * s).collect())
        .collect();
    let worst = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| cosine(a, b))
        .filter(|c| c.is_finite())
        .fold(1.0_f32, f32::min);
    assert!(
        worst > 0.999,
        "worst cosine between the two models' vectors: {worst}"
    );
}
