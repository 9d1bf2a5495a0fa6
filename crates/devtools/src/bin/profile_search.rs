//! A fixed amount of catalogue-search work, for instruction counts on a noisy machine.
//!
//! Run with:
//!
//! ```text
//! cargo build --release -p chef-devtools --bin profile_search
//! valgrind --tool=callgrind --toggle-collect='chef_compress::search::CatalogIndex::build_with' \
//!     target/release/profile_search build1 [ROUNDS]
//! valgrind --tool=callgrind --toggle-collect='chef_compress::search::CatalogIndex::search_with' \
//!     target/release/profile_search short|long [ROUNDS]
//! ```
//!
//! Uses the bench's catalogue: the real 149-tool corpus replicated to 10,000 tools under
//! renamed names (`s{n}_{name}`). `build` builds the index `ROUNDS` times (default 2),
//! on as many threads as the index uses by default; `build1` does the same on one thread;
//! `wall` alternates the two `ROUNDS` times (default 100) and prints wall-clock minimum,
//! lower quartile and median per build of each (a check under load; criterion is the
//! reference). `walk` and `walk-all` time the floor under any build: a walk over every
//! text the index reads, touching its first and last byte (`walk-all`: and one byte of
//! every 64), building nothing; they print minimum and median of `ROUNDS` (default 100).
//! `CHEF_PROFILE_TOOLS=N` sizes the catalogue (default 10,000). `short` and `long` build it once and answer the bench's short (8-word) or long
//! (25-word) request `ROUNDS` times (default 1,000). Instructions per build or query are
//! the collected count divided by `ROUNDS`. Without valgrind, `time` gives CPU time.

use std::hint::black_box;

use chef_compress::search::{CatalogIndex, IndexOptions};

const SHORT: &str = "add three new rows to the bottom of the tracker spreadsheet";
const LONG: &str = "Get the full details of order 735U2663137, then add a note to it saying the \
                    customer called about a damaged item and wants the delivery date and time \
                    rescheduled";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "build".to_owned());
    let rounds: Option<usize> = args.next().map(|a| a.parse()).transpose()?;
    let base = chef_devtools::load_tools("real-mcp-tools.json")?;
    let tools: usize = match std::env::var("CHEF_PROFILE_TOOLS") {
        Ok(n) => n.parse()?,
        Err(_) => 10_000,
    };
    let catalogue =
        chef_devtools::cycled(&base, tools, |pass, name| Some(format!("s{pass}_{name}")));
    match mode.as_str() {
        "build" | "build1" => {
            let options = IndexOptions {
                threads: if mode == "build1" { 1 } else { 0 },
                ..IndexOptions::default()
            };
            for _ in 0..rounds.unwrap_or(2) {
                black_box(CatalogIndex::build_with(black_box(&catalogue), &options));
            }
        }
        "wall" => {
            // Alternates one-thread and default builds so both see the same machine load.
            let one = IndexOptions {
                threads: 1,
                ..IndexOptions::default()
            };
            let default = IndexOptions::default();
            let mut times = [Vec::new(), Vec::new()];
            for _ in 0..rounds.unwrap_or(100) {
                for (options, samples) in [&one, &default].into_iter().zip(&mut times) {
                    let start = std::time::Instant::now();
                    black_box(CatalogIndex::build_with(black_box(&catalogue), options));
                    samples.push(start.elapsed());
                }
            }
            for (label, samples) in ["1 thread", "default threads"].into_iter().zip(&mut times) {
                samples.sort();
                let at = |q: usize| {
                    samples
                        .get(samples.len() * q / 100)
                        .copied()
                        .unwrap_or_default()
                };
                println!(
                    "{label}: min {:?}, p25 {:?}, median {:?}",
                    samples.first().copied().unwrap_or_default(),
                    at(25),
                    at(50)
                );
            }
        }
        "walk" | "walk-all" => {
            // The floor under any index build: visit every text the index reads (names,
            // descriptions, parameter names and descriptions, enum values) and read its
            // first and last byte (`walk-all`: one byte of every 64, as the index's text
            // keys do), building nothing.
            let all = mode == "walk-all";
            let mut times = Vec::new();
            for _ in 0..rounds.unwrap_or(100) {
                let start = std::time::Instant::now();
                let mut acc = 0_u64;
                for tool in black_box(&catalogue) {
                    acc = acc.wrapping_add(touch(tool.name.as_str(), all));
                    acc = acc.wrapping_add(touch(&tool.description, all));
                    acc = acc.wrapping_add(walk(&tool.input_schema, 0, all));
                }
                black_box(acc);
                times.push(start.elapsed());
            }
            times.sort();
            println!(
                "{mode}: min {:?}, median {:?}",
                times.first().copied().unwrap_or_default(),
                times.get(times.len() / 2).copied().unwrap_or_default()
            );
        }
        "short" | "long" => {
            let index = CatalogIndex::build(&catalogue);
            let query = if mode == "short" { SHORT } else { LONG };
            let mut hits = 0;
            for _ in 0..rounds.unwrap_or(1_000) {
                hits += black_box(index.search(black_box(query), 10)).hits.len();
            }
            println!("{hits} hits");
        }
        other => {
            return Err(format!(
                "unknown mode {other:?}: build, build1, wall, walk, walk-all, short or long"
            )
            .into());
        }
    }
    Ok(())
}

/// The first and last byte of `text` (with `all`, and one of every 64), summed: a first
/// touch of its memory.
fn touch(text: &str, all: bool) -> u64 {
    let bytes = text.as_bytes();
    let ends = u64::from(bytes.first().copied().unwrap_or(0))
        + u64::from(bytes.last().copied().unwrap_or(0));
    if all {
        ends + bytes.iter().step_by(64).map(|&b| u64::from(b)).sum::<u64>()
    } else {
        ends
    }
}

/// Touches every text the index reads in `schema`, where the index's own walk finds them.
fn walk(schema: &serde_json::Value, depth: usize, all: bool) -> u64 {
    use serde_json::Value;
    let Value::Object(map) = schema else { return 0 };
    let mut acc = 0_u64;
    for (key, value) in map {
        acc = acc.wrapping_add(match (key.as_str(), value) {
            ("description", Value::String(text)) if depth > 0 => touch(text, all),
            ("properties", Value::Object(properties)) => properties
                .iter()
                .map(|(name, sub)| touch(name, all).wrapping_add(walk(sub, depth + 1, all)))
                .fold(0, u64::wrapping_add),
            ("items" | "additionalProperties" | "not", Value::Object(_)) => {
                walk(value, depth + 1, all)
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems" | "items", Value::Array(values)) => values
                .iter()
                .map(|v| walk(v, depth + 1, all))
                .fold(0, u64::wrapping_add),
            ("enum", Value::Array(values)) => values
                .iter()
                .map(|v| v.as_str().map_or(0, |s| touch(s, all)))
                .fold(0, u64::wrapping_add),
            _ => 0,
        });
    }
    acc
}
