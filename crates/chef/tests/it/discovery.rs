//! Find, then call by real name (issue 43): the discovery setting, pruning that follows the
//! task, the constrained arguments and the short correction of a repeated refusal.

use chef::{Chef, ChefConfig, KeepReason, PrunePolicy, Routed};
use chef_compress::Level;
use chef_ir::{Content, Message, Target, ToolCall, ToolResult};
use serde_json::{Value, json};

use crate::{
    fixtures::real_tools,
    support::{asked_at, assert_same_bytes, memory_journal, replayed, wire_names},
};

fn discovery(top_k: usize) -> Chef {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_level(Level::One)
            .with_prune(PrunePolicy::discover(top_k)),
    );
    chef.register_tools(real_tools()).unwrap();
    chef
}

/// `value` without `cache_control` members (the rolling breakpoint moves by design).
fn without_breakpoints(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), without_breakpoints(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_breakpoints).collect()),
        other => other.clone(),
    }
}

/// What a provider reads first to last: the tools, the system text, the messages.
fn prompt_parts(target: Target, body: &[u8]) -> (Vec<Value>, Value, Vec<Value>) {
    let body = without_breakpoints(&serde_json::from_slice::<Value>(body).unwrap());
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    match target {
        Target::Anthropic => (
            list(&body["tools"]),
            body["system"].clone(),
            list(&body["messages"]),
        ),
        Target::OpenAiChat => (list(&body["tools"]), Value::Null, list(&body["messages"])),
        Target::OpenAiResponses => (
            list(&body["tools"]),
            body["instructions"].clone(),
            list(&body["input"]),
        ),
        Target::Gemini => (
            list(&body["tools"])
                .iter()
                .flat_map(|t| list(&t["functionDeclarations"]))
                .collect(),
            body["systemInstruction"].clone(),
            list(&body["contents"]),
        ),
    }
}

/// Asserts `later` reads as `earlier` continued: the same tools then more, the same
/// system text, the same messages then more.
fn assert_prefix(target: Target, earlier: &[u8], later: &[u8], step: &str) {
    let (tools_a, system_a, messages_a) = prompt_parts(target, earlier);
    let (tools_b, system_b, messages_b) = prompt_parts(target, later);
    assert!(
        tools_b.len() >= tools_a.len() && tools_b[..tools_a.len()] == tools_a[..],
        "{target:?} {step}: the tools of the earlier request are not a prefix of the later's"
    );
    assert_eq!(
        system_a, system_b,
        "{target:?} {step}: the system text moved"
    );
    assert!(
        messages_b.len() >= messages_a.len()
            && messages_b[..messages_a.len() - 1] == messages_a[..messages_a.len() - 1],
        "{target:?} {step}: earlier messages were rewritten"
    );
}

/// The real names of the tools the session has found, in order.
fn found_names(chef: &Chef) -> Vec<String> {
    chef.tools()
        .found()
        .iter()
        .map(|f| f.name.as_str().to_owned())
        .collect()
}

fn find(chef: &mut Chef, id: &str, query: &str) -> String {
    let call = ToolCall::new(id, "find_tools", json!({"query": query}));
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        call.clone(),
    )]));
    let routed = chef.route(&call);
    let Routed::Lookup { reply, .. } = &routed else {
        panic!("find_tools answered {routed:?}");
    };
    chef.push(Message::tool_results(vec![ToolResult::text(
        id,
        reply.clone(),
    )]));
    reply.clone()
}

#[test]
fn the_model_sees_the_ranked_tools_and_the_search_tool_and_is_told_how_to_use_it() {
    let mut chef = discovery(5);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert_eq!(names.len(), 6, "{names:?}");
    assert_eq!(names.last().map(String::as_str), Some("find_tools"));
    assert!(names.iter().any(|n| n == "get_diesel_price"), "{names:?}");
    let body: Value =
        serde_json::from_slice(&chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
    let system = body["messages"][0]["content"].to_string();
    assert!(system.contains("call find_tools"), "{system}");
}

#[test]
fn a_found_tool_is_callable_by_its_real_name_from_the_next_request() {
    let mut chef = discovery(3);
    chef.push(Message::user(
        "What is the diesel price in Ohio, and then email the figure to ops@example.com",
    ));
    let before = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        !before.iter().any(|n| n == "send_markdown_email"),
        "{before:?}"
    );
    let reply = find(&mut chef, "c1", "send an email");
    assert!(reply.contains("send_markdown_email("), "{reply}");
    let after = wire_names(&mut chef, Target::OpenAiChat);
    assert_eq!(
        after[..before.len()],
        before[..],
        "found tools are appended"
    );
    assert!(
        after[before.len()..]
            .iter()
            .any(|n| n == "send_markdown_email")
    );
    let kept = chef.compile(Target::OpenAiChat).unwrap().meta.kept;
    assert!(
        kept.iter()
            .any(|(n, r)| n == "send_markdown_email" && matches!(r, KeepReason::Found { .. })),
        "{kept:?}"
    );
    assert!(
        chef.tools()
            .found()
            .iter()
            .any(|f| f.name == "send_markdown_email")
    );
    // Called by its real name, it routes, and its arguments are validated.
    let bad = ToolCall::new("c2", "send_markdown_email", json!({"nope": 1}));
    assert!(matches!(chef.route(&bad), Routed::Error { .. }));
    let schema = real_tools()
        .into_iter()
        .find(|t| t.name == "send_markdown_email")
        .unwrap()
        .input_schema;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let args: serde_json::Map<String, Value> = required
        .iter()
        .map(|r| ((*r).to_owned(), json!("x@example.com")))
        .collect();
    let good = ToolCall::new("c3", "send_markdown_email", Value::Object(args));
    let Routed::Call(call) = chef.route(&good) else {
        panic!("a found tool called by name must route");
    };
    assert_eq!(call.name.as_str(), "send_markdown_email");
}

#[test]
fn the_cached_prefix_is_byte_stable_while_the_model_finds_two_tools_on_every_target() {
    for target in Target::ALL {
        let mut chef = discovery(3);
        chef.push(Message::user(
            "Get the diesel price, then email it to ops, then geocode the depot address",
        ));
        let first = chef.compile(target).unwrap().body;
        find(&mut chef, "c1", "send an email");
        let second = chef.compile(target).unwrap().body;
        assert_prefix(target, &first, &second, "after the first search");
        find(&mut chef, "c2", "geocode an address");
        let third = chef.compile(target).unwrap().body;
        assert_prefix(target, &second, &third, "after the second search");
        let found = found_names(&chef);
        assert!(found.len() >= 2, "{target:?}: {found:?}");
        // Compiling again with nothing new gives the same bytes.
        assert_eq!(chef.compile(target).unwrap().body, third, "{target:?}");
    }
}

#[test]
fn a_search_that_matches_nothing_says_so_and_offers_nothing() {
    let mut chef = discovery(3);
    chef.push(Message::user("Write me a sonnet about the sea"));
    let before = wire_names(&mut chef, Target::Anthropic);
    let reply = find(&mut chef, "c1", "compose a sonnet about the ocean waves");
    assert!(reply.starts_with("No tool fits"), "{reply}");
    assert_eq!(wire_names(&mut chef, Target::Anthropic), before);
    assert!(chef.tools().found().is_empty());
}

/// A small travel desk: what each tool does, in a few words.
const TRAVEL: [(&str, &str); 5] = [
    ("book_flight", "Book a flight between two airports."),
    (
        "list_trips",
        "List the traveller's trips between two dates.",
    ),
    (
        "convert_currency",
        "Convert an amount from one currency to another.",
    ),
    ("translate_text", "Translate text into another language."),
    ("get_forecast", "Tomorrow's forecast for a city."),
];

/// A discovery session over [`TRAVEL`] showing `find_tools` alone, ranked as `lexical`
/// says.
fn travel_discovery(lexical: bool) -> Chef {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_level(Level::One)
            .with_prune(PrunePolicy::discover(0)),
    );
    let schema = json!({"type": "object", "properties": {"id": {"type": "string"}}});
    chef.register_tools(
        TRAVEL
            .iter()
            .map(|(name, what)| {
                chef_ir::ToolDefinition::new(*name, schema.clone()).with_description(*what)
            })
            .collect(),
    )
    .unwrap();
    if lexical {
        chef.tools_mut().set_lexical_ranking();
    }
    chef
}

#[test]
fn a_search_written_as_a_sentence_finds_what_its_catalogue_words_find() {
    for lexical in [true, false] {
        let mut chef = travel_discovery(lexical);
        chef.push(Message::user("Sort out the trip, please."));
        let reply = find(
            &mut chef,
            "c1",
            "please book a flight to Lisbon for Bob and Carol next Tuesday at 10am",
        );
        assert!(
            reply.lines().any(|l| l.starts_with("- book_flight")),
            "lexical {lexical}: {reply}"
        );
        assert!(
            chef.tools()
                .found()
                .iter()
                .any(|t| t.name.as_str() == "book_flight"),
            "lexical {lexical}"
        );
        // Words that fit nothing still find nothing.
        let reply = find(&mut chef, "c2", "write a sonnet about the sea");
        assert!(
            reply.starts_with("No tool fits"),
            "lexical {lexical}: {reply}"
        );
    }
}

/// A call of a tool the ranked list left out is answered with a search for the name's
/// words, in the same round: the tool is found and callable by name from the next step.
/// The search holds the gate (a blocked tool is refused, never found), a made-up name
/// finds its neighbours or says how to search, and find_tools' non-JSON arguments are
/// said to be so.
#[test]
fn a_call_of_a_tool_not_offered_searches_for_it_and_never_reaches_a_blocked_one() {
    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let before = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        !before.iter().any(|n| n == "send_markdown_email"),
        "{before:?}"
    );
    let call = ToolCall::new(
        "c1",
        "send_markdown_email",
        json!({"to": "ops@example.com"}),
    );
    let routed = chef.route(&call);
    let Routed::Lookup { reply, .. } = &routed else {
        panic!("a call of a tool not offered is answered with a search: {routed:?}");
    };
    assert!(
        reply.starts_with("No tool named \"send_markdown_email\" is among your tools"),
        "{reply}"
    );
    assert!(reply.contains("send_markdown_email("), "{reply}");
    assert!(
        found_names(&chef)
            .iter()
            .any(|n| n == "send_markdown_email")
    );
    let after = wire_names(&mut chef, Target::OpenAiChat);
    assert_eq!(
        after[..before.len()],
        before[..],
        "found tools are appended"
    );
    assert!(
        after.iter().any(|n| n == "send_markdown_email"),
        "{after:?}"
    );

    // Blocked: refused as blocked, never searched for, never found.
    let mut chef = discovery(3);
    chef.tools_mut().set_blocked(["send_markdown_email"]);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    wire_names(&mut chef, Target::OpenAiChat);
    assert!(matches!(chef.route(&call), Routed::Blocked { .. }));
    assert!(found_names(&chef).is_empty());
    // A near miss of the blocked name is not searched for either: its words would find
    // other tools the model did not ask for (send_email, …). The plain error, no finds.
    let typo = ToolCall::new("c4", "send_markdwn_email", json!({"to": "ops@example.com"}));
    let routed = chef.route(&typo);
    let Routed::Error { reply, .. } = &routed else {
        panic!("a near miss of a blocked name stays an error: {routed:?}");
    };
    assert!(
        reply.contains("No tool named \"send_markdwn_email\""),
        "{reply}"
    );
    assert!(!reply.contains("Did you mean"), "{reply}");
    assert!(found_names(&chef).is_empty(), "{:?}", found_names(&chef));
    // A search for the blocked tool by its name, in any spelling, is refused as that tool:
    // it brought back five other tools, and one joined the list (found by session 41's
    // library audit). A search in words is a search.
    for query in [
        "send_markdown_email",
        "Send-Markdown-Email",
        "send_markdown_emaіl",
    ] {
        let search = ToolCall::new("c5", "find_tools", json!({"query": query}));
        let routed = chef.route(&search);
        let Routed::Blocked { name, .. } = &routed else {
            panic!("{query}: {routed:?}");
        };
        assert_eq!(name, "send_markdown_email");
    }
    assert!(found_names(&chef).is_empty(), "{:?}", found_names(&chef));
    let search = ToolCall::new("c6", "find_tools", json!({"query": "send an email"}));
    assert!(matches!(chef.route(&search), Routed::Lookup { .. }));

    // Nor is a sibling on the list suggested in its place (the blocked tool is not on
    // the list under discovery, but it is still the nearest name).
    let mut chef = discovery(3);
    chef.tools_mut().set_blocked(["gdrive_upload_file"]);
    chef.push(Message::user("List the files in my Google Drive folder"));
    let offered = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        offered.iter().any(|n| n.starts_with("gdrive_")),
        "{offered:?}"
    );
    let typo = ToolCall::new("c6", "gdrive_upload_files", json!({}));
    let routed = chef.route(&typo);
    let Routed::Error { reply, .. } = &routed else {
        panic!("{routed:?}");
    };
    assert!(!reply.contains("Did you mean"), "{reply}");
    assert!(found_names(&chef).is_empty());

    // A name no tool has, whose words fit nothing: the error, with how to search.
    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    wire_names(&mut chef, Target::OpenAiChat);
    let made_up = ToolCall::new("c2", "zqxv_wvut", json!({}));
    let Routed::Error { reply, .. } = chef.route(&made_up) else {
        panic!("a name whose words fit nothing stays an error");
    };
    assert!(reply.contains("No tool named \"zqxv_wvut\""), "{reply}");
    assert!(reply.contains("call find_tools"), "{reply}");

    // find_tools' arguments that are not JSON are said to be so.
    let garbled = ToolCall::new("c3", "find_tools", json!("{not json"));
    let Routed::Lookup { reply, .. } = chef.route(&garbled) else {
        panic!("find_tools answers garbled arguments itself");
    };
    assert!(reply.contains("were not JSON"), "{reply}");

    // Without discovery nothing is searched: the plain error.
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::One));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("hi"));
    wire_names(&mut chef, Target::OpenAiChat);
    let Routed::Error { reply, .. } = chef.route(&made_up) else {
        panic!("an unknown name is an error");
    };
    assert!(!reply.contains("find_tools"), "{reply}");
    assert!(!reply.contains("Did you mean"), "{reply}");
    // A typo of a listed name is told the name it meant; never a blocked one, and not a
    // sibling when the blocked tool is the nearest.
    let typo = ToolCall::new("c5", "gdrive_upload_files", json!({}));
    let Routed::Error { reply, .. } = chef.route(&typo) else {
        panic!("a typo is an error");
    };
    assert!(
        reply.starts_with(
            "No tool named \"gdrive_upload_files\". Did you mean \"gdrive_upload_file\"?"
        ),
        "{reply}"
    );
    chef.tools_mut().set_blocked(["gdrive_upload_file"]);
    wire_names(&mut chef, Target::OpenAiChat);
    let routed = chef.route(&typo);
    let reply = routed.reply().unwrap_or_default().to_owned();
    assert!(!reply.contains("Did you mean"), "{routed:?}");
}

#[test]
fn a_blocked_tool_is_never_found_offered_or_callable() {
    let mut chef = discovery(3);
    chef.tools_mut().set_blocked(["send_markdown_email"]);
    chef.push(Message::user("Email the weekly report to the team"));
    let reply = find(&mut chef, "c1", "send a markdown email");
    assert!(!reply.contains("send_markdown_email("), "{reply}");
    let names = wire_names(&mut chef, Target::OpenAiChat);
    let found = found_names(&chef);
    assert!(
        !found.iter().any(|n| n == "send_markdown_email"),
        "{found:?}"
    );
    let call = ToolCall::new("c2", "send_markdown_email", json!({}));
    assert!(
        matches!(chef.route(&call), Routed::Blocked { .. }),
        "{names:?}"
    );
    // find_tools itself can be blocked.
    chef.tools_mut().set_blocked(["find_tools"]);
    let call = ToolCall::new("c3", "find_tools", json!({"query": "email"}));
    assert!(matches!(chef.route(&call), Routed::Blocked { .. }));
}

/// A refusal names the tool the call reached by its real name, never by the blocklist's
/// own spelling of the entry (which the model never wrote, and which reaches no tool as
/// written): found in a gateway audit with `blocked = ["Send.Markdown.Email"]`.
#[test]
fn a_blocked_call_is_refused_by_the_tools_real_name_not_the_entrys_spelling() {
    let mut chef = discovery(3);
    chef.tools_mut().set_blocked(["Send.Markdown.Email"]);
    chef.push(Message::user("Email the weekly report to the team"));
    wire_names(&mut chef, Target::OpenAiChat);
    for written in [
        "send_markdown_email",
        "SendMarkdownEmail",
        "send-markdown-email",
    ] {
        let routed = chef.route(&ToolCall::new("c1", written, json!({})));
        let Routed::Blocked { reply, .. } = &routed else {
            panic!("{written}: {routed:?}");
        };
        assert_eq!(reply, "Tool \"send_markdown_email\" is currently blocked.");
    }
}

/// Blocked, chef's `find_tools` is not offered either: not on the wire, not advertised by
/// the discovery note, not reported as an entry that matches nothing, and a call to it is
/// refused. Unblocked, it comes back (in any case or separators, as every entry).
#[test]
fn a_blocked_find_tools_is_neither_offered_nor_advertised() {
    let mut chef = discovery(5);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let system = |chef: &mut Chef| {
        let body: Value =
            serde_json::from_slice(&chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
        body["messages"][0]["content"].to_string()
    };
    for entry in ["find_tools", "Find-Tools"] {
        chef.tools_mut().set_blocked([entry]);
        let names = wire_names(&mut chef, Target::OpenAiChat);
        assert_eq!(names.len(), 5, "{entry}: {names:?}");
        assert!(!names.iter().any(|n| n == "find_tools"), "{names:?}");
        assert!(!system(&mut chef).contains("find_tools"), "{entry}");
        assert!(chef.tools().unmatched_blocked().is_empty(), "{entry}");
        let call = ToolCall::new("c1", "find_tools", json!({"query": "fuel prices"}));
        assert!(
            matches!(chef.route(&call), Routed::Blocked { .. }),
            "{entry}"
        );
    }
    chef.tools_mut().set_blocked(Vec::<String>::new());
    assert_eq!(
        wire_names(&mut chef, Target::OpenAiChat)
            .last()
            .map(String::as_str),
        Some("find_tools")
    );
    assert!(system(&mut chef).contains("call find_tools"));
}

/// An agent's own tool named `find_tools` takes the place of chef's: chef neither offers
/// its search nor advertises it, and the agent's tool is ranked, offered and routed like
/// its other tools (offered when it fits the request, called by the agent, not answered
/// by chef).
#[test]
fn an_agents_find_tools_is_ranked_like_its_tools_and_chef_advertises_no_search() {
    let own = chef_ir::ToolDefinition::new(
        "find_tools",
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
    )
    .with_description("Search the company's document archive for equipment manuals.");
    let mut chef = discovery(5);
    let mut tools = real_tools();
    tools.push(own);
    chef.register_tools(tools).unwrap();
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert!(!names.iter().any(|n| n == "find_tools"), "{names:?}");
    let body: Value =
        serde_json::from_slice(&chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
    assert!(
        !body["messages"][0]["content"]
            .to_string()
            .contains("find_tools"),
        "no note advertises a search chef does not answer"
    );
    chef.push(Message::user(
        "Search the document archive for the forklift equipment manual",
    ));
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert!(names.iter().any(|n| n == "find_tools"), "{names:?}");
    let call = ToolCall::new("c1", "find_tools", json!({"q": "forklift manual"}));
    assert!(
        matches!(chef.route(&call), Routed::Call(_)),
        "the agent's tool runs: {:?}",
        chef.route(&call)
    );
}

#[test]
fn a_blocked_tool_is_never_among_the_ranked_tools_and_frees_its_slot() {
    let mut chef = discovery(3);
    chef.push(Message::user("Send a markdown email to the team"));
    let before = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        before.iter().any(|n| n == "send_markdown_email"),
        "the unblocked ranking offers it: {before:?}"
    );
    chef.tools_mut().set_blocked(["send_markdown_email"]);
    let after = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        !after.iter().any(|n| n == "send_markdown_email"),
        "{after:?}"
    );
    // The slot goes to the next-ranked tool: still three ranked tools and find_tools.
    assert_eq!(after.len(), before.len(), "{before:?} -> {after:?}");
    // Unblocked, it comes back.
    chef.tools_mut().set_blocked(Vec::<String>::new());
    assert_eq!(wire_names(&mut chef, Target::OpenAiChat), before);
}

/// With `HybridOptions::needs_shared_word` (opt-in), text with no word any tool uses —
/// made-up words, small talk — gets no ranked tool and `find_tools` finds nothing for it:
/// the bundled static model's cosine on such text reaches the threshold through word
/// pieces and common words. By default it is offered tools (what the rule is for).
/// Requests that name what a tool does are answered either way.
#[test]
fn text_that_shares_no_word_with_the_catalogue_gets_no_tool_when_a_word_is_needed() {
    let strict = || {
        let config = chef::compress::search::dense::DenseConfig::bundled().unwrap();
        let options = config.options.with_needs_shared_word(true);
        let mut chef = discovery(10);
        chef.tools_mut().set_embedder(config.with_options(options));
        chef
    };
    let mut plain = discovery(10);
    plain.push(Message::user("xyzzy plugh frobnicate"));
    assert!(wire_names(&mut plain, Target::OpenAiChat).len() > 1);
    for request in ["xyzzy plugh frobnicate", "hello there, how are you?"] {
        let mut chef = strict();
        chef.push(Message::user(request));
        assert_eq!(
            wire_names(&mut chef, Target::OpenAiChat),
            ["find_tools"],
            "{request}"
        );
        assert!(chef.tools().search(request, 5).is_empty(), "{request}");
        let reply = find(&mut chef, "c1", request);
        assert!(reply.starts_with("No tool fits"), "{request}: {reply}");
    }
    let mut chef = strict();
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    assert!(
        wire_names(&mut chef, Target::OpenAiChat)
            .iter()
            .any(|n| n == "get_diesel_price")
    );
}

/// When the only tool that fits is blocked, nothing fits: the list offers no ranked tool
/// in its place and `find_tools` says so, as the session's own search does, instead of
/// handing the model the next-ranked tools, which do not fit (without
/// `summarize_document`, the catalogue has no tool for "summarize this document"). Other
/// requests still find their tools, and unblocked the tool comes back.
#[test]
fn when_only_a_blocked_tool_fits_nothing_is_offered_in_its_place() {
    let request = "Summarize this document";
    let mut chef = discovery(3);
    chef.push(Message::user(request));
    let before = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        before.iter().any(|n| n == "summarize_document"),
        "{before:?}"
    );
    chef.tools_mut().set_blocked(["summarize_document"]);
    assert_eq!(wire_names(&mut chef, Target::OpenAiChat), ["find_tools"]);
    assert!(chef.tools().search(request, 3).is_empty());
    let reply = find(&mut chef, "c1", "summarize a document");
    assert!(reply.starts_with("No tool fits"), "{reply}");
    assert!(found_names(&chef).is_empty());
    // A request that another tool fits still finds it, the blocked tool costing no place.
    let found: Vec<&str> = chef
        .tools()
        .search("send a markdown email", 3)
        .into_iter()
        .map(|(t, _)| t.name.as_str())
        .collect();
    assert_eq!(found.first(), Some(&"send_markdown_email"), "{found:?}");
    chef.tools_mut().set_blocked(Vec::<String>::new());
    chef.push(Message::user(request));
    assert!(
        wire_names(&mut chef, Target::OpenAiChat)
            .iter()
            .any(|n| n == "summarize_document")
    );
}

#[test]
fn a_blocked_tool_is_not_offered_by_a_catalogue_shown_whole() {
    let mut chef = discovery(1_000);
    chef.tools_mut().set_blocked(["send_markdown_email"]);
    chef.push(Message::user("Send a markdown email to the team"));
    let names = wire_names(&mut chef, Target::Anthropic);
    assert!(!names.iter().any(|n| n == "send_markdown_email"));
    assert_eq!(names.len(), real_tools().len() - 1);

    // K + 1 tools with one blocked: the K that may be offered are shown whole, with no
    // search (there is nothing left to find).
    let mut chef = Chef::new(ChefConfig::default().with_prune(PrunePolicy::discover(10)));
    let eleven: Vec<_> = real_tools().into_iter().take(11).collect();
    let blocked = eleven[0].name.as_str().to_owned();
    chef.register_tools(eleven).unwrap();
    chef.tools_mut().set_blocked([blocked.as_str()]);
    chef.push(Message::user("Write me a sonnet about the sea"));
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert_eq!(names.len(), 10, "{names:?}");
    assert!(!names.iter().any(|n| n == "find_tools" || *n == blocked));
}

/// The session's own search (`Tools::search`, the Python `search()`) finds what
/// `find_tools` finds: a blocked tool or one off the allowlist is ranked, then dropped
/// (it costs no place), and a query the index abstains on finds nothing.
#[test]
fn the_sessions_search_holds_the_gate_like_find_tools() {
    let names = |chef: &Chef, query: &str| -> Vec<String> {
        chef.tools()
            .search(query, 3)
            .into_iter()
            .map(|(t, _)| t.name.as_str().to_owned())
            .collect()
    };
    let mut chef = discovery(3);
    let open = names(&chef, "what is the diesel price");
    assert_eq!(open.first().map(String::as_str), Some("get_diesel_price"));
    let scores: Vec<f64> = chef
        .tools()
        .search("what is the diesel price", 3)
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    chef.tools_mut().set_blocked(["GET-DIESEL-PRICE"]);
    let blocked = names(&chef, "what is the diesel price");
    assert!(
        !blocked.iter().any(|n| n == "get_diesel_price"),
        "{blocked:?}"
    );
    // The pruner's own ranking has no gate; the session's is that ranking less the
    // blocked tool, which costs no place.
    let ungated: Vec<String> = chef
        .tools()
        .pruner()
        .rank_search("what is the diesel price", 10)
        .tools
        .iter()
        .map(|t| t.name.as_str().to_owned())
        .collect();
    assert_eq!(ungated[0], "get_diesel_price");
    let expected: Vec<String> = ungated.into_iter().skip(1).take(3).collect();
    assert_eq!(blocked, expected);
    chef.tools_mut().set_blocked(Vec::<String>::new());
    chef.tools_mut().set_allowlist(Some(["geocode_address"]));
    assert!(names(&chef, "what is the diesel price").is_empty());
    assert_eq!(names(&chef, "geocode an address"), ["geocode_address"]);
    chef.tools_mut().set_allowlist(None::<Vec<String>>);
    assert!(names(&chef, "write a sonnet about the sea").is_empty());
}

/// A search leaves out what scores under a tenth of the best of the whole ranking, a
/// blocked best match included: dropping it does not let in the tools it outranked by far.
#[test]
fn a_blocked_best_match_does_not_lower_the_floor_of_a_search() {
    let query = "what is the diesel price";
    let mut chef = discovery(3);
    let whole = chef.tools().pruner().rank_search(query, 30);
    let top = whole
        .reasons
        .iter()
        .map(|reason| reason.score().unwrap())
        .fold(0.0, f64::max);
    let (kept, best) = chef
        .tools()
        .pruner()
        .rank_search_among_with_best(query, 30, &|n| n != "get_diesel_price");
    assert_eq!(best, top);
    assert!(kept.tools.iter().all(|t| t.name != "get_diesel_price"));
    chef.tools_mut().set_blocked(["get_diesel_price"]);
    let found = chef.tools().search(query, 10);
    assert!(!found.is_empty());
    for (tool, s) in &found {
        assert!(
            *s >= top * chef::owned::FOUND_SCORE_FLOOR,
            "{} scores {s}, under a tenth of {top}",
            tool.name.as_str()
        );
    }
}

#[test]
fn the_allowlist_bounds_what_a_search_finds() {
    let mut chef = discovery(3);
    chef.tools_mut()
        .set_allowlist(Some(["get_diesel_price", "geocode_address"]));
    chef.push(Message::user("What is the diesel price?"));
    let reply = find(&mut chef, "c1", "send an email");
    assert!(!reply.contains("send_markdown_email"), "{reply}");
    let reply = find(&mut chef, "c2", "geocode an address");
    assert!(reply.contains("geocode_address"), "{reply}");
}

#[test]
fn found_tools_belong_to_their_request_and_called_tools_stay_while_called() {
    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio?"));
    find(&mut chef, "c1", "send an email");
    assert!(!chef.tools().found().is_empty());
    // The model calls a found tool; it is answered.
    wire_names(&mut chef, Target::Anthropic);
    let call = chef
        .tools()
        .encode_call(
            "send_markdown_email",
            json!({"to": "ops@example.com", "subject": "diesel", "markdown": "$3.80"}),
        )
        .unwrap();
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        call.clone(),
    )]));
    chef.push(Message::tool_results(vec![ToolResult::text(
        call.id.clone(),
        "sent",
    )]));
    // A new request: the earlier finds are gone, the called tool stays.
    chef.push(Message::assistant("Sent."));
    chef.push(Message::user("Now geocode 1 Main St, Columbus OH"));
    assert!(chef.tools().found().is_empty());
    let names = wire_names(&mut chef, Target::Anthropic);
    assert!(
        names.iter().any(|n| n == "send_markdown_email"),
        "{names:?}"
    );
}

#[test]
fn ranked_pruning_keeps_a_called_tool_after_the_task_moves() {
    let mut chef = Chef::new(ChefConfig::default().with_prune(PrunePolicy::ranked(3)));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("What is the diesel price in Ohio?"));
    let first = wire_names(&mut chef, Target::OpenAiChat);
    assert!(first.iter().any(|n| n == "get_diesel_price"), "{first:?}");
    let call = ToolCall::new("c1", "get_diesel_price", json!({"state": "OH"}));
    chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
    chef.push(Message::tool_results(vec![ToolResult::text("c1", "$3.80")]));
    chef.push(Message::assistant("$3.80 a gallon."));
    chef.push(Message::user("Geocode 1 Main St, Columbus OH for me"));
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert!(names.iter().any(|n| n == "get_diesel_price"), "{names:?}");
    // An error result does not keep a tool.
    let mut chef = Chef::new(ChefConfig::default().with_prune(PrunePolicy::ranked(3)));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("What is the diesel price in Ohio?"));
    wire_names(&mut chef, Target::OpenAiChat);
    let call = ToolCall::new("c1", "get_diesel_price", json!({"state": "OH"}));
    chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
    chef.push(Message::tool_results(vec![ToolResult::error("c1", "down")]));
    chef.push(Message::user("Geocode 1 Main St, Columbus OH for me"));
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert!(!names.iter().any(|n| n == "get_diesel_price"), "{names:?}");
}

#[test]
fn the_identical_refused_call_gets_a_shorter_different_correction() {
    let mut chef = discovery(5);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    chef.compile(Target::OpenAiChat).unwrap();
    let call = ToolCall::new(
        "c1",
        "get_diesel_price",
        json!({"region": null, "bogus": 1}),
    );
    // Each reply pushed and its refusal answered, as a loop does.
    let refuse = |chef: &mut Chef, call: &ToolCall| {
        chef.push(Message::assistant_with(vec![Content::ToolCall(
            call.clone(),
        )]));
        let Routed::Error { reply, .. } = chef.route(call) else {
            panic!("refused");
        };
        chef.push(Message::tool_results(vec![ToolResult::error(
            call.id.as_str(),
            reply.clone(),
        )]));
        reply
    };
    // The same call twice in one reply: the model has not read the first refusal yet,
    // so the second copy gets the same full text.
    let twin = ToolCall::new("c1b", "get_diesel_price", call.arguments.clone());
    chef.push(Message::assistant_with(vec![
        Content::ToolCall(call.clone()),
        Content::ToolCall(twin.clone()),
    ]));
    let (Routed::Error { reply: first, .. }, Routed::Error { reply: same, .. }) =
        (chef.route(&call), chef.route(&twin))
    else {
        panic!("refused");
    };
    assert_eq!(same, first);
    chef.push(Message::tool_results(vec![
        ToolResult::error("c1", first.clone()),
        ToolResult::error("c1b", same),
    ]));
    let second = refuse(&mut chef, &call);
    assert_ne!(first, second);
    // One line: the typed signature, in level 1's notation.
    assert_eq!(
        second,
        "Refused again. Send exactly get_diesel_price(state?: string, limit?: number); \
         ? = optional: omit, never null."
    );
    // Sent a third time: the same short text (the model is not told anything new).
    let again = refuse(&mut chef, &call);
    assert_eq!(again, second);
    // A different call in between: the full text again.
    let other = ToolCall::new("c2", "get_diesel_price", json!({"bogus": 2}));
    let third = refuse(&mut chef, &other);
    assert!(!third.starts_with("Refused again"), "{third}");

    // find_tools' own arguments too.
    let search = ToolCall::new("s1", "find_tools", json!({"query": "diesel", "limit": 50}));
    let first = refuse(&mut chef, &search);
    assert!(first.contains("at most 10"), "{first}");
    let second = refuse(&mut chef, &search);
    assert!(
        second.starts_with("Refused again. Send exactly find_tools("),
        "{second}"
    );
    // Also when the loop pushes each result before routing the next call (the README's
    // Python loop does).
    let (a, b) = (
        ToolCall::new("d1", "get_diesel_price", json!({"zzz": 1})),
        ToolCall::new("d2", "get_diesel_price", json!({"zzz": 1})),
    );
    chef.push(Message::assistant_with(vec![
        Content::ToolCall(a.clone()),
        Content::ToolCall(b.clone()),
    ]));
    let Routed::Error { reply: ra, .. } = chef.route(&a) else {
        panic!("refused");
    };
    chef.push(Message::tool_results(vec![ToolResult::error(
        "d1",
        ra.clone(),
    )]));
    let Routed::Error { reply: rb, .. } = chef.route(&b) else {
        panic!("refused");
    };
    chef.push(Message::tool_results(vec![ToolResult::error(
        "d2",
        rb.clone(),
    )]));
    assert_eq!(ra, rb);
    assert!(!rb.starts_with("Refused again"), "{rb}");
}

#[test]
fn the_response_format_constrains_each_tools_arguments_by_its_own_schema() {
    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let payload = chef.compile(Target::OpenAiChat).unwrap();
    let format = serde_json::to_value(chef.response_format().unwrap()).unwrap();
    let branches = format["json_schema"]["schema"]["anyOf"].as_array().unwrap();
    // One branch per wire tool, then the answer without a call.
    assert_eq!(branches.len(), payload.meta.wire_tools.len() + 1);
    assert_eq!(branches.last().unwrap()["required"], json!(["answer"]));
    for (branch, name) in branches.iter().zip(&payload.meta.wire_tools) {
        assert_eq!(branch["properties"]["name"]["const"], json!(name.as_str()));
        let arguments = &branch["properties"]["arguments"];
        if arguments.get("properties").is_some() {
            assert_eq!(arguments["additionalProperties"], json!(false), "{name}");
        }
    }
    let diesel = branches
        .iter()
        .find(|b| b["properties"]["name"]["const"] == "get_diesel_price")
        .unwrap();
    let original = real_tools()
        .into_iter()
        .find(|t| t.name == "get_diesel_price")
        .unwrap()
        .input_schema;
    let required = |v: &Value| v.as_array().cloned().unwrap_or_default();
    assert_eq!(
        required(&diesel["properties"]["arguments"]["required"]),
        required(&original["required"]),
    );
    let properties = |v: &Value| {
        v.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(
        properties(&diesel["properties"]["arguments"]["properties"]),
        properties(&original["properties"]),
    );
    // A constrained search cannot be blank; the tool on the wire says nothing of it.
    let search = branches
        .iter()
        .find(|b| b["properties"]["name"]["const"] == "find_tools")
        .unwrap();
    assert_eq!(
        search["properties"]["arguments"]["properties"]["query"]["minLength"],
        1
    );
    let body: Value = serde_json::from_slice(&payload.body).unwrap();
    let wire = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "find_tools")
        .unwrap();
    assert!(
        wire["function"]["parameters"]["properties"]["query"]
            .get("minLength")
            .is_none()
    );
    // Identical input, identical bytes.
    assert_eq!(
        serde_json::to_vec(&chef.response_format().unwrap()).unwrap(),
        serde_json::to_vec(&chef.response_format().unwrap()).unwrap()
    );
}

#[test]
fn kept_reasons_say_why_a_tool_is_offered() {
    let mut chef = discovery(2);
    chef.push(Message::user("What is the diesel price in Ohio?"));
    find(&mut chef, "c1", "send an email");
    let reasons = chef.compile(Target::Anthropic).unwrap().meta.kept;
    assert!(
        reasons
            .iter()
            .any(|(_, r)| matches!(r, KeepReason::Found { query } if query == "send an email")),
        "{reasons:?}"
    );
}

#[test]
fn with_no_ranked_tools_the_model_sees_the_search_tool_alone_and_calls_what_it_finds() {
    // `top_k: 0` is what `chef mcp serve`'s discover mode shows a host: `find_tools` alone.
    let mut chef = discovery(0);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    assert_eq!(wire_names(&mut chef, Target::OpenAiChat), ["find_tools"]);
    assert_eq!(consts(&chef), [json!("find_tools"), Value::Null]);
    let reply = find(&mut chef, "c1", "diesel price");
    assert!(reply.contains("get_diesel_price("), "{reply}");
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert_eq!(names[0], "find_tools", "{names:?}");
    assert!(names.iter().any(|n| n == "get_diesel_price"), "{names:?}");
    assert!(consts(&chef).contains(&json!("get_diesel_price")));
    let call = ToolCall::new("c2", "get_diesel_price", json!({"state": "OH"}));
    assert!(
        matches!(chef.route(&call), Routed::Call(_)),
        "a found tool routes"
    );
}

/// The tool names the constrained format allows (`Null` for the answer branch).
fn consts(chef: &Chef) -> Vec<Value> {
    let format = serde_json::to_value(chef.response_format().unwrap()).unwrap();
    let schema = &format["json_schema"]["schema"];
    match schema["anyOf"].as_array() {
        Some(branches) => branches
            .iter()
            .map(|b| b["properties"]["name"]["const"].clone())
            .collect(),
        None => vec![schema["properties"]["name"]["const"].clone()],
    }
}

#[test]
fn after_a_search_in_vain_the_constrained_format_offers_an_answer_not_another_search() {
    let mut chef = discovery(3);
    chef.push(Message::user("Write me a sonnet about the sea"));
    chef.compile(Target::OpenAiChat).unwrap();
    assert!(consts(&chef).contains(&json!("find_tools")));
    find(&mut chef, "c1", "compose a sonnet about the ocean waves");
    chef.compile(Target::OpenAiChat).unwrap();
    let after = consts(&chef);
    assert!(!after.contains(&json!("find_tools")), "{after:?}");
    // The answer branch (no name) is still there.
    assert!(after.contains(&Value::Null), "{after:?}");
    // A new request may search again.
    chef.push(Message::assistant("I cannot write poems with my tools."));
    chef.push(Message::user("Then what is the diesel price in Ohio?"));
    chef.compile(Target::OpenAiChat).unwrap();
    assert!(consts(&chef).contains(&json!("find_tools")));
}

#[test]
fn a_catalogue_no_larger_than_k_is_shown_whole_without_the_search_tool() {
    let mut chef = Chef::new(ChefConfig::default().with_prune(PrunePolicy::discover(10)));
    let three: Vec<_> = real_tools().into_iter().take(3).collect();
    chef.register_tools(three).unwrap();
    chef.push(Message::user("Write me a sonnet about the sea"));
    let names = wire_names(&mut chef, Target::OpenAiChat);
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(!names.iter().any(|n| n == "find_tools"));
    let call = ToolCall::new("c1", "find_tools", json!({"query": "poems"}));
    assert!(matches!(chef.route(&call), Routed::Error { .. }));
}

/// A query is "a few words": a blank one is said to be missing as find_tools words it, a
/// page-long one is refused without being searched or quoted back, and a made-up name a
/// page long is searched by its first words only and quoted cut.
#[test]
fn a_blank_or_page_long_query_or_name_is_answered_briefly() {
    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let _ = wire_names(&mut chef, Target::OpenAiChat);
    for blank in ["", "   "] {
        let reply = find(&mut chef, "b", blank);
        assert!(reply.starts_with("find_tools needs a query"), "{reply}");
    }
    let page = "send the report by email ".repeat(40);
    let reply = find(&mut chef, "p", &page);
    assert!(
        reply.starts_with("find_tools' query is 999 characters; it takes at most 500"),
        "{reply}"
    );
    assert!(reply.len() < 300, "{reply}");
    assert!(found_names(&chef).is_empty());
    // At the limit it is searched.
    let words = "email ".repeat(83);
    assert!(find(&mut chef, "w", words.trim()).starts_with("Tools for"));
    // Quoted back escaped, as names are.
    let reply = find(&mut chef, "e", "send email\u{1b}[2J\u{202e}");
    assert!(reply.contains("send email\\u{1b}[2J\\u{202e}"), "{reply}");

    let name = format!("send_markdown_email{}", "_x".repeat(50_000));
    let call = ToolCall::new("n", name.as_str(), json!({}));
    let routed = chef.route(&call);
    let reply = match &routed {
        Routed::Lookup { reply, .. } | Routed::Error { reply, .. } => reply,
        other => panic!("{other:?}"),
    };
    assert!(reply.len() < 3_000, "{} characters", reply.len());
    assert!(reply.contains("send_markdown_email("), "{reply}");
}

/// Under discovery a typo or another case of a listed tool's name is told the name it
/// meant, as at levels 0–1 without discovery, not handed a search; a camelCase name of a
/// tool not listed is searched by its words.
#[test]
fn a_near_miss_of_a_listed_tool_gets_the_name_it_meant_not_a_search() {
    let mut chef = discovery(10);
    chef.push(Message::user(
        "send the markdown report by email to the team",
    ));
    let listed = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        listed.iter().any(|n| n == "send_markdown_email"),
        "{listed:?}"
    );
    for written in ["send_markdown_emial", "Send_Markdown_Email"] {
        let checked = chef.check_tool_call(&ToolCall::new("c", written, json!({})));
        let routed = chef.route(&ToolCall::new("c", written, json!({})));
        assert_eq!(routed, checked, "{written}");
        let Routed::Error { reply, .. } = &routed else {
            panic!("{written}: {routed:?}");
        };
        assert!(
            reply.contains("Did you mean \"send_markdown_email\"?"),
            "{written}: {reply}"
        );
        assert!(found_names(&chef).is_empty(), "{written}");
    }

    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let listed = wire_names(&mut chef, Target::OpenAiChat);
    assert!(
        !listed.iter().any(|n| n == "send_markdown_email"),
        "{listed:?}"
    );
    // check_tool_call answers as route will, and records nothing.
    let checked = chef.check_tool_call(&ToolCall::new("c", "sendMarkdownEmail", json!({})));
    assert!(matches!(checked, Routed::Lookup { .. }), "{checked:?}");
    assert!(found_names(&chef).is_empty());
    let routed = chef.route(&ToolCall::new("c", "sendMarkdownEmail", json!({})));
    assert_eq!(routed, checked);
    let Routed::Lookup { reply, .. } = &routed else {
        panic!("{routed:?}");
    };
    assert!(
        reply.contains("Tools for \"send Markdown Email\""),
        "{reply}"
    );
    assert!(
        found_names(&chef)
            .iter()
            .any(|n| n == "send_markdown_email")
    );

    // A real tool the ranking left out that only shares a word with a listed one is no
    // slip: it is searched for, not steered to the listed tool (session 38's gateway
    // audit: `get_order_details` was told "Did you mean get_fifo_report?").
    assert!(listed.iter().any(|n| n.starts_with("get_")), "{listed:?}");
    assert!(
        !listed.iter().any(|n| n == "get_order_details"),
        "{listed:?}"
    );
    let routed = chef.route(&ToolCall::new("d", "get_order_details", json!({})));
    let Routed::Lookup { reply, .. } = &routed else {
        panic!("{routed:?}");
    };
    assert!(!reply.contains("Did you mean"), "{reply}");
    assert!(reply.contains("get_order_details("), "{reply}");
}

/// A discovering session after two searches and a call of a found tool.
fn session_that_found_tools() -> Chef {
    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio?"));
    wire_names(&mut chef, Target::Anthropic);
    find(&mut chef, "c1", "send an email");
    wire_names(&mut chef, Target::OpenAiChat);
    find(&mut chef, "c2", "geocode an address");
    wire_names(&mut chef, Target::Gemini);
    chef
}

#[test]
fn a_resumed_session_offers_the_same_found_tools_in_the_same_order() {
    let mut live = session_that_found_tools();
    assert!(
        live.tools().found().len() >= 2,
        "{:?}",
        live.tools().found()
    );
    let snapshot = live.snapshot(Some("found"));
    assert!(!snapshot.payload.discovery.found.is_empty());
    assert!(!snapshot.payload.discovery.extra_order.is_empty());
    // Through the file format too (what save/load write and read).
    let bytes = chef::snapshot::to_vec(&snapshot).unwrap();
    let read: chef::snapshot::Snapshot<chef::SessionState> =
        chef::snapshot::from_slice(&bytes).unwrap();
    let mut resumed = discovery(3);
    resumed.restore(&read).unwrap();
    assert_eq!(resumed.tools().found(), live.tools().found());
    assert_same_bytes(&mut resumed, &mut live);
}

#[test]
fn a_session_that_never_searched_saves_no_discovery_member() {
    let mut chef = discovery(3);
    chef.push(Message::user("What is the diesel price in Ohio?"));
    wire_names(&mut chef, Target::Anthropic);
    let bytes = chef::snapshot::to_vec(&chef.snapshot(None)).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("\"discovery\""));
}

#[tokio::test]
async fn a_journal_replays_what_the_searches_found() {
    let (store, id, mut journal) = memory_journal("found");
    let mut live = discovery(3);
    live.push(Message::user("What is the diesel price in Ohio?"));
    wire_names(&mut live, Target::Anthropic);
    journal.save(&live).await.unwrap();
    // A delta record carries the finds.
    find(&mut live, "c1", "send an email");
    wire_names(&mut live, Target::OpenAiChat);
    journal.save(&live).await.unwrap();
    let mut resumed = replayed(&store, &id, discovery(3)).await;
    assert_eq!(resumed.tools().found(), live.tools().found());
    assert_same_bytes(&mut resumed, &mut live);
}

/// The answer branch's presence in a response format.
fn has_answer_branch(chef: &Chef) -> bool {
    let format = serde_json::to_value(chef.response_format().unwrap()).unwrap();
    format["json_schema"]["schema"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["properties"].get("answer").is_some())
}

#[test]
fn once_the_request_has_a_tool_result_any_setting_may_answer_instead_of_calling() {
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::One));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("What is the diesel price in Ohio?"));
    chef.compile(Target::OpenAiChat).unwrap();
    assert!(!has_answer_branch(&chef), "a first call picks a tool");
    let call = ToolCall::new("c1", "get_diesel_price", json!({}));
    chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
    chef.push(Message::tool_results(vec![ToolResult::text("c1", "$3.89")]));
    chef.compile(Target::OpenAiChat).unwrap();
    assert!(has_answer_branch(&chef), "the task may be done");
    // A new request starts again with a call.
    chef.push(Message::assistant("$3.89 a gallon."));
    chef.push(Message::user("And in Texas?"));
    chef.compile(Target::OpenAiChat).unwrap();
    assert!(!has_answer_branch(&chef));
}

fn call_and_answer(chef: &mut Chef, id: &str, name: &str, args: Value) {
    let call = ToolCall::new(id, name, args);
    chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
    chef.push(Message::tool_results(vec![ToolResult::text(
        id,
        "ok: 3 rows",
    )]));
}

#[test]
fn a_model_that_repeats_an_answered_call_is_told_to_answer_after_the_cached_prefix() {
    let notice = "You called `health_check` again with the same arguments as before";
    let has_notice = |body: &[u8]| String::from_utf8_lossy(body).contains(notice);
    for target in Target::ALL {
        let mut chef = discovery(3);
        chef.push(Message::user("Is the service healthy?"));
        call_and_answer(&mut chef, "c1", "health_check", json!({}));
        let first = chef.compile(target).unwrap().body;
        assert!(!has_notice(&first), "{target:?}");
        call_and_answer(&mut chef, "c2", "health_check", json!({}));
        let second = chef.compile(target).unwrap().body;
        let text = String::from_utf8_lossy(&second);
        assert!(text.contains(notice), "{target:?}: {text}");
        assert!(text.contains(chef::REPEATED_CALL_ID), "{target:?}: {text}");
        assert_prefix(target, &first, &second, "after the repeated call");
        // Deterministic: the same history compiles to the same bytes.
        assert_eq!(chef.compile(target).unwrap().body, second, "{target:?}");
        // A new request starts afresh: the same call for it is not a repeat.
        chef.push(Message::assistant("The service is healthy."));
        chef.push(Message::user("And now?"));
        call_and_answer(&mut chef, "c3", "health_check", json!({}));
        let third = chef.compile(target).unwrap().body;
        assert!(!has_notice(&third), "{target:?}");
    }
}

#[test]
fn right_after_a_repeated_call_the_constrained_format_has_no_branch_for_that_tool() {
    for level in [Level::Zero, Level::One] {
        let mut chef = asked_at(level, real_tools(), "Is the service healthy?");
        call_and_answer(&mut chef, "c1", "health_check", json!({}));
        chef.compile(Target::OpenAiChat).unwrap();
        assert!(consts(&chef).contains(&json!("health_check")), "{level:?}");
        call_and_answer(&mut chef, "c2", "health_check", json!({}));
        chef.compile(Target::OpenAiChat).unwrap();
        let after = consts(&chef);
        assert!(
            !after.contains(&json!("health_check")),
            "{level:?}: {after:?}"
        );
        assert!(after.contains(&Value::Null), "{level:?}: the answer branch");
        assert!(
            after.contains(&json!("check_health")),
            "{level:?}: the other tools stay"
        );
        // One reply only: a different call brings the branch back.
        call_and_answer(&mut chef, "c3", "check_health", json!({}));
        chef.compile(Target::OpenAiChat).unwrap();
        assert!(consts(&chef).contains(&json!("health_check")), "{level:?}");
    }
    // Off, the format keeps every tool.
    let mut chef = Chef::new(ChefConfig::default().with_repeat_notice(false));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("Is the service healthy?"));
    call_and_answer(&mut chef, "c1", "health_check", json!({}));
    call_and_answer(&mut chef, "c2", "health_check", json!({}));
    chef.compile(Target::OpenAiChat).unwrap();
    assert!(consts(&chef).contains(&json!("health_check")));
}

/// Under discovery a blocked tool leaves the list at every level, so the level-3 resolver
/// cannot see it: a typo of its name in `t(f=…)` must still not be answered with the
/// nearest sibling the list holds.
#[test]
fn at_level_3_a_typo_of_a_blocked_tool_is_not_answered_with_a_sibling() {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_level(Level::Three)
            .with_prune(PrunePolicy::discover(5)),
    );
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("Upload a file to my Google Drive folder"));
    let probe = ToolCall::new("c0", "t", json!({"f": "gdrive_upload_files", "a": {}}));
    chef.compile(Target::OpenAiChat).unwrap();
    // Open, the typo is told the tool (by its name: `t(f=…)` takes names).
    let routed = chef.route(&probe);
    let reply = routed.reply().unwrap_or_default().to_owned();
    assert!(reply.contains("Did you mean"), "{routed:?}");

    chef.tools_mut().set_blocked(["gdrive_upload_file"]);
    chef.compile(Target::OpenAiChat).unwrap();
    let routed = chef.route(&probe);
    let reply = routed.reply().unwrap_or_default().to_owned();
    assert!(!reply.contains("Did you mean"), "{routed:?}");
    assert!(!reply.contains("gdrive_upload_file\""), "{routed:?}");
}
