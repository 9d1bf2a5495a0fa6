//! The flat methods that the session's handles replaced, kept one release so code written
//! against them still builds: each says which handle method to call instead and does
//! exactly that. Hidden from the documentation; nothing in chef calls them.

#![allow(missing_docs)]

use super::Chef;
use crate::{
    ChefError,
    offload::{
        CleanupReport, FlushReport, OffloadCaps, OffloadPolicy, Offloaded, PendingOffload,
        ReconcileReport,
    },
};

#[doc(hidden)]
impl Chef {
    #[deprecated(note = "use `chef.offloads_mut().set_policy(policy)`")]
    pub fn set_offload_policy(&mut self, policy: Option<OffloadPolicy>) -> &mut Self {
        self.offloads_mut().set_policy(policy);
        self
    }

    #[deprecated(note = "use `chef.offloads().policy()`")]
    pub fn offload_policy(&self) -> Option<&OffloadPolicy> {
        self.offloads().policy()
    }

    #[deprecated(note = "use `chef.offloads().pending()`")]
    pub fn pending_offloads(&self) -> &[PendingOffload] {
        self.offloads().pending()
    }

    #[deprecated(note = "use `chef.offloads_mut().store(text)`")]
    pub async fn offload(&mut self, text: &str) -> Result<Offloaded, ChefError> {
        self.offloads_mut().store(text).await
    }

    #[deprecated(note = "use `chef.offloads_mut().flush()`")]
    pub async fn flush_offloads(&mut self) -> Result<FlushReport, ChefError> {
        self.offloads_mut().flush().await
    }

    #[deprecated(note = "use `chef.offloads_mut().cleanup(caps)`")]
    pub async fn cleanup_offloads(
        &mut self,
        caps: &OffloadCaps,
    ) -> Result<CleanupReport, ChefError> {
        self.offloads_mut().cleanup(caps).await
    }

    #[deprecated(note = "use `chef.offloads_mut().reconcile()`")]
    pub async fn reconcile_offloads(&mut self) -> Result<ReconcileReport, ChefError> {
        self.offloads_mut().reconcile().await
    }
}

#[doc(hidden)]
impl Chef {
    #[deprecated(note = "use `chef.layers_mut().set_dynamic_state(state, placement)`")]
    pub fn set_dynamic_state<T: serde::Serialize + ?Sized>(
        &mut self,
        state: &T,
        placement: crate::dynamic::Placement,
    ) -> Result<&mut Self, ChefError> {
        self.layers_mut().set_dynamic_state(state, placement)?;
        Ok(self)
    }

    #[deprecated(
        note = "use `chef.layers_mut().set_dynamic_state_checked(schema, state, placement)`"
    )]
    pub fn set_dynamic_state_checked<T: serde::Serialize + ?Sized>(
        &mut self,
        schema: &serde_json::Value,
        state: &T,
        placement: crate::dynamic::Placement,
    ) -> Result<&mut Self, ChefError> {
        self.layers_mut()
            .set_dynamic_state_checked(schema, state, placement)?;
        Ok(self)
    }

    #[deprecated(note = "use `chef.layers_mut().clear_dynamic_state()`")]
    pub fn clear_dynamic_state(&mut self) -> bool {
        self.layers_mut().clear_dynamic_state()
    }

    #[deprecated(note = "use `chef.layers().dynamic_state()`")]
    pub fn dynamic_state(&self) -> Option<&crate::dynamic::DynamicState> {
        self.layers().dynamic_state()
    }

    #[deprecated(note = "use `chef.layers().dynamic_state_xml()`")]
    pub fn dynamic_state_xml(&self) -> &str {
        self.layers().dynamic_state_xml()
    }

    #[deprecated(note = "use `chef.layers_mut().add_injector(name, injector)`")]
    pub fn add_injector(
        &mut self,
        name: impl Into<String>,
        injector: impl crate::dynamic::ContextInjector + 'static,
    ) -> &mut Self {
        self.layers_mut().add_injector(name, injector);
        self
    }

    #[deprecated(note = "use `chef.layers_mut().remove_injector(name)`")]
    pub fn remove_injector(&mut self, name: &str) -> bool {
        self.layers_mut().remove_injector(name)
    }

    #[deprecated(note = "use `chef.layers().injectors()`")]
    pub fn injectors(&self) -> impl Iterator<Item = &str> {
        self.layers().injectors()
    }

    #[deprecated(note = "use `chef.layers_mut().set_guardrail(guardrail)`")]
    pub fn set_guardrail(&mut self, guardrail: Option<crate::guardrail::Guardrail>) -> &mut Self {
        self.layers_mut().set_guardrail(guardrail);
        self
    }

    #[deprecated(note = "use `chef.layers().guardrail()`")]
    pub fn guardrail(&self) -> Option<&crate::guardrail::Guardrail> {
        self.layers().guardrail()
    }

    #[deprecated(note = "use `chef.layers_mut().set_prefill(prefill)`")]
    pub fn set_prefill(&mut self, prefill: Option<impl Into<String>>) -> &mut Self {
        self.layers_mut().set_prefill(prefill);
        self
    }

    #[deprecated(note = "use `chef.layers().prefill()`")]
    pub fn prefill(&self) -> Option<&str> {
        self.layers().prefill()
    }
}

#[doc(hidden)]
impl Chef {
    #[deprecated(note = "use `chef.tools().pruner()`")]
    pub fn pruner(&self) -> &crate::prune::Pruner {
        self.tools().pruner()
    }

    #[deprecated(note = "use `chef.tools_mut().register_namespaces(groups)`")]
    pub fn register_namespaces(
        &mut self,
        groups: Vec<crate::namespace::ToolGroup>,
    ) -> Result<&mut Self, ChefError> {
        self.tools_mut().register_namespaces(groups)?;
        Ok(self)
    }

    #[deprecated(note = "use `chef.tools_mut().register_toolkits(groups)`")]
    pub fn register_toolkits(
        &mut self,
        groups: Vec<crate::namespace::ToolGroup>,
    ) -> Result<&mut Self, ChefError> {
        self.tools_mut().register_toolkits(groups)?;
        Ok(self)
    }

    #[deprecated(note = "use `chef.tools_mut().set_blocked(names)`")]
    pub fn set_blocked_tools<I, S>(&mut self, names: I) -> crate::gate::BlockReport
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools_mut().set_blocked(names)
    }

    #[deprecated(note = "use `chef.tools().unmatched_blocked()`")]
    pub fn unmatched_blocked_tools(&self) -> Vec<String> {
        self.tools().unmatched_blocked()
    }

    #[deprecated(note = "use `chef.tools_mut().set_prune_policy(policy)`")]
    pub fn set_prune_policy(&mut self, policy: crate::prune::PrunePolicy) -> &mut Self {
        self.tools_mut().set_prune_policy(policy);
        self
    }

    #[deprecated(note = "use `chef.tools().prune_policy()`")]
    pub fn prune_policy(&self) -> &crate::prune::PrunePolicy {
        self.tools().prune_policy()
    }

    #[deprecated(note = "use `chef.tools_mut().set_allowlist(names)`")]
    pub fn set_allowlist<I, S>(&mut self, names: Option<I>) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools_mut().set_allowlist(names);
        self
    }

    #[deprecated(note = "use `chef.tools().allowlist()`")]
    pub fn allowlist(&self) -> Option<&[String]> {
        self.tools().allowlist()
    }

    #[deprecated(note = "use `chef.tools_mut().set_task(task)`")]
    pub fn set_task(&mut self, task: Option<impl Into<String>>) -> &mut Self {
        self.tools_mut().set_task(task);
        self
    }

    #[deprecated(note = "use `chef.tools_mut().set_embedder(config)`")]
    pub fn set_embedder(&mut self, config: chef_compress::search::dense::DenseConfig) -> &mut Self {
        self.tools_mut().set_embedder(config);
        self
    }

    #[deprecated(note = "use `chef.tools_mut().set_lexical_ranking()`")]
    pub fn set_lexical_ranking(&mut self) -> &mut Self {
        self.tools_mut().set_lexical_ranking();
        self
    }

    #[deprecated(note = "use `chef.tools().loaded_toolkits()`")]
    pub fn loaded_toolkits(&self) -> &[String] {
        self.tools().loaded_toolkits()
    }

    #[deprecated(note = "use `chef.tools().directory_xml()`")]
    pub fn directory_xml(&self) -> String {
        self.tools().directory_xml()
    }

    #[deprecated(note = "use `chef.tools().owns(name)`")]
    pub fn owns_tool(&self, name: &str) -> bool {
        self.tools().owns(name)
    }

    #[deprecated(note = "use `chef.tools().code_for(name)`")]
    pub fn code_for(&self, name: &str) -> Option<String> {
        self.tools().code_for(name)
    }

    #[deprecated(note = "use `chef.tools().encode_call(name, args)`")]
    pub fn encode_call(&self, name: &str, args: serde_json::Value) -> Option<chef_ir::ToolCall> {
        self.tools().encode_call(name, args)
    }

    #[deprecated(note = "use `chef.tools().pruning_task()`")]
    pub fn pruning_task(&self) -> String {
        self.tools().pruning_task()
    }

    #[deprecated(note = "use `chef.tools().found()`")]
    pub fn found_tools(&self) -> Vec<&crate::prune::FoundTool> {
        self.tools().found()
    }
}

#[doc(hidden)]
impl Chef {
    #[deprecated(note = "use `chef.skills_mut().register(skills)`")]
    pub fn register_skills(
        &mut self,
        skills: impl IntoIterator<Item = crate::skills::Skill>,
    ) -> &mut Self {
        self.skills_mut().register(skills);
        self
    }

    #[deprecated(note = "use `chef.skills_mut().activate(skill)`")]
    pub fn activate_skill(
        &mut self,
        skill: impl Into<crate::skills::SkillRef>,
    ) -> Result<&mut Self, ChefError> {
        self.skills_mut().activate(skill)?;
        Ok(self)
    }

    #[deprecated(note = "use `chef.skills_mut().deactivate()`")]
    pub fn deactivate_skill(&mut self) -> Option<std::sync::Arc<crate::skills::Skill>> {
        self.skills_mut().deactivate()
    }

    #[deprecated(note = "use `chef.skills().active()`")]
    pub fn active_skill(&self) -> Option<&crate::skills::Skill> {
        self.skills().active()
    }

    #[deprecated(note = "use `chef.skills().listing()`")]
    pub fn skill_listing(&self) -> String {
        self.skills().listing()
    }
}
