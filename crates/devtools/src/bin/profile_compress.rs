//! A fixed amount of compression work, for instruction counts on a noisy machine.
//!
//! Run with:
//!
//! ```text
//! cargo build --release -p chef-devtools --bin profile_compress
//! valgrind --tool=callgrind --toggle-collect='chef_compress::compress::compress' \
//!     target/release/profile_compress [TOOLS] [ROUNDS]
//! ```
//!
//! Compresses the real 149-tool corpus (replicated with renamed tools up to `TOOLS`,
//! default 149) at level 3, `ROUNDS` times (default 100), and prints the system prompt's
//! length so the work cannot be optimised away. Instructions per compress are the
//! collected count divided by `ROUNDS`. With `PREPARED=1` it prepares a
//! [`Catalogue`] once and compresses that (collect `chef_compress::compress::render`).

use chef_compress::{Catalogue, Level, Options, compress};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let tools: usize = args.next().map_or(Ok(149), |a| a.parse())?;
    let rounds: usize = args.next().map_or(Ok(100), |a| a.parse())?;
    let base = chef_devtools::load_tools("real-mcp-tools.json")?;
    let catalogue = chef_devtools::cycled(&base, tools, |pass, name| {
        (pass > 0).then(|| format!("{name}_r{pass}"))
    });
    let options = Options::new().with_level(Level::Three);
    let mut total = 0;
    if std::env::var_os("PREPARED").is_some() {
        // The runtime's path: prepare once, compress each round.
        let prepared = Catalogue::new(&catalogue)?;
        for _ in 0..rounds {
            total += prepared.compress(&options)?.system().len();
        }
    } else {
        for _ in 0..rounds {
            total += compress(&catalogue, &options)?.system().len();
        }
    }
    println!("{total}");
    Ok(())
}
