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

/// A name format without `{tool}`. `Display` starts with the format; the flag or key that
/// gave it goes before.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} has no {{tool}}: every tool of a server would get the same name")]
pub(crate) struct NoToolPlaceholder(String);

impl NameFormat {
    /// Parses a format with `{server}` and `{tool}` placeholders; `{tool}` is required,
    /// since without it every tool of a server would get the same name.
    pub(crate) fn parse(format: &str) -> Result<Self, NoToolPlaceholder> {
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
            return Err(NoToolPlaceholder(format.to_owned()));
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
    }
}
