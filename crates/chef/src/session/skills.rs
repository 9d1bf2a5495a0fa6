//! The session's skills: the registry, the active skill, and the `load_skill` tool.

use std::sync::Arc;

use super::Chef;
use crate::{
    error::ChefError,
    owned::OwnedReply,
    skills::{SavedSkill, Skill, SkillPlacement, SkillRef, Skills},
};

/// The active skill and what it decides at compile.
#[derive(Debug, Clone)]
pub(crate) struct ActiveSkill {
    pub(crate) skill: Arc<Skill>,
    /// The flat-tool names `allowed-tools` narrows to (empty: it does not narrow).
    pub(crate) tool_names: Vec<String>,
    /// Whether a compile has said that these names match no registered tool.
    unmatched_reported: bool,
    /// The registry epoch these names were last checked against.
    checked_epoch: Option<u64>,
}

impl ActiveSkill {
    fn new(skill: Arc<Skill>) -> Self {
        let tool_names = skill.allowed_tool_names();
        Self {
            skill,
            tool_names,
            unmatched_reported: false,
            checked_epoch: None,
        }
    }
}

/// The session's skills as they stand: the registry, the active skill and the listing to
/// put in the system prompt. Reached with [`Chef::skills`]; to change them,
/// [`Chef::skills_mut`]. Every read borrows the session, not the handle.
#[derive(Debug, Clone, Copy)]
pub struct SessionSkills<'a> {
    chef: &'a Chef,
}

/// The session's skills, to change: register them, activate one, deactivate it. Reached
/// with [`Chef::skills_mut`].
#[derive(Debug)]
pub struct SkillsMut<'a> {
    chef: &'a mut Chef,
}

impl Chef {
    /// The session's skills: the registered ones, the active one and the listing for the
    /// prompt (see [`SessionSkills`]).
    #[must_use]
    pub fn skills(&self) -> SessionSkills<'_> {
        SessionSkills { chef: self }
    }

    /// The session's skills, to change: register, activate, deactivate.
    #[must_use]
    pub fn skills_mut(&mut self) -> SkillsMut<'_> {
        SkillsMut { chef: self }
    }

    /// Sets the active skill and what it decides; a change of skill is an event
    /// ([`ChefEvent::SkillDeactivated`](crate::ChefEvent::SkillDeactivated) for the one
    /// that ends, then [`ChefEvent::SkillActivated`](crate::ChefEvent::SkillActivated)).
    pub(crate) fn put_active_skill(&mut self, skill: Option<Arc<Skill>>) {
        let before = self
            .skill_state
            .active_skill
            .as_ref()
            .map(|a| a.skill.name().to_owned());
        self.skill_state.active_skill = skill.map(ActiveSkill::new);
        let after = self.skills().active().map(|s| s.name().to_owned());
        if let Some(name) = before.filter(|b| after.as_ref() != Some(b)) {
            self.emit(&crate::ChefEvent::SkillDeactivated { name });
        }
        if let Some(skill) = &self.skill_state.active_skill {
            let name = skill.skill.name().to_owned();
            self.emit(&crate::ChefEvent::SkillActivated { name });
        }
    }

    /// A notice, once per activation, when skill pruning is on and the active skill's
    /// `allowed-tools` name no registered flat tool (every flat tool is then pruned).
    pub(super) fn skill_notices(&mut self) -> Option<String> {
        if !self.config.skill_pruning {
            return None;
        }
        // Checked once per activation and registry, not every compile.
        let epoch = self.tools.epoch;
        let active = self.skill_state.active_skill.as_mut()?;
        if active.unmatched_reported
            || active.tool_names.is_empty()
            || active.checked_epoch == Some(epoch)
        {
            return None;
        }
        active.checked_epoch = Some(epoch);
        let allowed: Vec<String> = active.tool_names.iter().map(|n| n.to_lowercase()).collect();
        if self
            .tools
            .pruner
            .all_tools()
            .iter()
            .any(|t| allowed.contains(&t.name.as_str().to_lowercase()))
        {
            return None;
        }
        active.unmatched_reported = true;
        Some(format!(
            "skill \"{}\" allows only {}, which name no registered tool: with skill pruning \
             on, every flat tool is pruned while it is active",
            active.skill.name(),
            active.tool_names.join(", ")
        ))
    }

    /// The active skill's instructions as this session places them: (system message, tail
    /// part).
    pub(crate) fn skill_parts(&self) -> (Option<String>, Option<String>) {
        let Some(active) = &self.skill_state.active_skill else {
            return (None, None);
        };
        let placement = self.config.skill_placement;
        let text = crate::skills::placed_text(&active.skill, placement);
        match placement {
            SkillPlacement::AfterSystem => (text, None),
            SkillPlacement::Tail => (None, text),
        }
    }

    /// The flat-tool names the active skill bounds the selection to (`None`: no bound:
    /// pruning by skills is off, no skill is active, or it lists no tools).
    pub(crate) fn skill_bound(&self) -> Option<&[String]> {
        if !self.config.skill_pruning {
            return None;
        }
        self.skill_state
            .active_skill
            .as_ref()
            .map(|a| a.tool_names.as_slice())
            .filter(|names| !names.is_empty())
    }

    /// The active skill as snapshots keep it.
    pub(crate) fn saved_skill(&self) -> Option<SavedSkill> {
        self.skills().active().map(SavedSkill::from)
    }

    /// Restores a saved active skill as it was activated: its instructions as they were
    /// placed (arguments filled in, so `invoked(&["2.4"])` stays `… of 2.4.`, never the
    /// registered template's `$0`) and its allowed tools, so the next request is the one
    /// the saved session would have sent. The registered skill of its name, when there is
    /// one, lends the rest (description, declared arguments, source, metadata); without
    /// one, a stub carries the saved fields alone.
    pub(crate) fn restore_skill(&mut self, saved: Option<&SavedSkill>) {
        let skill = saved.map(|saved| match self.skill_state.skills.get(&saved.name) {
            Some(registered) => Arc::new(saved.onto(registered)),
            None => Arc::new(saved.to_stub()),
        });
        self.put_active_skill(skill);
    }

    /// Answers a `load_skill` call: activates the named skill, or names the ones there are.
    pub(crate) fn load_skill_reply(&mut self, arguments: &serde_json::Value) -> OwnedReply {
        let arguments = crate::arguments::parsed(arguments);
        let name = arguments
            .get("name")
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .unwrap_or_default();
        let available = || match self.skill_state.skills.names() {
            names if names.is_empty() => "No skills are available.".to_owned(),
            names => format!("Available skills: {}.", names.join(", ")),
        };
        if name.is_empty() {
            return OwnedReply {
                text: format!(
                    "Error: the \"name\" argument is required and must be a skill's name. {}",
                    available()
                ),
                is_error: true,
            };
        }
        let Some(skill) = self.skill_state.skills.get(name).map(Arc::clone) else {
            return OwnedReply {
                text: format!("Error: there is no skill named \"{name}\". {}", available()),
                is_error: true,
            };
        };
        self.put_active_skill(Some(skill));
        OwnedReply {
            text: format!(
                "Skill \"{name}\" loaded: its instructions are in your context from now on."
            ),
            is_error: false,
        }
    }
}

impl<'a> SessionSkills<'a> {
    /// The registered skills.
    pub fn registry(&self) -> &'a Skills {
        &self.chef.skill_state.skills
    }

    /// A registered skill by name.
    pub fn get(&self, name: &str) -> Option<&'a Arc<Skill>> {
        self.registry().get(name)
    }

    /// The registered skills' names, in name order.
    pub fn names(&self) -> Vec<&'a str> {
        self.registry().names()
    }

    /// The registered skills, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &'a Skill> + use<'a> {
        self.registry().iter()
    }

    /// How many skills are registered.
    pub fn len(&self) -> usize {
        self.registry().len()
    }

    /// Whether no skill is registered.
    pub fn is_empty(&self) -> bool {
        self.registry().is_empty()
    }

    /// The active skill.
    pub fn active(&self) -> Option<&'a Skill> {
        self.chef
            .skill_state
            .active_skill
            .as_ref()
            .map(|a| a.skill.as_ref())
    }

    /// The block listing the registered skills for your system prompt (name, description,
    /// when to use; `""` without skills), followed, when the `load_skill` tool is on, by one
    /// line saying how to load one. Add it to the system prompt yourself: chef does not, so
    /// you decide where it sits in your cached prefix. It changes only when the registered
    /// skills do, never on activation.
    pub fn listing(&self) -> String {
        let listing = self.chef.skill_state.skills.listing();
        if listing.is_empty() || !self.chef.config.skill_tool {
            return listing;
        }
        format!(
            "{listing}\nWhen a task matches a skill, call {} with its name to load its instructions.",
            crate::owned::LOAD_SKILL
        )
    }
}

impl SkillsMut<'_> {
    /// Replaces the registered skills (as [`register_tools`](Chef::register_tools) replaces
    /// the tools); a name given twice keeps the last. The active skill stays as it was
    /// activated (activate it again to take a new version), and so does one restored from
    /// a snapshot or a journal: its saved instructions, arguments filled in, are kept. Registering never changes the
    /// tool list: `load_skill` is emitted by configuration
    /// ([`ChefConfig::with_skill_tool`](super::ChefConfig::with_skill_tool)), and its schema
    /// names no skill.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, skills::{Skill, SkillPlacement}};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default().with_skill_placement(SkillPlacement::Tail));
    /// chef.skills_mut().register([Skill::parse("skills/haiku/SKILL.md", "---\ndescription: Answer in a haiku.\n---\nAnswer in 5-7-5.")?]);
    /// chef.set_system_prompt(vec![Message::system(format!("You are terse.\n\n{}", chef.skills().listing()))]);
    /// chef.skills_mut().activate("haiku")?;
    /// chef.push(Message::user("Describe Rust."));
    /// let payload = chef.compile(Target::OpenAiChat)?;
    /// assert_eq!(payload.meta.active_skill.as_deref(), Some("haiku"));
    /// assert!(String::from_utf8(payload.body)?.contains(r#"<skill_instructions skill=\"haiku\">\nAnswer in 5-7-5."#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register(&mut self, skills: impl IntoIterator<Item = Skill>) -> &mut Self {
        self.chef.skill_state.skills = skills.into_iter().collect();
        self
    }

    /// Makes a skill active (replacing any): a registered one by name, or a [`Skill`]
    /// value (for one invocation's arguments, [`Skill::invoked`]). From the next compile
    /// on its instructions are placed per
    /// [`ChefConfig::with_skill_placement`](super::ChefConfig::with_skill_placement), its
    /// name is in [`PayloadMeta::active_skill`](super::PayloadMeta::active_skill), and with
    /// [`ChefConfig::with_skill_pruning`](super::ChefConfig::with_skill_pruning) its
    /// `allowed-tools` bound the flat tools kept.
    ///
    /// Activating the active skill by its name when no skill of that name is registered
    /// (it was restored from a snapshot or a journal) keeps it active as it is.
    ///
    /// # Errors
    /// [`ChefError::UnknownSkill`] for a name not registered (nothing changes).
    pub fn activate(&mut self, skill: impl Into<SkillRef>) -> Result<&mut Self, ChefError> {
        let skill = match skill.into() {
            SkillRef::Skill(skill) => skill,
            SkillRef::Name(name) => match self.chef.skill_state.skills.get(&name) {
                Some(skill) => Arc::clone(skill),
                // The active skill by its own name, not registered here (restored from a
                // snapshot into a session that has not loaded its skills): it stays as it
                // is, its saved instructions kept.
                None if self
                    .chef
                    .skills()
                    .active()
                    .is_some_and(|a| a.name() == name) =>
                {
                    return Ok(self);
                }
                None => {
                    return Err(ChefError::UnknownSkill {
                        available: self
                            .chef
                            .skill_state
                            .skills
                            .names()
                            .iter()
                            .map(|n| (*n).to_owned())
                            .collect(),
                        name,
                    });
                }
            },
        };
        self.chef.put_active_skill(Some(skill));
        Ok(self)
    }

    /// Ends the active skill; returns it.
    pub fn deactivate(&mut self) -> Option<Arc<Skill>> {
        let active = self
            .chef
            .skill_state
            .active_skill
            .as_ref()
            .map(|a| Arc::clone(&a.skill));
        self.chef.put_active_skill(None);
        active
    }
}
