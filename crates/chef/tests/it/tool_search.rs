//! Composing compressed tool sets with native tool search (issue 12): which tools stay
//! loaded, where the cache breakpoint lands, the dispatcher refusal, and golden files for
//! the composed request per target.

use chef::tool_search::{
    AnthropicSearch, KeepLoaded, SearchTool, ToolSearchError, compose_tool_search,
};
use chef_compress::{Compressed, Level, Options};
use chef_ir::{Message, Request, ToolDefinition, ToolName};
use serde_json::Value;

use crate::fixture;

fn fixture_tools() -> Vec<ToolDefinition> {
    let text = std::fs::read_to_string(fixture("conversation-tool-heavy.json")).unwrap();
    let request: Request = serde_json::from_str(&text).unwrap();
    request.tools
}

fn compressed(level: Level) -> Compressed {
    chef_compress::compress(&fixture_tools(), &Options::new().with_level(level)).unwrap()
}

fn request(set: chef::tool_search::ToolSearchSet) -> Request {
    set.into_request(Request::new(vec![
        Message::system("You are a logistics assistant."),
        Message::user("Find last year's archived report on Oslo."),
    ]))
}

fn anthropic_body(request: &Request) -> (Value, String) {
    let c = chef_anthropic::compile(request, &chef_anthropic::CompileOptions::default()).unwrap();
    let bytes = String::from_utf8(c.to_vec().unwrap()).unwrap();
    (serde_json::from_str(&bytes).unwrap(), bytes)
}

#[test]
fn level_1_keeps_the_chosen_tools_loaded_and_defers_the_rest() {
    let set = compose_tool_search(
        &compressed(Level::One),
        KeepLoaded::First(2),
        SearchTool::Anthropic(AnthropicSearch::Regex),
    )
    .unwrap();
    let deferred: Vec<bool> = set.tools.iter().map(|t| t.defer_loading).collect();
    assert_eq!(deferred, [false, false, true, true, true]);
    // Level-1 signature lines survive the composition.
    assert!(set.tools[0].description.contains(" — "));
    assert_eq!(set.server_tool.value["name"], "tool_search_tool_regex");
}

#[test]
fn cache_control_never_lands_on_a_deferred_tool_in_the_compiled_bytes() {
    let names = [
        ToolName::from("active_locations"),
        ToolName::from("get_weather"),
    ];
    for keep in [
        KeepLoaded::First(1),
        KeepLoaded::First(3),
        KeepLoaded::Named(&names),
    ] {
        for search in [AnthropicSearch::Regex, AnthropicSearch::Bm25] {
            let set =
                compose_tool_search(&compressed(Level::One), keep, SearchTool::Anthropic(search))
                    .unwrap();
            let (body, _) = anthropic_body(&request(set));
            let tools = body["tools"].as_array().unwrap();
            let cached: Vec<&Value> = tools
                .iter()
                .filter(|t| t.get("cache_control").is_some())
                .collect();
            assert_eq!(cached.len(), 1, "{keep:?}: exactly one tool breakpoint");
            assert!(cached[0].get("defer_loading").is_none(), "{keep:?}");
            assert!(
                cached[0].get("input_schema").is_some(),
                "{keep:?}: a function tool"
            );
            // The last loaded function tool carries it.
            let last_loaded = tools
                .iter()
                .rfind(|t| t.get("input_schema").is_some() && t.get("defer_loading").is_none())
                .unwrap();
            assert_eq!(cached[0], last_loaded, "{keep:?}");
            let servers: Vec<&Value> = tools.iter().filter(|t| t.get("type").is_some()).collect();
            assert_eq!(servers.len(), 1, "{keep:?}");
            assert_eq!(servers[0]["type"], search.kind());
        }
    }
}

#[test]
fn a_dispatcher_level_is_refused_with_a_typed_error() {
    // Level 4 is refused by compress itself until compiled maps land.
    {
        let level = Level::Three;
        let err = compose_tool_search(
            &compressed(level),
            KeepLoaded::First(1),
            SearchTool::Anthropic(AnthropicSearch::Regex),
        )
        .unwrap_err();
        assert_eq!(err, ToolSearchError::DispatcherLevel { level });
        let err = compose_tool_search(
            &compressed(level),
            KeepLoaded::First(1),
            SearchTool::OpenAiResponses,
        )
        .unwrap_err();
        assert_eq!(err, ToolSearchError::DispatcherLevel { level });
        assert!(err.to_string().contains("level 3"), "{err}");
    }
    for level in [Level::Zero, Level::One, Level::Two] {
        assert!(
            compose_tool_search(
                &compressed(level),
                KeepLoaded::First(1),
                SearchTool::OpenAiResponses
            )
            .is_ok(),
            "{level:?}"
        );
    }
}

#[test]
fn an_all_deferred_set_and_an_unknown_kept_name_are_refused() {
    for search in [
        SearchTool::Anthropic(AnthropicSearch::Bm25),
        SearchTool::OpenAiResponses,
    ] {
        assert_eq!(
            compose_tool_search(&compressed(Level::One), KeepLoaded::First(0), search).unwrap_err(),
            ToolSearchError::AllToolsDeferred
        );
        let names = [ToolName::from("no_such_tool")];
        assert_eq!(
            compose_tool_search(&compressed(Level::One), KeepLoaded::Named(&names), search)
                .unwrap_err(),
            ToolSearchError::UnknownLoadedTool {
                name: ToolName::from("no_such_tool")
            }
        );
    }
}

#[test]
fn openai_responses_gets_tool_search_and_sends_the_deferral() {
    let set = compose_tool_search(
        &compressed(Level::One),
        KeepLoaded::First(2),
        SearchTool::OpenAiResponses,
    )
    .unwrap();
    assert_eq!(
        SearchTool::OpenAiResponses.target(),
        chef_ir::Target::OpenAiResponses
    );
    let request = request(set);
    let c =
        chef_openai::responses::compile(&request, &chef_openai::CompileOptions::default()).unwrap();
    let body: Value = serde_json::from_slice(&chef_openai::responses::to_vec(&c).unwrap()).unwrap();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(
        tools.last().unwrap(),
        &serde_json::json!({"type": "tool_search"})
    );
    let deferred = tools.iter().filter(|t| t["defer_loading"] == true).count();
    assert_eq!(deferred, 3);
    assert!(
        !c.notices
            .iter()
            .any(|n| matches!(n, chef_openai::Notice::DeferLoadingIgnored { .. })),
        "{:?}",
        c.notices
    );
}

/// The composed level-1 request, compiled for every target: Anthropic and Responses with
/// their own search tool; Chat and Gemini from the Anthropic composition (no documented
/// tool search: the server tool is left out and reported).
#[test]
fn composed_level_1_requests_match_their_golden_files() {
    let anthropic = request(
        compose_tool_search(
            &compressed(Level::One),
            KeepLoaded::First(2),
            SearchTool::Anthropic(AnthropicSearch::Regex),
        )
        .unwrap(),
    );
    let responses = request(
        compose_tool_search(
            &compressed(Level::One),
            KeepLoaded::First(2),
            SearchTool::OpenAiResponses,
        )
        .unwrap(),
    );
    let options = chef_openai::CompileOptions::default();

    let c =
        chef_anthropic::compile(&anthropic, &chef_anthropic::CompileOptions::default()).unwrap();
    insta::assert_snapshot!(
        "composed_anthropic",
        String::from_utf8(c.to_vec().unwrap()).unwrap()
    );
    insta::assert_debug_snapshot!("composed_anthropic_notices", c.notices);

    let c = chef_openai::responses::compile(&responses, &options).unwrap();
    insta::assert_snapshot!(
        "composed_openai_responses",
        String::from_utf8(chef_openai::responses::to_vec(&c).unwrap()).unwrap()
    );
    insta::assert_debug_snapshot!("composed_openai_responses_notices", c.notices);

    let c = chef_openai::chat::compile(&anthropic, &options).unwrap();
    insta::assert_snapshot!(
        "composed_openai_chat",
        String::from_utf8(chef_openai::chat::to_vec(&c).unwrap()).unwrap()
    );
    insta::assert_debug_snapshot!("composed_openai_chat_notices", c.notices);

    let c = chef_gemini::compile(&anthropic, &chef_gemini::CompileOptions::default()).unwrap();
    insta::assert_snapshot!(
        "composed_gemini",
        String::from_utf8(chef_gemini::to_vec(&c).unwrap()).unwrap()
    );
    insta::assert_debug_snapshot!("composed_gemini_notices", c.notices);
}
