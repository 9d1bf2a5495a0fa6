//! Counters for `/metrics`, in the Prometheus text format.

use std::{
    fmt::Write as _,
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use crate::{api::Api, store::StoreHealth};

const APIS: [Api; 3] = [Api::Chat, Api::Responses, Api::Messages];
const OUTCOMES: [&str; 9] = [
    "call", "lookup", "error", "blocked", "toolkit", "owned", "deferred", "cut", "forced",
];
/// Upper bounds (seconds) of the gateway-overhead histogram.
const BUCKETS: [f64; 9] = [
    0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1, 1.0,
];

fn api_slot(api: Api) -> usize {
    match api {
        Api::Chat => 0,
        Api::Responses => 1,
        Api::Messages => 2,
    }
}

/// The gateway's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: [AtomicU64; 3],
    errors: [AtomicU64; 3],
    rounds: AtomicU64,
    outcomes: [AtomicU64; 7],
    chars_before: AtomicU64,
    chars_after: AtomicU64,
    tokens_before: AtomicU64,
    tokens_after: AtomicU64,
    passthrough: AtomicU64,
    reused: AtomicU64,
    overhead_buckets: [AtomicU64; 9],
    overhead_count: AtomicU64,
    overhead_micros: AtomicU64,
    upstream_micros: AtomicU64,
    /// The memory store's health (shared with the stores the sessions use).
    pub(crate) store: std::sync::Arc<StoreHealth>,
}

impl Metrics {
    /// The memory store's health.
    pub fn store(&self) -> &StoreHealth {
        &self.store
    }

    /// A client request of `api` arrived.
    pub fn request(&self, api: Api) {
        if let Some(c) = self.requests.get(api_slot(api)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A client request of `api` was answered with an error.
    pub fn error(&self, api: Api) {
        if let Some(c) = self.errors.get(api_slot(api)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// An upstream round was made, taking `upstream` of wall time.
    pub fn round(&self, upstream: Duration) {
        self.rounds.fetch_add(1, Ordering::Relaxed);
        self.upstream_micros
            .fetch_add(micros(upstream), Ordering::Relaxed);
    }

    /// A tool call was routed to `outcome`.
    pub fn outcome(&self, outcome: &str) {
        if let Some(i) = OUTCOMES.iter().position(|o| *o == outcome)
            && let Some(c) = self.outcomes.get(i)
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A tool block was compressed from `before` to `after` characters.
    pub fn tool_block(&self, before: usize, after: usize) {
        self.chars_before
            .fetch_add(before as u64, Ordering::Relaxed);
        self.chars_after.fetch_add(after as u64, Ordering::Relaxed);
    }

    /// A tool block of `before` o200k tokens was sent as `after` tokens.
    pub fn tool_tokens(&self, before: usize, after: usize) {
        self.tokens_before
            .fetch_add(before as u64, Ordering::Relaxed);
        self.tokens_after.fetch_add(after as u64, Ordering::Relaxed);
    }

    /// A request's session came from the pool.
    pub fn reused(&self) {
        self.reused.fetch_add(1, Ordering::Relaxed);
    }

    /// A request was passed through unchanged.
    pub fn passthrough(&self) {
        self.passthrough.fetch_add(1, Ordering::Relaxed);
    }

    /// The time the gateway itself spent on one client request (all rounds, upstream time
    /// excluded).
    pub fn overhead(&self, spent: Duration) {
        let secs = spent.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.overhead_buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.overhead_count.fetch_add(1, Ordering::Relaxed);
        self.overhead_micros
            .fetch_add(micros(spent), Ordering::Relaxed);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut out = String::new();
        for (name, help, counters) in [
            (
                "chef_requests_total",
                "Client requests by API.",
                &self.requests,
            ),
            (
                "chef_request_errors_total",
                "Client requests answered with an error, by API.",
                &self.errors,
            ),
        ] {
            family(&mut out, name, help, "counter");
            for (api, c) in APIS.iter().zip(counters) {
                let _ = writeln!(out, "{name}{{api=\"{}\"}} {}", api.name(), get(c));
            }
        }
        family(
            &mut out,
            "chef_upstream_rounds_total",
            "Upstream requests made for client requests.",
            "counter",
        );
        let _ = writeln!(out, "chef_upstream_rounds_total {}", get(&self.rounds));
        family(
            &mut out,
            "chef_upstream_seconds_total",
            "Wall time spent waiting for upstream rounds.",
            "counter",
        );
        let _ = writeln!(
            out,
            "chef_upstream_seconds_total {}",
            get(&self.upstream_micros) as f64 / 1e6
        );
        family(
            &mut out,
            "chef_routed_total",
            "Tool calls by routed outcome.",
            "counter",
        );
        for (outcome, c) in OUTCOMES.iter().zip(&self.outcomes) {
            let _ = writeln!(out, "chef_routed_total{{outcome=\"{outcome}\"}} {}", get(c));
        }
        family(
            &mut out,
            "chef_tool_block_chars_total",
            "Characters of the tool block before and after compression.",
            "counter",
        );
        for (stage, c) in [("before", &self.chars_before), ("after", &self.chars_after)] {
            let _ = writeln!(
                out,
                "chef_tool_block_chars_total{{stage=\"{stage}\"}} {}",
                get(c)
            );
        }
        family(
            &mut out,
            "chef_tool_block_tokens_total",
            "o200k tokens of the tool block before and after compression (requests whose tool set has a template: counted once per tool set).",
            "counter",
        );
        for (stage, c) in [
            ("before", &self.tokens_before),
            ("after", &self.tokens_after),
        ] {
            let _ = writeln!(
                out,
                "chef_tool_block_tokens_total{{stage=\"{stage}\"}} {}",
                get(c)
            );
        }
        family(
            &mut out,
            "chef_passthrough_total",
            "Requests passed to the upstream unchanged.",
            "counter",
        );
        let _ = writeln!(out, "chef_passthrough_total {}", get(&self.passthrough));
        family(
            &mut out,
            "chef_sessions_reused_total",
            "Requests served by a kept session made for the same tools.",
            "counter",
        );
        let _ = writeln!(out, "chef_sessions_reused_total {}", get(&self.reused));
        family(
            &mut out,
            "chef_gateway_overhead_seconds",
            "Time the gateway spent on a client request, upstream time excluded.",
            "histogram",
        );
        for (bound, c) in BUCKETS.iter().zip(&self.overhead_buckets) {
            let _ = writeln!(
                out,
                "chef_gateway_overhead_seconds_bucket{{le=\"{bound}\"}} {}",
                get(c)
            );
        }
        let count = get(&self.overhead_count);
        let _ = writeln!(
            out,
            "chef_gateway_overhead_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            out,
            "chef_gateway_overhead_seconds_sum {}",
            get(&self.overhead_micros) as f64 / 1e6
        );
        let _ = writeln!(out, "chef_gateway_overhead_seconds_count {count}");
        if self.store.configured() {
            family(
                &mut out,
                "chef_memory_store_up",
                "Whether the memory store's latest operation reached it (0: it failed or timed out).",
                "gauge",
            );
            let _ = writeln!(out, "chef_memory_store_up {}", u8::from(self.store.up()));
            family(
                &mut out,
                "chef_memory_store_errors_total",
                "Memory store operations that failed or timed out.",
                "counter",
            );
            let _ = writeln!(
                out,
                "chef_memory_store_errors_total {}",
                self.store.errors()
            );
            family(
                &mut out,
                "chef_memory_store_timeouts_total",
                "Memory store operations that took longer than memory.timeout_secs.",
                "counter",
            );
            let _ = writeln!(
                out,
                "chef_memory_store_timeouts_total {}",
                self.store.timeouts()
            );
        }
        out
    }
}

/// A metric family's `# HELP` and `# TYPE` lines.
fn family(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
