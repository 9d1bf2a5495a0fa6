//! Golden files: the exact bytes sent for the real corpus at every level and style.

use chef_compress::{Level, MapStyle, Options, compress};

use crate::{real_tools, three, tools3};

fn golden(options: &Options) -> String {
    let c = compress(&real_tools(), options).unwrap();
    // One wire tool per line, each exactly as serialised (the wire joins them with `,`).
    let tools: Vec<String> = c
        .tools()
        .iter()
        .map(|t| serde_json::to_string(t).unwrap())
        .collect();
    format!(
        "{}\n---- system ----\n{}\n---- stats ----\n{}",
        tools.join("\n"),
        c.system(),
        serde_json::to_string_pretty(c.stats()).unwrap()
    )
}

/// One snapshot test per entry, named after it: the real corpus under these options.
macro_rules! golden_tests {
    ($($name:ident: $options:expr;)*) => {
        $(
            #[test]
            fn $name() {
                insta::assert_snapshot!(golden(&$options));
            }
        )*
    };
}

golden_tests! {
    real_corpus_level_0: Options::new().with_level(Level::Zero);
    real_corpus_level_1: Options::new().with_level(Level::One);
    real_corpus_level_1_without_signature_prefix:
        Options::new().with_level(Level::One).with_signature_prefix(false);
    real_corpus_level_2: Options::new().with_level(Level::Two);
    real_corpus_level_3_name_required: three().with_map_style(MapStyle::NameRequired);
    real_corpus_level_3_explicit: three().with_map_style(MapStyle::Explicit);
    real_corpus_level_3_signature: three().with_map_style(MapStyle::Signature);
    real_corpus_level_3_distinct: three().with_map_style(MapStyle::Distinct);
}

#[test]
fn tools3_at_every_level() {
    let mut out = String::new();
    for (label, options) in [
        ("level 0", Options::new().with_level(Level::Zero)),
        ("level 1", Options::new().with_level(Level::One)),
        ("level 2", Options::new().with_level(Level::Two)),
        ("level 3", three()),
    ] {
        let c = compress(&tools3(), &options).unwrap();
        out.push_str(&format!(
            "==== {label} ====\n{}\n{}\n",
            serde_json::to_string(c.tools()).unwrap(),
            c.system()
        ));
    }
    insta::assert_snapshot!(out);
}
