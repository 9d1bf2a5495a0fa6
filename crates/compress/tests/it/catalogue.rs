//! `Catalogue`: prepared once, compressed many times; every selection equals `compress` of
//! the same tools, byte for byte.

use chef_compress::validate::Limits;
use chef_compress::{Catalogue, CompressError, Level, MapStyle, Options, compress};
use chef_ir::ToolDefinition;
use proptest::prelude::*;
use serde_json::json;

use crate::{real_tools, three, tool, tools3};

/// The real corpus, the spec's verbose tools (dropped `$schema`) and schemas normalisation
/// rewrites, so a selection carries normalisation notes.
fn catalogue_tools() -> Vec<ToolDefinition> {
    let mut tools = real_tools();
    tools.extend(tools3());
    tools.push(tool(
        "wild_dict",
        "A Python-style schema.",
        json!({"type": "dict", "properties": {"ratio": {"type": "float"}, "n": {"type": "int"}}}),
    ));
    tools.push(tool(
        "wild_ref",
        "A schema with a local reference.",
        json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "string"}}}),
    ));
    tools
}

fn options() -> Vec<Options> {
    let mut all = vec![
        Options::new().with_level(Level::Zero),
        Options::new().with_level(Level::One),
        Options::new().with_level(Level::Two),
    ];
    for style in [
        MapStyle::NameRequired,
        MapStyle::Explicit,
        MapStyle::Signature,
        MapStyle::Distinct,
    ] {
        all.push(three().with_map_style(style));
    }
    all
}

fn assert_same(
    selected: &Result<chef_compress::Compressed, CompressError>,
    direct: &Result<chef_compress::Compressed, CompressError>,
) {
    match (selected, direct) {
        (Ok(a), Ok(b)) => {
            assert_eq!(
                serde_json::to_string(a.tools()).unwrap(),
                serde_json::to_string(b.tools()).unwrap()
            );
            assert_eq!(a.system(), b.system());
            assert_eq!(a.stats(), b.stats());
            assert!(a.codes().eq(b.codes()));
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("catalogue gave {a:?}, compress gave {b:?}"),
    }
}

#[test]
fn the_whole_catalogue_compresses_exactly_as_compress_does() {
    let tools = catalogue_tools();
    let catalogue = Catalogue::new(&tools).unwrap();
    assert_eq!(catalogue.len(), tools.len());
    assert!(catalogue.tools().eq(tools.iter()));
    for options in options() {
        let whole = catalogue.compress(&options);
        assert_same(&whole, &compress(&tools, &options));
        let all: Vec<usize> = (0..tools.len()).collect();
        assert_same(&catalogue.compress_subset(&all, &options), &whole);
    }
    // The statistics count the input as serde_json writes it, and list what was normalised.
    let stats = catalogue.compress(&Options::new()).unwrap().stats().clone();
    assert_eq!(
        stats.original_chars,
        serde_json::to_string(&tools).unwrap().chars().count()
    );
    assert!(stats.normalisations.iter().any(|n| n.tool == "wild_dict"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any selection, in any order, gives what `compress` of those tools gives: the same
    /// bytes, system prompt, statistics (character counts, normalisation notes in the
    /// selection's order) and codes.
    #[test]
    fn a_selection_compresses_exactly_as_compress_of_its_tools(
        picks in proptest::sample::subsequence((0..154_usize).collect::<Vec<_>>(), 0..40),
        shuffle in any::<u64>(),
        which in 0..7_usize,
    ) {
        let tools = catalogue_tools();
        prop_assert_eq!(tools.len(), 154);
        let catalogue = Catalogue::new(&tools).unwrap();
        // A deterministic shuffle of the picks: the caller's order is the input order.
        let mut indices = picks;
        let len = indices.len();
        for i in (1..len).rev() {
            let j = usize::try_from((shuffle >> (i % 32)) % (i as u64 + 1)).unwrap();
            indices.swap(i, j);
        }
        let options = options().swap_remove(which);
        let subset: Vec<ToolDefinition> = indices.iter().map(|&i| tools[i].clone()).collect();
        assert_same(
            &catalogue.compress_subset(&indices, &options),
            &compress(&subset, &options),
        );
    }
}

#[test]
fn a_selection_that_repeats_or_overruns_the_catalogue_is_a_typed_error() {
    let tools = tools3();
    let catalogue = Catalogue::new(&tools).unwrap();
    let options = three();
    assert!(matches!(
        catalogue.compress_subset(&[0, 3], &options),
        Err(CompressError::UnknownToolIndex { index: 3, len: 3 })
    ));
    assert!(matches!(
        catalogue.compress_subset(&[1, 0, 1], &options),
        Err(CompressError::DuplicateName { ref name }) if name == "github_search_issues"
    ));
    // An empty selection is an empty compression, as `compress(&[])` is.
    assert_same(
        &catalogue.compress_subset(&[], &options),
        &compress(&[], &options),
    );
}

#[test]
fn a_catalogue_refuses_what_compress_refuses() {
    let mut tools = tools3();
    tools.push(tools[0].clone());
    assert!(matches!(
        Catalogue::new(&tools),
        Err(CompressError::DuplicateName { ref name }) if name == "github_create_issue"
    ));
    let tools = tools3();
    let strict = Limits {
        max_tools: 2,
        ..Limits::default()
    };
    assert!(matches!(
        Catalogue::with_limits(&tools, strict),
        Err(CompressError::TooManyTools { count: 3, limit: 2 })
    ));
}

#[test]
fn options_with_other_limits_are_honoured_not_ignored() {
    // Prepared under the defaults, compressed under options that allow two tools: the
    // selection of three is refused exactly as `compress` refuses it, and a selection of two
    // is fine.
    let tools = tools3();
    let catalogue = Catalogue::new(&tools).unwrap();
    let strict = Options::new().with_limits(Limits {
        max_tools: 2,
        ..Limits::default()
    });
    assert_same(&catalogue.compress(&strict), &compress(&tools, &strict));
    assert!(catalogue.compress(&strict).is_err());
    assert_same(
        &catalogue.compress_subset(&[2, 0], &strict),
        &compress(&[tools[2].clone(), tools[0].clone()], &strict),
    );
}

#[test]
fn compressions_of_one_catalogue_resolve_independently() {
    let tools = real_tools();
    let catalogue = Catalogue::new(&tools).unwrap();
    let options = three();
    let geocode = tools
        .iter()
        .position(|t| t.name.as_str() == "batch_geocode")
        .unwrap();
    let a = catalogue.compress(&options).unwrap();
    let b = catalogue.compress_subset(&[geocode], &options).unwrap();
    drop(catalogue);
    for c in [&a, &b] {
        let code = c.code_for("batch_geocode").unwrap();
        let call = json!({"f": code, "a": {"addresses": ["1 Main St"]}});
        assert!(matches!(
            c.resolve("t", &call),
            chef_compress::Resolution::Call { .. }
        ));
        let bad = json!({"f": code, "a": {"adresses": ["1 Main St"]}});
        assert!(matches!(
            c.resolve("t", &bad),
            chef_compress::Resolution::Error(_)
        ));
    }
}
