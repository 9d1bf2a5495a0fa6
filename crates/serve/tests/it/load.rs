//! Load: 200 concurrent streaming conversations through the gateway against the scripted
//! upstream, no failed request, latency reported against the same load sent to the
//! upstream directly. Ignored by default (timings on a shared debug build mean little):
//!
//! ```sh
//! cargo test -p chef-serve --test it load -- --ignored --nocapture
//! ```

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::join_all;

use crate::{
    chat::{chat_stream, order_call, request},
    harness::{Reply, Rig, pieces, streamed},
};

const CONVERSATIONS: usize = 200;
const TURNS: usize = 2;
/// Requests sent one at a time, each way, after the concurrent phase.
const SEQUENTIAL: usize = 1000;

/// A metric's value in Prometheus text (NaN when absent).
fn read_metric(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name).filter(|rest| rest.starts_with(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

/// One request: its time, and whether it succeeded.
async fn one(http: &reqwest::Client, url: &str, body: &Bytes, expect: &str) -> (Duration, bool) {
    let t0 = Instant::now();
    let request = http
        .post(url)
        .header("content-type", "application/json")
        .body(body.clone());
    let ok = match request.send().await {
        Ok(r) if r.status() == 200 => r.text().await.is_ok_and(|t| t.contains(expect)),
        _ => false,
    };
    (t0.elapsed(), ok)
}

async fn run(
    http: &reqwest::Client,
    url: &str,
    body: &Bytes,
    expect: &str,
) -> (Vec<Duration>, usize) {
    let conversations = (0..CONVERSATIONS).map(|_| async {
        let mut times = Vec::new();
        let mut failed = 0;
        for _ in 0..TURNS {
            let (time, ok) = one(http, url, body, expect).await;
            times.push(time);
            failed += usize::from(!ok);
        }
        (times, failed)
    });
    let results = join_all(conversations).await;
    let failed = results.iter().map(|(_, f)| f).sum();
    let mut times: Vec<Duration> = results.into_iter().flat_map(|(t, _)| t).collect();
    times.sort();
    (times, failed)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "load test; run with --ignored --nocapture"]
async fn two_hundred_concurrent_streaming_conversations() {
    let call = order_call();
    let rig = Rig::start(
        "[chef]\nlevel = 3\n[limits]\nupstream_timeout_secs = 120\n",
        vec![],
    )
    .await;
    let stream = pieces(&chat_stream("Found it.", "call_1", &call), 64);
    rig.script.always(Reply::Sse(stream.clone()));
    // Serialised once: the client's own JSON work would only compete for the two cores.
    let body =
        Bytes::from(serde_json::to_vec(&streamed(request("Where is 737U2663137?"))).unwrap());
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(CONVERSATIONS)
        .build()
        .unwrap();

    let direct_url = format!("http://{}/v1/chat/completions", rig.upstream);
    let gateway_url = rig.url("/v1/chat/completions");
    let (direct, direct_failed) = run(&http, &direct_url, &body, "[DONE]").await;
    // The first request of a tool set prepares its template (parses, registers, compresses
    // and serialises the tools); every later request with the same tools forks it.
    let (cold, ok) = one(&http, &gateway_url, &body, "get_order_details").await;
    assert!(ok, "the first request failed");
    let started = Instant::now();
    let (through, failed) = run(&http, &gateway_url, &body, "get_order_details").await;
    let wall = started.elapsed();
    let metrics = rig.metrics().await;
    // One request at a time, direct and through the gateway in turn (so drift in the
    // machine's load hits both): what one round costs when the gateway is not queueing
    // behind 199 others for two cores it shares with the client and the upstream.
    // The same pieces without the upstream's pauses, so the upstream's timer jitter does
    // not hide the gateway's share.
    rig.script.always(Reply::SseNow(stream));
    let mut pairs = Vec::new();
    for _ in 0..SEQUENTIAL {
        let (d, df) = one(&http, &direct_url, &body, "[DONE]").await;
        let (t, tf) = one(&http, &gateway_url, &body, "get_order_details").await;
        assert!(df && tf, "a sequential request failed");
        pairs.push((d, t));
    }
    let mut seq_direct: Vec<Duration> = pairs.iter().map(|p| p.0).collect();
    let mut seq_through: Vec<Duration> = pairs.iter().map(|p| p.1).collect();
    let mut added: Vec<Duration> = pairs.iter().map(|(d, t)| t.saturating_sub(*d)).collect();
    seq_direct.sort();
    seq_through.sort();
    added.sort();
    let after = rig.metrics().await;
    let sequential = |name: &str| read_metric(&after, name) - read_metric(&metrics, name);
    let value = |name: &str| read_metric(&metrics, name);
    let overhead_mean =
        value("chef_gateway_overhead_seconds_sum") / value("chef_gateway_overhead_seconds_count");
    println!(
        "load: {} requests ({CONVERSATIONS} concurrent conversations x {TURNS} turns), 149 tools at level 3, {:?} wall",
        through.len(),
        wall
    );
    println!("  first request of the tool set (prepares its template): {cold:?}");
    println!(
        "  direct to upstream: p50 {:?}  p99 {:?}  failed {direct_failed}",
        percentile(&direct, 0.5),
        percentile(&direct, 0.99)
    );
    println!(
        "  through the gateway: p50 {:?}  p99 {:?}  failed {failed}",
        percentile(&through, 0.5),
        percentile(&through, 0.99)
    );
    println!(
        "  added at p99: {:?}; gateway's own time per request (mean, /metrics): {:.2} ms",
        percentile(&through, 0.99).saturating_sub(percentile(&direct, 0.99)),
        overhead_mean * 1e3
    );
    let within = |le: &str| {
        value(&format!(
            "chef_gateway_overhead_seconds_bucket{{le=\"{le}\"}}"
        ))
    };
    println!(
        "  gateway's own time, concurrent phase: {:.1}% of requests within 1 ms, {:.1}% within 2 ms (/metrics histogram)",
        100.0 * within("0.001") / value("chef_gateway_overhead_seconds_count"),
        100.0 * within("0.002") / value("chef_gateway_overhead_seconds_count"),
    );
    let count = sequential("chef_gateway_overhead_seconds_count");
    let seq_within = |le: &str| {
        100.0
            * sequential(&format!(
                "chef_gateway_overhead_seconds_bucket{{le=\"{le}\"}}"
            ))
            / count
    };
    println!(
        "  gateway's own time, one at a time: mean {:.3} ms; {:.1}% within 0.5 ms, {:.1}% within 1 ms, {:.1}% within 2 ms",
        1e3 * sequential("chef_gateway_overhead_seconds_sum") / count,
        seq_within("0.0005"),
        seq_within("0.001"),
        seq_within("0.002"),
    );
    println!(
        "one at a time ({SEQUENTIAL} pairs): direct p50 {:?} p99 {:?}; through p50 {:?} p99 {:?}; added per round p50 {:?} p99 {:?}",
        percentile(&seq_direct, 0.5),
        percentile(&seq_direct, 0.99),
        percentile(&seq_through, 0.5),
        percentile(&seq_through, 0.99),
        percentile(&added, 0.5),
        percentile(&added, 0.99),
    );
    assert_eq!(direct_failed, 0);
    assert_eq!(failed, 0, "failed requests through the gateway");
}

/// Where a request's own time goes: reading the body into a session, and compiling it; a
/// fresh session, then forks of the template the first request left in the pool.
#[test]
#[ignore = "timing; run with --ignored --nocapture"]
fn time_of_one_session() {
    let body = serde_json::to_vec(&request("Where is 737U2663137?")).unwrap();
    for toml in ["[chef]\nlevel = 3\n", ""] {
        let config = chef_serve::Config::parse(toml).unwrap();
        let pool = chef_serve::session::Pool::default();
        println!("config {toml:?}");
        for round in 0..6 {
            let t0 = Instant::now();
            let mut prepared = chef_serve::session::prepare_with(
                &config,
                chef_serve::Api::Chat,
                &body,
                Some(&pool),
            )
            .unwrap();
            let t1 = Instant::now();
            let (upstream, _) = chef_serve::session::compile_round(&mut prepared, true).unwrap();
            let t2 = Instant::now();
            println!(
                "{} prepare {:?}  compile {:?}  ({} body bytes in, {} out)",
                if prepared.reused { "fork " } else { "fresh" },
                t1 - t0,
                t2 - t1,
                body.len(),
                upstream.len()
            );
            assert_eq!(
                prepared.reused,
                round > 0 && chef_serve::session::pooled(&config)
            );
            pool.release(prepared);
        }
    }
}
