//! The tool registry and task pruning.
//!
//! The [`Pruner`] owns every tool the agent registered: flat tools, namespaces and lazy
//! toolkits (see [`crate::namespace`]), and the runtime blocklist (see [`crate::gate`]).
//! Its filtering operations never change state; they return a [`PruneResult`] that says
//! which tools were kept and why.
//!
//! Two kinds of pruning exist:
//!
//! - **Flat pruning** with the reference semantics ([`Pruner::prune_by_task`],
//!   [`Pruner::allow_only`], [`Pruner::prune_by_task_and_allowlist`]): a tool is relevant to
//!   a task when it has no tags (a universal tool), when its lowercased name occurs in the
//!   lowercased task, or when one of its lowercased tags does. Substring semantics, no word
//!   boundaries (tag `read` matches "already").
//! - **Ranked pruning** (`rank_by_task`) on the catalogue search index shared with
//!   the `q` lookup tool, and a pruning policy that `compile` applies itself, so the agent
//!   loop never merges tool lists by hand.

mod error;
mod filter;
mod found;
mod policy;
mod rank;

use std::collections::BTreeSet;

use chef_compress::search::CatalogIndex;
use chef_ir::ToolDefinition;

pub use self::{
    error::RegistryError,
    found::{DiscoveryState, FoundTool},
    policy::{DEFAULT_TOP_K, KeepReason, PrunePolicy, PruneResult, Strategy},
};
use crate::{
    gate::Blocklist,
    namespace::{self, NamespaceCall, NamespaceError, ToolGroup},
};

/// What [`Pruner::compile`] returns: the two-layer wire tools and the toolkit directory.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledGroups {
    /// One tool per namespace (registration order), then `load_toolkit` when any toolkit
    /// is registered.
    pub tools: Vec<ToolDefinition>,
    /// The toolkit directory for the system prompt (`""` without toolkits).
    pub directory_xml: String,
}

/// The tool registry: flat tools, namespaces, lazy toolkits and the blocklist.
#[derive(Debug, Clone, Default)]
pub struct Pruner {
    /// Shared with snapshots, which take the tools without copying them.
    flat: std::sync::Arc<[ToolDefinition]>,
    /// The JSON text of `flat`, made on first use after a registration (a snapshot, or a
    /// restore comparing a file's tools with these) and reused by the later ones (`None`
    /// inside: serialising failed; snapshots then serialise the tools themselves and report
    /// the error).
    flat_json: std::sync::OnceLock<Option<std::sync::Arc<serde_json::value::RawValue>>>,
    index: std::sync::OnceLock<std::sync::Arc<CatalogIndex>>,
    /// The embedding model for ranked pruning, when one is set; without one, the bundled
    /// static model (when this build has it).
    dense: Option<chef_compress::search::dense::DenseConfig>,
    /// Rank with BM25F alone ([`set_lexical_ranking`](Self::set_lexical_ranking)).
    lexical_only: bool,
    /// The hybrid index (built on first use; `None` if the model failed).
    hybrid: std::sync::OnceLock<Option<std::sync::Arc<chef_compress::search::dense::HybridIndex>>>,
    /// The registry as it would be with only some of its flat tools (which ones: the mask,
    /// in registration order), ranked as this one ranks: it answers whether anything the
    /// caller may offer fits (see [`rank_search_among`](Self::rank_search_among)). Made on
    /// first need, kept until the registry, the ranking or the mask changes.
    restricted: rank::Restricted,
    namespaces: Vec<ToolGroup>,
    toolkits: Vec<ToolGroup>,
    blocklist: Blocklist,
    strategy: Strategy,
}

impl Pruner {
    /// An empty registry with the given combination strategy.
    pub fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            ..Self::default()
        }
    }

    /// Replaces the flat tools. Names must be unique (the reference accepts duplicates,
    /// which makes dispatch ambiguous; chef refuses them with a typed error and leaves the
    /// registry unchanged). A name chef answers itself (`context`, `create_memory`,
    /// `modify_memory`, `new_context`, `recall_context`, `load_skill`, `load_toolkit`) is refused
    /// ([`RegistryError::ReservedToolName`]), and so is a name already held by a namespace
    /// or a toolkit member ([`RegistryError::NameClash`]): either would put two tools of
    /// one name on the wire, which every provider rejects.
    pub fn register_tools(
        &mut self,
        tools: Vec<ToolDefinition>,
    ) -> Result<&mut Self, RegistryError> {
        self.register_shared_tools(tools.into(), None)
    }

    /// [`register_tools`](Self::register_tools) for tools shared with a snapshot, with
    /// their JSON text when known (it must be what serialising `tools` gives).
    pub(crate) fn register_shared_tools(
        &mut self,
        tools: std::sync::Arc<[ToolDefinition]>,
        json: Option<std::sync::Arc<serde_json::value::RawValue>>,
    ) -> Result<&mut Self, RegistryError> {
        let mut seen = BTreeSet::new();
        for (index, tool) in tools.iter().enumerate() {
            if tool.name.as_str().trim().is_empty() {
                return Err(RegistryError::BlankToolName { index });
            }
            if !seen.insert(tool.name.as_str()) {
                return Err(RegistryError::DuplicateTool {
                    name: tool.name.clone(),
                });
            }
            if let Err(chef_compress::CompressError::ControlCharacter { parameter, .. }) =
                chef_compress::check_names(index, tool)
            {
                return Err(RegistryError::ControlCharacter {
                    name: tool.name.clone(),
                    parameter,
                });
            }
            if let Some(owner) = reserved_owner(tool.name.as_str()) {
                return Err(RegistryError::ReservedToolName {
                    name: tool.name.clone(),
                    owner,
                });
            }
            if let Some(group) = self
                .namespaces
                .iter()
                .find(|g| g.name == tool.name.as_str())
            {
                return Err(clash(&group.name, namespace_side(group), FLAT_TOOL));
            }
            if let Some(kit) = self
                .toolkits
                .iter()
                .find(|k| k.tools.iter().any(|t| t.name == tool.name))
            {
                return Err(clash(tool.name.as_str(), toolkit_side(kit), FLAT_TOOL));
            }
        }
        self.flat = tools;
        self.flat_json = std::sync::OnceLock::new();
        if let Some(json) = json {
            self.flat_json.get_or_init(|| Some(json));
        }
        self.index = std::sync::OnceLock::new();
        self.reset_ranking();
        Ok(self)
    }

    /// The flat tools, shared.
    pub(crate) fn shared_tools(&self) -> &std::sync::Arc<[ToolDefinition]> {
        &self.flat
    }

    /// The JSON text of the flat tools, serialised on first use after a registration.
    pub(crate) fn tools_json(&self) -> Option<std::sync::Arc<serde_json::value::RawValue>> {
        self.flat_json
            .get_or_init(|| {
                serde_json::value::to_raw_value(&*self.flat)
                    .ok()
                    .map(std::sync::Arc::from)
            })
            .clone()
    }

    /// Replaces the namespaces (one level only; see [`crate::namespace`]).
    pub fn register_namespaces(
        &mut self,
        groups: Vec<ToolGroup>,
    ) -> Result<&mut Self, RegistryError> {
        check_groups(&groups, &self.toolkits, "namespace")?;
        for group in &groups {
            if self.flat.iter().any(|t| t.name == group.name.as_str()) {
                return Err(clash(&group.name, FLAT_TOOL, namespace_side(group)));
            }
        }
        self.namespaces = groups;
        Ok(self)
    }

    /// Replaces the lazy toolkits.
    pub fn register_toolkits(
        &mut self,
        groups: Vec<ToolGroup>,
    ) -> Result<&mut Self, RegistryError> {
        check_groups(&groups, &self.namespaces, "toolkit")?;
        for kit in &groups {
            if let Some(tool) = kit
                .tools
                .iter()
                .find(|t| self.flat.iter().any(|f| f.name == t.name))
            {
                return Err(clash(tool.name.as_str(), FLAT_TOOL, toolkit_side(kit)));
            }
        }
        self.toolkits = groups;
        Ok(self)
    }

    /// The flat tools in registration order.
    pub fn all_tools(&self) -> &[ToolDefinition] {
        &self.flat
    }

    /// The namespaces in registration order.
    pub fn namespaces(&self) -> &[ToolGroup] {
        &self.namespaces
    }

    /// The lazy toolkits in registration order.
    pub fn toolkits(&self) -> &[ToolGroup] {
        &self.toolkits
    }

    /// The combination strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The runtime blocklist.
    pub fn blocklist(&self) -> &Blocklist {
        &self.blocklist
    }

    /// Replaces the blocklist. It never changes what `compile` emits, except under
    /// [`PrunePolicy::Discover`], where a blocked tool is not offered.
    pub fn set_blocked_tools<I, S>(&mut self, names: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.blocklist = Blocklist::new(names);
        self
    }

    /// The blocklist entries as given.
    pub fn blocked_tools(&self) -> &[String] {
        self.blocklist.entries()
    }

    /// The namespace tools (registration order) and, when any toolkit is registered, the
    /// `load_toolkit` tool. Depends only on the registered groups.
    pub fn group_tools(&self) -> Vec<ToolDefinition> {
        let mut tools: Vec<ToolDefinition> = self
            .namespaces
            .iter()
            .map(namespace::namespace_tool)
            .collect();
        if !self.toolkits.is_empty() {
            tools.push(namespace::load_toolkit_tool(&self.toolkits));
        }
        tools
    }

    /// The two-layer tools and the toolkit directory together: the namespace tools, then
    /// `load_toolkit` when any toolkit is registered, and the directory for the system
    /// prompt (the reference's `pruner.compile()`).
    ///
    /// Depends only on the registered namespaces and toolkits — not on the flat tools, the
    /// blocklist, loaded toolkits or the turn — so identical registrations give identical
    /// output on every call, which is what keeps the tool list cache-stable.
    ///
    /// ```
    /// use chef::{Pruner, ToolGroup};
    /// use chef_ir::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let mut pruner = Pruner::default();
    /// let read = ToolDefinition::new("read_file", json!({"type": "object"}));
    /// pruner.register_namespaces(vec![ToolGroup::new("file_ops", "Files", vec![read])])?;
    /// let compiled = pruner.compile();
    /// assert_eq!(compiled.tools[0].name.as_str(), "file_ops");
    /// assert_eq!(compiled.directory_xml, ""); // no toolkits
    /// # Ok::<(), chef::RegistryError>(())
    /// ```
    pub fn compile(&self) -> CompiledGroups {
        CompiledGroups {
            tools: self.group_tools(),
            directory_xml: self.directory_xml(),
        }
    }

    /// The toolkit directory for the system prompt (`""` without toolkits).
    pub fn directory_xml(&self) -> String {
        namespace::directory_xml(&self.toolkits)
    }

    /// Whether `name` is a registered namespace (exact match).
    pub fn is_namespace_call(&self, name: &str) -> bool {
        self.namespaces.iter().any(|g| g.name == name)
    }

    /// Whether `name` is the toolkit loader.
    pub fn is_toolkit_loader(name: &str) -> bool {
        name == namespace::LOAD_TOOLKIT
    }

    /// Resolves a namespace call to its sub-tool.
    pub fn resolve_namespace(
        &self,
        name: &str,
        arguments: &serde_json::Value,
    ) -> Result<NamespaceCall, NamespaceError> {
        namespace::resolve_namespace(&self.namespaces, name, arguments)
    }

    /// A registered toolkit, by case-insensitive name.
    pub fn extract_toolkit(&self, name: &str) -> Result<&ToolGroup, NamespaceError> {
        namespace::extract_toolkit(&self.toolkits, name)
    }
}

/// What chef uses a reserved tool name for (`None`: the name is free).
pub(crate) fn reserved_owner(name: &str) -> Option<&'static str> {
    match name {
        crate::owned::CREATE_MEMORY | crate::owned::MODIFY_MEMORY => Some("its memory tools"),
        crate::owned::CONTEXT => Some("its context tool"),
        crate::owned::NEW_CONTEXT => Some("its handoff tool"),
        crate::owned::RECALL_CONTEXT => Some("its archive tool"),
        crate::owned::LOAD_SKILL => Some("its skill loader"),
        namespace::LOAD_TOOLKIT => Some("the toolkit loader"),
        _ => None,
    }
}

/// How a [`RegistryError::NameClash`] names a flat tool.
const FLAT_TOOL: &str = "a flat tool";

/// How a [`RegistryError::NameClash`] names a namespace.
fn namespace_side(group: &ToolGroup) -> String {
    format!("namespace \"{}\"", group.name)
}

/// How a [`RegistryError::NameClash`] names a tool of a toolkit.
fn toolkit_side(kit: &ToolGroup) -> String {
    format!("a tool of toolkit \"{}\"", kit.name)
}

/// `name` held by `first` already, and wanted by `second`.
fn clash(name: &str, first: impl Into<String>, second: impl Into<String>) -> RegistryError {
    RegistryError::NameClash {
        name: name.to_owned(),
        first: first.into(),
        second: second.into(),
    }
}

/// Checks `groups` (of `kind`, "namespace" or "toolkit") against each other and the
/// `others` kind: no reserved name, no duplicate group or member, no group nested in
/// another.
pub(crate) fn check_groups(
    groups: &[ToolGroup],
    others: &[ToolGroup],
    kind: &'static str,
) -> Result<(), RegistryError> {
    let mut names: BTreeSet<&str> = others.iter().map(|g| g.name.as_str()).collect();
    for group in groups {
        if group.name.trim().is_empty() {
            return Err(RegistryError::EmptyGroupName {
                kind,
                name: group.name.clone(),
            });
        }
        if group
            .tools
            .iter()
            .any(|t| t.name.as_str().trim().is_empty())
        {
            return Err(RegistryError::EmptyMemberName {
                kind,
                group: group.name.clone(),
            });
        }
        if reserved_owner(&group.name).is_some() {
            return Err(RegistryError::ReservedName {
                kind,
                group: group.name.clone(),
                name: group.name.clone(),
            });
        }
        if !names.insert(&group.name) {
            return Err(RegistryError::DuplicateGroup {
                kind,
                name: group.name.clone(),
            });
        }
    }
    for group in groups {
        let mut members = BTreeSet::new();
        for tool in &group.tools {
            if !members.insert(tool.name.as_str()) {
                return Err(RegistryError::DuplicateMember {
                    kind,
                    group: group.name.clone(),
                    tool: tool.name.clone(),
                });
            }
            if names.contains(tool.name.as_str()) {
                return Err(RegistryError::NestedGroup {
                    kind,
                    group: group.name.clone(),
                    tool: tool.name.clone(),
                });
            }
            if reserved_owner(tool.name.as_str()).is_some() {
                return Err(RegistryError::ReservedName {
                    kind,
                    group: group.name.clone(),
                    name: tool.name.as_str().to_owned(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use chef_ir::ToolName;
    use serde_json::json;

    use super::*;

    fn tool(name: &str, tags: &[&str]) -> ToolDefinition {
        ToolDefinition::new(name, json!({"type": "object"})).with_tags(tags.iter().copied())
    }

    fn names(result: &PruneResult) -> Vec<&str> {
        result.tools.iter().map(|t| t.name.as_str()).collect()
    }

    fn registry(strategy: Strategy) -> Pruner {
        let mut p = Pruner::new(strategy);
        p.register_tools(vec![
            tool("read_file", &["file", "read"]),
            tool("run_bash", &["shell", "bash"]),
            tool("get_time", &[]),
        ])
        .unwrap();
        p
    }

    #[test]
    fn prune_by_task_keeps_tag_matches_and_universal_tools() {
        let p = registry(Strategy::Union);
        let r = p.prune_by_task("Read the auth.ts file");
        assert_eq!(names(&r), ["read_file", "get_time"]);
        assert_eq!(r.removed, [ToolName::from("run_bash")]);
        assert_eq!((r.kept, r.total), (2, 3));
        assert_eq!(r.reasons[0], KeepReason::TagInTask { tag: "file".into() });
        assert_eq!(r.reasons[1], KeepReason::Universal);
    }

    #[test]
    fn names_match_case_insensitively_and_tags_as_substrings() {
        let p = registry(Strategy::Union);
        assert!(names(&p.prune_by_task("please use RUN_BASH now")).contains(&"run_bash"));
        assert!(names(&p.prune_by_task("already done")).contains(&"read_file"));
        let mut p = Pruner::default();
        p.register_tools(vec![tool("x", &[""])]).unwrap();
        assert_eq!(p.prune_by_task("").kept, 1);
    }

    #[test]
    fn allow_only_is_case_insensitive_exact() {
        let p = registry(Strategy::Union);
        assert_eq!(
            names(&p.allow_only(&["READ_FILE", "SEARCH_WEB"])),
            ["read_file"]
        );
        let r = p.allow_only(&["missing"]);
        assert_eq!(r.kept, 0);
        assert_eq!(r.removed.len(), 3);
    }

    #[test]
    fn union_and_intersection() {
        let p = registry(Strategy::Union);
        assert_eq!(
            p.prune_by_task_and_allowlist("execute a bash script", &["read_file"])
                .kept,
            3
        );
        let p = registry(Strategy::Intersection);
        assert_eq!(
            names(&p.prune_by_task_and_allowlist("read a file", &["read_file"])),
            ["read_file"]
        );
    }

    #[test]
    fn duplicate_names_are_refused_and_leave_the_registry_unchanged() {
        let mut p = registry(Strategy::Union);
        let err = p
            .register_tools(vec![tool("dup", &["x"]), tool("dup", &["y"])])
            .unwrap_err();
        assert_eq!(err.to_string(), "tool \"dup\" is registered twice");
        assert_eq!(p.all_tools().len(), 3);
    }

    #[test]
    fn register_replaces_and_filters_do_not_mutate() {
        let mut p = registry(Strategy::Union);
        let _ = p.prune_by_task("bash");
        assert_eq!(p.all_tools().len(), 3);
        p.register_tools(vec![tool("only", &[])]).unwrap();
        assert_eq!(p.all_tools().len(), 1);
    }

    #[test]
    fn groups_are_one_level_deep() {
        let inner = ToolGroup::new("inner", "", vec![]);
        let outer = ToolGroup::new("outer", "", vec![ToolDefinition::new("inner", json!({}))]);
        let err = check_groups(&[inner, outer], &[], "namespace").unwrap_err();
        assert!(matches!(err, RegistryError::NestedGroup { .. }), "{err}");
        let err = check_groups(
            &[ToolGroup::new(crate::namespace::LOAD_TOOLKIT, "", vec![])],
            &[],
            "namespace",
        )
        .unwrap_err();
        assert!(matches!(err, RegistryError::ReservedName { .. }));
        let dup = ToolGroup::new(
            "g",
            "",
            vec![
                ToolDefinition::new("a", json!({})),
                ToolDefinition::new("a", json!({})),
            ],
        );
        assert!(matches!(
            check_groups(&[dup], &[], "toolkit").unwrap_err(),
            RegistryError::DuplicateMember { .. }
        ));
    }
}
