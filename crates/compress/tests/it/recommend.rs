//! `recommend_level` (spec §7, checklist 143–150).

use chef_compress::{Level, MEASURED, Options, compress, recommend_level};
use chef_ir::ToolDefinition;
use serde_json::json;

use crate::{
    at, real_tools,
    recommend_support::{self, NEVER_SAID},
    tool,
};

fn verbose(ns: usize, per: usize) -> Vec<ToolDefinition> {
    let mut out = Vec::new();
    for n in 0..ns {
        for o in 0..per {
            out.push(tool(
                &format!("ns{n}_op{o}"),
                "Performs the operation on the record identified by the given id. The record must exist and the caller must hold write access; otherwise the call fails with a descriptive error and nothing is changed. Use the list operation first to discover ids.",
                json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "The identifier of the record, as returned by the list operation of this namespace."},
                        "note": {"type": "string", "description": "An optional free-text note stored alongside the change for auditing purposes."}
                    },
                    "required": ["id"]
                }),
            ));
        }
    }
    out
}

fn terse(n: usize) -> Vec<ToolDefinition> {
    (0..n)
        .map(|i| tool(&format!("svc{i}_op"), &format!("Operation {i}."), json!({"type": "object", "properties": {"id": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["id"]})))
        .collect()
}

#[test]
fn never_recommends_2_or_4() {
    for (ns, per) in [(2, 3), (6, 10), (10, 20), (1, 200), (20, 1)] {
        let r = recommend_level(&verbose(ns, per)).unwrap();
        assert!(
            matches!(r.level, Level::Zero | Level::One | Level::Three),
            "{ns}x{per}: {:?}",
            r.level
        );
    }
}

#[test]
fn small_verbose_sets_get_level_1_with_validation_in_the_reason() {
    let r = recommend_level(&verbose(2, 3)).unwrap();
    assert_eq!(r.level, Level::One);
    assert!(r.reason.contains("validation"), "{}", r.reason);
    assert_eq!(r.tool_count, 6);
    let r = recommend_level(&verbose(6, 12)).unwrap();
    assert_eq!(r.tool_count, 72);
    assert_eq!(r.level, Level::One, "{}", r.reason);
}

#[test]
fn the_real_corpus_gets_level_1_with_discovery_and_a_map_warning_for_level_3() {
    let tools = real_tools();
    let r = recommend_level(&tools).unwrap();
    assert_eq!(
        (r.level, r.discover_top),
        (Level::One, Some(10)),
        "{}",
        r.reason
    );
    assert!(
        r.reason.contains("PrunePolicy::discover(10)"),
        "{}",
        r.reason
    );
    assert!(r.reason.contains("binding constraint"), "{}", r.reason);
    assert!(r.ops_per_namespace < 4.0);
    assert_eq!(r.namespace_count, 63);
    assert!(r.reason.contains("turn"), "{}", r.reason);
    assert!(r.reason.contains("Check your map"));
    let ambiguous = at(&tools, Level::Three)
        .stats()
        .ambiguous_map_lines
        .unwrap();
    assert!(
        r.reason
            .contains(&format!("{ambiguous} of 149 level-3 map lines")),
        "{}",
        r.reason
    );
    assert!(r.reason.contains("the largest group being 66"));
    assert!(
        r.reason
            .contains("(`--map-style signature`, `MapStyle::Signature`)")
    );
    assert!(r.reason.contains("`chef compile-map`"));
    assert!(
        r.reason
            .contains("`chef compress --level 4 --compiled MAP.json`")
    );
    for gone in NEVER_SAID {
        assert!(!r.reason.contains(gone), "{gone:?} in {}", r.reason);
    }
}

#[test]
fn a_large_catalogue_advice_quotes_the_measured_model_runs_it_returns() {
    let r = recommend_level(&real_tools()).unwrap();
    assert_eq!(r.level, Level::One);
    let [one, three, ranked] = r.measured.as_slice() else {
        panic!("three rows: {:?}", r.measured)
    };
    assert!(MEASURED.contains(one) && MEASURED.contains(three) && MEASURED.contains(ranked));
    assert_eq!((one.level, one.ranked_top), (Level::One, None));
    assert_eq!((three.level, three.map_style), (Level::Three, None));
    assert_eq!((ranked.level, ranked.ranked_top), (Level::One, Some(10)));
    let quote = format!(
        "the first tool the model dispatched was the right one in {}/{} at level 1, {}/{} at level 3 and {}/{} at level 1 with ranked pruning",
        one.right, one.n, three.right, three.n, ranked.right, ranked.n
    );
    assert!(r.reason.contains(&quote), "{}", r.reason);
    assert!(r.reason.contains(one.model), "{}", r.reason);
    assert!(r.reason.contains("`chef eval"), "{}", r.reason);
    // The JSON carries the rows.
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["measured"][2]["ranked_top"], 10);
    // Advice for level 0 or 1 quotes nothing.
    for small in [
        recommend_level(&terse(20)).unwrap(),
        recommend_level(&verbose(2, 2)).unwrap(),
    ] {
        assert_ne!(small.level, Level::Three);
        assert_eq!(small.discover_top, None);
        assert!(small.measured.is_empty());
        assert!(!small.reason.contains("Measured on"), "{}", small.reason);
        assert!(
            serde_json::to_value(&small)
                .unwrap()
                .get("measured")
                .is_none()
        );
    }
}

/// `42713` → `42,713`.
fn thousands(n: usize) -> String {
    recommend_support::thousands(n as u64)
}

#[test]
fn the_figures_are_the_level_1_stats() {
    let tools = real_tools();
    let r = recommend_level(&tools).unwrap();
    let options = Options::new().with_level(Level::One);
    #[cfg(feature = "tokens")]
    let options = options.with_token_counts(true);
    let l1 = compress(&tools, &options).unwrap().stats().clone();
    assert_eq!(r.level1_chars, l1.compressed_chars);
    assert_eq!(r.level1_tokens, l1.compressed_tokens);
    let figure = match r.level1_tokens {
        Some(tokens) => format!(
            "{} characters ({} o200k_base tokens)",
            thousands(r.level1_chars),
            thousands(tokens)
        ),
        None => format!("{} characters", thousands(r.level1_chars)),
    };
    assert!(
        r.reason
            .starts_with(&format!("149 tools take {figure} at level 1,")),
        "{}",
        r.reason
    );
    assert_eq!(r.level1_tokens.is_some(), cfg!(feature = "tokens"));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json.get("level1_tokens").is_some(),
        cfg!(feature = "tokens")
    );
}

#[test]
fn prefixes_of_the_real_corpus_cross_the_threshold_by_size() {
    let tools = real_tools();
    assert_eq!(recommend_level(&tools[..8]).unwrap().level, Level::One);
    assert_eq!(recommend_level(&tools[..14]).unwrap().level, Level::One);
    let r = recommend_level(&tools[..40]).unwrap();
    assert_eq!((r.level, r.discover_top), (Level::One, Some(10)));
}

#[test]
fn terse_tools_get_level_0_and_a_reason_that_says_why() {
    for n in [14, 25, 50, 100] {
        let r = recommend_level(&terse(n)).unwrap();
        assert_eq!(r.level, Level::Zero, "{n}: {}", r.reason);
        assert!(r.reason.contains("LARGER"), "{}", r.reason);
        assert!(r.reason.to_lowercase().contains("leave the tools alone"));
        let re_ok = r
            .reason
            .split("Level 3 does compress this (")
            .nth(1)
            .unwrap();
        let saved: f64 = re_ok
            .split("% smaller than the tools as given)")
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(saved > 0.0, "{}", r.reason);
    }
    let r = recommend_level(&terse(400)).unwrap();
    assert_eq!((r.level, r.discover_top), (Level::One, Some(10)));
}

#[test]
fn a_tool_too_small_for_any_level_is_not_told_level_3_compresses_it() {
    // One terse tool: level 1 and level 3 both make the block larger.
    let r = recommend_level(&terse(1)).unwrap();
    assert_eq!(r.level, Level::Zero, "{}", r.reason);
    assert!(!r.reason.contains("does compress"), "{}", r.reason);
    assert!(
        r.reason.contains("Level 3 would not help either"),
        "{}",
        r.reason
    );
    assert!(r.reason.contains("larger"), "{}", r.reason);
}

#[test]
fn lookalike_heavy_sets_warn_and_distinct_sets_do_not() {
    let manage: Vec<_> = (0..200)
        .map(|i| tool(&format!("manage_t{i}"), "Manage the thing. It does a lot of different things depending on the operation, each of them documented at length in the service handbook.", json!({"type": "object", "properties": {"operation": {"type": "string", "description": "What to do, one of many operations listed in the service handbook."}}, "required": ["operation"]})))
        .collect();
    let r = recommend_level(&manage).unwrap();
    assert_eq!((r.level, r.discover_top), (Level::One, Some(10)));
    assert!(
        r.reason.contains("200 of 200 level-3 map lines"),
        "{}",
        r.reason
    );
    assert!(r.reason.contains("largest group being 200"));
    let distinct: Vec<_> = (0..90)
        .map(|i| tool(&format!("svc_t{i}"), "Does a thing to records, described at length so that the level-one block stays big enough for level three to be recommended at all here.", json!({"type": "object", "properties": {format!("p{i}"): {"type": "string", "description": "A parameter with a long description that will be stripped at level one but counts at level zero."}}, "required": [format!("p{i}")]})))
        .collect();
    let r = recommend_level(&distinct).unwrap();
    assert!(!r.reason.contains("Check your map"), "{}", r.reason);
}

#[test]
fn compress_never_upgrades_the_level_on_its_own() {
    let big = verbose(30, 10);
    assert_eq!(recommend_level(&big).unwrap().discover_top, Some(10));
    for n in [1, 50, 300] {
        let c = compress(&big[..n], &Options::new()).unwrap();
        assert_eq!(c.stats().level, Level::One);
    }
}

#[test]
fn the_chosen_level_is_no_larger_than_level_1() {
    for tools in [verbose(2, 3), verbose(6, 10), terse(20), real_tools()] {
        let r = recommend_level(&tools).unwrap();
        let chosen = at(&tools, r.level).stats().clone();
        let l0 = at(&tools, Level::Zero).stats().clone();
        let l1 = at(&tools, Level::One).stats().clone();
        assert!(chosen.compressed_chars <= l1.compressed_chars);
        assert!(chosen.saved_pct >= l0.saved_pct);
    }
}

#[test]
fn an_empty_set_gets_level_0() {
    let r = recommend_level(&[]).unwrap();
    assert_eq!(r.level, Level::Zero);
    assert_eq!(r.ops_per_namespace, 0.0);
}

#[test]
fn a_namespace_function_feeds_only_the_namespace_figures() {
    let tools = verbose(3, 2);
    let split = |_: &str| chef_compress::ToolNamespace::new("one", "x");
    let r = chef_compress::recommend_level_with(&tools, split).unwrap();
    assert_eq!(r.namespace_count, 1);
    assert_eq!(r.ops_per_namespace, 6.0);
    assert_eq!(r.level, recommend_level(&tools).unwrap().level);
}
