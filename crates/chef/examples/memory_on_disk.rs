//! Memory persisted in a file-system store, and a snapshot saved next to it.
//!
//! Run with `cargo run -p chef --example memory_on_disk [DIR]` (a temporary directory when
//! DIR is left out). Run it twice with the same DIR: the second run finds the first run's
//! memory and snapshot.

use std::error::Error;
use std::path::PathBuf;

use chef::memory::{Memory, MemoryState, MemoryStyle, SetOptions};
use chef::snapshot::{self, Snapshot, SnapshotError};
use chef::store::FsBackend;

fn main() -> Result<(), Box<dyn Error>> {
    let temp;
    let dir = match std::env::args_os().nth(1) {
        Some(dir) => PathBuf::from(dir),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&dir)?;
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let store = FsBackend::open(dir.join("store"))?;
    let snapshot_path = dir.join("session.json");

    let mut memory = Memory::new().with_default_ttl(10);
    runtime.block_on(memory.load(&store))?;
    match snapshot::load::<MemoryState>(&snapshot_path) {
        Ok(snap) => println!(
            "last snapshot: turn {}, {} entries",
            snap.created_turn,
            snap.payload.entries.len()
        ),
        Err(SnapshotError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            println!("no snapshot yet");
        }
        Err(e) => return Err(e.into()),
    }

    let runs = memory
        .get("runs")
        .map_or(0, |e| e.value().parse::<u64>().unwrap_or(0));
    memory.set(
        "runs",
        (runs + 1).to_string(),
        SetOptions::new().with_description("times this example ran"),
    )?;
    memory.set("lang", "Rust", SetOptions::new())?;
    // Writes are compare-and-set: a concurrent run that changed `runs` first makes this fail
    // with a conflict instead of losing its increment.
    let written = runtime.block_on(memory.persist(&store))?;
    println!("persisted {written} keys under {}", store.root().display());

    println!(
        "{}",
        memory
            .render_block(MemoryStyle::Unified)
            .unwrap_or_default()
    );
    let snap = Snapshot::new(memory.state())
        .with_label("example")
        .with_created_turn(memory.turn());
    snapshot::save(&snapshot_path, &snap)?;
    println!("saved {}", snapshot_path.display());
    Ok(())
}
