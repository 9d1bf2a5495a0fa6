//! What the `Chef` class does with the context chef adds around the conversation — the
//! dynamic state, the output guardrail and the prefill — and with skills: the logic behind
//! those methods, over the Rust session, kept apart from the class's wiring in
//! `session.rs`.

use chef::skills::{SkillError, load_paths};
use chef::{dynamic::Placement, guardrail::Guardrail, guardrail::Problem, guardrail::Verdict};
use serde_json::{Value, json};

use crate::failure::Failure;

/// `"last_user"` (the default) or `"system"`.
pub(crate) fn placement(name: &str) -> Result<Placement, Failure> {
    match name {
        "last_user" => Ok(Placement::LastUser),
        "system" => Ok(Placement::System),
        other => Err(Failure::Invalid(format!(
            "placement must be \"last_user\" or \"system\", not {other:?}"
        ))),
    }
}

/// The dynamic state's value and placement, when set.
pub(crate) fn dynamic_state(chef: &chef::Chef) -> Option<Value> {
    chef.layers().dynamic_state().map(|s| {
        json!({
            "state": s.value,
            "placement": match s.placement {
                Placement::System => "system",
                _ => "last_user",
            },
            "xml": chef.layers().dynamic_state_xml(),
        })
    })
}

/// The guardrail for `tag` or `schema` (one of them), or none to clear it.
pub(crate) fn guardrail(
    tag: Option<String>,
    schema: Option<Value>,
) -> Result<Option<Guardrail>, Failure> {
    let invalid = |e: chef::guardrail::GuardrailError| Failure::Invalid(e.to_string());
    match (tag, schema) {
        (None, None) => Ok(None),
        (Some(tag), None) => Guardrail::tag(tag).map(Some).map_err(invalid),
        (None, Some(schema)) => Guardrail::json(schema).map(Some).map_err(invalid),
        (Some(_), Some(_)) => Err(Failure::Invalid(
            "set_guardrail takes tag= or schema=, not both".to_owned(),
        )),
    }
}

/// A checked reply as a dict: `{"ok": true, "content": …}` or `{"ok": false, "problem":
/// …, "retry": …}` (with the problem's details); `None` without a guardrail.
pub(crate) fn check_reply(chef: &chef::Chef, reply: &str) -> Option<Value> {
    Some(match chef.check_reply(reply)? {
        Verdict::Pass { content } => json!({"ok": true, "content": content}),
        Verdict::Fail { problem, retry } => {
            let (name, detail) = match problem {
                Problem::MissingTag => ("missing_tag", Value::Null),
                Problem::UnclosedTag => ("unclosed_tag", Value::Null),
                Problem::RepeatedTag { count } => ("repeated_tag", json!(count)),
                Problem::NotJson { error } => ("not_json", json!(error)),
                Problem::Schema { message } => ("schema", json!(message)),
                _ => ("other", Value::Null),
            };
            json!({"ok": false, "problem": name, "detail": detail, "retry": retry})
        }
        _ => json!({"ok": false, "problem": "other"}),
    })
}

/// What loading skills found: the names registered, the files that failed (path, line,
/// message) and the skills a same-named one hid.
pub(crate) struct LoadedSkills {
    pub(crate) names: Vec<String>,
    pub(crate) problems: Vec<Value>,
    pub(crate) shadowed: Vec<Value>,
}

impl LoadedSkills {
    pub(crate) fn to_json(&self) -> Value {
        json!({"loaded": self.names, "problems": self.problems, "shadowed": self.shadowed})
    }
}

fn problem(e: &SkillError) -> Value {
    json!({"path": e.path().display().to_string(), "line": e.line(), "message": e.to_string()})
}

/// Loads skills from each path — a `SKILL.md` file, or a directory of skill folders (each
/// `<dir>/<folder>/SKILL.md`) — earlier paths winning a name clash
/// ([`chef::skills::load_paths`]), and registers them in place of the session's. A file
/// that does not load is reported, not raised.
pub(crate) fn load_skills(chef: &mut chef::Chef, paths: &[std::path::PathBuf]) -> LoadedSkills {
    let loaded = load_paths(paths);
    let out = LoadedSkills {
        names: loaded.skills.iter().map(|s| s.name().to_owned()).collect(),
        problems: loaded.problems.iter().map(problem).collect(),
        shadowed: loaded
            .shadowed
            .iter()
            .map(|hidden| {
                json!({
                    "name": hidden.name,
                    "kept": hidden.kept.display().to_string(),
                    "hidden": hidden.hidden.display().to_string(),
                })
            })
            .collect(),
    };
    chef.skills_mut().register(loaded.skills);
    out
}

/// Activates a registered skill, rendered with `arguments` when there are any.
pub(crate) fn activate_skill(
    chef: &mut chef::Chef,
    name: &str,
    arguments: &[String],
) -> Result<(), Failure> {
    if arguments.is_empty() {
        chef.skills_mut().activate(name)?;
        return Ok(());
    }
    let invoked = match chef.skills().get(name) {
        Some(skill) => skill.invoked(arguments),
        // Restored active, not registered here: its template is not in this session.
        None if chef.skills().active().is_some_and(|a| a.name() == name) => {
            return Err(Failure::Invalid(format!(
                "the skill \"{name}\" is active (restored from a snapshot) but not loaded in \
                 this session, so it cannot be rendered with new arguments: load_skills() \
                 first, or activate it without arguments to keep it as it is"
            )));
        }
        // Unknown: let the session say so, with the names it has.
        None => {
            chef.skills_mut().activate(name)?;
            return Ok(());
        }
    };
    chef.skills_mut().activate(invoked)?;
    Ok(())
}
