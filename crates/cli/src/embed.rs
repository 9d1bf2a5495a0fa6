//! `chef embed distill --from MINILM_DIR --out DIR [--dims 256]`: make a static model.
//!
//! Progress goes to stderr; the report, one JSON object, to stdout:
//!
//! ```json
//! {"out":"models/static","vocab":30522,"dims":256,"explained_variance":0.93,"seconds":180.2}
//! ```

use std::path::PathBuf;

use clap::Args;

use crate::error::CliError;

#[cfg(feature = "dense")]
#[derive(Debug, serde::Serialize)]
struct Report<'a> {
    out: &'a str,
    vocab: usize,
    dims: usize,
    explained_variance: f64,
    seconds: f64,
}

#[cfg(feature = "dense")]
pub(crate) fn distill(args: &DistillArgs) -> Result<(), CliError> {
    let options = chef_dense::DistillOptions {
        dims: usize::from(args.dims),
        ..chef_dense::DistillOptions::default()
    };
    let mut last = 0;
    let report = chef_dense::distill(&args.from, &args.out, &options, |done, total| {
        if done == total || done >= last + total / 20 {
            last = done;
            eprintln!("chef: embedded {done} of {total} tokens");
        }
    })?;
    let out = args.out.display().to_string();
    let line = Report {
        out: &out,
        vocab: report.vocab,
        dims: report.dims,
        explained_variance: report.explained_variance,
        seconds: report.seconds,
    };
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, &line).map_err(|e| CliError::Write(e.into()))?;
    stdout.write_all(b"\n").map_err(CliError::Write)
}

#[cfg(not(feature = "dense"))]
pub(crate) fn distill(args: &DistillArgs) -> Result<(), CliError> {
    Err(chef_dense::Error::NotBuilt {
        path: args.from.clone(),
    }
    .into())
}

#[derive(Debug, Args)]
pub(crate) struct DistillArgs {
    /// The MiniLM directory (config.json, model.safetensors, tokenizer.json).
    #[arg(long, value_name = "DIR")]
    pub(crate) from: PathBuf,
    /// Where to write the static model (created if needed).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Dimensions to keep (PCA components).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) dims: u16,
}
