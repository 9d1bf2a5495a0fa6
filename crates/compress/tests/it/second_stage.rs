//! The second stage (`dense::SecondStage`, issue 44): its default threshold is what
//! calibration on retrieval-149's calibrate half picks, it only re-orders the first
//! stage's candidates, and words that no tool mentions never make it abstain on a request
//! it answers (a property over the labelled sets in tests/fixtures).
#![cfg(feature = "bundled-model")]

use chef_compress::search::{
    dense::{self, DenseConfig, HybridIndex, SecondStage},
    eval::LabelledQuery,
};
use chef_ir::ToolDefinition;

use crate::{fixture, real_tools};

fn labelled(name: &str) -> Vec<LabelledQuery> {
    std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn bundled(tools: &[ToolDefinition]) -> HybridIndex {
    DenseConfig::bundled().unwrap().build(tools).unwrap()
}

#[test]
fn the_second_stages_threshold_is_what_calibration_on_the_calibrate_half_picks() {
    let index = bundled(&real_tools());
    let irrelevant: Vec<String> = labelled("retrieval-149.jsonl")
        .into_iter()
        .filter(|q| q.split.as_deref() == Some("calibrate") && q.expected.is_empty())
        .map(|q| q.query)
        .collect();
    assert_eq!(irrelevant.len(), 30);
    let threshold =
        dense::calibrate_min_relevance(&index, &irrelevant, &SecondStage::DEFAULT, 0.9).unwrap();
    assert_eq!(threshold, SecondStage::DEFAULT.min_relevance);
}

#[test]
fn the_second_stage_reorders_the_first_stages_candidates_by_probability() {
    let index = bundled(&real_tools());
    let stage = SecondStage::DEFAULT;
    for q in labelled("retrieval-149.jsonl").iter().take(40) {
        let first: Vec<String> = index
            .candidates(&q.query, stage.depth)
            .unwrap()
            .into_iter()
            .map(|c| c.hit.tool.as_str().to_owned())
            .collect();
        let judged = index.judge(&q.query, &stage).unwrap();
        assert_eq!(
            judged,
            index.judge(&q.query, &stage).unwrap(),
            "deterministic"
        );
        let mut second: Vec<String> = judged
            .ranked
            .iter()
            .map(|(_, c)| c.hit.tool.as_str().to_owned())
            .collect();
        assert!(judged.ranked.windows(2).all(|w| w[0].0 >= w[1].0));
        second.sort();
        let mut first_sorted = first.clone();
        first_sorted.sort();
        assert_eq!(second, first_sorted, "{}", q.query);
        let found = index.search_second_stage(&q.query, 5, &stage).unwrap();
        assert_eq!(found.abstained, judged.relevance < stage.min_relevance);
        if !found.abstained {
            let top: Vec<&str> = found.hits.iter().map(|h| h.tool.as_str()).collect();
            let want: Vec<&str> = judged
                .ranked
                .iter()
                .take(5)
                .map(|(_, c)| c.hit.tool.as_str())
                .collect();
            assert_eq!(top, want);
        }
    }
}

/// Phrases added to a request: names, times and places that no tool of the fixtures'
/// catalogues mentions (each is checked against the catalogue before use).
const ADDED: [&str; 4] = [
    "with Bob next Tuesday at 10am",
    "for Priya before lunch",
    "thanks so much, cheers",
    "asap, my boss Oleksandr insists",
];

/// Every request of `queries` that the second stage answers on `tools` is still answered
/// with each phrase of [`ADDED`] whose words the catalogue never uses appended; returns
/// how many (request, phrase) pairs were checked, and how many the first stage's default
/// abstains on after it answered the request (reported, not asserted: that is the
/// behaviour the second stage fixes).
fn added_words_never_cause_abstention(
    tools: &[ToolDefinition],
    queries: &[LabelledQuery],
) -> (usize, usize) {
    let index = bundled(tools);
    let stage = SecondStage::DEFAULT;
    let phrases: Vec<&str> = ADDED
        .into_iter()
        .filter(|p| index.lexical().known_words(p).is_empty())
        .collect();
    assert!(!phrases.is_empty());
    let (mut checked, mut first_stage_flips) = (0, 0);
    for q in queries {
        let found = index.search_second_stage(&q.query, 5, &stage).unwrap();
        let first_found = !index.search(&q.query, 5).unwrap().abstained;
        if found.abstained {
            continue;
        }
        for p in &phrases {
            let longer = format!("{} {p}", q.query);
            let again = index.search_second_stage(&longer, 5, &stage).unwrap();
            assert!(
                !again.abstained,
                "{longer:?} abstains where {:?} did not",
                q.query
            );
            checked += 1;
            if first_found && index.search(&longer, 5).unwrap().abstained {
                first_stage_flips += 1;
            }
        }
    }
    (checked, first_stage_flips)
}

#[test]
fn words_no_tool_mentions_never_make_the_second_stage_abstain() {
    let (checked, flips) =
        added_words_never_cause_abstention(&real_tools(), &labelled("retrieval-149.jsonl"));
    eprintln!("retrieval-149: {checked} checked; the first stage abstains on {flips}");
    assert!(checked > 200, "{checked}");
    let nestful_tools = chef_ir::load_tools_from_str(
        &std::fs::read_to_string(fixture("nestful-tools.json")).unwrap(),
    )
    .unwrap()
    .tools;
    let nestful: Vec<LabelledQuery> = labelled("nestful.jsonl").into_iter().step_by(5).collect();
    let (checked, flips) = added_words_never_cause_abstention(&nestful_tools, &nestful);
    eprintln!(
        "NESTFUL (every fifth request): {checked} checked; the first stage abstains on {flips}"
    );
    assert!(checked > 100, "{checked}");
}

/// The default re-ordering (`HybridOptions::second_stage`, on for the bundled model only):
/// over every request of retrieval-149 and every fifth of NESTFUL's, at the default
/// threshold and never abstaining, the
/// hybrid with it and without it abstain alike, hold the same tools in their best five and
/// best ten, and a shorter list is the start of a longer one.
#[test]
fn the_default_reordering_keeps_the_best_five_and_ten_and_abstention() {
    let on = DenseConfig::bundled().unwrap();
    assert!(on.options.second_stage, "on for the bundled model");
    assert!(!dense::HybridOptions::for_kind(dense::ModelKind::Static).second_stage);
    let off = DenseConfig {
        options: on.options.with_second_stage(false),
        ..on.clone()
    };
    let nestful = chef_ir::load_tools_from_str(
        &std::fs::read_to_string(fixture("nestful-tools.json")).unwrap(),
    )
    .unwrap()
    .tools;
    let sorted = |hits: &[chef_compress::search::Hit]| {
        let mut names: Vec<&str> = hits.iter().map(|h| h.tool.as_str()).collect();
        names.sort_unstable();
        names.join(",")
    };
    let mut moved = 0;
    for (tools, labels) in [
        (real_tools(), "retrieval-149.jsonl"),
        (nestful, "nestful.jsonl"),
    ] {
        let (with, without) = (on.build(&tools).unwrap(), off.build(&tools).unwrap());
        for q in labelled(labels)
            .into_iter()
            .step_by(if tools.len() > 160 { 5 } else { 1 })
        {
            for threshold in [with.options().min_cosine, -1.0] {
                let a = with.search_with(&q.query, 10, threshold).unwrap();
                let b = without.search_with(&q.query, 10, threshold).unwrap();
                assert_eq!(a.abstained, b.abstained, "{}", q.query);
                assert_eq!(sorted(&a.hits), sorted(&b.hits), "{}", q.query);
                let five = |r: &chef_compress::search::SearchResults| {
                    sorted(r.hits.get(..5.min(r.hits.len())).unwrap())
                };
                assert_eq!(five(&a), five(&b), "{}", q.query);
                moved += usize::from(a.hits != b.hits);
                for k in [1, 5] {
                    let short = with.search_with(&q.query, k, threshold).unwrap();
                    assert_eq!(
                        short.hits[..],
                        a.hits[..k.min(a.hits.len())],
                        "{} k={k}",
                        q.query
                    );
                }
            }
        }
    }
    assert!(moved > 0, "the re-ordering moves something");
}
