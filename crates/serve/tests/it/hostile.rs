//! Hostile input and a failing upstream: each answered in the API's own error shape, and
//! the gateway stays up.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{
    chat_says,
    harness::{Reply, Rig},
};

fn small_chat() -> Value {
    json!({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]})
}

fn small_messages() -> Value {
    json!({"model": "claude-test", "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}]})
}

fn assert_openai_error(body: &Value, kind: &str) {
    assert_eq!(body["error"]["type"], kind, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    assert!(body["error"].get("code").is_some());
}

fn assert_anthropic_error(body: &Value, kind: &str) {
    assert_eq!(body["type"], "error", "{body}");
    assert_eq!(body["error"]["type"], kind, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
}

/// Asserts a body is an error of the API's own shape, of a kind.
type ErrorShape = fn(&Value, &str);

async fn post_raw(rig: &Rig, path: &str, body: &'static str) -> (u16, Value) {
    let response = rig
        .http
        .post(rig.url(path))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn malformed_json_is_a_400_in_each_shape() {
    let rig = Rig::start("", vec![]).await;
    let cases: [(&str, &'static str, ErrorShape); 4] = [
        (
            "/v1/chat/completions",
            "{\"messages\": [",
            assert_openai_error,
        ),
        ("/v1/responses", "[1, 2]", assert_openai_error),
        ("/v1/messages", "not json", assert_anthropic_error),
        // A body that is JSON but not a request of the API.
        ("/v1/messages", "{\"messages\": 3}", assert_anthropic_error),
    ];
    for (path, raw, assert_error) in cases {
        let (status, body) = post_raw(&rig, path, raw).await;
        assert_eq!(status, 400, "{path} {raw}");
        assert_error(&body, "invalid_request_error");
    }
    // The message says what is wrong with the request: the decoder's cause (which member,
    // where), not only that it is not a request of the API.
    let cases: [(&str, &'static str, &str); 3] = [
        (
            "/v1/chat/completions",
            "{\"model\": \"m\"}",
            "missing field `messages`",
        ),
        (
            "/v1/responses",
            "{\"model\": \"m\", \"input\": 5}",
            "line 1 column",
        ),
        (
            "/v1/messages",
            "not json",
            "not valid JSON: expected ident at line 1 column 2",
        ),
    ];
    for (path, raw, needle) in cases {
        let (status, body) = post_raw(&rig, path, raw).await;
        assert_eq!(status, 400, "{path} {raw}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{path} {raw}: {message}");
    }
    assert!(rig.script.seen().is_empty());
}

#[tokio::test]
async fn an_oversized_body_is_a_413() {
    let rig = Rig::start("[limits]\nmax_body_bytes = 1000\n", vec![]).await;
    let big = json!({"model": "m", "messages": [{"role": "user", "content": "x".repeat(5000)}]});
    let response = rig.openai("/v1/chat/completions", &big).await;
    assert_eq!(response.status(), 413);
    assert_openai_error(&response.json().await.unwrap(), "invalid_request_error");
    let mut big = small_messages();
    big["messages"][0]["content"] = json!("y".repeat(5000));
    let response = rig.anthropic(&big).await;
    assert_eq!(response.status(), 413);
    assert_anthropic_error(&response.json().await.unwrap(), "request_too_large");
    // Chunked, without a length up front.
    let stream = futures::stream::iter((0..10).map(|_| Ok::<_, std::io::Error>(vec![b' '; 200])));
    let response = rig
        .http
        .post(rig.url("/v1/chat/completions"))
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    assert!(rig.script.seen().is_empty());
}

#[tokio::test]
async fn upstream_429_passes_retry_after_and_the_body_through() {
    let limited = r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}"#;
    let rig = Rig::start(
        "",
        vec![
            Reply::Status(429, vec![("retry-after", "7"), ("content-type", "application/json")], limited.to_owned()),
            Reply::Status(503, vec![], "<html>bad gateway</html>".to_owned()),
            Reply::Status(404, vec![("content-type", "application/json")],
                r#"{"error":{"message":"The model `nope` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#.to_owned()),
            Reply::Status(529, vec![], r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.to_owned()),
        ],
    )
    .await;
    let response = rig.openai("/v1/chat/completions", &small_chat()).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, serde_json::from_str::<Value>(limited).unwrap());

    let response = rig.openai("/v1/chat/completions", &small_chat()).await;
    assert_eq!(response.status(), 503);
    assert_openai_error(&response.json().await.unwrap(), "server_error");

    let mut unknown = small_chat();
    unknown["model"] = json!("nope");
    let response = rig.openai("/v1/chat/completions", &unknown).await;
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "model_not_found");

    let response = rig.anthropic(&small_messages()).await;
    assert_eq!(response.status(), 529);
    assert_anthropic_error(&response.json().await.unwrap(), "overloaded_error");
}

#[tokio::test]
async fn a_hanging_upstream_times_out_and_the_gateway_stays_up() {
    let rig = Rig::start(
        "[limits]\nupstream_timeout_secs = 1\n",
        vec![Reply::Hang, Reply::Hang, chat_says("back")],
    )
    .await;
    let started = Instant::now();
    let response = rig.openai("/v1/chat/completions", &small_chat()).await;
    assert_eq!(response.status(), 504);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_openai_error(&response.json().await.unwrap(), "server_error");
    let response = rig.anthropic(&small_messages()).await;
    assert_eq!(response.status(), 504);
    assert_anthropic_error(&response.json().await.unwrap(), "timeout_error");
    let body: Value = rig
        .openai("/v1/chat/completions", &small_chat())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "back");
}

/// A gateway whose upstreams (both APIs) are at `upstream` (`host:port`); its address.
async fn gateway_before(upstream: &str) -> std::net::SocketAddr {
    let config = chef_serve::Config::parse(&format!(
        "[upstream]\nopenai = \"http://{upstream}/v1\"\nanthropic = \"http://{upstream}/v1\"\n"
    ))
    .unwrap();
    let gateway = chef_serve::Gateway::new(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(chef_serve::no_delay(listener), chef_serve::router(gateway)).await
    });
    addr
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502() {
    let addr = gateway_before("127.0.0.1:9").await;
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/v1/messages"))
        .json(&small_messages())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    assert_anthropic_error(&response.json().await.unwrap(), "api_error");
}

#[tokio::test]
async fn other_paths_pass_through_with_credentials() {
    let models = json!({"object": "list", "data": [{"id": "gpt-test", "object": "model"}]});
    let rig = Rig::start("", vec![Reply::Json(models.clone())]).await;
    let response = rig
        .get_with_key("/v1/models?limit=5", "sk-test-secret")
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap(), models);
    let seen = rig.script.seen();
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].path, "/v1/models?limit=5");
    assert_eq!(seen[0].headers["authorization"], "Bearer sk-test-secret");
}

#[tokio::test]
async fn metrics_count_requests_rounds_and_outcomes() {
    let rig = Rig::start("", vec![chat_says("hi")]).await;
    rig.openai("/v1/chat/completions", &small_chat()).await;
    post_raw(&rig, "/v1/messages", "nope").await;
    let text = rig.metrics().await;
    assert!(
        text.contains("chef_requests_total{api=\"chat\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("chef_request_errors_total{api=\"messages\"} 1"),
        "{text}"
    );
    assert!(text.contains("chef_upstream_rounds_total 1"), "{text}");
    assert!(
        text.contains("chef_gateway_overhead_seconds_count 2"),
        "{text}"
    );
}

/// `chef serve --check` (chef_serve::cli): a bad key is named; an unreachable upstream
/// fails the check; a reachable one passes.
#[test]
fn check_names_bad_keys_and_unreachable_upstreams() {
    let dir = std::env::temp_dir().join(format!("chef-serve-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[limits]\nmax_internal_rounds = 99\n").unwrap();
    let err = chef_serve::cli(Some(&bad), true).unwrap_err();
    assert!(
        matches!(err, chef_serve::CliError::Config { .. }) && err.is_usage(),
        "{err:?}"
    );
    let err = err.to_string();
    assert!(err.contains("limits.max_internal_rounds"), "{err}");
    assert!(err.contains("bad.toml"), "{err}");

    let unreachable = dir.join("unreachable.toml");
    std::fs::write(
        &unreachable,
        "[upstream]\nopenai = \"http://127.0.0.1:9/v1\"\nanthropic = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let err = chef_serve::cli(Some(&unreachable), true).unwrap_err();
    assert!(
        matches!(&err, chef_serve::CliError::CheckFailed { unreachable, memory: false }
            if unreachable.len() == 2),
        "{err:?}"
    );
    let err = err.to_string();
    assert!(err.contains("openai") && err.contains("anthropic"), "{err}");

    // A reachable upstream (any HTTP status counts).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().take(2) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n");
        }
    });
    let ok = dir.join("ok.toml");
    std::fs::write(
        &ok,
        format!("[upstream]\nopenai = \"http://{addr}/v1\"\nanthropic = \"http://{addr}/v1\"\n"),
    )
    .unwrap();
    chef_serve::cli(Some(&ok), true).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn streams_report_a_429_as_a_status_and_a_stall_as_an_error_event() {
    use std::sync::{Arc, atomic::AtomicBool};
    let head = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n";
    let rig = Rig::start(
        "[limits]\nupstream_timeout_secs = 1\n",
        vec![
            Reply::Status(
                429,
                vec![("retry-after", "3"), ("content-type", "application/json")],
                r#"{"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":null}}"#
                    .to_owned(),
            ),
            Reply::SseThenStall(vec![head.to_owned()], Arc::new(AtomicBool::new(false))),
        ],
    )
    .await;
    let mut body = small_chat();
    body["stream"] = json!(true);
    let response = rig.openai("/v1/chat/completions", &body).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
    assert_eq!(
        response.json::<Value>().await.unwrap()["error"]["message"],
        "slow down"
    );

    let started = Instant::now();
    let response = rig.openai("/v1/chat/completions", &body).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    // The text that arrived was passed on; then the stall ends the stream with an error.
    assert!(text.contains("\"content\":\"Hel\""), "{text}");
    let last: Value = serde_json::from_str(
        text.trim_end()
            .rsplit("\n\n")
            .next()
            .unwrap()
            .strip_prefix("data: ")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["error"]["code"], "upstream_timeout", "{text}");
}

#[tokio::test]
async fn fields_the_gateway_cannot_honour_are_refused() {
    let rig = Rig::start("", vec![]).await;
    let mut body = small_chat();
    body["n"] = json!(2);
    let response = rig.openai("/v1/chat/completions", &body).await;
    assert_eq!(response.status(), 400);
    assert_openai_error(&response.json().await.unwrap(), "invalid_request_error");
    for key in ["previous_response_id", "conversation"] {
        let body = json!({"model": "gpt-test", "input": "hi", key: "resp_1"});
        let response = rig.openai("/v1/responses", &body).await;
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error"]["message"].as_str().unwrap().contains(key),
            "{body}"
        );
    }
    // `stream` is a boolean in every API: anything else is the client's mistake.
    let mut body = small_chat();
    body["stream"] = json!("yes");
    let response = rig.openai("/v1/chat/completions", &body).await;
    assert_eq!(response.status(), 400);
    // A background response is stored upstream and read back past the gateway.
    let body = json!({"model": "gpt-test", "input": "hi", "background": true});
    let response = rig.openai("/v1/responses", &body).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("background"),
        "{body}"
    );
    assert!(rig.script.seen().is_empty());
}

/// A field passed on holds the same JSON values; an integer wider than 64 bits, which
/// would go on rounded, is refused naming the field (and small ones go through).
#[tokio::test]
async fn an_integer_wider_than_64_bits_in_a_passed_on_field_is_refused() {
    let rig = Rig::start("", vec![chat_says("ok")]).await;
    let raw =
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":18446744073709551617}"#;
    let (status, body) = post_raw(&rig, "/v1/chat/completions", raw).await;
    assert_eq!(status, 400, "{body}");
    assert_openai_error(&body, "invalid_request_error");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`seed`") && message.contains("18446744073709551617"),
        "{message}"
    );
    let raw = r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"n":"123456789012345678901234567890"},"seed":18446744073709551615}"#;
    let (status, _) = post_raw(&rig, "/v1/chat/completions", raw).await;
    assert_eq!(status, 200);
    let seen = rig.script.seen();
    let sent = String::from_utf8_lossy(&seen.last().unwrap().body).into_owned();
    assert!(sent.contains(r#""seed":18446744073709551615"#), "{sent}");
}

#[tokio::test]
async fn background_false_is_what_the_gateway_does_anyway() {
    let rig = Rig::start(
        "",
        vec![Reply::Json(json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
        "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "hi", "annotations": []}]}]}))],
    )
    .await;
    let body = json!({"model": "gpt-test", "input": "hi", "background": false});
    let response = rig.openai("/v1/responses", &body).await;
    assert_eq!(response.status(), 200);
}

/// Sends `request_line`'s path byte for byte (an HTTP client would normalise `.`
/// segments away): the status and the body.
async fn raw_post(rig: &Rig, path: &str, body: &str, anthropic: bool) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(rig.gateway).await.unwrap();
    let version = if anthropic {
        "anthropic-version: 2023-06-01\r\n"
    } else {
        ""
    };
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n{version}\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        rig.gateway,
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    // A chunked body: the JSON is the line that starts with `{`.
    let json = body
        .lines()
        .find(|l| l.starts_with('{'))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    (status, json)
}

/// An API endpoint's path in disguise (`.` segments, encoded dots, doubled or trailing
/// slashes, another case) is refused, never passed through ungated: the upstream could
/// normalise it onto the endpoint and the blocked tool would be offered and its call
/// relayed. So are the endpoints that run a model or return its stored output past the
/// gate (found by session 33's gateway audit).
#[tokio::test]
async fn disguised_endpoints_and_ungated_ones_are_never_passed_through() {
    let rig = Rig::start("", vec![chat_says("ungated")]).await;
    let chat = small_chat().to_string();
    let messages = small_messages().to_string();
    for (path, body, anthropic) in [
        ("/v1/./chat/completions", &chat, false),
        ("/v1/%2e/chat/completions", &chat, false),
        ("/v1/x/../chat/completions", &chat, false),
        ("/v1//chat/completions", &chat, false),
        ("/v1/chat/completions/", &chat, false),
        ("/v1/Chat/Completions", &chat, false),
        ("/v1/./responses", &chat, false),
        ("/v1/./messages", &messages, true),
        ("/v1/messages/", &messages, true),
        ("/v1/messages/batches", &messages, true),
        ("/v1/responses/resp_1", &chat, false),
        ("/v1/batches", &chat, false),
        ("/v1/threads/t_1/runs", &chat, false),
    ] {
        let (status, body) = raw_post(&rig, path, body, anthropic).await;
        assert_eq!(status, 400, "{path}: {body}");
        if anthropic {
            assert_anthropic_error(&body, "invalid_request_error");
        } else {
            assert_openai_error(&body, "invalid_request_error");
        }
    }
    assert!(rig.script.seen().is_empty(), "nothing reached the upstream");
    // The endpoint itself still answers.
    let (status, _) = raw_post(&rig, "/v1/chat/completions", &chat, false).await;
    assert_eq!(status, 200);
}

/// Reads from `stream` until the gateway closes it; what it sent.
async fn read_to_close(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut out = Vec::new();
    let mut buf = [0_u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Session 40's resource audit: a connection that sent nothing, half a header, or nothing
/// after its last request was held forever (20,000 of them ran the gateway out of file
/// descriptors), and a body sent a byte at a time held its buffer. Now each is closed.
#[tokio::test]
async fn idle_slow_and_half_sent_connections_are_closed() {
    use tokio::io::AsyncWriteExt as _;
    let rig = Rig::start(
        "[limits]\nheader_timeout_secs = 1\nbody_timeout_secs = 1\n",
        vec![chat_says("hi")],
    )
    .await;
    // Nothing sent: closed, with nothing written.
    let mut silent = tokio::net::TcpStream::connect(rig.gateway).await.unwrap();
    assert_eq!(read_to_close(&mut silent).await, "");
    // Half a header: closed.
    let mut half = tokio::net::TcpStream::connect(rig.gateway).await.unwrap();
    half.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    let _ = read_to_close(&mut half).await;
    // A whole request on a keep-alive connection, then nothing: answered, then closed.
    let body = small_chat().to_string();
    let mut kept = tokio::net::TcpStream::connect(rig.gateway).await.unwrap();
    kept.write_all(
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sk\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let answered = read_to_close(&mut kept).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    // A body that stops short: a 400 saying so.
    let mut short = tokio::net::TcpStream::connect(rig.gateway).await.unwrap();
    short
        .write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"model\"")
        .await
        .unwrap();
    let refused = read_to_close(&mut short).await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
    assert!(
        refused.contains("the request body did not arrive within 1 s (limits.body_timeout_secs)"),
        "{refused}"
    );
}

/// With `max_connections = 1`, a connection that holds the only slot and sends nothing
/// delays the next client until the header timeout closes it; then it is served.
#[tokio::test]
async fn past_max_connections_a_client_waits_for_a_slot() {
    let rig = Rig::start(
        "[limits]\nheader_timeout_secs = 1\nmax_connections = 1\n",
        vec![chat_says("hi")],
    )
    .await;
    let _holder = tokio::net::TcpStream::connect(rig.gateway).await.unwrap();
    let response = rig
        .http
        .post(format!("http://{}/v1/chat/completions", rig.gateway))
        .header("authorization", "Bearer sk-test")
        .json(&small_chat())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// An upstream that takes the request and closes the connection without an answer: a 502
/// that says so (the audit saw "could not be reached" for an upstream that was reached).
#[tokio::test]
async fn an_upstream_that_closes_without_answering_is_a_502_that_says_so() {
    use tokio::io::AsyncReadExt as _;
    let upstream = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream_addr = upstream.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = upstream.accept().await else {
                return;
            };
            let mut buf = [0_u8; 65536];
            let _ = socket.read(&mut buf).await;
            drop(socket);
        }
    });
    let addr = gateway_before(&upstream_addr.to_string()).await;
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/v1/chat/completions"))
        .header("authorization", "Bearer sk-test")
        .json(&small_chat())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["error"]["message"], "the upstream closed the connection without answering",
        "{body}"
    );
}
