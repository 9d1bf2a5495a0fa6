//! Reading `SKILL.md` files: front matter, body, folders, precedence.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use serde_yaml_ng::Value as Yaml;

use super::{Skill, SkillArgument, SkillError, SkillErrorKind};

/// The file name a skill folder holds.
pub const SKILL_FILE: &str = "SKILL.md";

/// What a loader found: the skills that loaded, the files that did not, and the skills
/// hidden by another of the same name.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Loaded {
    /// The skills, in the order found (folders in name order, directories in the order
    /// given), one per name.
    pub skills: Vec<Skill>,
    /// Files that could not be loaded, with path and line.
    pub problems: Vec<SkillError>,
    /// Skills not kept because an earlier one has the same name.
    pub shadowed: Vec<Shadowed>,
}

/// A skill hidden by another of the same name (see [`load_dirs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shadowed {
    /// The name both skills have.
    pub name: String,
    /// The file of the skill kept.
    pub kept: PathBuf,
    /// The file of the skill hidden.
    pub hidden: PathBuf,
}

impl Loaded {
    /// Adds `skill` unless one of its name is already there (then it is reported in
    /// [`shadowed`](Self::shadowed)).
    fn add(&mut self, skill: Skill) {
        match self.skills.iter().find(|s| s.name == skill.name) {
            Some(kept) => self.shadowed.push(Shadowed {
                name: skill.name.clone(),
                kept: kept.source.clone().unwrap_or_default(),
                hidden: skill.source.unwrap_or_default(),
            }),
            None => self.skills.push(skill),
        }
    }
}

/// Loads every skill folder of `dir`: each `dir/<folder>/SKILL.md`, folders in name order.
/// A folder without a `SKILL.md` is skipped; a file that does not load is reported in
/// [`Loaded::problems`] and the others load. Two folders whose skills have one name: the
/// first in name order is kept, the other reported in [`Loaded::shadowed`].
pub fn load_dir(dir: impl AsRef<Path>) -> Loaded {
    load_dirs([dir])
}

/// Loads the skill folders of several directories, highest precedence first: on a name
/// clash the skill of the directory listed **first** wins (as the first match on a search
/// path does: list a project's skills before the user's to let the project override), and
/// the hidden one is reported in [`Loaded::shadowed`].
pub fn load_dirs<I, P>(dirs: I) -> Loaded
where
    I: IntoIterator<Item = P>,
    P: AsRef<Path>,
{
    let mut loaded = Loaded::default();
    for dir in dirs {
        load_dir_into(dir.as_ref(), &mut loaded);
    }
    loaded
}

/// Loads skills from several paths, highest precedence first, each a skill file (a
/// `SKILL.md`, or any file in its format) or a directory of skill folders (as
/// [`load_dir`]). On a name clash the skill of the path listed first wins and the hidden
/// one is reported in [`Loaded::shadowed`]; a file that does not load is reported in
/// [`Loaded::problems`] and the others load.
pub fn load_paths<I, P>(paths: I) -> Loaded
where
    I: IntoIterator<Item = P>,
    P: AsRef<Path>,
{
    let mut loaded = Loaded::default();
    for path in paths {
        let path = path.as_ref();
        if path.is_dir() {
            load_dir_into(path, &mut loaded);
        } else {
            match load_file(path) {
                Ok(skill) => loaded.add(skill),
                Err(e) => loaded.problems.push(e),
            }
        }
    }
    loaded
}

fn load_dir_into(dir: &Path, loaded: &mut Loaded) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            loaded
                .problems
                .push(SkillError::new(dir, None, SkillErrorKind::Io(e)));
            return;
        }
    };
    let mut folders: Vec<PathBuf> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => {
                let path = entry.path();
                if path.join(SKILL_FILE).is_file() {
                    folders.push(path);
                }
            }
            Err(e) => loaded
                .problems
                .push(SkillError::new(dir, None, SkillErrorKind::Io(e))),
        }
    }
    folders.sort();
    for folder in folders {
        match load_file(&folder.join(SKILL_FILE)) {
            Ok(skill) => loaded.add(skill),
            Err(e) => loaded.problems.push(e),
        }
    }
}

/// The largest skill file read: 4 MiB (a `SKILL.md` is instructions a model reads; what is
/// not a regular file, `/dev/zero` or a FIFO, is not read at all).
pub const MAX_SKILL_FILE_BYTES: u64 = 4 << 20;

/// Loads one skill: `path` is a `SKILL.md` file (any name) or a folder holding one.
pub(crate) fn load_file(path: &Path) -> Result<Skill, SkillError> {
    let file = if path.is_dir() {
        path.join(SKILL_FILE)
    } else {
        path.to_path_buf()
    };
    let bytes = crate::fsutil::read_regular(&file, MAX_SKILL_FILE_BYTES)
        .map_err(|e| SkillError::new(&file, None, SkillErrorKind::Io(e)))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        SkillError::new(
            &file,
            None,
            SkillErrorKind::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        )
    })?;
    parse(&file, &text)
}

/// The name a skill without one takes: its folder's name for a `SKILL.md`, else the file
/// name without its extension.
fn fallback_name(path: &Path) -> String {
    let is_skill_file = path
        .file_name()
        .is_some_and(|n| n.eq_ignore_ascii_case(SKILL_FILE));
    let named = if is_skill_file {
        path.parent().and_then(Path::file_name)
    } else {
        path.file_stem()
    };
    named
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Parses a `SKILL.md` text; `path` names it in errors, gives the fallback name and
/// becomes the skill's source.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Skill, SkillError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) =
        split_front_matter(text).map_err(|kind| SkillError::new(path, Some(1), kind))?;
    let fail = |line: Option<usize>, kind| SkillError::new(path, line, kind);
    let mapping = match front {
        None => serde_yaml_ng::Mapping::new(),
        Some(front) => match serde_yaml_ng::from_str::<Yaml>(front) {
            // The front matter starts on line 2, after the opening fence.
            Err(e) => {
                let (message, line) = yaml_problem(&e, front.lines().count());
                return Err(fail(Some(line + 1), SkillErrorKind::Yaml { message }));
            }
            Ok(Yaml::Null) => serde_yaml_ng::Mapping::new(),
            Ok(Yaml::Mapping(m)) => m,
            Ok(_) => return Err(fail(Some(2), SkillErrorKind::NotAMapping)),
        },
    };
    let line_of = |key: &str| front.and_then(|f| key_line(f, key));
    let invalid = |key: &str, expected| {
        fail(
            line_of(key),
            SkillErrorKind::InvalidField {
                field: key.to_owned(),
                expected,
            },
        )
    };

    let mut fields = Fields::default();
    for (key, value) in mapping {
        let Yaml::String(key) = key else {
            let shown = serde_yaml_ng::to_string(&key).unwrap_or_default();
            return Err(fail(
                None,
                SkillErrorKind::InvalidField {
                    field: shown.trim().to_owned(),
                    expected: "a key that is a string",
                },
            ));
        };
        let slot = match key.as_str() {
            "name" => Some(Field::Name),
            "description" => Some(Field::Description),
            "when_to_use" | "when-to-use" => Some(Field::WhenToUse),
            "allowed-tools" | "allowed_tools" => Some(Field::AllowedTools),
            "arguments" => Some(Field::Arguments),
            "argument-hint" | "argument_hint" => Some(Field::ArgumentHint),
            _ => None,
        };
        // The first spelling of a key wins; a second one is kept as metadata.
        let taken = slot.is_some_and(|s| fields.seen.contains(&s));
        match slot {
            Some(slot) if !taken => {
                fields.seen.push(slot);
                match slot {
                    Field::Name => {
                        fields.name =
                            Some(scalar(&value).ok_or_else(|| invalid(&key, "a string"))?);
                    }
                    Field::Description => {
                        fields.description =
                            Some(text_value(&value).ok_or_else(|| invalid(&key, "a string"))?);
                    }
                    Field::WhenToUse => {
                        fields.when_to_use =
                            Some(text_value(&value).ok_or_else(|| invalid(&key, "a string"))?);
                    }
                    Field::AllowedTools => {
                        fields.allowed_tools = names(&value).ok_or_else(|| {
                            invalid(&key, "a list of tool names or one string of them")
                        })?;
                    }
                    Field::Arguments => {
                        fields.arguments = Some(arguments(&value).ok_or_else(|| {
                            invalid(
                                &key,
                                "a list of names (or of {name, description}) or one string of names",
                            )
                        })?);
                    }
                    Field::ArgumentHint => {
                        fields.argument_hint =
                            Some(text_value(&value).ok_or_else(|| invalid(&key, "a string"))?);
                    }
                }
            }
            _ => {
                let json = serde_json::to_value(&value)
                    .map_err(|_| invalid(&key, "a value JSON can hold (string keys)"))?;
                fields.metadata.insert(key, json);
            }
        }
    }

    let name = fields
        .name
        .unwrap_or_else(|| fallback_name(path))
        .trim()
        .to_owned();
    if !valid_name(&name) {
        return Err(fail(line_of("name"), SkillErrorKind::InvalidName { name }));
    }
    // Without declared arguments, the hint's bracketed words name them.
    let arguments = match (fields.arguments, &fields.argument_hint) {
        (Some(arguments), _) => arguments,
        (None, Some(hint)) => hint_names(hint)
            .into_iter()
            .map(SkillArgument::new)
            .collect(),
        (None, None) => Vec::new(),
    };
    Ok(Skill {
        name,
        description: fields.description.unwrap_or_default(),
        when_to_use: fields.when_to_use,
        allowed_tools: fields.allowed_tools,
        arguments,
        argument_hint: fields.argument_hint,
        instructions: body.trim().to_owned(),
        metadata: fields.metadata,
        source: Some(path.to_path_buf()),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Name,
    Description,
    WhenToUse,
    AllowedTools,
    Arguments,
    ArgumentHint,
}

#[derive(Default)]
struct Fields {
    seen: Vec<Field>,
    name: Option<String>,
    description: Option<String>,
    when_to_use: Option<String>,
    allowed_tools: Vec<String>,
    arguments: Option<Vec<SkillArgument>>,
    argument_hint: Option<String>,
    metadata: Map<String, Value>,
}

/// Splits off the front matter: `---` on the first line, up to the next `---` (or `...`)
/// line. `None` when the text does not open with a fence (all of it is the body).
fn split_front_matter(text: &str) -> Result<(Option<&str>, &str), SkillErrorKind> {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Ok((None, text));
    };
    if first.trim_end() != "---" {
        return Ok((None, text));
    }
    let start = first.len();
    let mut at = start;
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            let front = text.get(start..at).unwrap_or_default();
            let body = text.get(at + line.len()..).unwrap_or_default();
            return Ok((Some(front), body));
        }
        at += line.len();
    }
    Err(SkillErrorKind::UnclosedFrontMatter)
}

/// The file line (1-based, the opening fence being line 1) of a top-level `key:` in the
/// front matter, for pointing at a field whose value has the wrong shape.
fn key_line(front: &str, key: &str) -> Option<usize> {
    front
        .lines()
        .position(|line| {
            let line = line.trim_end();
            let unquoted = line
                .strip_prefix(key)
                .or_else(|| line.strip_prefix(&format!("\"{key}\"")))
                .or_else(|| line.strip_prefix(&format!("'{key}'")));
            unquoted.is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i + 2)
}

/// The parser's message without its positions (they count from the front matter's first
/// line; the caller gives the file's line), and the front-matter line (1-based) to point
/// at: where the parser stopped, or, when it stopped at the end of the input (an
/// unclosed quote or bracket), where the construct it was reading began.
fn yaml_problem(e: &serde_yaml_ng::Error, lines: usize) -> (String, usize) {
    let full = e.to_string();
    let mut message = String::new();
    let mut positions = Vec::new();
    let mut rest = full.as_str();
    while let Some(at) = rest.find(" at line ") {
        message.push_str(rest.get(..at).unwrap_or_default());
        let after = rest.get(at + " at line ".len()..).unwrap_or_default();
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        positions.extend(after.get(..digits).and_then(|d| d.parse::<usize>().ok()));
        let after = after.get(digits..).unwrap_or_default();
        // " column C" follows the line.
        rest = match after.strip_prefix(" column ") {
            Some(column) => column.trim_start_matches(|c: char| c.is_ascii_digit()),
            None => after,
        };
    }
    message.push_str(rest);
    let last = lines.max(1);
    let problem = e.location().map_or(1, |l| l.line());
    let line = if problem > last {
        // Stopped at the end: the context's line, when the message gives one.
        positions.get(1).copied().unwrap_or(last)
    } else {
        problem
    };
    (message, line.clamp(1, last))
}

/// A string, or a number or boolean written where a string was meant.
fn scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Number(n) => Some(n.to_string()),
        Yaml::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A string field (`null` reads as empty).
fn text_value(value: &Yaml) -> Option<String> {
    match value {
        Yaml::Null => Some(String::new()),
        other => scalar(other).map(|s| s.trim().to_owned()),
    }
}

/// Tool names: a list of strings, or one string of names separated by commas or
/// whitespace (outside parentheses, so `Bash(git add:*)` stays one entry).
fn names(value: &Yaml) -> Option<Vec<String>> {
    match value {
        Yaml::Null => Some(Vec::new()),
        Yaml::String(s) => Some(split_names(s)),
        Yaml::Sequence(items) => items
            .iter()
            .map(|item| scalar(item).map(|s| s.trim().to_owned()))
            .filter(|s| s.as_ref().is_none_or(|s| !s.is_empty()))
            .collect(),
        _ => None,
    }
}

fn split_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Declared arguments: names (a list, or one string), or `{name, description}` mappings.
fn arguments(value: &Yaml) -> Option<Vec<SkillArgument>> {
    match value {
        Yaml::Sequence(items) => items
            .iter()
            .map(|item| match item {
                Yaml::Mapping(m) => {
                    let name = m.get("name").and_then(scalar)?;
                    let description = match m.get("description") {
                        None | Some(Yaml::Null) => None,
                        Some(d) => Some(scalar(d)?),
                    };
                    let argument = SkillArgument::new(name.trim());
                    Some(match description {
                        Some(d) => argument.with_description(d.trim()),
                        None => argument,
                    })
                }
                other => scalar(other).map(|s| SkillArgument::new(s.trim())),
            })
            .collect(),
        other => names(other).map(|n| n.into_iter().map(SkillArgument::new).collect()),
    }
}

/// The bracketed words of an `argument-hint` (`[issue] <file>`), in order.
fn hint_names(hint: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = hint;
    while let Some(open) = rest.find(['[', '<']) {
        let close_char = if rest.get(open..).is_some_and(|r| r.starts_with('[')) {
            ']'
        } else {
            '>'
        };
        let inner = rest.get(open + 1..).unwrap_or_default();
        let Some(close) = inner.find(close_char) else {
            break;
        };
        let name = inner.get(..close).unwrap_or_default().trim();
        if !name.is_empty() && !out.iter().any(|n: &String| n == name) {
            out.push(name.to_owned());
        }
        rest = inner.get(close + 1..).unwrap_or_default();
    }
    out
}

/// Names go into the listing and an XML attribute: 1–64 characters, one line, nothing
/// XML would need escaped.
pub(crate) fn valid_name(name: &str) -> bool {
    let count = name.chars().count();
    (1..=64).contains(&count)
        && !name
            .chars()
            .any(|c| c.is_control() || matches!(c, '"' | '<' | '>' | '&'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Skill, SkillError> {
        parse(Path::new("skills/pdf-forms/SKILL.md"), text)
    }

    #[test]
    fn front_matter_keys_as_written_in_the_wild() {
        let skill = parse_str(
            "---\nname: pdf\ndescription: Fill PDF forms.\nwhen-to-use: When a PDF has fields.\n\
             allowed-tools: Bash(pdftk fill:*), Read Write\nargument-hint: \"[file] [output]\"\n\
             license: MIT\nversion: 2\ntags: [pdf, forms]\n---\n\n# PDF\n\nFill $0 into $1.\n",
        )
        .unwrap();
        assert_eq!(skill.name(), "pdf");
        assert_eq!(skill.description(), "Fill PDF forms.");
        assert_eq!(skill.when_to_use(), Some("When a PDF has fields."));
        assert_eq!(
            skill.allowed_tools(),
            ["Bash(pdftk fill:*)", "Read", "Write"]
        );
        let args: Vec<&str> = skill.arguments().iter().map(|a| a.name.as_str()).collect();
        assert_eq!(args, ["file", "output"]);
        assert_eq!(skill.instructions(), "# PDF\n\nFill $0 into $1.");
        assert_eq!(
            Value::Object(skill.metadata().clone()),
            serde_json::json!({"license": "MIT", "version": 2, "tags": ["pdf", "forms"]})
        );
        assert_eq!(skill.source(), Some(Path::new("skills/pdf-forms/SKILL.md")));
    }

    #[test]
    fn other_spellings_and_shapes() {
        let skill = parse_str(
            "---\ndescription: d\nwhen_to_use: w\nallowed_tools:\n  - Read\n  - Grep\n\
             arguments:\n  - name: path\n    description: The file.\n  - mode\n\
             when-to-use: second spelling\n---\nbody",
        )
        .unwrap();
        assert_eq!(
            skill.name(),
            "pdf-forms",
            "the folder names a skill without a name"
        );
        assert_eq!(skill.when_to_use(), Some("w"));
        assert_eq!(skill.allowed_tools(), ["Read", "Grep"]);
        assert_eq!(
            skill.arguments()[0].description.as_deref(),
            Some("The file.")
        );
        assert_eq!(skill.arguments()[1].name, "mode");
        assert_eq!(skill.metadata()["when-to-use"], "second spelling");
        // No front matter at all: the whole text is the instructions.
        let bare = parse_str("Just do it.\n").unwrap();
        assert_eq!(
            (bare.name(), bare.instructions()),
            ("pdf-forms", "Just do it.")
        );
        // Empty front matter, CRLF line ends, a BOM.
        let crlf = parse_str("\u{feff}---\r\n---\r\nx\r\n").unwrap();
        assert_eq!(crlf.instructions(), "x");
    }

    #[test]
    fn problems_carry_the_file_line() {
        let e = parse_str("---\nname: a\ndescription: [unclosed\n---\nbody").unwrap_err();
        assert!(matches!(e.kind(), SkillErrorKind::Yaml { .. }), "{e}");
        assert_eq!(e.line(), Some(3), "{e}");
        assert!(
            e.to_string().starts_with("skills/pdf-forms/SKILL.md:"),
            "{e}"
        );

        let e = parse_str("---\nname: a\ndescription: \"open\nwhen-to-use: x\n---\n").unwrap_err();
        assert_eq!(e.line(), Some(3), "{e}");
        let e = parse_str("---\nname: a\n  bad: indent\n---\n").unwrap_err();
        assert_eq!(e.line(), Some(3), "{e}");
        assert!(!e.to_string().contains("column"), "{e}");

        let e =
            parse_str("---\nname: a\n\ndescription: ok\nallowed-tools: {a: 1}\n---\n").unwrap_err();
        assert_eq!(e.line(), Some(5));
        assert!(
            matches!(e.kind(), SkillErrorKind::InvalidField { field, .. } if field == "allowed-tools")
        );

        let e = parse_str("---\nname: a\nbody without a closing fence").unwrap_err();
        assert!(matches!(e.kind(), SkillErrorKind::UnclosedFrontMatter));
        assert_eq!(e.line(), Some(1));

        let e = parse_str("---\n- a\n- b\n---\n").unwrap_err();
        assert!(matches!(e.kind(), SkillErrorKind::NotAMapping));

        let e = parse_str("---\nname: \"<bad>\"\n---\n").unwrap_err();
        assert!(matches!(e.kind(), SkillErrorKind::InvalidName { .. }));
        assert_eq!(e.line(), Some(2));
    }

    #[test]
    fn tool_name_strings_split_outside_parentheses() {
        assert_eq!(
            split_names("Bash(git add:*), Bash(git status:*)  Read,Write"),
            ["Bash(git add:*)", "Bash(git status:*)", "Read", "Write"]
        );
        assert_eq!(
            hint_names("[issue-number] <priority> [issue-number] free text"),
            ["issue-number", "priority"]
        );
    }

    #[test]
    fn directories_load_the_good_report_the_bad_and_rank_by_order() {
        let root = tempfile::tempdir().unwrap();
        let write = |dir: &str, folder: &str, text: &str| {
            let path = root.path().join(dir).join(folder);
            std::fs::create_dir_all(&path).unwrap();
            std::fs::write(path.join(SKILL_FILE), text).unwrap();
        };
        write(
            "project",
            "a",
            "---\nname: shared\ndescription: project\n---\nP",
        );
        write("project", "b", "---\nname: b\ndescription: [oops\n---\n");
        write("user", "shared", "---\ndescription: user\n---\nU");
        write("user", "c", "---\ndescription: c\n---\nC");
        std::fs::create_dir_all(root.path().join("user/empty")).unwrap();

        let loaded = load_dirs([root.path().join("project"), root.path().join("user")]);
        let names: Vec<&str> = loaded.skills.iter().map(Skill::name).collect();
        assert_eq!(names, ["shared", "c"]);
        assert_eq!(loaded.skills[0].description(), "project");
        assert_eq!(loaded.problems.len(), 1);
        assert!(loaded.problems[0].path().ends_with("project/b/SKILL.md"));
        assert_eq!(loaded.problems[0].line(), Some(3));
        assert_eq!(loaded.shadowed.len(), 1);
        assert!(loaded.shadowed[0].hidden.ends_with("user/shared/SKILL.md"));

        let missing = load_dir(root.path().join("nowhere"));
        assert!(missing.skills.is_empty());
        assert!(matches!(missing.problems[0].kind(), SkillErrorKind::Io(_)));
        assert_eq!(Skill::load(root.path().join("user/c")).unwrap().name(), "c");
    }
}
