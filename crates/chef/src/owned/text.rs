//! The `context` tool's text operations on one entry: a `view` of a range of lines, a
//! `search` inside an entry, a `str_replace` edit, and the snippets and listings they
//! answer with.

use serde_json::{Map, Value};

use super::handle::{OwnedReply, count, optional, required};

/// Lines a `view` shows at most without a `limit`.
pub(crate) const VIEW_MAX_LINES: usize = 400;
/// Characters of line text a `view` shows at most, whatever the `limit`.
pub(crate) const VIEW_MAX_CHARS: usize = 20_000;
/// Matching lines a `search` inside one entry lists at most.
pub(super) const SEARCH_MAX_HITS: usize = 50;

/// The part of an entry a `view` asks for: 1-based first line and column, line count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ViewRange {
    offset: usize,
    limit: Option<usize>,
    column: usize,
}

impl ViewRange {
    pub(super) fn from_args(args: &Map<String, Value>) -> Result<Self, OwnedReply> {
        Ok(Self {
            offset: positive(args, "offset")?.unwrap_or(1),
            limit: positive(args, "limit")?,
            column: positive(args, "column")?.unwrap_or(1),
        })
    }
}

/// An optional whole number ≥ 1 (a numeric string is read as the number: small models
/// often quote them).
pub(super) fn positive(args: &Map<String, Value>, name: &str) -> Result<Option<usize>, OwnedReply> {
    let bad = || {
        OwnedReply::err(format!(
            "the \"{name}\" argument must be a whole number of at least 1."
        ))
    };
    let n = match args.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(bad)?,
        // "2,020" and "2_020" too: written back from a reply with separators.
        Some(Value::String(s)) => s
            .trim()
            .replace([',', '_'], "")
            .parse::<u64>()
            .map_err(|_| bad())?,
        Some(_) => return Err(bad()),
    };
    if n == 0 {
        return Err(bad());
    }
    Ok(Some(usize::try_from(n).unwrap_or(usize::MAX)))
}

/// Lines `from..to` (0-based) of `content`, each with its 1-based number right-aligned to
/// width 6, then a tab.
pub(super) fn numbered_lines(
    content: &str,
    lines: &[(usize, usize)],
    from: usize,
    to: usize,
) -> String {
    let mut out = String::new();
    for (i, &(s, e)) in lines.iter().enumerate().take(to).skip(from) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{:>6}\t{}", i + 1, &content[s..e]));
    }
    out
}

/// A `view` of an entry: the asked-for lines, numbered, within [`VIEW_MAX_LINES`] (without
/// a limit) and [`VIEW_MAX_CHARS`], with a closing line saying where to read on when not
/// everything was shown. A line longer than the character cap is shown in parts: `column`
/// says where the part starts.
pub(super) fn view_range(content: &str, uri: &str, range: ViewRange) -> OwnedReply {
    use crate::offload::grouped;
    let lines = crate::offload::line_ranges(content);
    let total = lines.len();
    if total == 0 {
        return OwnedReply::ok(format!("{uri} is empty."));
    }
    if range.offset > total {
        return OwnedReply::err(format!(
            "{uri} has {} line{}; offset {} is past its end.",
            grouped(total),
            if total == 1 { "" } else { "s" },
            range.offset
        ));
    }
    let from = range.offset - 1;
    let want = range.limit.unwrap_or(VIEW_MAX_LINES);
    let mut budget = VIEW_MAX_CHARS;
    // A column inside the first line: show that line from there (in parts if long).
    let Some(&(fs, fe)) = lines.get(from) else {
        return OwnedReply::ok(format!("{uri} is empty."));
    };
    let first = &content[fs..fe];
    let first_len = first.chars().count();
    if range.column > 1 || first_len > budget {
        if range.column > first_len.max(1) {
            return OwnedReply::err(format!(
                "line {} of {uri} has {} characters; column {} is past its end.",
                from + 1,
                grouped(first_len),
                range.column
            ));
        }
        let start = first
            .char_indices()
            .nth(range.column - 1)
            .map_or(first.len(), |(i, _)| i);
        let part: String = first[start..].chars().take(budget).collect();
        let end_col = range.column - 1 + part.chars().count();
        let mut out = format!("{:>6}\t{part}", from + 1);
        if end_col < first_len {
            out.push_str(&format!(
                "\n[{uri}: line {} of {}, characters {}–{} of {}; view with offset {} and \
                 column {} to read on]",
                from + 1,
                total,
                range.column,
                end_col,
                first_len,
                from + 1,
                end_col + 1
            ));
        } else if from + 1 < total {
            out.push_str(&format!(
                "\n[{uri}: the end of line {} of {}; view with offset {} to read on]",
                from + 1,
                total,
                from + 2
            ));
        }
        return OwnedReply::ok(out);
    }
    let mut to = from;
    while to - from < want {
        let Some(&(s, e)) = lines.get(to) else { break };
        let len = content[s..e].chars().count();
        if len > budget {
            break;
        }
        budget -= len;
        to += 1;
    }
    let mut out = numbered_lines(content, &lines, from, to);
    if from > 0 || to < total {
        out.push_str(&format!("\n[{uri}: lines {}–{} of {}", from + 1, to, total));
        if to < total {
            out.push_str(&format!("; view with offset {} to read on", to + 1));
        }
        out.push(']');
    }
    OwnedReply::ok(out)
}

/// `search` inside one entry: its lines containing `query` (case-insensitive), numbered,
/// long lines shown around the match.
pub(super) fn search_entry(content: &str, query: &str, uri: &str) -> String {
    use crate::offload::grouped;
    let q = query.to_lowercase();
    if q.trim().is_empty() {
        return format!("No matches for \"{query}\" in {uri}.");
    }
    let lines = crate::offload::line_ranges(content);
    let mut hits = Vec::new();
    let mut more = 0usize;
    for (i, &(s, e)) in lines.iter().enumerate() {
        let line = &content[s..e];
        if !line.to_lowercase().contains(&q) {
            continue;
        }
        if hits.len() == SEARCH_MAX_HITS {
            more += 1;
            continue;
        }
        let shown = if line.chars().count() <= 200 {
            line.to_owned()
        } else {
            let column = line
                .to_lowercase()
                .find(&q)
                .map_or(1, |b| line.get(..b).map_or(0, |p| p.chars().count()) + 1);
            format!(
                "(column {column}) {}",
                snippet(line, query).unwrap_or_default()
            )
        };
        hits.push(format!("{:>6}\t{shown}", i + 1));
    }
    if hits.is_empty() {
        return format!("No matches for \"{query}\" in {uri}.");
    }
    let mut out = format!(
        "{} for \"{query}\" in {uri} (line numbers for view's offset):\n{}",
        count(hits.len() + more, "matching line", "matching lines"),
        hits.join("\n")
    );
    if more > 0 {
        out.push_str(&format!(
            "\n[… and {} more; narrow the query, or view a range]",
            grouped(more)
        ));
    }
    out
}

pub(super) fn edit(
    command: &str,
    args: &Map<String, Value>,
    current: &str,
    uri: &str,
) -> Result<String, OwnedReply> {
    if command == "str_replace" {
        let old = required(args, "old_str")?;
        let new = optional(args, "new_str")?.unwrap_or("");
        let Some(at) = current.find(old) else {
            return Err(OwnedReply::err(format!(
                "old_str was not found in {uri}. Copy it exactly, including whitespace and line breaks."
            )));
        };
        if current
            .get(at + old.len()..)
            .is_some_and(|rest| rest.contains(old))
        {
            return Err(OwnedReply::err(format!(
                "old_str appears more than once in {uri}. Include more surrounding text so it is unique."
            )));
        }
        let mut out = String::with_capacity(current.len() + new.len());
        out.push_str(current.get(..at).unwrap_or(""));
        out.push_str(new);
        out.push_str(current.get(at + old.len()..).unwrap_or(""));
        return Ok(out);
    }
    let line = match args.get("insert_line") {
        Some(Value::Number(n)) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }),
        // A numeric string is read as its number ("2" is 2). Unlike JavaScript's
        // `Number("")`, an empty or blank string is not 0: it is refused, rather than
        // silently inserting at the top.
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    let Some(line) = line else {
        return Err(OwnedReply::err(
            "the \"insert_line\" argument is required and must be an integer.",
        ));
    };
    let text = required(args, "insert_text")?;
    let mut lines: Vec<&str> = if current.is_empty() {
        Vec::new()
    } else {
        current.split('\n').collect()
    };
    let len = lines.len();
    let Ok(at) = usize::try_from(line) else {
        return Err(OwnedReply::err("insert_line is out of range."));
    };
    if at > len {
        return Err(OwnedReply::err(format!(
            "insert_line {line} is out of range for {uri}, which has {}. Use 0 to {len}.",
            count(len, "line", "lines")
        )));
    }
    let inserted: Vec<&str> = text.split('\n').collect();
    lines.splice(at..at, inserted);
    Ok(lines.join("\n"))
}

/// A window of 40 characters around the first case-insensitive match, whitespace collapsed.
pub(super) fn snippet(text: &str, query: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let q = query.to_lowercase();
    if q.trim().is_empty() {
        return None;
    }
    // Work on char indices so multi-byte text never splits.
    let chars: Vec<char> = text.chars().collect();
    let lower_chars: Vec<char> = lower.chars().collect();
    let q_chars: Vec<char> = q.chars().collect();
    if lower_chars.len() != chars.len() {
        // Lower-casing changed the length (rare scripts); fall back to a plain containment test.
        return lower
            .contains(&q)
            .then(|| text.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let start = lower_chars
        .windows(q_chars.len())
        .position(|w| w == q_chars.as_slice())?;
    let from = start.saturating_sub(40);
    let to = (start + q_chars.len() + 40).min(chars.len());
    let window: String = chars
        .get(from..to)
        .map(|w| w.iter().collect())
        .unwrap_or_default();
    let mut out = window.split_whitespace().collect::<Vec<_>>().join(" ");
    if from > 0 {
        out.insert(0, '…');
    }
    if to < chars.len() {
        out.push('…');
    }
    Some(out)
}

pub(super) fn search_results(query: &str, root: &str, hits: &[(String, String)]) -> String {
    if hits.is_empty() {
        return format!("No matches for \"{query}\" under {root}.");
    }
    let mut out = format!(
        "{} for \"{query}\" under {root}:",
        count(hits.len(), "match", "matches")
    );
    for (uri, snippet) in hits {
        out.push_str(&format!("\n- {uri}: {snippet}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_and_snippets() {
        let mut args = Map::new();
        args.insert("old_str".into(), "b".into());
        args.insert("new_str".into(), "B".into());
        assert_eq!(edit("str_replace", &args, "abc", "u").unwrap(), "aBc");
        assert!(
            edit("str_replace", &args, "abcb", "u")
                .unwrap_err()
                .text
                .contains("more than once")
        );
        let mut args = Map::new();
        args.insert("insert_line".into(), 1.into());
        args.insert("insert_text".into(), "x\ny".into());
        assert_eq!(edit("insert", &args, "a\nb", "u").unwrap(), "a\nx\ny\nb");
        args.insert("insert_line".into(), 9.into());
        assert!(
            edit("insert", &args, "a", "u")
                .unwrap_err()
                .text
                .contains("out of range")
        );
        assert_eq!(snippet("Hello   world", "WORLD").unwrap(), "Hello world");
        let all = ViewRange {
            offset: 1,
            limit: None,
            column: 1,
        };
        assert_eq!(view_range("a\nb", "u", all).text, "     1\ta\n     2\tb");
        assert_eq!(view_range("a\nb\n", "u", all).text, "     1\ta\n     2\tb");
    }

    fn range(offset: usize, limit: Option<usize>, column: usize) -> ViewRange {
        ViewRange {
            offset,
            limit,
            column,
        }
    }

    #[test]
    fn views_in_ranges() {
        let text: String = (1..=1_000).map(|i| format!("row {i}\n")).collect();
        let r = view_range(&text, "context://vfs/x", range(1, None, 1));
        assert!(!r.is_error);
        assert!(r.text.starts_with("     1\trow 1\n"));
        assert!(r.text.ends_with(
            "   400\trow 400\n[context://vfs/x: lines 1–400 of 1000; view with offset 401 to read on]"
        ));
        let r = view_range(&text, "u", range(998, Some(10), 1));
        assert_eq!(
            r.text,
            "   998\trow 998\n   999\trow 999\n  1000\trow 1000\n[u: lines 998–1000 of 1000]"
        );
        let r = view_range(&text, "u", range(1_001, None, 1));
        assert!(
            r.is_error
                && r.text
                    .contains("has 1,000 lines; offset 1001 is past its end"),
            "{}",
            r.text
        );
        // The character cap holds whatever the limit.
        let wide: String = (0..100).map(|i| format!("{i:0>999}\n")).collect();
        let r = view_range(&wide, "u", range(1, Some(100), 1));
        assert!(
            r.text
                .ends_with("[u: lines 1–20 of 100; view with offset 21 to read on]")
        );
    }

    #[test]
    fn views_a_long_line_in_parts() {
        let line = "x".repeat(50_000);
        let r = view_range(&line, "u", range(1, None, 1));
        assert!(r.text.ends_with(
            "[u: line 1 of 1, characters 1–20000 of 50000; view with offset 1 and column 20001 to read on]"
        ));
        let r = view_range(&line, "u", range(1, None, 40_001));
        assert_eq!(r.text.len(), 6 + 1 + 10_000);
        let r = view_range(&line, "u", range(1, None, 50_001));
        assert!(r.is_error);
    }

    #[test]
    fn searches_inside_an_entry() {
        let text = "ok\nERROR disk full\nok\nerror again\n";
        assert_eq!(
            search_entry(text, "error", "u"),
            "2 matching lines for \"error\" in u (line numbers for view's offset):\n     2\tERROR disk full\n     4\terror again"
        );
        assert_eq!(
            search_entry(text, "nope", "u"),
            "No matches for \"nope\" in u."
        );
        let many: String = (0..60).map(|i| format!("hit {i}\n")).collect();
        assert!(
            search_entry(&many, "hit", "u")
                .ends_with("[… and 10 more; narrow the query, or view a range]")
        );
        let long = format!("{}needle{}", "a".repeat(300), "b".repeat(300));
        assert!(search_entry(&long, "needle", "u").contains("(column 301) …"));
    }

    #[test]
    fn view_numbers_are_checked() {
        let mut args = Map::new();
        args.insert("offset".into(), "1,2".into());
        args.insert("limit".into(), 5.into());
        assert_eq!(ViewRange::from_args(&args).unwrap(), range(12, Some(5), 1));
        args.insert("offset".into(), 0.into());
        assert!(ViewRange::from_args(&args).is_err());
        args.insert("offset".into(), (-3).into());
        assert!(ViewRange::from_args(&args).is_err());
        args.insert("offset".into(), "many".into());
        assert!(ViewRange::from_args(&args).is_err());
    }
}
