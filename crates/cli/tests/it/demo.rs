use serde_json::Value;

use crate::{chef, stderr, stdout};

#[test]
fn demo_prints_json_with_every_level_row() {
    let out = chef(["demo", "--json", "--level", "1", "--target", "gemini"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["scripted_model"], true);
    assert_eq!(report["target"], "gemini");
    assert_eq!(report["table"].as_array().unwrap().len(), 6);
    assert_eq!(report["discover_top_k"], 10);
    let text = report["steps"].to_string();
    assert!(text.contains("REFUSED"), "{text}");
}

#[test]
fn demo_rejects_an_unknown_target() {
    let out = chef(["demo", "--target", "mistral"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn demo_prune_all_and_level_3_offer_every_tool() {
    for args in [
        ["demo", "--json", "--prune", "all"],
        ["demo", "--json", "--level", "3"],
    ] {
        let out = chef(args);
        assert!(out.status.success(), "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(report["discover_top_k"], Value::Null, "{args:?}");
        assert!(!report["steps"].to_string().contains("find_tools("));
    }
}

/// A K that covers the whole catalogue offers every tool and no find_tools (discovery
/// starts above K tools): the demo says so and runs as `--prune all`, without a search
/// it cannot make.
#[test]
fn demo_discover_k_over_the_catalogue_says_every_tool_is_offered() {
    let out = chef(["demo", "--json", "--prune", "discover:200"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["discover_top_k"], Value::Null);
    let steps = report["steps"].to_string();
    assert!(steps.contains("covers all 149 tools"), "{steps}");
    assert!(!steps.contains("find_tools("), "{steps}");
    assert!(!steps.contains("No tool named"), "{steps}");
}

#[test]
fn demo_rejects_a_malformed_prune() {
    for bad in ["discover:0", "discover:x", "ranked:5"] {
        let out = chef(["demo", "--prune", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains("discover:K"), "{}", stderr(&out));
    }
}

/// Level 4 runs the loop on the bundled compiled map (the closing table's level-4 row).
#[test]
fn demo_runs_at_level_4_with_the_bundled_map() {
    let out = chef(["demo", "--json", "--level", "4"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["level"], 4);
    let text = report["steps"].to_string();
    // The model calls by the function name the map declares, with no lookup first.
    assert!(text.contains(r#"t({\"f\":\"active_locations\""#), "{text}");
    assert!(!text.contains("model calls q("), "{text}");
    assert!(text.contains("REFUSED"), "{text}");
}
