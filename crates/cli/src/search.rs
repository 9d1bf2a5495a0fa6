//! `chef search TOOLS --queries QUERIES.jsonl [--top K]`.
//!
//! # Format
//!
//! Input: a JSON Lines file, one object per line with a string `query` (other keys are
//! ignored, so a labelled evaluation file can be fed as it is; blank lines are skipped):
//!
//! ```json
//! {"query":"add three rows to the tracker spreadsheet"}
//! ```
//!
//! Output: one JSON line per request, in input order, with up to `K` tool names (default
//! 5), best first, and `[]` when the index abstains (no tool fits well enough):
//!
//! ```json
//! {"query":"add three rows to the tracker spreadsheet","tools":["gdrive_sheets_append_rows","gdrive_sheets_update_range"]}
//! {"query":"bake a chocolate cake","tools":[]}
//! ```
//!
//! The whole request file is checked before anything is printed: a line that is not a JSON
//! object with a string `query` stops the command with exit status 2 and one line on
//! stderr naming the file and the line.

use std::{
    io::{self, BufWriter, Write},
    path::Path,
};

use chef_compress::search::CatalogIndex;
use serde::Serialize;
use serde_json::Value;

use crate::{error::CliError, flags::SearchArgs};

#[derive(Debug, Serialize)]
struct Answer<'a> {
    query: &'a str,
    tools: Vec<&'a str>,
}

pub(crate) fn run(args: &SearchArgs) -> Result<(), CliError> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|source| CliError::Read {
            path: path.to_owned(),
            source,
        })
    };
    let tools = chef_ir::load_tools_from_str(&read(&args.tools)?)
        .map_err(|source| CliError::Tools {
            path: args.tools.clone(),
            source,
        })?
        .tools;
    let queries = parse_queries(&args.queries, &read(&args.queries)?)?;

    let index = CatalogIndex::build(&tools);
    let mut out = BufWriter::new(io::stdout().lock());
    for query in &queries {
        let found = index.search(query, usize::from(args.top));
        let answer = Answer {
            query,
            tools: found.hits.iter().map(|hit| hit.tool.as_str()).collect(),
        };
        serde_json::to_writer(&mut out, &answer).map_err(|e| write_error(e.into()))?;
        out.write_all(b"\n").map_err(write_error)?;
    }
    out.flush().map_err(write_error)
}

/// The `query` of every non-blank line, in order.
fn parse_queries(path: &Path, text: &str) -> Result<Vec<String>, CliError> {
    let mut queries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let problem = |problem: String| CliError::Queries {
            path: path.to_owned(),
            line: i + 1,
            problem,
        };
        let value: Value = serde_json::from_str(line)
            .map_err(|e| problem(format!("not valid JSON at column {}", e.column())))?;
        match value.get("query") {
            Some(Value::String(query)) => queries.push(query.clone()),
            Some(_) => return Err(problem("`query` is not a string".to_owned())),
            None if value.is_object() => return Err(problem("`query` is missing".to_owned())),
            None => {
                return Err(problem(
                    "expected an object like {\"query\":\"…\"}".to_owned(),
                ));
            }
        }
    }
    Ok(queries)
}

fn write_error(e: io::Error) -> CliError {
    match e.kind() {
        io::ErrorKind::BrokenPipe => CliError::BrokenPipe,
        _ => CliError::Write(e),
    }
}
