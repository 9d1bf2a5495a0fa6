//! Checking one compiled line against the tool it claims to describe.
//!
//! A compiled line is text a model wrote: `def name(params):"docstring"`. Before it reaches
//! any prompt it must prove it still describes the tool's current schema, because a line
//! that renames the tool, invents a parameter or drops a required one would teach the
//! model a call that fails. Verification runs at compile time and again at every
//! [`compress`](crate::compress), so a schema that changed after compilation turns its old
//! line stale instead of wrong.

use std::fmt;

use chef_ir::ToolDefinition;
use serde_json::Value;

use crate::render::{is_python_identifier, required_names};

/// Why a compiled line was refused. `Display` is the reason shown to people and stored in
/// stale-line reports, e.g. `dropped required parameter(s): section_title`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// Not exactly one line of the form `def name(params): "…"`.
    #[error("not a single-line def")]
    NotSingleLineDef,
    /// The line declares another function name.
    #[error("renamed the tool to {name}")]
    Renamed {
        /// The name the line declares.
        name: String,
    },
    /// Positional parameters that Python cannot spell (reserved words, `*args`, …).
    #[error("{}", reserved_message(names))]
    NotValidPython {
        /// The offending names, in line order.
        names: Vec<String>,
    },
    /// Parameters the schema does not have.
    #[error("invented parameter(s): {}", names.join(", "))]
    InventedParameters {
        /// The invented names, in line order (positional first, then keyword).
        names: Vec<String>,
    },
    /// Required parameters the line does not declare.
    #[error("dropped required parameter(s): {}", names.join(", "))]
    DroppedRequired {
        /// The missing names, in schema order.
        names: Vec<String>,
    },
    /// The text after the colon is not one double-quoted string.
    #[error("docstring is not a single quoted string")]
    DocstringNotQuoted,
}

fn reserved_message(names: &[String]) -> String {
    let first = names.first().map(String::as_str).unwrap_or_default();
    let verb = if names.len() > 1 {
        "are reserved words"
    } else {
        "is a reserved word"
    };
    format!(
        "not valid Python: {} {verb} and cannot be a parameter name — put it in a trailing **{{\"{first}\":None}} instead",
        names.join(", ")
    )
}

/// Python's reserved words (hard and soft keywords that cannot name a parameter cleanly).
/// A def line taken apart: the function name, the text between the parentheses, and the
/// text after the colon (trimmed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DefLine<'a> {
    pub(crate) name: &'a str,
    pub(crate) params: &'a str,
    pub(crate) body: &'a str,
}

/// Parses `def NAME ( PARAMS ) : BODY` on one line (`\s` allowed around the punctuation;
/// PARAMS holds no `)`; BODY is not empty). NAME is a tool's name as written: it starts
/// with a letter or `_` and may hold `-`, `.` and `/` besides Python's identifier
/// characters, so a tool named `timezone.convert` or `get-weather` keeps its own name in
/// its line (the line is read by a model, never run).
pub(crate) fn parse_def(line: &str) -> Option<DefLine<'_>> {
    if line.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return None;
    }
    let rest = line.strip_prefix("def")?;
    let trimmed = rest.trim_start();
    if trimmed.len() == rest.len() {
        return None; // `def` must be followed by whitespace
    }
    let name_len = trimmed
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
        .count();
    let name = trimmed.get(..name_len)?;
    if !name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
    {
        return None;
    }
    let rest = trimmed.get(name_len..)?.trim_start().strip_prefix('(')?;
    let close = rest.find(')')?;
    let params = rest.get(..close)?;
    let rest = rest.get(close + 1..)?.trim_start().strip_prefix(':')?;
    let body = rest.trim();
    if body.is_empty() {
        return None;
    }
    Some(DefLine { name, params, body })
}

/// The docstring of a compiled line: the text between the outer double quotes after the
/// colon. `None` when the line does not parse or the body is not one quoted string.
///
/// (The reference cut at the first `):"`, which garbles a verified line with a space
/// before the colon; parsing the line gives the same result for canonical lines and the
/// right one for the others.)
pub fn compiled_docstring(line: &str) -> Option<&str> {
    let def = parse_def(line)?;
    quoted(def.body)
}

fn quoted(body: &str) -> Option<&str> {
    if body.len() >= 2 && body.starts_with('"') && body.ends_with('"') {
        body.get(1..body.len() - 1)
    } else {
        None
    }
}

/// The parameter names a compiled line declares: positional names (before any `=`), and
/// keyword names from `**{"name":…}` groups.
pub(crate) fn declared_parameters(params: &str) -> (Vec<String>, Vec<String>) {
    // Positional: everything outside `**{ … }` groups.
    let mut outside = String::with_capacity(params.len());
    let mut rest = params;
    while let Some(start) = rest.find("**{") {
        outside.push_str(rest.get(..start).unwrap_or_default());
        let after = rest.get(start..).unwrap_or_default();
        rest = match after.find('}') {
            Some(end) => after.get(end + 1..).unwrap_or_default(),
            None => "",
        };
    }
    outside.push_str(rest);
    let positional = outside
        .split(',')
        .map(|p| p.split('=').next().unwrap_or_default().trim())
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();

    // Keyword: every `"name"` followed (after optional spaces) by `:`.
    let mut keyword = Vec::new();
    let mut rest = params;
    while let Some(open) = rest.find('"') {
        let after = rest.get(open + 1..).unwrap_or_default();
        let Some(close) = after.find('"') else { break };
        let name = after.get(..close).unwrap_or_default();
        let tail = after.get(close + 1..).unwrap_or_default();
        if tail.trim_start().starts_with(':') {
            keyword.push(name.to_owned());
            rest = tail;
        } else {
            // The closing quote may open the next string: continue from it.
            rest = after.get(close..).unwrap_or_default();
        }
    }
    (positional, keyword)
}

/// Checks a compiled line against a tool (its name and `input_schema`). Checks in order, first failure wins: one-line def, same name, positional
/// names are valid Python, no invented parameter, no dropped required parameter, the
/// docstring is one quoted string.
///
/// Parameters may come in any order, with `=None` (or any) defaults, with spaces, and
/// keyword-named ones in a trailing `**{"from":None}` group.
///
/// ```
/// use chef_compress::verify_compiled_line;
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tool = ToolDefinition::new("github_create_issue", json!({
///     "type": "object",
///     "properties": {"owner": {}, "repo": {}, "title": {}, "body": {}},
///     "required": ["owner", "repo", "title"]
/// }));
/// let ok = r#"def github_create_issue(owner,repo,title,body=None):"open issue; not for PRs""#;
/// assert_eq!(verify_compiled_line(ok, &tool), Ok(()));
///
/// let bad = r#"def github_create_issue(owner,repo,title,assignee=None):"x""#;
/// let err = verify_compiled_line(bad, &tool).unwrap_err();
/// assert_eq!(err.to_string(), "invented parameter(s): assignee");
/// ```
pub fn verify_compiled_line(line: &str, tool: &ToolDefinition) -> Result<(), VerifyError> {
    verify_line(line, tool.name.as_str(), &tool.input_schema)
}

/// [`verify_compiled_line`] against a name and a schema.
pub(crate) fn verify_line(line: &str, name: &str, schema: &Value) -> Result<(), VerifyError> {
    let def = parse_def(line).ok_or(VerifyError::NotSingleLineDef)?;
    if def.name != name {
        return Err(VerifyError::Renamed {
            name: def.name.to_owned(),
        });
    }
    let (positional, keyword) = declared_parameters(def.params);
    let not_python: Vec<String> = positional
        .iter()
        .filter(|p| !is_python_identifier(p))
        .cloned()
        .collect();
    if !not_python.is_empty() {
        return Err(VerifyError::NotValidPython { names: not_python });
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let known = |p: &str| properties.is_some_and(|props| props.contains_key(p));
    let mut invented: Vec<String> = Vec::new();
    for p in positional.iter().chain(keyword.iter()) {
        if !known(p) && !invented.contains(p) {
            invented.push(p.clone());
        }
    }
    if !invented.is_empty() {
        return Err(VerifyError::InventedParameters { names: invented });
    }
    let dropped: Vec<String> = required_names(schema)
        .into_iter()
        .filter(|r| !positional.iter().chain(&keyword).any(|p| p == r))
        .map(str::to_owned)
        .collect();
    if !dropped.is_empty() {
        return Err(VerifyError::DroppedRequired { names: dropped });
    }
    if quoted(def.body).is_none() {
        return Err(VerifyError::DocstringNotQuoted);
    }
    Ok(())
}

/// Words after which a docstring points at another tool ("use X", "prefer X", …).
const REDIRECTS: [&str; 20] = [
    "use",
    "using",
    "prefer",
    "instead of",
    "rather than",
    "than",
    "before",
    "after",
    "see",
    "via",
    "twin of",
    "call",
    "calling",
    "run",
    "invoke",
    "chain",
    "combine with",
    "pair with",
    "requires",
    "needs",
];

/// A docstring that points at tool names missing from the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DanglingReference {
    /// The tool whose docstring points away.
    pub tool: String,
    /// The snake_case names it mentions that are no tool, no parameter, in order.
    pub mentions: Vec<String>,
}

impl fmt::Display for DanglingReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: docstring points at \"{}\", not in this catalogue",
            self.tool,
            self.mentions.join(", ")
        )
    }
}

/// The snake_case tokens after a redirect word in `docstring` (`use foo_bar`,
/// `instead of foo_bar`), case-insensitively, that `known` does not accept.
pub(crate) fn dangling_mentions(docstring: &str, known: impl Fn(&str) -> bool) -> Vec<String> {
    let lower = docstring.to_lowercase();
    let mut found: Vec<String> = Vec::new();
    for word in REDIRECTS {
        let mut from = 0;
        while let Some(i) = lower.get(from..).and_then(|s| s.find(word)) {
            let at = from + i;
            from = at + word.len();
            let before_ok = lower
                .get(..at)
                .and_then(|s| s.chars().next_back())
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            if !before_ok {
                continue;
            }
            let after = lower.get(at + word.len()..).unwrap_or_default();
            let trimmed = after.trim_start();
            if trimmed.len() == after.len() {
                continue; // the redirect word must be followed by whitespace
            }
            let token_len = trimmed
                .bytes()
                .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
                .count();
            let token = trimmed.get(..token_len).unwrap_or_default();
            if is_snake_case_name(token) && !known(token) && !found.iter().any(|f| f == token) {
                found.push(token.to_owned());
            }
        }
    }
    found
}

/// `[a-z][a-z0-9]*(_[a-z0-9]+)+`: at least two parts joined by single underscores.
fn is_snake_case_name(token: &str) -> bool {
    let mut parts = token.split('_');
    let head_ok = parts.next().is_some_and(|h| {
        h.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
            && h.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    let mut tail_count = 0;
    let tail_ok = parts.all(|p| {
        tail_count += 1;
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    head_ok && tail_ok && tail_count > 0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn issue_schema() -> Value {
        json!({
            "type": "object",
            "properties": {"owner": {}, "repo": {}, "title": {}, "body": {}, "labels": {}},
            "required": ["owner", "repo", "title"]
        })
    }

    fn email_schema(from_required: bool) -> Value {
        let mut required = vec!["to", "subject"];
        if from_required {
            required.push("from");
        }
        json!({
            "type": "object",
            "properties": {"to": {}, "from": {}, "subject": {}, "attachments": {}},
            "required": required
        })
    }

    #[test]
    fn verification_table() {
        let s = issue_schema();
        let n = "github_create_issue";
        let cases: [(&str, Result<(), &str>); 12] = [
            (
                r#"def github_create_issue(owner,repo,title,body=None,labels=None):"x""#,
                Ok(()),
            ),
            (
                r#"def github_create_issue(title,owner,repo,body=0):"x""#,
                Ok(()),
            ),
            (
                r#"def  github_create_issue ( owner , repo = None, title ,title) : "" "#,
                Ok(()),
            ),
            (
                r#"def gh_issue(owner,repo,title):"x""#,
                Err("renamed the tool to gh_issue"),
            ),
            (
                r#"def github_create_issue(owner,repo,title,assignee=0):"x""#,
                Err("invented parameter(s): assignee"),
            ),
            (
                r#"def github_create_issue(owner,repo):"x""#,
                Err("dropped required parameter(s): title"),
            ),
            ("Creates an issue on GitHub.", Err("not a single-line def")),
            (
                "def github_create_issue(owner,repo,title):\"x\"\n",
                Err("not a single-line def"),
            ),
            (
                r#"def github_create_issue(owner,repo,title): pass"#,
                Err("docstring is not a single quoted string"),
            ),
            (
                r#"def github_create_issue(owner,repo,title):"#,
                Err("not a single-line def"),
            ),
            (
                r#"def github_create_issue(owner,repo,title):"unterminated"#,
                Err("docstring is not a single quoted string"),
            ),
            (
                r#"def github_create_issue(*args):"x""#,
                Err(
                    "not valid Python: *args is a reserved word and cannot be a parameter name — put it in a trailing **{\"*args\":None} instead",
                ),
            ),
        ];
        for (line, want) in cases {
            let got = verify_line(line, n, &s).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{line}");
        }
        // A tool whose name is not a Python identifier keeps its own name in its line; the
        // identifier spelling of it is a rename.
        for (name, line, want) in [
            (
                "timezone.convert",
                r#"def timezone.convert(owner,repo,title):"x""#,
                Ok(()),
            ),
            (
                "get-weather",
                r#"def get-weather(owner,repo,title):"x""#,
                Ok(()),
            ),
            (
                "files/read",
                r#"def files/read(owner,repo,title):"x""#,
                Ok(()),
            ),
            (
                "timezone.convert",
                r#"def timezone_convert(owner,repo,title):"x""#,
                Err("renamed the tool to timezone_convert"),
            ),
            (
                "x",
                r#"def .x(owner,repo,title):"x""#,
                Err("not a single-line def"),
            ),
        ] {
            let got = verify_line(line, name, &s).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{line}");
        }
    }

    #[test]
    fn reserved_words_go_in_a_keyword_group() {
        let s = email_schema(false);
        let err = verify_line(
            r#"def send_email(to,subject,from=None):"…""#,
            "send_email",
            &s,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not valid Python"), "{err}");
        assert!(err.contains("reserved word"), "{err}");
        assert!(err.contains(r#"**{"from":None}"#), "{err}");
        let err = verify_line(
            r#"def send_email(to,subject,**{"sender":None}):"…""#,
            "send_email",
            &s,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "invented parameter(s): sender");
        assert_eq!(
            verify_line(
                r#"def send_email(to,subject,**{"from":None}):"…""#,
                "send_email",
                &s
            ),
            Ok(())
        );
        let required = email_schema(true);
        assert_eq!(
            verify_line(
                r#"def send_email(to,subject,**{"from":...}):"…""#,
                "send_email",
                &required
            ),
            Ok(())
        );
        assert_eq!(
            verify_line(r#"def send_email(to,subject):"…""#, "send_email", &required)
                .unwrap_err()
                .to_string(),
            "dropped required parameter(s): from"
        );
        let two = verify_line(
            r#"def send_email(to,subject,from,class):"…""#,
            "send_email",
            &required,
        )
        .unwrap_err()
        .to_string();
        assert!(two.contains("from, class are reserved words"), "{two}");
    }

    #[test]
    fn docstrings_come_from_the_parsed_line() {
        assert_eq!(compiled_docstring(r#"def f(a):"doc""#), Some("doc"));
        assert_eq!(
            compiled_docstring(r#"def f(a) : "doc with ): inside""#),
            Some("doc with ): inside")
        );
        assert_eq!(compiled_docstring(r#"def f(a):"""#), Some(""));
        assert_eq!(compiled_docstring("def f(a): pass"), None);
    }

    #[test]
    fn python_identifiers() {
        for ok in ["a", "_", "type", "snake_case2", "A1"] {
            assert!(is_python_identifier(ok), "{ok}");
        }
        for bad in [
            "", "1a", "user-id", "é", "*args", "b?:x", "from", "class", "None", "match",
        ] {
            assert!(!is_python_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn dangling_mentions_follow_redirect_words() {
        let known = |t: &str| t == "deep_research" || t == "analyze_urls";
        assert_eq!(
            dangling_mentions("call compress_output first if large", known),
            vec!["compress_output".to_owned()]
        );
        assert!(dangling_mentions("use deep_research when URLs unknown", known).is_empty());
        assert!(
            dangling_mentions("reuse compress_output", known).is_empty(),
            "word boundary"
        );
        assert!(
            dangling_mentions("use plain words", known).is_empty(),
            "not snake_case"
        );
        assert_eq!(
            dangling_mentions("Prefer Foo_Bar, instead of baz_qux", known),
            vec!["foo_bar".to_owned(), "baz_qux".to_owned()]
        );
    }
}
