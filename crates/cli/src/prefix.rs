//! How `chef mcp inspect` and `chef mcp serve` name an upstream server's tool in the
//! combined catalogue (`--prefix-format`, `prefix_format`).

/// How a server's tool is named in the combined catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NameFormat(Vec<Piece>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Server,
    Tool,
}

/// A name format chef refuses. `Display` starts with the format; the flag or key that gave
/// it goes before.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadNameFormat {
    /// No `{tool}`.
    #[error("{0:?} has no {{tool}}: every tool of a server would get the same name")]
    NoTool(String),
    /// Text around the placeholders that an MCP tool name may not hold (a space, a line
    /// break, `:`…): hosts and providers refuse such names, or show them garbled.
    #[error(
        "{format:?} puts {found:?} in tool names: use letters, digits, _, - and . around the \
         placeholders (what an MCP tool name may hold)"
    )]
    Character {
        /// The format as given.
        format: String,
        /// The first character refused.
        found: char,
    },
}

/// Whether an MCP tool name may hold `c` (the MCP specification's tool-name characters).
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

impl std::fmt::Display for NameFormat {
    /// The format as written in the config (`{server}_{tool}`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => f.write_str(text)?,
                Piece::Server => f.write_str("{server}")?,
                Piece::Tool => f.write_str("{tool}")?,
            }
        }
        Ok(())
    }
}

impl NameFormat {
    /// Parses a format with `{server}` and `{tool}` placeholders; `{tool}` is required,
    /// since without it every tool of a server would get the same name, and the text
    /// around them may hold only what a tool name may (letters, digits, `_`, `-`, `.`).
    pub(crate) fn parse(format: &str) -> Result<Self, BadNameFormat> {
        let mut pieces = Vec::new();
        let mut rest = format;
        while !rest.is_empty() {
            let next = [("{server}", Piece::Server), ("{tool}", Piece::Tool)]
                .into_iter()
                .filter_map(|(pat, piece)| rest.find(pat).map(|i| (i, pat.len(), piece)))
                .min_by_key(|(i, _, _)| *i);
            match next {
                Some((i, len, piece)) => {
                    let (text, tail) = rest.split_at(i);
                    if !text.is_empty() {
                        pieces.push(Piece::Text(text.to_owned()));
                    }
                    pieces.push(piece);
                    rest = tail.get(len..).unwrap_or_default();
                }
                None => {
                    pieces.push(Piece::Text(rest.to_owned()));
                    rest = "";
                }
            }
        }
        if !pieces.contains(&Piece::Tool) {
            return Err(BadNameFormat::NoTool(format.to_owned()));
        }
        let refused = pieces.iter().find_map(|piece| match piece {
            Piece::Text(text) => text.chars().find(|&c| !name_char(c)),
            _ => None,
        });
        if let Some(found) = refused {
            return Err(BadNameFormat::Character {
                format: format.to_owned(),
                found,
            });
        }
        Ok(Self(pieces))
    }

    /// Each tool keeps its own name (`--no-prefix`).
    pub(crate) fn tool_only() -> Self {
        Self(vec![Piece::Tool])
    }

    pub(crate) fn apply(&self, server: &str, tool: &str) -> String {
        self.0
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => text.as_str(),
                Piece::Server => server,
                Piece::Tool => tool,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_formats_substitute_once_and_need_a_tool() {
        let format = NameFormat::parse("{server}_{tool}").unwrap();
        assert_eq!(format.apply("git", "status"), "git_status");
        // A tool name that contains a placeholder is not substituted again.
        assert_eq!(format.apply("git", "{server}"), "git_{server}");
        let format = NameFormat::parse("mcp-{server}-{tool}-x").unwrap();
        assert_eq!(format.apply("a", "b"), "mcp-a-b-x");
        assert!(NameFormat::parse("{server}").is_err());
        assert!(NameFormat::parse("").is_err());
        assert_eq!(
            NameFormat::parse("{server}.{tool}")
                .unwrap()
                .apply("a", "b"),
            "a.b"
        );
        for bad in [
            "{server} {tool}",
            "{server}\n{tool}",
            "{server}:{tool}",
            "{tool}\u{200b}",
        ] {
            let e = NameFormat::parse(bad).unwrap_err();
            assert!(matches!(e, BadNameFormat::Character { .. }), "{bad:?}: {e}");
            assert!(e.to_string().contains("letters, digits"), "{e}");
        }
    }
}
