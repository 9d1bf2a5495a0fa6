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
//! reference). `short` and `long` build it once and answer the bench's short (8-word) or long
//! (25-word) request `ROUNDS` times (default 1,000). Instructions per build or query are
//! the collected count divided by `ROUNDS`. Without valgrind, `time` gives CPU time.

use std::hint::black_box;

use chef_compress::search::{CatalogIndex, IndexOptions};
use chef_ir::ToolName;

const SHORT: &str = "add three new rows to the bottom of the tracker spreadsheet";
const LONG: &str = "Get the full details of order 735U2663137, then add a note to it saying the \
                    customer called about a damaged item and wants the delivery date and time \
                    rescheduled";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "build".to_owned());
    let rounds: Option<usize> = args.next().map(|a| a.parse()).transpose()?;
    let base = chef_devtools::load_tools("real-mcp-tools.json")?;
    let catalogue: Vec<_> = base
        .iter()
        .cycle()
        .take(10_000)
        .enumerate()
        .map(|(i, tool)| {
            let mut tool = tool.clone();
            tool.name = ToolName::new(format!("s{}_{}", i / base.len(), tool.name));
            tool
        })
        .collect();
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
            return Err(
                format!("unknown mode {other:?}: build, build1, wall, short or long").into(),
            );
        }
    }
    Ok(())
}
