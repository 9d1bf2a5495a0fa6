//! The session's dynamic state and context injectors (see [`crate::dynamic`]).

use std::sync::Arc;

use chef_ir::Target;
use serde::Serialize;

use super::Chef;
use crate::{
    dynamic::{
        ContextInjector, DynamicState, DynamicStateError, InjectionView, Injections, Placement,
        SYSTEM_PREFIX,
    },
    error::ChefError,
};

/// The context chef adds around the conversation as it stands: the dynamic state, the
/// context injectors, the output guardrail and the prefill. Reached with [`Chef::layers`];
/// to change them, [`Chef::layers_mut`].
#[derive(Debug, Clone, Copy)]
pub struct Layers<'a> {
    pub(super) chef: &'a Chef,
}

/// The context layers, to change (see [`Layers`]). Reached with [`Chef::layers_mut`]; each
/// setter returns the handle, so settings chain.
#[derive(Debug)]
pub struct LayersMut<'a> {
    pub(super) chef: &'a mut Chef,
}

impl Chef {
    /// The dynamic state, the context injectors, the guardrail and the prefill in force.
    #[must_use]
    pub fn layers(&self) -> Layers<'_> {
        Layers { chef: self }
    }

    /// The dynamic state, the context injectors, the guardrail and the prefill, to change.
    #[must_use]
    pub fn layers_mut(&mut self) -> LayersMut<'_> {
        LayersMut { chef: self }
    }

    pub(super) fn put_dynamic_state(&mut self, state: DynamicState) {
        self.context.dynamic = if state.value.is_null() {
            None
        } else {
            let xml = state.xml();
            Some((state, xml))
        };
    }

    /// This compile's dynamic parts: the tail text (`last_user`) or the system message
    /// (`system`), from the dynamic state and what the injectors give.
    pub(super) fn dynamic_parts(
        &self,
        target: Target,
    ) -> Result<(Option<String>, Option<String>), ChefError> {
        let injected = self.run_injectors(target)?;
        let (state, xml) = match &self.context.dynamic {
            Some((state, xml)) => (Some(state), xml.as_str()),
            None => (None, ""),
        };
        let placement = state.map_or(Placement::LastUser, |s| s.placement);
        Ok(match placement {
            Placement::System if !xml.is_empty() => {
                let mut message = format!("{SYSTEM_PREFIX}{xml}");
                if let Some(injected) = injected {
                    message.push('\n');
                    message.push_str(&injected);
                }
                (None, Some(message))
            }
            // System placement with nothing to place: injected context rides the tail.
            _ => {
                let tail = match (xml.is_empty(), injected) {
                    (true, None) => None,
                    (true, Some(injected)) => Some(injected),
                    (false, None) => Some(xml.to_owned()),
                    (false, Some(injected)) => Some(format!("{xml}\n\n{injected}")),
                };
                (tail, None)
            }
        })
    }

    fn run_injectors(&self, target: Target) -> Result<Option<String>, ChefError> {
        if self.context.injectors.is_empty() {
            return Ok(None);
        }
        let view = InjectionView {
            target,
            turn: self.conversation.turn,
            system: &self.conversation.system,
            history: &self.conversation.history,
            dynamic_state: self.layers().dynamic_state(),
        };
        let mut out = Injections::default();
        for (name, injector) in &self.context.injectors {
            injector
                .inject(&view, &mut out)
                .map_err(|source| ChefError::Inject {
                    injector: name.clone(),
                    source,
                })?;
        }
        Ok(out.xml())
    }
}

impl<'a> Layers<'a> {
    /// The dynamic state, when set.
    pub fn dynamic_state(&self) -> Option<&'a DynamicState> {
        self.chef.context.dynamic.as_ref().map(|(state, _)| state)
    }

    /// The rendered `<dynamic_state>` block (empty when there is none).
    pub fn dynamic_state_xml(&self) -> &'a str {
        self.chef
            .context
            .dynamic
            .as_ref()
            .map_or("", |(_, xml)| xml.as_str())
    }

    /// The injectors' names, in the order they run.
    pub fn injectors(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.chef.context.injectors.iter().map(|(n, _)| n.as_str())
    }
}

impl LayersMut<'_> {
    /// Sets the dynamic state: any serialisable value (a struct's fields keep their
    /// order), rendered under `<dynamic_state>` at every compile until replaced or cleared.
    /// `null` clears it.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, dynamic::Placement};
    /// use chef_ir::{Message, Target};
    /// use serde_json::json;
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.push(Message::user("Fix the test."));
    /// chef.layers_mut().set_dynamic_state(&json!({"file": "lib.rs", "step": 2}), Placement::LastUser)?;
    /// let body = String::from_utf8(chef.compile(Target::OpenAiChat)?.body)?;
    /// assert!(body.contains("Fix the test.\\n\\n<dynamic_state>\\n  <file>lib.rs</file>\\n  <step>2</step>\\n</dynamic_state>"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ChefError::DynamicState`] when `state` cannot be represented as JSON (the previous
    /// state is kept).
    pub fn set_dynamic_state<T: Serialize + ?Sized>(
        &mut self,
        state: &T,
        placement: Placement,
    ) -> Result<&mut Self, ChefError> {
        let value = serde_json::to_value(state).map_err(DynamicStateError::Serialize)?;
        self.chef
            .put_dynamic_state(DynamicState::new(value, placement));
        Ok(self)
    }

    /// Like [`LayersMut::set_dynamic_state`](crate::LayersMut::set_dynamic_state), after checking the state
    /// against a JSON Schema for an object, with the validator chef checks tool arguments
    /// with (so a refusal reads the same way).
    ///
    /// # Errors
    ///
    /// [`ChefError::DynamicState`] when the schema is unusable or the state does not match
    /// it, naming the first problem; the previous state is kept.
    pub fn set_dynamic_state_checked<T: Serialize + ?Sized>(
        &mut self,
        schema: &serde_json::Value,
        state: &T,
        placement: Placement,
    ) -> Result<&mut Self, ChefError> {
        let value = serde_json::to_value(state).map_err(DynamicStateError::Serialize)?;
        let validator = chef_compress::validate::ArgumentValidator::new("dynamic_state", schema)
            .map_err(|e| DynamicStateError::Schema(Box::new(e)))?;
        validator
            .validate(&value)
            .map_err(DynamicStateError::Invalid)?;
        self.chef
            .put_dynamic_state(DynamicState::new(value, placement));
        Ok(self)
    }

    /// Removes the dynamic state; true when there was one.
    pub fn clear_dynamic_state(&mut self) -> bool {
        self.chef.context.dynamic.take().is_some()
    }

    /// Adds a context injector, called at every compile; one with the same name is
    /// replaced in place (its position kept).
    pub fn add_injector(
        &mut self,
        name: impl Into<String>,
        injector: impl ContextInjector + 'static,
    ) -> &mut Self {
        let name = name.into();
        let injector: Arc<dyn ContextInjector> = Arc::new(injector);
        match self
            .chef
            .context
            .injectors
            .iter_mut()
            .find(|(n, _)| *n == name)
        {
            Some(slot) => slot.1 = injector,
            None => self.chef.context.injectors.push((name, injector)),
        }
        self
    }

    /// Removes an injector; true when one was removed.
    pub fn remove_injector(&mut self, name: &str) -> bool {
        let before = self.chef.context.injectors.len();
        self.chef.context.injectors.retain(|(n, _)| n != name);
        self.chef.context.injectors.len() != before
    }
}
