//! Schemas from the wild: each oddity is normalised (and recorded) or refused with a typed
//! error naming the tool; nothing panics.

use chef_compress::validate::{
    ArgumentProblem, ArgumentValidator, Normalisation, SchemaError, normalise_schema,
};
use serde_json::{Value, json};

use super::{assert_message, problem, validator};

fn notes(tool: &str, schema: Value) -> Vec<Normalisation> {
    normalise_schema(tool, &schema).unwrap().notes
}

fn has_note(notes: &[Normalisation], path: &str, fragment: &str) -> bool {
    notes
        .iter()
        .any(|n| n.path == path && n.what.contains(fragment))
}

#[test]
fn missing_type_is_read_from_structure() {
    let v = validator(
        "t",
        json!({"properties": {"o": {"properties": {"a": {"type": "string"}}}, "l": {"items": {"type": "string"}}}}),
    );
    let s = v.normalised_schema();
    assert_eq!(s["type"], "object");
    assert_eq!(s["properties"]["o"]["type"], "object");
    assert_eq!(s["properties"]["l"]["type"], "array");
    let n = v.normalisations();
    assert!(has_note(n, "", "missing `type`: read as `object`"), "{n:?}");
    assert!(has_note(n, "properties.o", "missing `type`"));
    assert!(has_note(n, "properties.l", "read as `array`"));
    assert!(n.iter().all(|note| note.tool == "t"));
    // The inferred type is what validation applies.
    assert_message(
        &v,
        json!({"o": "x"}),
        "Parameter \"o\" on t must be an object; received a string.",
    );
}

#[test]
fn non_standard_type_names_mean_their_standard_types() {
    let v = validator(
        "ship",
        json!({"type": "dict", "properties": {
            "d": {"type": "dict"}, "f": {"type": "float"}, "t": {"type": "tuple"},
            "a": {"type": "any"}, "i": {"type": "int"}, "b": {"type": "bool"},
            "s": {"type": "str"}, "l": {"type": "list"}, "x": {"type": "double"},
            "g": {"type": "long"}, "u": {"type": "Integer"}, "w": {"type": "wat"}
        }}),
    );
    let s = v.normalised_schema();
    let want = [
        ("d", Some("object")),
        ("f", Some("number")),
        ("t", Some("array")),
        ("a", None),
        ("i", Some("integer")),
        ("b", Some("boolean")),
        ("s", Some("string")),
        ("l", Some("array")),
        ("x", Some("number")),
        ("g", Some("integer")),
        ("u", Some("integer")),
        ("w", None),
    ];
    for (name, t) in want {
        assert_eq!(
            s["properties"][name].get("type").and_then(Value::as_str),
            t,
            "{name}"
        );
    }
    assert_eq!(s["type"], "object");
    let n = v.normalisations();
    assert!(has_note(n, "properties.d", "type `dict` read as `object`"));
    assert!(has_note(n, "properties.f", "type `float` read as `number`"));
    assert!(has_note(n, "properties.a", "no type constraint"));
    assert!(has_note(n, "properties.w", "unknown type `wat` removed"));
    // Validation accepts what the normalised schema means.
    assert!(
        v.validate(
            &json!({"d": {"k": 1}, "f": 1.5, "t": [1, "a"], "a": null, "i": 2, "b": true,
        "s": "x", "l": [], "x": 2, "g": 9, "u": 1, "w": {}})
        )
        .is_ok()
    );
    assert_message(
        &v,
        json!({"f": "1.5"}),
        "Parameter \"f\" on ship must be a number; received a string.",
    );
    assert_message(
        &v,
        json!({"d": []}),
        "Parameter \"d\" on ship must be an object; received an array.",
    );
}

#[test]
fn type_arrays_are_normalised_entry_by_entry() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {
            "a": {"type": ["str", "null"]},
            "b": {"type": ["string", "any"]},
            "c": {"type": ["int", "integer"]},
            "d": {"type": ["string", "array"]}
        }}),
    );
    let s = v.normalised_schema();
    assert_eq!(s["properties"]["a"]["type"], json!(["string", "null"]));
    assert!(s["properties"]["b"].get("type").is_none());
    assert_eq!(s["properties"]["c"]["type"], "integer");
    assert_eq!(s["properties"]["d"]["type"], json!(["string", "array"]));
    assert!(
        v.validate(&json!({"a": null, "b": 5, "c": 1, "d": ["x"]}))
            .is_ok()
    );
    assert!(matches!(
        problem(&v, json!({"d": 5})),
        ArgumentProblem::WrongType { .. }
    ));
}

#[test]
fn finite_references_are_inlined_for_rendering() {
    let schema = json!({
        "type": "object",
        "properties": {
            "from": {"$ref": "#/$defs/address", "description": "Sender"},
            "to": {"$ref": "#/definitions/address"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}}
        },
        "$defs": {
            "address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "item": {"type": "object", "properties": {"sku": {"type": "string"}}}
        },
        "definitions": {"address": {"type": "object", "properties": {"zip": {"type": "string"}}}}
    });
    let v = validator("t", schema);
    let s = v.normalised_schema();
    assert_eq!(
        s["properties"]["from"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(s["properties"]["from"]["description"], "Sender");
    assert_eq!(s["properties"]["to"]["properties"]["zip"]["type"], "string");
    assert_eq!(
        s["properties"]["items"]["items"]["properties"]["sku"]["type"],
        "string"
    );
    assert!(s.get("$defs").is_none() && s.get("definitions").is_none());
    assert!(!serde_json::to_string(s).unwrap().contains("$ref"));
    assert!(has_note(
        v.normalisations(),
        "properties.from",
        "reference `#/$defs/address` inlined"
    ));
    assert_message(
        &v,
        json!({"from": {}}),
        "Missing required parameter \"from.city\" for t. Required: city.",
    );
}

#[test]
fn recursive_references_stay_references_the_validator_follows() {
    let v = validator(
        "tree",
        json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "additionalProperties": false
            }}
        }),
    );
    assert!(has_note(
        v.normalisations(),
        "properties.root.properties.kids.items",
        "recursive reference"
    ));
    let deep_ok = json!({"root": {"name": "a", "kids": [{"name": "b", "kids": [{"name": "c", "kids": []}]}]}});
    assert!(v.validate(&deep_ok).is_ok());
    let deep_bad = json!({"root": {"kids": [{"kids": [{"nam": "c"}]}]}});
    assert_message(
        &v,
        deep_bad,
        "Unknown parameter \"root.kids[0].kids[0].nam\" for tree. Accepted: name, kids. \
         Did you mean \"name\"?",
    );
}

#[test]
fn a_reference_to_the_whole_document_is_followed() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"n": {"type": "integer"}, "next": {"$ref": "#"}}}),
    );
    assert!(
        v.validate(&json!({"n": 1, "next": {"n": 2, "next": {"n": 3}}}))
            .is_ok()
    );
    assert_message(
        &v,
        json!({"next": {"next": {"n": "x"}}}),
        "Parameter \"next.next.n\" on t must be an integer; received a string.",
    );
}

#[test]
fn reference_cycles_without_content_and_broken_references_accept_any_value() {
    let v = validator(
        "t",
        json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/a"},
                "gone": {"$ref": "#/$defs/missing"},
                "far": {"$ref": "https://example.com/schema.json"}
            },
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}
        }),
    );
    assert!(
        v.validate(&json!({"a": 1, "gone": "x", "far": [1]}))
            .is_ok()
    );
    let n = v.normalisations();
    assert!(
        has_note(n, "properties.gone", "cannot be resolved"),
        "{n:?}"
    );
    assert!(has_note(n, "properties.far", "cannot be resolved"));
}

#[test]
fn a_top_level_reference_is_the_schema() {
    // zod-to-json-schema writes {"$ref": "#/definitions/Args", "definitions": {...}}.
    let v = validator(
        "t",
        json!({
            "$ref": "#/definitions/Args",
            "definitions": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false}},
            "$schema": "http://json-schema.org/draft-07/schema#"
        }),
    );
    assert_eq!(v.parameters(), ["q"]);
    assert_eq!(v.required(), ["q"]);
    assert_message(
        &v,
        json!({}),
        "Missing required parameter \"q\" for t. Required: q.",
    );
    assert!(has_note(v.normalisations(), "", "top-level reference"));
    assert!(has_note(v.normalisations(), "$schema", "draft-07"));
}

#[test]
fn enums_of_numbers_validate_by_value() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"level": {"type": "integer", "enum": [1, 2, 3]}, "ratio": {"enum": [0.5, 1.5]}}}),
    );
    assert!(v.validate(&json!({"level": 2, "ratio": 1.5})).is_ok());
    assert!(v.validate(&json!({"level": 2.0})).is_ok());
    assert_message(
        &v,
        json!({"level": 4}),
        "Invalid value for \"level\" on t: expected one of 1, 2, 3; received 4.",
    );
    assert_message(
        &v,
        json!({"level": "2"}),
        "Invalid value for \"level\" on t: expected one of 1, 2, 3; received \"2\".",
    );
    assert!(
        notes(
            "t",
            json!({"type": "object", "properties": {"n": {"enum": [1, 2]}}})
        )
        .is_empty()
    );
}

#[test]
fn absent_properties_accept_any_keys_and_empty_ones_none() {
    for schema in [
        json!({"type": "object"}),
        json!({"type": "object", "properties": null}),
        json!({}),
    ] {
        let v = validator("t", schema.clone());
        assert!(v.validate(&json!({"x": 1})).is_ok(), "{schema}");
        assert!(v.parameters().is_empty());
    }
    let v = validator("t", json!({"type": "object", "properties": {}}));
    assert!(v.validate(&json!({"x": 1})).is_err());
    assert!(v.validate(&json!({})).is_ok());
    assert!(has_note(
        &notes("t", json!({"type": "object", "properties": null})),
        "properties",
        "removed"
    ));
}

#[test]
fn a_100_kb_description_is_kept_and_costs_nothing_to_validate() {
    let long = "Lorem ipsum dolor sit amet. ".repeat(100 * 1024 / 28 + 1);
    assert!(long.len() >= 100 * 1024);
    let v = validator(
        "t",
        json!({"type": "object", "description": long, "properties": {"q": {"type": "string", "description": long}}}),
    );
    assert_eq!(
        v.normalised_schema()["properties"]["q"]["description"]
            .as_str()
            .unwrap()
            .len(),
        long.len()
    );
    assert!(v.validate(&json!({"q": "x"})).is_ok());
    assert!(v.normalisations().is_empty());
}

#[test]
fn non_ascii_names_validate_and_render() {
    let v = validator(
        "données",
        json!({"type": "object", "properties": {"größe": {"type": "number"}, "名前": {"type": "string"}}, "required": ["名前"]}),
    );
    assert!(v.validate(&json!({"名前": "x", "größe": 1})).is_ok());
    assert_message(
        &v,
        json!({"名前": "x", "grösse": 1}),
        "Unknown parameter \"grösse\" for données. Accepted: größe, 名前.",
    );
    assert_message(
        &v,
        json!({"名前": "x", "GRÖSSE": 1}),
        "Unknown parameter \"GRÖSSE\" for données. Accepted: größe, 名前.",
    );
    assert_message(
        &v,
        json!({"名前": "x", "Größe": 1}),
        "Unknown parameter \"Größe\" for données. Accepted: größe, 名前. Did you mean \"größe\"?",
    );
    assert_message(
        &v,
        json!({"größe": "1"}),
        "Missing required parameter \"名前\" for données. Required: 名前. Also: Parameter \"größe\" on données must be a number; received a string.",
    );
}

#[test]
fn required_naming_absent_properties_declares_them() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]}),
    );
    assert_eq!(v.parameters(), ["a", "ghost"]);
    assert!(has_note(
        v.normalisations(),
        "",
        "required `ghost` is not in `properties`"
    ));
    // The tool stays callable: `ghost` is accepted, and required.
    assert!(v.validate(&json!({"a": "x", "ghost": 1})).is_ok());
    assert_message(
        &v,
        json!({"a": "x"}),
        "Missing required parameter \"ghost\" for t. Required: a, ghost.",
    );
}

#[test]
fn required_that_is_not_a_list_of_names_is_repaired() {
    let cases = [
        (
            json!({"type": "object", "properties": {"a": {}}, "required": "a"}),
            vec!["a"],
        ),
        (
            json!({"type": "object", "properties": {"a": {}}, "required": ["a", 3, "a"]}),
            vec!["a"],
        ),
        (
            json!({"type": "object", "properties": {"a": {}}, "required": {"a": true}}),
            vec![],
        ),
        (
            json!({"type": "object", "properties": {"a": {"required": true}, "b": {}}}),
            vec!["a"],
        ),
    ];
    for (schema, want) in cases {
        let v = validator("t", schema.clone());
        assert_eq!(v.required(), want.as_slice(), "{schema}");
        assert!(!v.normalisations().is_empty(), "{schema}");
    }
}

#[test]
fn boolean_and_null_schemas() {
    let v = validator("t", json!(true));
    assert_eq!(v.normalised_schema(), &json!({"type": "object"}));
    assert!(v.validate(&json!({"any": 1})).is_ok());
    assert!(has_note(v.normalisations(), "", "schema `true`"));
    let v = validator("t", Value::Null);
    assert!(v.validate(&json!({})).is_ok());
    assert_eq!(
        ArgumentValidator::new("nope", &json!(false)).unwrap_err(),
        SchemaError::RejectsEverything {
            tool: "nope".into()
        }
    );
}

#[test]
fn unusable_schemas_are_refused_naming_the_tool() {
    let cases = [
        (
            json!("object"),
            "the input schema of tool t1 is a string, not a JSON Schema object",
        ),
        (
            json!([1]),
            "the input schema of tool t1 is an array, not a JSON Schema object",
        ),
        (
            json!(3),
            "the input schema of tool t1 is a number, not a JSON Schema object",
        ),
        (
            json!({"type": "string"}),
            "the input schema of tool t1 has type string; tool arguments are an object",
        ),
        (
            json!({"type": ["array", "null"]}),
            "the input schema of tool t1 has type array or null; tool arguments are an object",
        ),
    ];
    for (schema, want) in cases {
        let error = ArgumentValidator::new("t1", &schema).unwrap_err();
        assert_eq!(error.to_string(), want);
        assert_eq!(error.tool(), "t1");
    }
}

#[test]
fn older_drafts_and_openapi_forms_are_read_as_2020_12() {
    let v = validator(
        "t",
        json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {
                "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false},
                "opt": {"type": "string", "nullable": true},
                "lim": {"type": "integer", "maximum": "10", "maxLength": "x"}
            },
            "dependencies": {"n": ["opt"]}
        }),
    );
    let s = v.normalised_schema();
    assert_eq!(s["properties"]["n"]["exclusiveMinimum"], 0);
    assert_eq!(s["properties"]["pair"]["prefixItems"][1]["type"], "integer");
    assert_eq!(s["properties"]["pair"]["items"], false);
    assert_eq!(s["properties"]["opt"]["type"], json!(["string", "null"]));
    assert_eq!(s["properties"]["lim"]["maximum"], 10);
    assert!(s["properties"]["lim"].get("maxLength").is_none());
    assert_eq!(s["dependentRequired"]["n"], json!(["opt"]));
    assert!(
        v.validate(&json!({"n": 1, "opt": null, "pair": ["a", 1], "lim": 10}))
            .is_ok()
    );
    assert!(matches!(
        problem(&v, json!({"n": 0, "opt": "x"})),
        ArgumentProblem::OutOfRange { .. }
    ));
    assert!(v.validate(&json!({"pair": ["a", 1, 2]})).is_err());
    assert!(v.validate(&json!({"lim": 11})).is_err());
    assert!(matches!(
        problem(&v, json!({"n": 1})),
        ArgumentProblem::MissingRequired { .. } | ArgumentProblem::Other { .. }
    ));
}

#[test]
fn patterns_the_linear_time_engine_cannot_run_are_dropped() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {
            "a": {"type": "string", "pattern": "^(?!admin).*$"},
            "b": {"type": "string", "pattern": "^[a-z]+$"},
            "c": {"type": "string", "pattern": "(a{1000}){1000}"}
        }}),
    );
    // Too large for the engine's 1 MiB program limit: dropped too.
    assert!(
        v.normalised_schema()["properties"]["c"]
            .get("pattern")
            .is_none()
    );
    assert!(
        v.normalised_schema()["properties"]["a"]
            .get("pattern")
            .is_none()
    );
    assert!(has_note(
        v.normalisations(),
        "properties.a.pattern",
        "linear-time"
    ));
    assert!(v.validate(&json!({"a": "admin", "b": "ok"})).is_ok());
    assert!(v.validate(&json!({"b": "NO"})).is_err());
}

#[test]
fn properties_written_as_type_names_are_read_as_schemas() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"n": "int", "s": "whatever", "x": 5}}),
    );
    let s = v.normalised_schema();
    assert_eq!(s["properties"]["n"], json!({"type": "integer"}));
    assert_eq!(s["properties"]["s"], json!({}));
    assert_eq!(s["properties"]["x"], json!({}));
    assert!(v.validate(&json!({"n": 1, "s": [], "x": null})).is_ok());
    assert!(v.validate(&json!({"n": "1"})).is_err());
}

#[test]
fn normalisation_is_deterministic_and_serialisable() {
    let schema = json!({"properties": {"a": {"type": "dict"}, "b": {"$ref": "#/$defs/b"}}, "$defs": {"b": {"type": "float"}}});
    let first = normalise_schema("t", &schema).unwrap();
    let second = normalise_schema("t", &schema).unwrap();
    assert_eq!(first, second);
    assert_eq!(
        serde_json::to_value(&first.notes[0]).unwrap(),
        json!({"tool": "t", "path": "properties.a", "what": "type `dict` read as `object`"})
    );
}

#[test]
fn a_schema_that_admits_extra_keys_is_not_closed_by_the_reference_rule() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"a": {"type": "string"}},
               "additionalProperties": {"type": "integer"}}),
    );
    assert!(v.validate(&json!({"a": "x", "extra": 1})).is_ok());
    assert_message(
        &v,
        json!({"a": "x", "extra": "no"}),
        "Parameter \"extra\" on t must be an integer; received a string.",
    );
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"a": {}}, "patternProperties": {"^x_": {"type": "string"}}}),
    );
    assert!(v.validate(&json!({"x_1": "ok"})).is_ok());
    assert!(v.validate(&json!({"x_1": 5})).is_err());
    // Without such a statement the reference rule holds: undeclared keys are refused.
    let v = validator("t", json!({"type": "object", "properties": {"a": {}}}));
    assert!(matches!(
        problem(&v, json!({"b": 1})),
        ArgumentProblem::UnknownParameter { .. }
    ));
}

#[test]
fn a_kept_reference_the_validator_cannot_follow_is_opened() {
    // The recursive reference points into a tuple `items`, which normalisation rewrites
    // as `prefixItems`: the pointer no longer resolves, so it is opened (and listed).
    let schema = json!({"type": "object", "properties": {"pair": {"type": "array", "items": [
        {"type": "object", "properties": {"again": {"$ref": "#/properties/pair/items/0"}, "n": {"type": "integer"}}}
    ]}}});
    let v = validator("t", schema);
    assert!(
        v.normalisations()
            .iter()
            .any(|n| n.what.contains("cannot be followed")),
        "{:?}",
        v.normalisations()
    );
    assert!(
        v.validate(&json!({"pair": [{"n": 1, "again": {"n": 2, "again": 3}}]}))
            .is_ok()
    );
    assert!(v.validate(&json!({"pair": [{"n": "x"}]})).is_err());
}

#[test]
fn a_normalised_schema_compiles_without_normalising_again() {
    let schema = json!({"properties": {"a": {"type": "float"}}, "required": ["a"]});
    let normalised = normalise_schema("t", &schema).unwrap();
    let notes = normalised.notes.clone();
    let v = ArgumentValidator::from_normalised(
        "t",
        normalised,
        chef_compress::validate::Limits::default(),
    )
    .unwrap();
    assert_eq!(v.normalisations(), notes.as_slice());
    assert!(v.validate(&json!({"a": 1.5})).is_ok());
}

#[test]
fn malformed_rare_keywords_are_removed_and_listed() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {
            "a": {"type": "object", "dependentRequired": {"b": 3}, "minContains": -1},
            "b": {"type": "string", "$anchor": "9bad", "contentEncoding": 5}
        }, "dependentRequired": "x"}),
    );
    let n = v.normalisations();
    for (path, keyword) in [
        ("properties.a.dependentRequired.b", "`b` is malformed"),
        (
            "properties.a.minContains",
            "`minContains` -1 is not a count",
        ),
        ("properties.b.$anchor", "`$anchor` is malformed"),
        (
            "properties.b.contentEncoding",
            "`contentEncoding` is malformed",
        ),
        ("dependentRequired", "`dependentRequired` is malformed"),
    ] {
        assert!(has_note(n, path, keyword), "{path} {keyword}: {n:?}");
    }
    assert!(v.validate(&json!({"a": {}, "b": "x"})).is_ok());
    assert!(v.validate(&json!({"b": 1})).is_err());
}

#[test]
fn a_nullable_top_level_object_is_read_as_an_object() {
    let v = validator(
        "t",
        json!({"type": ["object", "null"], "properties": {"a": {"type": "dict"}}}),
    );
    assert_eq!(v.normalised_schema()["type"], "object");
    assert!(has_note(
        v.normalisations(),
        "",
        "top-level type `object, null` read as `object`"
    ));
    assert!(v.validate(&json!({"a": {}})).is_ok());
}

#[test]
fn python_style_tuples_become_prefix_items() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"point": {"type": "tuple", "items": [{"type": "float"}, {"type": "float"}]}}}),
    );
    let point = &v.normalised_schema()["properties"]["point"];
    assert_eq!(point["type"], "array");
    assert_eq!(
        point["prefixItems"],
        json!([{"type": "number"}, {"type": "number"}])
    );
    assert!(v.validate(&json!({"point": [1.5, 2]})).is_ok());
    assert_message(
        &v,
        json!({"point": [1.5, "2"]}),
        "Parameter \"point[1]\" on t must be a number; received a string.",
    );
}
