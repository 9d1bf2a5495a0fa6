//! Argument rendering: `$ARGUMENTS`, `$0..$N` and `${NAME}` in a skill's instructions
//! (the rules are on [`render_arguments`]).

/// Instructions with their arguments filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// Placeholders that had no argument (`$2`, `${file}`), each once, in order met.
    pub missing: Vec<String>,
}

/// Fills `$ARGUMENTS`, `$N` and `${NAME}` in `template`.
///
/// A pure function over text, so the same instructions and arguments always give the
/// same bytes. The rules:
///
/// | written | becomes |
/// |---|---|
/// | `$ARGUMENTS` | every argument, joined with one space (`""` with none) |
/// | `$0`, `$1`, … `${0}` | the argument at that position (0-based) |
/// | `${NAME}` | the argument at the position `NAME` is declared at (see [`Skill::arguments`](crate::skills::Skill::arguments)) |
/// | `$$` | one literal `$` (so `$$ARGUMENTS` stays `$ARGUMENTS`) |
/// | anything else after `$` | left as written (`$HOME`, `${PATH}`, `$ 5`, a trailing `$`) |
///
/// A positional or declared argument that was not given becomes `""` and is listed in
/// [`Rendered::missing`], once each, in the order first met, so a caller can refuse or
/// ask for it. `$ARGUMENTS` only matches as a whole word: `$ARGUMENTS_DIR` is left as
/// written. Undeclared `${NAME}`s stay as written because skills quote shell snippets.
///
/// ```
/// use chef::skills::render_arguments;
///
/// let out = render_arguments("Fix #$0 (${priority}); all: $ARGUMENTS; $$5 and $HOME", &["issue", "priority"], &["42", "high"]);
/// assert_eq!(out.text, "Fix #42 (high); all: 42 high; $5 and $HOME");
/// let out = render_arguments("Fix ${issue} at $1", &["issue"], &["42"]);
/// assert_eq!((out.text.as_str(), out.missing.as_slice()), ("Fix 42 at ", &["$1".to_owned()][..]));
/// ```
pub fn render_arguments<D, A>(template: &str, declared: &[D], args: &[A]) -> Rendered
where
    D: AsRef<str>,
    A: AsRef<str>,
{
    let mut text = String::with_capacity(template.len());
    let mut missing: Vec<String> = Vec::new();
    let mut note_missing = |placeholder: String| {
        if !missing.contains(&placeholder) {
            missing.push(placeholder);
        }
    };
    let arg = |i: usize| args.get(i).map(AsRef::as_ref);
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        text.push_str(rest.get(..at).unwrap_or_default());
        let after = rest.get(at + 1..).unwrap_or_default();
        // `$$`: one literal dollar.
        if let Some(tail) = after.strip_prefix('$') {
            text.push('$');
            rest = tail;
            continue;
        }
        // `$ARGUMENTS`, as a whole word.
        if let Some(tail) = after.strip_prefix("ARGUMENTS")
            && !tail.starts_with(is_word_char)
        {
            let all: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
            text.push_str(&all.join(" "));
            rest = tail;
            continue;
        }
        // `$N`.
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            let (number, tail) = after.split_at(digits);
            match number.parse::<usize>().ok().and_then(arg) {
                Some(value) => text.push_str(value),
                None => note_missing(format!("${number}")),
            }
            rest = tail;
            continue;
        }
        // `${N}` or `${NAME}` (declared names only).
        if let Some(inner) = after.strip_prefix('{')
            && let Some(close) = inner.find('}')
        {
            let name = inner.get(..close).unwrap_or_default();
            let tail = inner.get(close + 1..).unwrap_or_default();
            let position = if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
                name.parse::<usize>().ok()
            } else {
                declared.iter().position(|d| d.as_ref() == name)
            };
            if let Some(position) = position {
                match arg(position) {
                    Some(value) => text.push_str(value),
                    None => note_missing(format!("${{{name}}}")),
                }
                rest = tail;
                continue;
            }
        }
        // Anything else: the dollar as written.
        text.push('$');
        rest = after;
    }
    text.push_str(rest);
    Rendered { text, missing }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str, args: &[&str]) -> (String, Vec<String>) {
        let out = render_arguments(template, &["file", "mode"], args);
        (out.text, out.missing)
    }

    #[test]
    fn placeholders_table() {
        let none: Vec<String> = Vec::new();
        for (template, args, text, missing) in [
            ("$ARGUMENTS", &["a", "b c"][..], "a b c", &none[..]),
            ("[$ARGUMENTS]", &[][..], "[]", &none[..]),
            ("$0-$1", &["x", "y"][..], "x-y", &none[..]),
            ("${0}${1}", &["x", "y"][..], "xy", &none[..]),
            ("${file}:${mode}", &["a.rs", "ro"][..], "a.rs:ro", &none[..]),
            ("$10", &["a"; 11][..], "a", &none[..]),
            (
                "$$ $$0 $$ARGUMENTS",
                &["x"][..],
                "$ $0 $ARGUMENTS",
                &none[..],
            ),
            (
                "$HOME ${PATH} $ 1 $",
                &["x"][..],
                "$HOME ${PATH} $ 1 $",
                &none[..],
            ),
            ("$ARGUMENTS_DIR", &["x"][..], "$ARGUMENTS_DIR", &none[..]),
            ("${unclosed", &["x"][..], "${unclosed", &none[..]),
            ("é$0é", &["ü"][..], "éüé", &none[..]),
        ] {
            assert_eq!(
                render(template, args),
                (text.to_owned(), missing.to_vec()),
                "{template}"
            );
        }
    }

    #[test]
    fn missing_arguments_become_empty_and_are_listed_once() {
        let (text, missing) = render("$0 $2 ${mode} $2", &["a"]);
        assert_eq!(text, "a   ");
        assert_eq!(missing, ["$2", "${mode}"]);
    }
}
