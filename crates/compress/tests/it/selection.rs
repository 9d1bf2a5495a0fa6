//! Map-style selection through `compress` (spec §9, checklist 151–155).

use chef_compress::{MapStyle, Objective, Options, compress};

use crate::{styled, three, tools3, wire};

#[test]
fn no_model_means_the_default_style_byte_for_byte() {
    let plain = compress(&tools3(), &three()).unwrap();
    let explicit_default = styled(&tools3(), MapStyle::NameRequired);
    assert_eq!(plain.stats().map_style, MapStyle::NameRequired);
    assert_eq!(wire(&plain), wire(&explicit_default));
}

#[test]
fn a_model_and_cost_objective_pick_the_measured_style_silently() {
    let c = compress(
        &tools3(),
        &three()
            .with_model("gpt-5.6-sol")
            .with_objective(Objective::Cost),
    )
    .unwrap();
    assert_eq!(c.stats().map_style, MapStyle::Explicit);
    assert_eq!(c.stats().requested_map_style, None);
    assert_eq!(c.stats().fallback_reason, None);
    let json = serde_json::to_value(c.stats()).unwrap();
    assert!(json.get("requested_map_style").is_none());
    assert!(json.get("fallback_reason").is_none());
    // Reported at level 1 too, where it changes nothing on the wire.
    let l1 = compress(
        &tools3(),
        &Options::new()
            .with_model("gpt-5.6-sol")
            .with_objective(Objective::Cost),
    )
    .unwrap();
    assert_eq!(l1.stats().map_style, MapStyle::Explicit);
    assert_eq!(
        wire(&l1),
        wire(&compress(&tools3(), &Options::new()).unwrap())
    );
}

#[test]
fn a_model_without_an_objective_or_a_row_gets_the_default() {
    for options in [
        three().with_model("gpt-5.6-sol"),
        three()
            .with_model("grok-4.5")
            .with_objective(Objective::Cost),
        three()
            .with_model("unknown-model")
            .with_objective(Objective::Cost),
    ] {
        let c = compress(&tools3(), &options).unwrap();
        assert_eq!(c.stats().map_style, MapStyle::NameRequired, "{options:?}");
    }
}

#[test]
fn an_explicit_style_beats_the_policy() {
    let c = compress(
        &tools3(),
        &three()
            .with_model("gpt-5.6-sol")
            .with_objective(Objective::Cost)
            .with_map_style(MapStyle::Signature),
    )
    .unwrap();
    assert_eq!(c.stats().map_style, MapStyle::Signature);
}
