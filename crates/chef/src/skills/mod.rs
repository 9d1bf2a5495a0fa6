//! Skills: `SKILL.md` files (YAML front matter, markdown instructions), loaded tolerantly,
//! listed for the model, and made active in a session.
//!
//! A skill is a folder with a `SKILL.md`:
//!
//! ```text
//! ---
//! name: release-notes
//! description: Write release notes from merged pull requests.
//! when-to-use: When the user asks for a changelog or release notes.
//! allowed-tools: git_log, read_file
//! argument-hint: "[version]"
//! ---
//! Write the notes for version $0. Group the changes by ...
//! ```
//!
//! * Loading ([`Skill::load`], [`load_dir`], [`load_dirs`]) never panics and never gives
//!   up on a directory for one bad file: the good skills load and each bad file is
//!   reported with its path and line ([`SkillError`]). Keys other than the ones below are
//!   kept, as JSON, in [`Skill::metadata`].
//! * Keys read: `name` (else the folder's name), `description`, `when_to_use` /
//!   `when-to-use`, `allowed-tools` / `allowed_tools` (a list, or one string separated by
//!   commas or spaces), `arguments` (names, or `{name, description}`) / `argument-hint`
//!   (its `[bracketed]` words name the arguments when `arguments` is absent).
//! * [`render_arguments`] fills `$ARGUMENTS`, `$0..$N` and `${NAME}`: a pure function.
//! * In a session ([`SkillsMut::register`](crate::SkillsMut::register),
//!   [`SkillsMut::activate`](crate::SkillsMut::activate)) the active skill's
//!   instructions are placed per [`SkillPlacement`], reported in
//!   [`PayloadMeta::active_skill`](crate::PayloadMeta::active_skill), carried by snapshots,
//!   and, with [`ChefConfig::with_skill_pruning`](crate::ChefConfig::with_skill_pruning),
//!   narrow the tools to the skill's `allowed-tools`.
//!
//! ```
//! use chef::skills::Skill;
//!
//! let skill = Skill::parse("skills/greet/SKILL.md", "---\ndescription: Greet someone.\narguments: [who]\n---\nSay hello to ${who}.")?;
//! assert_eq!(skill.name(), "greet"); // the folder's name
//! assert_eq!(skill.invoked(&["Ada"]).instructions(), "Say hello to Ada.");
//! # Ok::<(), chef::skills::SkillError>(())
//! ```

mod args;
mod error;
mod load;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use self::{
    args::{Rendered, render_arguments},
    error::{SkillError, SkillErrorKind},
    load::{Loaded, MAX_SKILL_FILE_BYTES, SKILL_FILE, Shadowed, load_dir, load_dirs, load_paths},
};

/// One skill: what the listing shows, what the model follows when it is active.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    name: String,
    description: String,
    when_to_use: Option<String>,
    allowed_tools: Vec<String>,
    arguments: Vec<SkillArgument>,
    argument_hint: Option<String>,
    instructions: String,
    metadata: Map<String, Value>,
    source: Option<PathBuf>,
}

/// An argument a skill declares (its position is its index in
/// [`Skill::arguments`]; `${NAME}` reads it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillArgument {
    /// The name `${NAME}` refers to.
    pub name: String,
    /// What it is, when the file says.
    pub description: Option<String>,
}

impl SkillArgument {
    /// An argument with this name.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: None,
        }
    }

    /// With a description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

impl Skill {
    /// A skill built in code.
    ///
    /// # Errors
    /// [`SkillErrorKind::InvalidName`] for a name that is empty, longer than 64
    /// characters, holds a control character (a line break, a tab) or holds `"`, `<`, `>`
    /// or `&` (the path of the error is
    /// empty).
    pub fn new(
        name: impl Into<String>,
        instructions: impl Into<String>,
    ) -> Result<Self, SkillError> {
        let name = name.into();
        if !load::valid_name(&name) {
            return Err(SkillError::new(
                Path::new(""),
                None,
                SkillErrorKind::InvalidName { name },
            ));
        }
        Ok(Self {
            name,
            description: String::new(),
            when_to_use: None,
            allowed_tools: Vec::new(),
            arguments: Vec::new(),
            argument_hint: None,
            instructions: instructions.into(),
            metadata: Map::new(),
            source: None,
        })
    }

    /// Reads one skill: `path` is a `SKILL.md` (or any markdown file) or a folder that
    /// holds a `SKILL.md`.
    ///
    /// # Errors
    /// A [`SkillError`] with the file's path and, where there is one, the line.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SkillError> {
        load::load_file(path.as_ref())
    }

    /// Parses the text of a `SKILL.md`; `path` is where it came from (named in errors,
    /// kept as [`source`](Self::source); a skill without `name` is named by its folder for
    /// a `SKILL.md`, else by the file's stem).
    ///
    /// # Errors
    /// A [`SkillError`] with `path` and, where there is one, the line.
    pub fn parse(path: impl AsRef<Path>, text: &str) -> Result<Self, SkillError> {
        load::parse(path.as_ref(), text)
    }

    /// With a description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// With a when-to-use line.
    #[must_use]
    pub fn with_when_to_use(mut self, when: impl Into<String>) -> Self {
        self.when_to_use = Some(when.into());
        self
    }

    /// With the tools the skill may use.
    #[must_use]
    pub fn with_allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// With declared arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: Vec<SkillArgument>) -> Self {
        self.arguments = arguments;
        self
    }

    /// The name (unique in a registry).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description (`""` when the file has none).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// When to use it.
    pub fn when_to_use(&self) -> Option<&str> {
        self.when_to_use.as_deref()
    }

    /// The tools it lists as allowed, as written (`Bash(git add:*)` included).
    pub fn allowed_tools(&self) -> &[String] {
        &self.allowed_tools
    }

    /// The declared arguments, in position order.
    pub fn arguments(&self) -> &[SkillArgument] {
        &self.arguments
    }

    /// The `argument-hint`, as written.
    pub fn argument_hint(&self) -> Option<&str> {
        self.argument_hint.as_deref()
    }

    /// The instructions: the markdown body, trimmed.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    /// Front-matter keys chef does not read, as JSON values, in file order.
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// The file it was read from.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// Its instructions with `args` filled in (see [`render_arguments`]).
    pub fn render<A: AsRef<str>>(&self, args: &[A]) -> Rendered {
        let declared: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
        render_arguments(&self.instructions, &declared, args)
    }

    /// A copy whose instructions have `args` filled in: what to activate for one
    /// invocation. Missing arguments become empty (check [`render`](Self::render) first
    /// to refuse them).
    #[must_use]
    pub fn invoked<A: AsRef<str>>(&self, args: &[A]) -> Self {
        Self {
            instructions: self.render(args).text,
            ..self.clone()
        }
    }

    /// The tool names `allowed-tools` prunes to: each entry up to a `(` (so
    /// `Bash(git add:*)` allows `Bash`), trimmed, without empties.
    pub fn allowed_tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for entry in &self.allowed_tools {
            let name = entry.split('(').next().unwrap_or_default().trim();
            if !name.is_empty() && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        names
    }
}

/// Where the active skill's instructions go in each request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillPlacement {
    /// A system message after the system layers (after chef's own, cached system message
    /// and before memory): read as standing guidance; changing skills moves the request
    /// from there on.
    #[default]
    AfterSystem,
    /// First in the tail stitch of the last user turn, as
    /// `<skill_instructions skill="NAME">…</skill_instructions>`: nothing before the tail
    /// moves when skills change.
    Tail,
}

/// The registered skills of a session, by name (listed in name order).
#[derive(Debug, Clone, Default)]
pub struct Skills {
    by_name: BTreeMap<String, Arc<Skill>>,
}

impl Skills {
    /// No skills.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a skill, replacing one of the same name (returned).
    pub fn insert(&mut self, skill: Skill) -> Option<Arc<Skill>> {
        self.by_name.insert(skill.name.clone(), Arc::new(skill))
    }

    /// The skill of this name.
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.by_name.get(name)
    }

    /// The skills, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.by_name.values().map(AsRef::as_ref)
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.by_name.keys().map(String::as_str).collect()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The listing block for a system prompt: each skill's name, description and when to
    /// use it, in name order (`""` without skills). Deterministic, and independent of
    /// which skill is active, so it can sit in a cached prefix.
    ///
    /// ```text
    /// <available_skills>
    /// <skill name="release-notes">
    /// <description>Write release notes from merged pull requests.</description>
    /// <when_to_use>When the user asks for a changelog.</when_to_use>
    /// </skill>
    /// </available_skills>
    /// ```
    pub fn listing(&self) -> String {
        if self.by_name.is_empty() {
            return String::new();
        }
        let mut out = String::from("<available_skills>\n");
        for skill in self.iter() {
            out.push_str(&format!("<skill name=\"{}\">\n", skill.name));
            if !skill.description.is_empty() {
                out.push_str(&format!(
                    "<description>{}</description>\n",
                    escape(&skill.description)
                ));
            }
            if let Some(when) = skill.when_to_use.as_deref().filter(|w| !w.is_empty()) {
                out.push_str(&format!("<when_to_use>{}</when_to_use>\n", escape(when)));
            }
            out.push_str("</skill>\n");
        }
        out.push_str("</available_skills>");
        out
    }
}

impl FromIterator<Skill> for Skills {
    fn from_iter<I: IntoIterator<Item = Skill>>(iter: I) -> Self {
        let mut skills = Self::new();
        for skill in iter {
            skills.insert(skill);
        }
        skills
    }
}

/// The active skill as snapshots and journals keep it: enough to compile the same request
/// in a session that does not have it registered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedSkill {
    /// Its name.
    pub name: String,
    /// Its instructions as they were placed (arguments filled in).
    pub instructions: String,
    /// Its `allowed-tools`, as written (for pruning when it is restored as a stub).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
}

impl SavedSkill {
    /// `registered` as this saved skill was activated: the saved instructions (as placed,
    /// arguments filled in) and allowed tools, the registered skill's other fields.
    pub(crate) fn onto(&self, registered: &Skill) -> Skill {
        Skill {
            instructions: self.instructions.clone(),
            allowed_tools: self.allowed_tools.clone(),
            ..registered.clone()
        }
    }

    /// The skill this saved one stands for, when the receiving session has none of its
    /// name: its name, instructions and allowed tools.
    pub(crate) fn to_stub(&self) -> Skill {
        Skill {
            name: self.name.clone(),
            description: String::new(),
            when_to_use: None,
            allowed_tools: self.allowed_tools.clone(),
            arguments: Vec::new(),
            argument_hint: None,
            instructions: self.instructions.clone(),
            metadata: Map::new(),
            source: None,
        }
    }
}

impl From<&Skill> for SavedSkill {
    fn from(skill: &Skill) -> Self {
        Self {
            name: skill.name.clone(),
            instructions: skill.instructions.clone(),
            allowed_tools: skill.allowed_tools.clone(),
        }
    }
}

/// `&`, `<` and `>` escaped for XML text.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The active skill's instructions as placed in a request (`None` when they are empty).
pub(crate) fn placed_text(skill: &Skill, placement: SkillPlacement) -> Option<String> {
    let instructions = skill.instructions.trim();
    if instructions.is_empty() {
        return None;
    }
    Some(match placement {
        SkillPlacement::AfterSystem => format!(
            "Active skill: {}. Follow its instructions:\n\n{instructions}",
            skill.name
        ),
        SkillPlacement::Tail => format!(
            "<skill_instructions skill=\"{}\">\n{instructions}\n</skill_instructions>",
            skill.name
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_is_sorted_escaped_and_empty_without_skills() {
        assert_eq!(Skills::new().listing(), "");
        let skills: Skills = [
            Skill::new("b", "x").unwrap().with_description("B & <b>"),
            Skill::new("a", "x")
                .unwrap()
                .with_description("A")
                .with_when_to_use("now"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            skills.listing(),
            "<available_skills>\n<skill name=\"a\">\n<description>A</description>\n\
             <when_to_use>now</when_to_use>\n</skill>\n<skill name=\"b\">\n\
             <description>B &amp; &lt;b&gt;</description>\n</skill>\n</available_skills>"
        );
    }

    #[test]
    fn allowed_tool_names_drop_the_patterns() {
        let skill = Skill::new("s", "").unwrap().with_allowed_tools([
            "Bash(git add:*)",
            "Bash(git status:*)",
            "read_file",
            " ",
        ]);
        assert_eq!(skill.allowed_tool_names(), ["Bash", "read_file"]);
        assert!(placed_text(&skill, SkillPlacement::Tail).is_none());
        assert!(Skill::new("a\nb", "").is_err());
    }
}

/// A skill to activate: a registered one by name, or a value.
#[derive(Debug, Clone)]
pub enum SkillRef {
    /// The registered skill of this name.
    Name(String),
    /// This skill (registered or not).
    Skill(Arc<Skill>),
}

impl From<&str> for SkillRef {
    fn from(name: &str) -> Self {
        Self::Name(name.to_owned())
    }
}

impl From<String> for SkillRef {
    fn from(name: String) -> Self {
        Self::Name(name)
    }
}

impl From<Skill> for SkillRef {
    fn from(skill: Skill) -> Self {
        Self::Skill(Arc::new(skill))
    }
}

impl From<Arc<Skill>> for SkillRef {
    fn from(skill: Arc<Skill>) -> Self {
        Self::Skill(skill)
    }
}
