//! The hybrid index and its calibration (its use by `q(s=…)`: `tests/it/q_sentences.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::{index::MAX_TOOL_TEXT, *};
use crate::search::{Abstention, SearchResults, eval::LabelledQuery};

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "uber_request",
            json!({"type": "object", "properties": {"destination": {"type": "string"}}}),
        )
        .with_description("Request a car to a destination."),
        ToolDefinition::new("weather_now", json!({"type": "object"}))
            .with_description("Current weather for a city."),
        ToolDefinition::new("calendar_create_event", json!({"type": "object"}))
            .with_description("Create a calendar event."),
    ]
}

/// Three axes: transport, weather, calendar.
fn table() -> WordTableEmbedder {
    WordTableEmbedder::new("toy-v1", ModelKind::Static, 3)
        .with_word("car", [1.0, 0.0, 0.0])
        .with_word("ride", [0.9, 0.0, 0.1])
        .with_word("destination", [0.8, 0.0, 0.2])
        .with_word("weather", [0.0, 1.0, 0.0])
        .with_word("rain", [0.1, 0.9, 0.0])
        .with_word("calendar", [0.0, 0.0, 1.0])
        .with_word("event", [0.0, 0.1, 0.9])
        .with_word("meeting", [0.0, 0.0, 1.0])
}

fn index(options: HybridOptions) -> HybridIndex {
    HybridIndex::build(&tools(), Arc::new(table()), options).unwrap()
}

fn top(found: &SearchResults) -> Vec<&str> {
    found.hits.iter().map(|h| h.tool.as_str()).collect()
}

#[test]
fn the_dense_score_finds_a_tool_that_shares_no_word_with_the_request() {
    let options = HybridOptions::for_kind(ModelKind::Static).with_needs_shared_word(false);
    let hybrid = index(options);
    assert!(hybrid.lexical().search("will it rain", 3).abstained);
    let found = hybrid.search("will it rain", 3).unwrap();
    assert_eq!(top(&found)[0], "weather_now");
    assert!(found.hits[0].matched_terms.is_empty());
    assert!((found.confidence - 0.9 / (0.82_f32).sqrt()).abs() < 1e-4);
    // The defaults answer it (the rule is opt-in), whatever the kind.
    assert!(!HybridOptions::for_kind(ModelKind::Static).needs_shared_word);
    assert!(!HybridOptions::for_kind(ModelKind::Contextual).needs_shared_word);
}

/// Asked to (`needs_shared_word`), the hybrid never answers on the cosine alone, however
/// high, a request none of whose words a tool uses (the ranking is the same when it
/// answers). Without joint abstention the cosine alone decides, as documented.
#[test]
fn with_needs_shared_word_the_cosine_alone_never_answers_a_request_that_shares_no_word() {
    let options = HybridOptions::for_kind(ModelKind::Static).with_needs_shared_word(true);
    assert!(options.joint);
    let hybrid = index(options);
    assert!(hybrid.shares_no_word("will it rain"));
    let found = hybrid.search("will it rain", 3).unwrap();
    assert!(found.abstained && found.hits.is_empty(), "{found:?}");
    // The cosine was there: 0.99, far above the threshold.
    assert!(
        found.confidence > options.min_cosine,
        "{}",
        found.confidence
    );
    // One word the catalogue uses is enough for the cosine to answer.
    assert!(!hybrid.shares_no_word("will it rain on the weather"));
    let with_word = hybrid.search("will it rain, weather", 3).unwrap();
    assert_eq!(top(&with_word)[0], "weather_now");
    assert!(
        !index(options.with_joint(false))
            .search("will it rain", 3)
            .unwrap()
            .abstained
    );
    // Never abstaining (-1) ranks it.
    let never = hybrid.search_with("will it rain", 3, -1.0).unwrap();
    assert_eq!(top(&never)[0], "weather_now");
    // Calibration counts such requests as abstained whatever the threshold.
    let (threshold, share) = calibrate_on_irrelevant(&hybrid, &["will it rain"], 1.0).unwrap();
    assert_eq!((threshold, share), (-1.0, 1.0));
    let (_, share) = calibrate_on_irrelevant(
        &index(options.with_needs_shared_word(false)),
        &["will it rain"],
        1.0,
    )
    .unwrap();
    assert_eq!(share, 1.0);
}

#[test]
fn the_mix_is_min_max_normalised_and_weighted() {
    // "event weather": cosines favour calendar (event) and weather equally-ish;
    // BM25 sees both words. Check the exact mix for one tool.
    let hybrid = index(HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0));
    let query = "weather event";
    let cos = hybrid.cosines(query).unwrap();
    let lexical = hybrid.lexical().search_with(query, 3, &Abstention::NEVER);
    let bm: Vec<f32> = (0..3)
        .map(|i| {
            lexical
                .hits
                .iter()
                .find(|h| h.index == i)
                .map_or(0.0, |h| h.score)
        })
        .collect();
    let norm = |v: &[f32], i: usize| {
        let lo = v.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        (v[i] - lo) / (hi - lo)
    };
    let found = hybrid.search(query, 3).unwrap();
    let w = ModelKind::Static.default_dense_weight();
    for hit in &found.hits {
        let expected = w * norm(&cos, hit.index) + (1.0 - w) * norm(&bm, hit.index);
        assert!((hit.score - expected).abs() < 1e-6, "{hit:?}");
    }
    // Weight 0 is BM25F order, weight 1 is cosine order.
    let lexical_only = index(
        HybridOptions::for_kind(ModelKind::Static)
            .with_dense_weight(0.0)
            .with_min_cosine(-1.0),
    );
    let lex_top = top(&lexical.clone()).first().map(|s| s.to_string());
    assert_eq!(
        top(&lexical_only.search(query, 3).unwrap())
            .first()
            .map(|s| s.to_string()),
        lex_top
    );
    let dense_only = index(
        HybridOptions::for_kind(ModelKind::Static)
            .with_dense_weight(1.0)
            .with_min_cosine(-1.0),
    );
    let best_cos = (0..3).max_by(|&a, &b| cos[a].total_cmp(&cos[b])).unwrap();
    assert_eq!(dense_only.search(query, 1).unwrap().hits[0].index, best_cos);
}

#[test]
fn the_dense_weight_changes_the_winner() {
    // "car calendar": BM25 matches calendar_create_event on two fields (name and
    // description) and uber only through nothing ("car" is in its description).
    let q = "car destination calendar";
    let heavy_dense = index(HybridOptions::for_kind(ModelKind::Static).with_dense_weight(1.0));
    let light_dense = index(HybridOptions::for_kind(ModelKind::Static).with_dense_weight(0.0));
    let dense_top = heavy_dense.search(q, 1).unwrap().hits[0].tool.clone();
    let lexical_top = light_dense.search(q, 1).unwrap().hits[0].tool.clone();
    assert_eq!(dense_top.as_str(), "uber_request");
    assert_eq!(
        lexical_top.as_str(),
        light_dense
            .lexical()
            .search_with(q, 1, &Abstention::NEVER)
            .hits[0]
            .tool
            .as_str()
    );
}

#[test]
fn abstains_on_the_highest_cosine_with_a_tunable_threshold() {
    // The cosine alone (not joint): BM25F's own rule answers "car ride" here.
    let hybrid = index(
        HybridOptions::for_kind(ModelKind::Static)
            .with_min_cosine(0.5)
            .with_joint(false),
    );
    // Nothing in the table: a zero vector, cosine 0 everywhere.
    let found = hybrid.search("bake a chocolate cake", 5).unwrap();
    assert!(found.abstained && found.hits.is_empty());
    assert_eq!(found.confidence, 0.0);
    // Never abstaining still ranks (by BM25F and cosine ties, by name).
    let all = hybrid
        .search_with("bake a chocolate cake", 5, -1.0)
        .unwrap();
    assert_eq!(all.hits.len(), 3);
    assert_eq!(
        top(&all),
        ["calendar_create_event", "uber_request", "weather_now"]
    );
    // A clear request passes; raise the threshold above its cosine and it abstains.
    let clear = hybrid.search("car ride", 5).unwrap();
    assert!(!clear.abstained);
    assert!(
        hybrid
            .search_with("car ride", 5, clear.confidence + 0.001)
            .unwrap()
            .abstained
    );
    assert!(
        !hybrid
            .search_with("car ride", 5, clear.confidence)
            .unwrap()
            .abstained
    );
    assert!(hybrid.search("   ", 5).unwrap().abstained);
    assert!(hybrid.search("car", 0).unwrap().hits.is_empty());
}

/// Never abstaining (-1) ranks every request, with or without the shared-word rule; a
/// blank request still abstains in the measured figures, as `search` abstains on it.
#[test]
fn never_abstaining_still_abstains_on_a_blank_request_only() {
    for needs in [false, true] {
        let hybrid =
            index(HybridOptions::for_kind(ModelKind::Static).with_needs_shared_word(needs));
        let blank = [LabelledQuery::new("   ", ["weather_now"])];
        assert_eq!(
            evaluate(&hybrid, &blank, -1.0).unwrap().false_abstention,
            1.0
        );
        let no_word = [LabelledQuery::new("will it rain", ["weather_now"])];
        assert_eq!(
            evaluate(&hybrid, &no_word, -1.0).unwrap().false_abstention,
            0.0
        );
    }
}

#[test]
fn calibration_abstains_on_the_asked_share_of_irrelevant_requests() {
    let cosines = [0.1, 0.35, 0.2, 0.3];
    assert_eq!(calibrate_min_cosine(&cosines, 1.0), 0.351);
    assert_eq!(calibrate_min_cosine(&cosines, 0.75), 0.301);
    assert_eq!(calibrate_min_cosine(&cosines, 0.5), 0.201);
    assert_eq!(calibrate_min_cosine(&cosines, 0.0), -1.0);
    assert_eq!(calibrate_min_cosine(&[], 0.9), -1.0);
    let t = calibrate_min_cosine(&cosines, 0.75);
    assert_eq!(cosines.iter().filter(|&&c| c < t).count(), 3);
}

#[test]
fn labelled_calibration_separates_relevant_from_irrelevant() {
    // The toy table's words are not the tools' words: the cosine alone must answer.
    let hybrid = index(HybridOptions::for_kind(ModelKind::Static).with_needs_shared_word(false));
    let queries = [
        LabelledQuery::new("need a ride", ["uber_request"]),
        LabelledQuery::new("is rain coming", ["weather_now"]),
        LabelledQuery::new("put a meeting in", ["calendar_create_event"]),
        LabelledQuery::new("bake a chocolate cake", Vec::<String>::new()),
    ];
    let (threshold, m) = calibrate(&hybrid, &queries).unwrap();
    assert_eq!((m.relevant, m.irrelevant), (3, 1));
    assert_eq!(m.recall_at_1, 1.0);
    assert_eq!(m.true_abstention, 1.0);
    assert!(threshold > 0.0 && threshold <= 0.95, "{threshold}");
    assert_eq!(evaluate(&hybrid, &queries, threshold).unwrap(), m);
    let never = evaluate(&hybrid, &queries, -1.0).unwrap();
    assert_eq!(never.true_abstention, 0.0);
}

#[test]
fn weight_calibration_picks_the_lowest_weight_that_ranks_best() {
    let hybrid = index(
        HybridOptions::for_kind(ModelKind::Static)
            .with_min_cosine(-1.0)
            .with_needs_shared_word(false),
    );
    let queries = [
        // No word in common with any tool: only the cosine ranks it (at weight 0
        // every tool scores 0 and the name order puts weather_now last).
        LabelledQuery::new("will it rain", ["weather_now"]),
        // No word in the table: a zero vector, so only BM25F ranks it (at weight 1
        // every tool scores 0 again).
        LabelledQuery::new("current city", ["weather_now"]),
    ];
    let curve = weight_curve(&hybrid, &queries).unwrap();
    assert_eq!(curve.len(), CALIBRATION_WEIGHTS.len());
    let r1: Vec<f64> = curve.iter().map(|(_, m)| m.recall_at_1).collect();
    assert_eq!(r1[0], 0.5);
    assert_eq!(r1[10], 0.5);
    assert!(r1[1..10].iter().all(|&r| r == 1.0), "{r1:?}");
    assert_eq!(curve[0].1.mrr, (1.0 + 1.0 / 3.0) / 2.0);
    let (w, m) = calibrate_weight(&hybrid, &queries).unwrap();
    assert_eq!(w, 0.1);
    assert_eq!((m.recall_at_1, m.mrr), (1.0, 1.0));
    // The weight is the index's own from then on, with nothing embedded again.
    let tuned = hybrid.with_dense_weight(w).with_min_cosine(0.5);
    assert_eq!(tuned.options().dense_weight, 0.1);
    assert_eq!(evaluate(&tuned, &queries, -1.0).unwrap(), m);
    // Its cosine is 0, but BM25F's own rule answers it: joint abstention (the default)
    // answers, the cosine alone would not.
    assert!(!tuned.search("current city", 1).unwrap().abstained);
    let mut cosine_only = tuned.clone();
    cosine_only.options.joint = false;
    assert!(cosine_only.search("current city", 1).unwrap().abstained);
    assert_eq!(
        tuned.search("will it rain", 1).unwrap().hits[0]
            .tool
            .as_str(),
        "weather_now"
    );
}

#[derive(Debug)]
struct Broken {
    calls: AtomicUsize,
    reply: fn(usize) -> Vec<Vec<f32>>,
}

impl Embedder for Broken {
    fn model_id(&self) -> &str {
        "broken"
    }
    fn kind(&self) -> ModelKind {
        ModelKind::Contextual
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if texts.iter().any(|t| t.contains("fail")) {
            return Err(EmbedError::new("refused"));
        }
        Ok((self.reply)(texts.len()))
    }
}

#[test]
fn a_misbehaving_model_is_a_typed_error() {
    let build = |reply: fn(usize) -> Vec<Vec<f32>>| {
        HybridIndex::build(
            &tools(),
            Arc::new(Broken {
                calls: AtomicUsize::new(0),
                reply,
            }),
            HybridOptions::for_kind(ModelKind::Contextual),
        )
    };
    assert!(matches!(
        build(|n| vec![vec![1.0]; n - 1]),
        Err(DenseError::WrongCount {
            expected: 3,
            got: 2,
            ..
        })
    ));
    assert!(matches!(
        build(|_| vec![vec![1.0], vec![1.0, 2.0], vec![1.0]]),
        Err(DenseError::WrongDimension {
            expected: 1,
            got: 2,
            ..
        })
    ));
    assert!(matches!(
        build(|n| vec![vec![f32::NAN]; n]),
        Err(DenseError::NonFinite { .. })
    ));
    assert!(matches!(
        build(|n| vec![Vec::new(); n]),
        Err(DenseError::WrongDimension { .. })
    ));
    let ok = build(|n| vec![vec![1.0, 0.0]; n]).unwrap();
    let err = ok.search("please fail", 3).unwrap_err();
    assert_eq!(err.to_string(), "embedding model broken: refused");
    assert_eq!(ok.dimensions(), 2);
}

/// A builder fed one tool at a time makes the index `HybridIndex::build` makes, bit for
/// bit: with a model that embeds each text alone, a piece at a time (pieces of 1, 7 and
/// 260 texts, and the default; on the embedding thread and on the calling thread), and
/// with one that does not, in one call at the end.
#[test]
fn an_index_pushed_tool_by_tool_is_the_built_index_bit_for_bit() {
    let real = {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real-mcp-tools.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        chef_ir::load_tools_from_str(&text).unwrap().tools
    };
    let bits = |index: &HybridIndex| -> Vec<u32> {
        index
            .vectors
            .iter()
            .flatten()
            .map(|x| x.to_bits())
            .collect()
    };
    let requests = [
        "add three new rows to the bottom of the tracker spreadsheet",
        "will it rain",
        "bake a chocolate cake",
    ];
    // 600 tools: pieces of 260 are past the size from which the bundled model makes its
    // rows `f32`.
    let replicated: Vec<ToolDefinition> = real
        .iter()
        .cycle()
        .take(600)
        .enumerate()
        .map(|(i, tool)| {
            let mut tool = tool.clone();
            tool.name = chef_ir::ToolName::new(format!("s{}_{}", i / real.len(), tool.name));
            tool
        })
        .collect();
    for (model, catalogue) in [
        (
            BundledStatic::shared().unwrap() as Arc<dyn Embedder>,
            real.clone(),
        ),
        (
            BundledStatic::shared().unwrap() as Arc<dyn Embedder>,
            replicated,
        ),
        (Arc::new(table()) as Arc<dyn Embedder>, tools()),
    ] {
        let options = HybridOptions::for_kind(model.kind());
        let expected = HybridIndex::build(&catalogue, Arc::clone(&model), options).unwrap();
        // Pieces embedded on a thread of their own, and on the calling thread.
        let one_thread = HybridOptions {
            lexical: IndexOptions {
                threads: 1,
                ..options.lexical
            },
            ..options
        };
        for (piece, options) in [
            (None, options),
            (Some(1), options),
            (Some(7), options),
            (Some(7), one_thread),
            (Some(260), options),
        ] {
            let mut builder = HybridBuilder::new(Arc::clone(&model), options);
            if let Some(piece) = piece {
                builder = builder.with_piece(piece);
            }
            for tool in &catalogue {
                builder.push(tool.clone());
            }
            let built = builder.finish().unwrap();
            assert_eq!(bits(&built), bits(&expected), "{piece:?}");
            assert_eq!(built.dimensions(), expected.dimensions());
            assert_eq!(built.len(), expected.len());
            for request in requests {
                assert_eq!(
                    built.search(request, 10).unwrap(),
                    expected.search(request, 10).unwrap(),
                    "{piece:?} {request}"
                );
            }
        }
    }
    let empty = HybridBuilder::new(
        Arc::new(table()),
        HybridOptions::for_kind(ModelKind::Static),
    )
    .finish()
    .unwrap();
    assert!(empty.is_empty() && empty.dimensions() == 0);
}

/// What [`Broken`] answers for a number of texts.
type Reply = fn(usize) -> Vec<Vec<f32>>;

/// A builder reports what `HybridIndex::build` reports of a model that fails.
#[test]
fn a_builder_reports_a_misbehaving_model_as_the_build_does() {
    let broken = |reply: Reply| {
        Arc::new(Broken {
            calls: AtomicUsize::new(0),
            reply,
        })
    };
    let options = HybridOptions::for_kind(ModelKind::Contextual);
    let replies: [Reply; 4] = [
        |n| vec![vec![1.0]; n - 1],
        |_| vec![vec![1.0], vec![1.0, 2.0], vec![1.0]],
        |n| vec![vec![f32::NAN]; n],
        |n| vec![Vec::new(); n],
    ];
    for reply in replies {
        let expected = HybridIndex::build(&tools(), broken(reply), options).unwrap_err();
        let mut builder = HybridBuilder::new(broken(reply), options);
        for tool in tools() {
            builder.push(tool);
        }
        let err = builder.finish().unwrap_err();
        assert_eq!(err.to_string(), expected.to_string());
    }
    let mut failing = tools();
    failing[1].description = "fail".to_owned();
    let expected = HybridIndex::build(&failing, broken(|n| vec![vec![1.0]; n]), options);
    let mut builder = HybridBuilder::new(broken(|n| vec![vec![1.0]; n]), options);
    for tool in failing.clone() {
        builder.push(tool);
    }
    assert_eq!(
        builder.finish().unwrap_err().to_string(),
        expected.unwrap_err().to_string()
    );

    /// The same model, said to embed each text alone: embedded a piece at a time, on the
    /// embedding thread.
    #[derive(Debug)]
    struct Alone(Broken);
    impl Embedder for Alone {
        fn model_id(&self) -> &str {
            self.0.model_id()
        }
        fn kind(&self) -> ModelKind {
            self.0.kind()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0.embed(texts)
        }
        fn embeds_texts_alone(&self) -> bool {
            true
        }
    }
    let alone = |reply: Reply| {
        Arc::new(Alone(Broken {
            calls: AtomicUsize::new(0),
            reply,
        }))
    };
    let mut builder = HybridBuilder::new(alone(|n| vec![vec![1.0]; n]), options).with_piece(1);
    for tool in failing {
        builder.push(tool);
    }
    assert_eq!(
        builder.finish().unwrap_err().to_string(),
        "embedding model broken: refused"
    );
    let mut builder = HybridBuilder::new(alone(|n| vec![vec![f32::NAN]; n]), options).with_piece(2);
    for tool in tools() {
        builder.push(tool);
    }
    assert!(matches!(
        builder.finish(),
        Err(DenseError::NonFinite { .. })
    ));
}

#[test]
fn tool_text_splits_the_name_and_lists_parameters() {
    let tool = ToolDefinition::new(
        "gdrive.sheetsAppend_rows",
        json!({"type": "object", "properties": {"range": {}, "values": {}}}),
    )
    .with_description(" Append rows. ");
    assert_eq!(
        tool_text(&tool),
        "gdrive sheets append rows: Append rows.. Parameters: range, values"
    );
    let bare = ToolDefinition::new("ping", json!({}));
    assert_eq!(tool_text(&bare), "ping");
    let long = ToolDefinition::new("x", json!({})).with_description("é".repeat(3_000));
    assert!(tool_text(&long).len() <= MAX_TOOL_TEXT);
}

#[test]
fn ranking_does_not_depend_on_catalogue_order() {
    let mut reversed = tools();
    reversed.reverse();
    let a = index(HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0));
    let b = HybridIndex::build(
        &reversed,
        Arc::new(table()),
        HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0),
    )
    .unwrap();
    for q in [
        "car",
        "weather event",
        "nothing known",
        "calendar ride rain",
    ] {
        assert_eq!(
            top(&a.search(q, 3).unwrap()),
            top(&b.search(q, 3).unwrap()),
            "{q}"
        );
    }
}

/// The hybrid over `catalogue` (static test model, never abstaining) without the second
/// stage and with `rerank`.
fn without_and_with(
    catalogue: &[ToolDefinition],
    rerank: crate::search::Rerank,
) -> (HybridIndex, HybridIndex) {
    let off = HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0);
    let on = HybridOptions {
        lexical: crate::search::IndexOptions {
            rerank,
            ..crate::search::IndexOptions::default()
        },
        ..off
    };
    let build = |o| HybridIndex::build(catalogue, Arc::new(table()), o).unwrap();
    (build(off), build(on))
}

/// The score of `name` among `found`'s hits.
fn score(found: &SearchResults, name: &str) -> f32 {
    found
        .hits
        .iter()
        .find(|h| h.tool.as_str() == name)
        .unwrap()
        .score
}

/// The hybrid applies the opt-in second stage (`search::Rerank`) to its mixed scores: a
/// tool is scaled by `1 − name_weight × unasked`, the share of its name words the request
/// does not contain.
#[test]
fn the_second_stage_scales_the_mixed_score_by_the_unasked_name_share() {
    use crate::search::{Rerank, RerankScope};
    let mut catalogue = tools();
    catalogue.push(
        ToolDefinition::new("calendar_create_event_reminder", json!({"type": "object"}))
            .with_description("Create a calendar event."),
    );
    let (plain, staged) = without_and_with(&catalogue, Rerank::names(0.5, RerankScope::Name));
    let query = "create a calendar event";
    let before = plain.search(query, 4).unwrap();
    let after = staged.search(query, 4).unwrap();
    // Every name word asked for: unchanged; "reminder" not asked (1 of 4): × 0.875.
    assert_eq!(
        score(&after, "calendar_create_event"),
        score(&before, "calendar_create_event")
    );
    let expected = score(&before, "calendar_create_event_reminder") * (1.0 - 0.5 * 0.25);
    assert!((score(&after, "calendar_create_event_reminder") - expected).abs() < 1e-6);
    assert_eq!(top(&after)[0], "calendar_create_event");
    // Asked for one, the window is still re-ranked; the same request gives the same bits.
    assert_eq!(
        top(&staged.search(query, 1).unwrap()),
        ["calendar_create_event"]
    );
    assert_eq!(staged.search(query, 4).unwrap(), after);
}

/// The hybrid weighs argument evidence (`Rerank::argument_weight`) on its mixed scores as
/// the lexical index does: a tool whose required id the request lacks is scaled by
/// `1 + w × (0 − 1) / (0 + 1 + 1)`, and supplied, by `1 + w × (1 − 0) / (1 + 0 + 1)`.
#[test]
fn the_second_stage_weighs_argument_evidence_on_the_mixed_score() {
    use crate::search::Rerank;
    let mut catalogue = tools();
    catalogue.push(
        ToolDefinition::new(
            "calendar_get_event",
            json!({
                "type": "object",
                "properties": {"event_id": {"type": "string"}},
                "required": ["event_id"]
            }),
        )
        .with_description("One calendar event."),
    );
    let (plain, staged) = without_and_with(&catalogue, Rerank::arguments(0.5));
    for (query, factor) in [("calendar event", 0.75), ("calendar event ev-42", 1.25)] {
        let before = plain.search(query, 6).unwrap();
        let after = staged.search(query, 6).unwrap();
        let expected = score(&before, "calendar_get_event") * factor;
        assert!(
            (score(&after, "calendar_get_event") - expected).abs() < 1e-6,
            "{query}"
        );
        assert_eq!(staged.search(query, 6).unwrap(), after);
    }
}
