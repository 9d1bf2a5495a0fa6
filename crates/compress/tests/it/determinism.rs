//! Byte identity and ordering (spec §1.5–1.6, checklist 16–20).

use chef_compress::{Level, MapStyle, Options, compress};
use serde_json::json;

use crate::{at, real_tools, shuffled, synthetic_tools, three, tool, wire};

fn every_configuration() -> Vec<Options> {
    let mut all = vec![
        Options::new().with_level(Level::Zero),
        Options::new().with_level(Level::One),
        Options::new()
            .with_level(Level::One)
            .with_signature_prefix(false),
        Options::new().with_level(Level::Two),
    ];
    for style in MapStyle::ALL {
        all.push(three().with_map_style(style));
    }
    all
}

#[test]
fn identical_input_gives_identical_bytes_at_every_level_and_style() {
    let tools = real_tools();
    for options in every_configuration() {
        let a = compress(&tools, &options).unwrap();
        let b = compress(&tools, &options).unwrap();
        assert_eq!(wire(&a), wire(&b), "{options:?}");
        assert_eq!(a.stats(), b.stats());
    }
}

#[test]
fn shuffled_and_reversed_input_gives_identical_bytes() {
    for tools in [real_tools(), synthetic_tools()] {
        let mut reversed = tools.clone();
        reversed.reverse();
        for options in every_configuration() {
            let reference = wire(&compress(&tools, &options).unwrap());
            assert_eq!(reference, wire(&compress(&reversed, &options).unwrap()));
            for seed in [1, 7, 42] {
                let other = compress(&shuffled(&tools, seed), &options).unwrap();
                assert_eq!(reference, wire(&other), "seed {seed} {options:?}");
            }
        }
    }
}

#[test]
fn shuffled_input_gives_identical_stats_normalisations_included() {
    // Schemas from the wild in several tools, so `normalisations` has entries from more
    // than one tool and their order could follow the input order.
    let mut tools = real_tools();
    for name in ["wild_c", "wild_a", "wild_b"] {
        tools.push(tool(
            name,
            "",
            json!({"type": "dict", "properties": {"x": {"type": "float"}, "n": {"type": "int"}}}),
        ));
    }
    let mut reversed = tools.clone();
    reversed.reverse();
    for options in every_configuration() {
        let reference = serde_json::to_string(compress(&tools, &options).unwrap().stats()).unwrap();
        let others = [reversed.clone(), shuffled(&tools, 3), shuffled(&tools, 99)];
        for other in &others {
            let got = serde_json::to_string(compress(other, &options).unwrap().stats()).unwrap();
            assert_eq!(reference, got, "{options:?}");
        }
    }
    let c = compress(&shuffled(&tools, 5), &Options::new()).unwrap();
    let named: Vec<&str> = c
        .stats()
        .normalisations
        .iter()
        .map(|n| n.tool.as_str())
        .filter(|n| n.starts_with("wild_"))
        .collect();
    assert!(named.len() >= 6, "{named:?}");
    assert!(named.is_sorted(), "{named:?}");
}

#[test]
fn mixed_case_and_separator_names_sort_and_group_as_pinned() {
    let names = [
        "b_tool", "B_other", "a.x", "a_x", "a-x", "a1", "A_z", "alpha", "a_Z",
    ];
    let tools: Vec<_> = names.iter().map(|n| tool(n, "", json!({}))).collect();
    let c = at(&tools, Level::Three);
    let map: Vec<_> = c.system().lines().skip(1).take(names.len()).collect();
    assert_eq!(
        map,
        [
            "a0 a_x",
            "a1 a_Z",
            "a2 a.x",
            "b0 A_z",
            "c0 a-x",
            "d0 a1",
            "e0 alpha",
            "f0 B_other",
            "g0 b_tool"
        ]
    );

    let c2 = at(&tools, Level::Two);
    let wire_names: Vec<_> = c2.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        wire_names,
        ["a", "A", "a-x", "a1", "alpha", "B", "b", "describe_op"]
    );
    // DIFFERS: the reference keeps `["x", "Z", "x"]`, where the second `x` can never be
    // reached; the clashing tools take their full names as operations.
    assert_eq!(
        c2.tools()[0].input_schema["properties"]["op"]["enum"],
        json!(["a_x", "Z", "a.x"])
    );
}

#[test]
fn codes_run_past_z_into_two_and_three_letters() {
    let tools: Vec<_> = (0..30)
        .map(|i| tool(&format!("ns{i:02}_op"), "", json!({})))
        .collect();
    let c = at(&tools, Level::Three);
    let codes: Vec<_> = c.codes().map(|(_, code)| code.to_owned()).collect();
    assert_eq!(codes[0], "a0");
    assert_eq!(codes[25], "z0");
    assert_eq!(&codes[26..], ["aa0", "ab0", "ac0", "ad0"]);

    let many: Vec<_> = (0..703)
        .map(|i| tool(&format!("n{i:04}_op"), "", json!({})))
        .collect();
    let c = at(&many, Level::Three);
    assert_eq!(c.code_for("n0701_op").unwrap(), "zz0");
    assert_eq!(c.code_for("n0702_op").unwrap(), "aaa0");
    let args = json!({"f": "aaa0", "a": {}});
    crate::expect_call(c.resolve("t", &args), "n0702_op");
}

#[test]
fn a_namespace_with_many_tools_numbers_them_in_decimal() {
    let tools: Vec<_> = (0..12)
        .map(|i| tool(&format!("a_{}", (b'a' + i) as char), "", json!({})))
        .collect();
    let c = at(&tools, Level::Three);
    let codes: Vec<_> = c.codes().map(|(_, code)| code.to_owned()).collect();
    assert_eq!(codes.first().unwrap(), "a0");
    assert_eq!(codes.last().unwrap(), "a11");
}
