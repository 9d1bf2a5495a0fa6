//! Level 4: the compiled Python map, re-verified at every compress; level 1 with a map;
//! the compiled corpus map; `compile_tools` with a scripted model.

use std::{
    collections::BTreeMap,
    sync::atomic::{AtomicUsize, Ordering},
};

use chef_compress::{
    CompileOptions, CompiledSink, Completer, CompleterError, CompressError, Level, Options,
    Resolution, compile_prompt, compile_tools, compress,
};
use chef_ir::ToolDefinition;
use serde_json::json;

use crate::{fixture, real_tools, three, tool, tools3};

fn compiled_corpus_map() -> BTreeMap<String, String> {
    serde_json::from_str(
        &std::fs::read_to_string(fixture("real-mcp-tools.compiled-map.json")).unwrap(),
    )
    .unwrap()
}

fn article(required_section: bool) -> ToolDefinition {
    let mut required = vec!["article_id", "content"];
    if required_section {
        required.push("section_title");
    }
    tool(
        "article_append",
        "Append to an article.",
        json!({"type": "object", "properties": {"article_id": {"type": "integer"}, "content": {"type": "string"}, "section_title": {"type": "string"}}, "required": required}),
    )
}

fn pair() -> Vec<ToolDefinition> {
    vec![
        tool(
            "github_create_issue",
            "File a bug.",
            json!({"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}, "required": ["owner", "repo"]}),
        ),
        tool(
            "sentry_list_issues",
            "List errors.",
            json!({"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}),
        ),
    ]
}

fn pair_map() -> [(&'static str, &'static str); 2] {
    [
        (
            "github_create_issue",
            r#"def github_create_issue(owner,repo):"file bug on repo""#,
        ),
        (
            "sentry_list_issues",
            r#"def sentry_list_issues(project):"unresolved errors, most frequent first""#,
        ),
    ]
}

fn level4(
    tools: &[ToolDefinition],
    map: impl IntoIterator<Item = (&'static str, &'static str)>,
) -> chef_compress::Compressed {
    compress(
        tools,
        &Options::new().with_level(Level::Four).with_compiled(map),
    )
    .unwrap()
}

#[test]
fn level_4_with_an_empty_map_still_needs_a_compiled_map() {
    let err = compress(
        &tools3(),
        &Options::new()
            .with_level(Level::Four)
            .with_compiled(BTreeMap::<String, String>::new()),
    )
    .unwrap_err();
    assert!(matches!(err, CompressError::NeedsCompiledMap));
}

#[test]
fn level_4_regenerates_parameters_and_keeps_the_docstring() {
    let c = level4(
        &tools3(),
        [(
            "github_create_issue",
            r#"def github_create_issue(owner,repo,title,body=None,labels=None):"open issue as authed user; not for comments/PRs""#,
        )],
    );
    assert_eq!(c.stats().wire_tool_count, 2);
    assert!(c.system().contains("```python"));
    assert!(c.system().contains(r#"def github_create_issue(owner,repo,title,body?,labels?:string[]):"open issue as authed user; not for comments/PRs""#), "{}", c.system());
    assert!(
        c.system()
            .contains(r#"def slack_post_message(channel,text,thread_ts?):"(not compiled)""#)
    );
    assert_eq!(c.stats().uncompiled_tools, Some(2));
    assert_eq!(c.stats().stale_compiled_tools, Some(vec![]));
    assert_eq!(c.stats().orphaned_compiled_entries, Some(0));
    assert!(
        !c.system().contains("a0"),
        "no codes in the level-4 preamble"
    );
    // Partial map: the uncompiled tool stays callable.
    let call = c.resolve(
        "t",
        &json!({"f": "slack_post_message", "a": {"channel": "C1", "text": "hi"}}),
    );
    assert!(
        matches!(call, Resolution::Call { ref name, .. } if name == "slack_post_message"),
        "{call:?}"
    );
}

#[test]
fn keyword_parameters_go_in_a_trailing_group() {
    let email = tool(
        "send_email",
        "Send mail.",
        json!({"type": "object", "properties": {"to": {}, "from": {}, "subject": {}}, "required": ["to", "subject"]}),
    );
    let c = level4(
        &[email],
        [(
            "send_email",
            r#"def send_email(to,subject,**{"from":None}):"send mail""#,
        )],
    );
    assert!(
        c.system()
            .contains(r#"def send_email(to,subject,**{"from":None}):"send mail""#),
        "{}",
        c.system()
    );
    assert_eq!(c.stats().uncompiled_tools, Some(0));
}

#[test]
fn stale_lines_are_dropped_and_listed_and_orphans_counted() {
    let line = r#"def article_append(article_id,content):"append text to article""#;
    let fresh = level4(&[article(false)], [("article_append", line)]);
    assert_eq!(fresh.stats().stale_compiled_tools, Some(vec![]));
    assert_eq!(fresh.stats().uncompiled_tools, Some(0));
    assert!(matches!(
        fresh.resolve(
            "t",
            &json!({"f": "article_append", "a": {"article_id": 1, "content": "x"}})
        ),
        Resolution::Call { .. }
    ));
    let missing = fresh.resolve("t", &json!({"f": "article_append", "a": {"article_id": 1}}));
    assert!(
        matches!(&missing, Resolution::Error(e) if e.message().contains("content")),
        "{missing:?}"
    );

    let stale = level4(
        &[article(true)],
        [
            ("article_append", line),
            ("gone_tool", r#"def gone_tool():"x""#),
        ],
    );
    assert_eq!(
        stale.stats().stale_compiled_tools,
        Some(vec![
            "article_append: dropped required parameter(s): section_title".to_owned()
        ])
    );
    assert_eq!(stale.stats().uncompiled_tools, Some(1));
    assert_eq!(stale.stats().orphaned_compiled_entries, Some(1));
    assert_eq!(
        stale.stats().orphaned_compiled_names,
        vec!["gone_tool".to_owned()]
    );
    assert!(
        stale
            .system()
            .contains(r#"def article_append(article_id,content,section_title):"(not compiled)""#),
        "{}",
        stale.system()
    );
}

#[test]
fn require_compiled_refuses_missing_or_stale_lines() {
    let line = r#"def article_append(article_id,content):"append text""#;
    let other = tool("ping", "Ping.", json!({"type": "object"}));
    let tools = [article(true), other];
    let options = Options::new()
        .with_level(Level::Four)
        .with_compiled([("article_append", line), ("ping", r#"def ping():"check""#)]);
    assert!(compress(&tools, &options).is_ok(), "off by default");
    let err = compress(&tools, &options.clone().with_require_compiled(true)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("1 of 2 tools has no usable compiled line"),
        "{text}"
    );
    assert!(
        text.contains("\n  stale: article_append: dropped required parameter(s): section_title"),
        "{text}"
    );
    // Level 1 with a non-empty map checks too; with an empty map it does not.
    let l1 = options
        .clone()
        .with_level(Level::One)
        .with_require_compiled(true);
    assert!(matches!(
        compress(&tools, &l1),
        Err(CompressError::MissingCompiledLines {
            uncompiled: 1,
            tool_count: 2,
            ..
        })
    ));
    assert!(compress(&tools, &Options::new().with_require_compiled(true)).is_ok());
}

#[test]
fn level_1_uses_verified_docstrings_and_ignores_stale_ones() {
    let f = tool(
        "f_x",
        "Long prose. More.",
        json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]}),
    );
    let with = |line: &'static str| {
        compress(
            std::slice::from_ref(&f),
            &Options::new().with_compiled([("f_x", line)]),
        )
        .unwrap()
    };
    assert_eq!(
        with(r#"def f_x(a,b=None):"compiled doc""#).tools()[0].description,
        "f_x(a,b?) — compiled doc"
    );
    assert_eq!(
        with(r#"def f_x(b=None):"compiled doc""#).tools()[0].description,
        "f_x(a,b?) — Long prose.",
        "stale: first sentence"
    );
    let off = compress(
        std::slice::from_ref(&f),
        &Options::new()
            .with_signature_prefix(false)
            .with_compiled([("f_x", r#"def f_x(a):"compiled doc""#)]),
    )
    .unwrap();
    assert_eq!(off.tools()[0].description, "compiled doc");
    let plain = compress(std::slice::from_ref(&f), &Options::new()).unwrap();
    let empty = compress(
        std::slice::from_ref(&f),
        &Options::new().with_compiled(BTreeMap::<String, String>::new()),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(plain.tools()).unwrap(),
        serde_json::to_string(empty.tools()).unwrap()
    );
    assert_eq!(
        with(r#"def f_x(a):"d""#).stats().uncompiled_tools,
        None,
        "nothing compiled-related at level 1"
    );
}

#[test]
fn level_4_lookups_answer_with_function_names_never_codes() {
    let c = level4(&pair(), pair_map());
    let t = &c.tools()[0].description;
    assert!(
        t.contains("function name") && !t.contains("map code"),
        "{t}"
    );
    assert!(c.tools()[1].description.contains("function name"));
    let Resolution::Error(e) = c.resolve("t", &json!({"f": "zz9"})) else {
        panic!()
    };
    assert!(
        e.message().contains("No function named \"zz9\"") && !e.message().contains("map code"),
        "{}",
        e.message()
    );
    let Resolution::Meta { result, .. } = c.resolve("q", &json!({"s": "bug"})) else {
        panic!()
    };
    assert!(
        result.contains("def github_create_issue(owner,repo)"),
        "{result}"
    );
    assert!(result.lines().all(|l| l.starts_with("def ")), "{result}");
    let Resolution::Meta { result, .. } = c.resolve("q", &json!({"c": "sentry_list_issues"}))
    else {
        panic!()
    };
    assert!(
        result.contains("def sentry_list_issues(project)") && result.contains("List errors."),
        "{result}"
    );
    // Issue 26: a function name in `c` beside a search text searches the text.
    let Resolution::Meta { result: both, .. } =
        c.resolve("q", &json!({"c": "sentry_list_issues", "s": "bug"}))
    else {
        panic!()
    };
    let Resolution::Meta { result: search, .. } = c.resolve("q", &json!({"s": "bug"})) else {
        panic!()
    };
    assert_eq!(both, search);
    // Encode writes the function name the map declares (a replayed history shows the
    // model only names it was taught: session 38's README audit found codes here), and
    // codes still resolve.
    let encoded = c
        .encode_call("sentry_list_issues", json!({"project": "p"}))
        .unwrap();
    assert_eq!(encoded.args["f"], json!("sentry_list_issues"));
    assert!(matches!(
        c.resolve(&encoded.name, &encoded.args),
        Resolution::Call { .. }
    ));
    let code = c.code_for("sentry_list_issues").unwrap();
    assert!(matches!(
        c.resolve("t", &json!({"f": code, "a": {"project": "p"}})),
        Resolution::Call { .. }
    ));
    // Level 3 on the same tools still answers with codes.
    let l3 = compress(&pair(), &three()).unwrap();
    let Resolution::Meta { result, .. } = l3.resolve("q", &json!({"s": "bug"})) else {
        panic!()
    };
    assert!(result.starts_with("a0 = "), "{result}");
    assert_eq!(l3.stats().uncompiled_tools, None);
    assert_eq!(c.stats().uncompiled_tools, Some(0));
}

#[test]
fn distinct_docstrings_remove_lookalikes() {
    let tools = vec![
        tool(
            "a_one",
            "",
            json!({"type": "object", "properties": {"id": {}}, "required": ["id"]}),
        ),
        tool(
            "b_two",
            "",
            json!({"type": "object", "properties": {"id": {}}, "required": ["id"]}),
        ),
    ];
    let l3 = compress(&tools, &three()).unwrap();
    assert_eq!(l3.stats().ambiguous_map_lines, Some(2));
    let l4 = level4(
        &tools,
        [
            ("a_one", r#"def a_one(id):"first""#),
            ("b_two", r#"def b_two(id):"second""#),
        ],
    );
    assert_eq!(
        (
            l4.stats().ambiguous_map_lines,
            l4.stats().largest_lookalike_group
        ),
        (Some(0), Some(1))
    );
}

#[test]
fn the_compiled_corpus_map_leaves_no_ambiguous_lines() {
    let tools = real_tools();
    let l3 = compress(&tools, &three()).unwrap();
    assert_eq!(l3.stats().ambiguous_map_lines, Some(101));
    let options = Options::new()
        .with_level(Level::Four)
        .with_compiled(compiled_corpus_map());
    let l4 = compress(&tools, &options).unwrap();
    assert_eq!(l4.stats().ambiguous_map_lines, Some(0));
    assert_eq!(l4.stats().largest_lookalike_group, Some(1));
    assert_eq!(
        l4.stats().uncompiled_tools,
        Some(0),
        "{:?}",
        l4.stats().stale_compiled_tools
    );
    assert_eq!(l4.stats().orphaned_compiled_entries, Some(0));
    // Deterministic: the same input in reverse order gives the same bytes.
    let mut reversed = tools.clone();
    reversed.reverse();
    let again = compress(&reversed, &options).unwrap();
    assert_eq!(l4.system(), again.system());
    assert_eq!(
        serde_json::to_string(l4.tools()).unwrap(),
        serde_json::to_string(again.tools()).unwrap()
    );
    insta::assert_snapshot!("real_corpus_level_4_preamble", l4.system());
    // Every tool round-trips at level 4.
    for t in &tools {
        let encoded = l4.encode_call(t.name.as_str(), json!({})).unwrap();
        match l4.resolve(&encoded.name, &encoded.args) {
            Resolution::Call { name, .. } => assert_eq!(name, t.name.as_str()),
            Resolution::Error(e) => assert!(
                e.message().starts_with("Missing required"),
                "{}",
                e.message()
            ),
            Resolution::Meta { .. } => panic!("meta for {}", t.name.as_str()),
        }
    }
}

// ---- compile_tools with a scripted model ----

/// Answers each tool with the next scripted reply for it; counts calls.
struct Scripted {
    replies: parking_lot_free::Replies,
    calls: AtomicUsize,
}

mod parking_lot_free {
    use std::{collections::HashMap, sync::Mutex};

    /// Per-tool reply queues.
    pub(super) struct Replies(pub(super) Mutex<HashMap<String, Vec<Result<String, String>>>>);
}

impl Scripted {
    fn new(script: &[(&str, &[Result<&str, &str>])]) -> Self {
        let map = script
            .iter()
            .map(|(name, replies)| {
                let mut queue: Vec<Result<String, String>> = replies
                    .iter()
                    .map(|r| r.map(str::to_owned).map_err(str::to_owned))
                    .collect();
                queue.reverse();
                ((*name).to_owned(), queue)
            })
            .collect();
        Self {
            replies: parking_lot_free::Replies(std::sync::Mutex::new(map)),
            calls: AtomicUsize::new(0),
        }
    }
}

#[async_trait::async_trait]
impl Completer for Scripted {
    async fn complete(&self, system: &str, user: &str) -> Result<String, CompleterError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        assert!(system.contains("Never name a tool that is not in the inventory"));
        assert!(user.contains("MUST appear here"));
        // The tool this request is about is the last line's first word.
        let last = user.lines().rev().find(|l| l.contains(" — \"")).unwrap();
        let name = last.split(' ').next().unwrap();
        let mut replies = self.replies.0.lock().unwrap();
        let reply = replies
            .get_mut(name)
            .and_then(Vec::pop)
            .unwrap_or(Ok(String::new()));
        reply.map_err(CompleterError::new)
    }
}

fn five_tools() -> Vec<ToolDefinition> {
    let schema = json!({"type": "object", "properties": {"owner": {}, "repo": {}, "title": {}, "body": {}}, "required": ["owner", "repo", "title"]});
    [
        "t_good",
        "t_renamed",
        "t_invented",
        "t_dropped",
        "t_garbage",
        "t_retry",
        "t_fails",
    ]
    .iter()
    .map(|n| tool(n, "Create an issue.", schema.clone()))
    .collect()
}

#[tokio::test]
async fn compile_tools_verifies_retries_once_and_rejects_with_reasons() {
    let script: &[(&str, &[Result<&str, &str>])] = &[
        (
            "t_good",
            &[Ok(
                "```\ndef t_good(owner,repo,title,body=None):\"open issue\"\n```",
            )],
        ),
        (
            "t_renamed",
            &[
                Ok(r#"def create_issue(owner,repo,title):"x""#),
                Ok(r#"def issue(owner,repo,title):"x""#),
            ],
        ),
        (
            "t_invented",
            &[
                Ok(r#"def t_invented(owner,repo,title,assignee=None):"x""#),
                Ok(r#"def t_invented(owner,repo,title,assignee=None):"x""#),
            ],
        ),
        (
            "t_dropped",
            &[
                Ok(r#"def t_dropped(owner,repo):"x""#),
                Ok(r#"def t_dropped(owner):"x""#),
            ],
        ),
        (
            "t_garbage",
            &[Ok("I cannot help with that."), Ok("Sure! Here you go.")],
        ),
        (
            "t_retry",
            &[
                Ok(r#"def t_retry(owner):"x""#),
                Ok(r#"def t_retry(owner,repo,title):"second try""#),
            ],
        ),
        ("t_fails", &[Err("HTTP 500 after one retry")]),
    ];
    let model = Scripted::new(script);
    let sink = CompiledSink::new();
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = progress.clone();
    let options = CompileOptions::new()
        .with_concurrency(2)
        .with_sink(sink.clone())
        .with_progress(move |p| seen.lock().unwrap().push(p));
    let report = compile_tools(&five_tools(), &model, &options)
        .await
        .unwrap();

    assert_eq!(report.map.keys().collect::<Vec<_>>(), ["t_good", "t_retry"]);
    assert_eq!(
        report.map["t_good"],
        r#"def t_good(owner,repo,title,body=None):"open issue""#
    );
    assert_eq!(
        report.map["t_retry"],
        r#"def t_retry(owner,repo,title):"second try""#
    );
    let rejected: BTreeMap<_, _> = report.rejected.iter().cloned().collect();
    assert_eq!(rejected["t_renamed"], "renamed the tool to issue");
    assert_eq!(rejected["t_invented"], "invented parameter(s): assignee");
    assert_eq!(
        rejected["t_dropped"],
        "dropped required parameter(s): repo, title"
    );
    assert_eq!(rejected["t_garbage"], "no line returned");
    assert_eq!(
        rejected["t_fails"],
        "model call failed: HTTP 500 after one retry"
    );
    assert_eq!(report.stats.total, 7);
    assert_eq!(report.stats.compiled, 2);
    assert_eq!(report.stats.rejected, 5);
    assert_eq!(
        report.stats.retried, 5,
        "every verification failure is asked again once"
    );
    // One call for the good line and the failed model call (not retried here: the client
    // owns transport retries), two for each of the five verification failures.
    assert_eq!(model.calls.load(Ordering::SeqCst), 1 + 1 + 2 * 5);
    assert_eq!(
        sink.snapshot(),
        report.map,
        "verified lines were published as they verified"
    );
    let progress = progress.lock().unwrap();
    assert_eq!(progress.len(), 7);
    assert_eq!(progress.last().unwrap().done, 7);
    assert_eq!(progress.last().unwrap().rejected, 5);
    // The rejected tools still render at level 4, as bare signatures.
    let c = compress(
        &five_tools(),
        &Options::new()
            .with_level(Level::Four)
            .with_compiled(report.map.clone()),
    )
    .unwrap();
    assert_eq!(c.stats().uncompiled_tools, Some(5));
}

#[tokio::test]
async fn dropping_the_compile_keeps_what_already_verified() {
    /// Answers `a_first` at once; never answers anything else.
    struct Stalls;
    #[async_trait::async_trait]
    impl Completer for Stalls {
        async fn complete(&self, _: &str, user: &str) -> Result<String, CompleterError> {
            if user.lines().last().unwrap().starts_with("a_first") {
                return Ok(r#"def a_first():"first""#.to_owned());
            }
            futures::future::pending().await
        }
    }
    let tools = vec![
        tool("a_first", "", json!({"type": "object"})),
        tool("z_last", "", json!({"type": "object"})),
    ];
    let sink = CompiledSink::new();
    let options = CompileOptions::new().with_sink(sink.clone());
    let run = compile_tools(&tools, &Stalls, &options);
    let timed = tokio::time::timeout(std::time::Duration::from_millis(50), run).await;
    assert!(timed.is_err(), "the stalled tool keeps the compile running");
    assert_eq!(
        sink.snapshot().get("a_first").map(String::as_str),
        Some(r#"def a_first():"first""#)
    );
}

#[test]
fn the_compile_prompt_keeps_the_rules() {
    let p = compile_prompt(110);
    assert!(p.contains("name=None"));
    assert!(p.to_lowercase().contains("never 0"));
    assert!(p.contains("Never name a tool that is not in the inventory"));
    assert!(!p.contains("=0,") && !p.contains("=0)"));
    assert!(p.contains("110"));
}

#[test]
fn dangling_references_name_tools_outside_the_catalogue() {
    let tools = vec![
        tool(
            "kb_search",
            "",
            json!({"type": "object", "properties": {"q": {}}}),
        ),
        tool("kb_fetch", "", json!({"type": "object"})),
    ];
    let map: BTreeMap<&str, &str> = [
        ("kb_search", r#"def kb_search(q=None):"call compress_output first if large; use kb_fetch for one doc""#),
        ("kb_fetch", r#"def kb_fetch():"one doc"#),
    ]
    .into_iter()
    .collect();
    let found = chef_compress::dangling_references(&tools, |n| map.get(n).copied());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].tool, "kb_search");
    assert_eq!(found[0].mentions, vec!["compress_output".to_owned()]);
}

#[tokio::test]
async fn at_most_four_requests_are_in_flight_by_default() {
    /// Counts calls in flight and remembers the most seen at once.
    #[derive(Default)]
    struct Slow {
        now: AtomicUsize,
        most: AtomicUsize,
    }
    #[async_trait::async_trait]
    impl Completer for Slow {
        async fn complete(&self, _: &str, user: &str) -> Result<String, CompleterError> {
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            let name = user.lines().last().unwrap().split(' ').next().unwrap();
            Ok(format!("def {name}():\"x\""))
        }
    }
    let tools: Vec<ToolDefinition> = (0..12)
        .map(|i| tool(&format!("tool_{i:02}"), "", json!({"type": "object"})))
        .collect();
    let slow = Slow::default();
    let report = compile_tools(&tools, &slow, &CompileOptions::new())
        .await
        .unwrap();
    assert_eq!(report.stats.compiled, 12);
    assert_eq!(slow.most.load(Ordering::SeqCst), 4);
    let slow = Slow::default();
    compile_tools(&tools, &slow, &CompileOptions::new().with_concurrency(2))
        .await
        .unwrap();
    assert_eq!(slow.most.load(Ordering::SeqCst), 2);
    let slow = Slow::default();
    compile_tools(&tools, &slow, &CompileOptions::new().with_concurrency(0))
        .await
        .unwrap();
    assert_eq!(slow.most.load(Ordering::SeqCst), 1, "0 means 1");
}

#[test]
fn a_misspelt_function_name_is_answered_with_the_nearest_real_name() {
    let c = level4(&pair(), pair_map());
    for raw in [
        c.resolve("t", &json!({"f": "github_create_isue", "a": {}})),
        c.resolve("q", &json!({"c": "github_create_isue"})),
    ] {
        match raw {
            chef_compress::Resolution::Error(chef_compress::ResolveError::UnknownFunction {
                name,
                suggestion,
            }) => {
                assert_eq!(name, "github_create_isue");
                assert_eq!(suggestion.as_deref(), Some("github_create_issue"));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_near_miss_code_in_a_lookup_gets_the_same_suggestion_as_in_a_call() {
    let c = compress(&pair(), &Options::new().with_level(Level::Three)).unwrap();
    let code = c.code_for("github_create_issue").unwrap().to_owned();
    let near = format!("{code}x");
    for raw in [
        c.resolve("t", &json!({"f": near, "a": {}})),
        c.resolve("q", &json!({"c": near})),
    ] {
        match raw {
            chef_compress::Resolution::Error(chef_compress::ResolveError::UnknownCode {
                suggestion,
                ..
            }) => assert_eq!(suggestion.as_deref(), Some(code.as_str())),
            other => panic!("{other:?}"),
        }
    }
}
