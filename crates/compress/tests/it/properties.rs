//! Properties: every encoded call resolves to its tool; order of input never matters.

use std::collections::BTreeSet;

use chef_compress::{Level, MapStyle, Options, compress};
use proptest::prelude::*;
use serde_json::json;

use crate::{expect_call, resolve_encoded, shuffled, tool, wire};

fn names() -> impl Strategy<Value = BTreeSet<String>> {
    proptest::collection::btree_set("[a-cA-C][a-c0-9_.\\-]{0,6}", 1..25)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_encoded_call_resolves_to_its_tool(names in names(), level in 0u8..4, style in 0usize..3) {
        let tools: Vec<_> = names
            .iter()
            .map(|n| tool(n, "", json!({"type": "object", "properties": {"x": {"type": "integer"}}})))
            .collect();
        let options = Options::new()
            .with_level(Level::try_from(level).unwrap())
            .with_map_style(MapStyle::ALL[style]);
        let c = compress(&tools, &options).unwrap();
        for t in &tools {
            let args = json!({"x": 7});
            let got = expect_call(resolve_encoded(&c, t.name.as_str(), args.clone()), t.name.as_str());
            prop_assert_eq!(got, args);
        }
    }

    #[test]
    fn input_order_never_changes_the_bytes(names in names(), seed in any::<u64>(), level in 0u8..4) {
        let tools: Vec<_> = names.iter().map(|n| tool(n, "d.", json!({}))).collect();
        let options = Options::new().with_level(Level::try_from(level).unwrap());
        let a = wire(&compress(&tools, &options).unwrap());
        let b = wire(&compress(&shuffled(&tools, seed), &options).unwrap());
        prop_assert_eq!(a, b);
    }
}
