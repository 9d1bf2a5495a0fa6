//! What `chef mcp serve` adds to a tool call: the same calls to the `mcp_test_server`
//! example, straight and through the proxy (both over stdio, as hosts run them), measured
//! from an rmcp client, interleaved so both see the same machine.
//!
//! ```sh
//! cargo build --release -p chef-cli --bin chef --example mcp_test_server --example mcp_proxy_latency
//! target/release/examples/mcp_proxy_latency 2000          # calls per path (default 2000)
//! ```
//!
//! Prints p50, p90, p99 and max per path, and of the difference within each back-to-back
//! pair (what the proxy added to that call), in microseconds. The proxy runs in `dispatch` mode, so each call is resolved from a code,
//! validated against the tool's schema, checked against the blocklist and forwarded.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::print_stdout,
    clippy::panic,
    reason = "a measuring tool: fails loudly"
)]

use std::{
    path::PathBuf,
    process::Stdio,
    time::{Duration, Instant},
};

use rmcp::{RoleClient, ServiceExt, model::CallToolRequestParams, service::RunningService};
use serde_json::json;

fn sibling(name: &str) -> PathBuf {
    let me = std::env::current_exe().unwrap();
    let dir = me.parent().unwrap();
    let candidates = [dir.join(name), dir.parent().unwrap().join(name)];
    candidates
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name} not found next to {}: build it first", me.display()))
}

async fn connect(
    program: &PathBuf,
    args: &[&str],
) -> (RunningService<RoleClient, ()>, tokio::process::Child) {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    (().serve(io).await.unwrap(), child)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1e6
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(2000, |a| a.parse().expect("calls per path"));
    let server = sibling("mcp_test_server");
    let chef = sibling("chef");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("chef-mcp.toml");
    std::fs::write(
        &config,
        format!(
            "mode = \"dispatch\"\nblocklist = [\"files_write_file\"]\n[[server]]\nname = \"files\"\ncommand = \"'{}' --set files\"\n",
            server.display()
        ),
    )
    .unwrap();

    let (direct, _c1) = connect(&server, &["--set", "files"]).await;
    let (proxy, _c2) = connect(
        &chef,
        &["mcp", "serve", "--config", config.to_str().unwrap()],
    )
    .await;
    let tools = proxy.list_all_tools().await.unwrap();
    let map = tools[0].description.clone().unwrap_or_default();
    let code = map
        .lines()
        .find(|l| l.contains(" files_read_file"))
        .and_then(|l| l.split(' ').next())
        .expect("files_read_file in the map")
        .to_owned();
    let args = json!({"path": "README.md"});
    let direct_call = || {
        CallToolRequestParams::new("read_file").with_arguments(args.as_object().unwrap().clone())
    };
    let proxy_call = || {
        CallToolRequestParams::new("t")
            .with_arguments(json!({"f": code, "a": args}).as_object().unwrap().clone())
    };
    // Warm up both paths.
    for _ in 0..200 {
        direct.call_tool(direct_call()).await.unwrap();
        proxy.call_tool(proxy_call()).await.unwrap();
    }
    let mut straight = Vec::with_capacity(n);
    let mut through = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let r = direct.call_tool(direct_call()).await.unwrap();
        straight.push(t.elapsed());
        assert_ne!(r.is_error, Some(true));
        let t = Instant::now();
        let r = proxy.call_tool(proxy_call()).await.unwrap();
        through.push(t.elapsed());
        assert_ne!(r.is_error, Some(true), "{r:?}");
    }
    // Each pair ran back to back: its difference is what the proxy added to that call.
    let mut added: Vec<f64> = through
        .iter()
        .zip(&straight)
        .map(|(t, s)| t.as_secs_f64() * 1e6 - s.as_secs_f64() * 1e6)
        .collect();
    added.sort_by(f64::total_cmp);
    let added_at = |p: f64| added[((added.len() as f64 - 1.0) * p).round() as usize];
    straight.sort();
    through.sort();
    println!("{n} calls per path, interleaved (µs)");
    println!("| path | p50 | p90 | p99 | max |");
    println!("|---|---|---|---|---|");
    for (name, d) in [
        ("straight to the server", &straight),
        ("through chef mcp serve", &through),
    ] {
        println!(
            "| {name} | {:.0} | {:.0} | {:.0} | {:.0} |",
            percentile(d, 0.5),
            percentile(d, 0.9),
            percentile(d, 0.99),
            percentile(d, 1.0)
        );
    }
    println!(
        "| added by the proxy (per pair) | {:.0} | {:.0} | {:.0} | {:.0} |",
        added_at(0.5),
        added_at(0.9),
        added_at(0.99),
        added_at(1.0)
    );
}
