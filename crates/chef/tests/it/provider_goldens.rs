//! Golden files for every byte chef sends each provider: the shared tool-heavy
//! conversation with its tools compressed at levels 0, 1 and 3, compiled for Anthropic,
//! OpenAI Chat, OpenAI Responses and Gemini (issue 7), plus determinism within and across
//! processes.
//!
//! The request is `tests/fixtures/conversation-tool-heavy.json` (thinking, attachments,
//! parallel tool calls, a tool error, cache breakpoints, a positional system message, a
//! prefill). Its tools are replaced by the compressed set, and the compression preamble
//! (empty below level 3) goes in as a system message right after the leading system
//! prompt, with a cache breakpoint when the compressed set asks for one.

use chef_compress::{Compressed, Level, Options};
use chef_ir::{
    Message, Request, Target,
    provider::{self, Provider},
};

use crate::{
    child::{child_output, print_for_parent},
    fixture,
};

const LEVELS: [Level; 3] = [Level::Zero, Level::One, Level::Three];

fn level_number(level: Level) -> u8 {
    match level {
        Level::Zero => 0,
        Level::One => 1,
        Level::Two => 2,
        Level::Three => 3,
        Level::Four => 4,
    }
}

fn conversation() -> Request {
    let text = std::fs::read_to_string(fixture("conversation-tool-heavy.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The fixture with its tools compressed at `level`.
fn compressed_request(level: Level) -> Request {
    let mut request = conversation();
    let compressed: Compressed =
        chef_compress::compress(&request.tools, &Options::new().with_level(level)).unwrap();
    request.tools = compressed.tools().to_vec();
    if !compressed.system().is_empty() {
        let at = request
            .messages
            .iter()
            .take_while(|m| m.role == chef_ir::Role::System)
            .count();
        request.messages.insert(
            at,
            Message::system(compressed.system()).with_cache_breakpoint(compressed.cache_preamble()),
        );
    }
    request
}

/// The compiled bytes and the notices (as debug text) for one target.
fn compile(request: &Request, target: Target) -> (String, String) {
    let (bytes, notices) = match target {
        Target::Anthropic => {
            let c = chef_anthropic::compile(request, &chef_anthropic::CompileOptions::default())
                .unwrap();
            (c.to_vec().unwrap(), format!("{:#?}", c.notices))
        }
        Target::OpenAiChat => {
            let c = chef_openai::chat::compile(request, &chef_openai::CompileOptions::default())
                .unwrap();
            (
                chef_openai::chat::to_vec(&c).unwrap(),
                format!("{:#?}", c.notices),
            )
        }
        Target::OpenAiResponses => {
            let c =
                chef_openai::responses::compile(request, &chef_openai::CompileOptions::default())
                    .unwrap();
            (
                chef_openai::responses::to_vec(&c).unwrap(),
                format!("{:#?}", c.notices),
            )
        }
        Target::Gemini => {
            let c = chef_gemini::compile(request, &chef_gemini::CompileOptions::default()).unwrap();
            (
                chef_gemini::to_vec(&c).unwrap(),
                format!("{:#?}", c.notices),
            )
        }
    };
    (String::from_utf8(bytes).unwrap(), notices)
}

fn snapshot_name(target: Target, level: Level) -> String {
    format!(
        "{}_level_{}",
        target.as_str().replace('-', "_"),
        level_number(level)
    )
}

#[test]
fn every_target_at_levels_0_1_and_3_matches_its_golden_file() {
    for level in LEVELS {
        let request = compressed_request(level);
        for target in Target::ALL {
            let (body, notices) = compile(&request, target);
            let name = snapshot_name(target, level);
            insta::assert_snapshot!(name.clone(), body);
            insta::assert_snapshot!(format!("{name}_notices"), notices);
        }
    }
}

#[test]
fn the_level_3_preamble_reaches_every_target_and_the_dispatcher_replaces_the_tools() {
    let request = compressed_request(Level::Three);
    for target in Target::ALL {
        let (body, _) = compile(&request, target);
        assert!(body.contains("<toolmap>"), "{target}: preamble missing");
        assert!(
            !body.contains("\"archive_search\",\"description\""),
            "{target}: a real tool definition leaked past the dispatcher"
        );
    }
}

/// The body compiled through the provider trait (`chef_ir::provider::compile`): the
/// generic path the runtime and a new provider take.
fn compile_through_trait(request: &Request, target: Target) -> String {
    fn through<P: Provider>(request: &Request) -> Vec<u8> {
        provider::compile::<P>(request, &P::Options::default())
            .unwrap()
            .body
    }
    let body = match target {
        Target::Anthropic => through::<chef_anthropic::Anthropic>(request),
        Target::OpenAiChat => through::<chef_openai::Chat>(request),
        Target::OpenAiResponses => through::<chef_openai::Responses>(request),
        Target::Gemini => through::<chef_gemini::Gemini>(request),
    };
    String::from_utf8(body).unwrap()
}

#[test]
fn every_target_compiled_through_the_provider_trait_gives_its_golden_bytes() {
    for level in LEVELS {
        let request = compressed_request(level);
        for target in Target::ALL {
            assert_eq!(
                compile_through_trait(&request, target),
                compile(&request, target).0,
                "{target} level {}",
                level_number(level)
            );
        }
    }
}

#[test]
fn the_same_request_compiles_to_the_same_bytes_twice() {
    for level in LEVELS {
        for target in Target::ALL {
            let first = compile(&compressed_request(level), target).0;
            let second = compile(&compressed_request(level), target).0;
            assert_eq!(first, second, "{target} level {}", level_number(level));
        }
    }
}

const DUMP_ENV: &str = "CHEF_PROVIDER_GOLDENS_DUMP";

/// Every compiled body, in a fixed order, one per line.
fn all_bodies() -> String {
    let mut out = String::new();
    for level in LEVELS {
        let request = compressed_request(level);
        for target in Target::ALL {
            out.push_str(&compile(&request, target).0);
            out.push('\n');
        }
    }
    out
}

/// Prints every body when run as the child of
/// `bytes_are_identical_across_processes`; on its own it checks that all twelve compile.
#[test]
fn dump_bodies_for_another_process() {
    let bodies = all_bodies();
    assert_eq!(bodies.lines().count(), 12);
    print_for_parent(DUMP_ENV, &bodies);
}

#[test]
fn bytes_are_identical_across_processes() {
    let child = child_output(
        "provider_goldens::dump_bodies_for_another_process",
        DUMP_ENV,
    );
    assert_eq!(child, all_bodies());
}
