//! Step 1 and 2 of a turn: choose the tools the model sees, and compress them.
//!
//! The selection is cached: it is rebuilt only when its inputs change (the registry's
//! epoch, the kept tool names, the loaded toolkits), so a turn whose tools did not move
//! reuses the compressed set — same bytes, no work.

use std::{collections::BTreeMap, sync::Arc};

use chef_compress::{Catalogue, Compressed, Level, Options, validate::ArgumentValidator};
use chef_ir::{ToolDefinition, ToolName};

use crate::{
    error::ChefError,
    namespace::ToolGroup,
    owned,
    prune::{KeepReason, PrunePolicy, Pruner},
};

/// What a selection depends on; equal keys give equal selections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SelectionKey {
    pub(crate) epoch: u64,
    pub(crate) kept: Vec<ToolName>,
    pub(crate) loaded: Vec<String>,
    pub(crate) extra: Vec<ToolName>,
    pub(crate) discovery: bool,
}

/// The tools of one turn, compressed, with everything `route` needs to read calls back.
#[derive(Debug)]
pub(crate) struct TurnTools {
    pub(crate) key: SelectionKey,
    /// The pruned flat tools (or the namespace tools and `load_toolkit`), compressed at the
    /// configured level. This is the cache-stable part.
    pub(crate) stable: Compressed,
    /// Tools of loaded toolkits, then the extra tools (found by the model's searches,
    /// kept because the history calls them), compressed at level 1 at most (so loading a
    /// toolkit or finding a tool never rewrites the stable map), sent after the stable and
    /// owned tools.
    pub(crate) loaded: Option<Compressed>,
    /// The extra tools in the `loaded` set, in the order they joined, and why.
    pub(crate) extra: Vec<(ToolName, KeepReason)>,
    /// Whether the discovery search tool is offered (its note joins the preamble).
    pub(crate) discovery: bool,
    /// Library-owned tools, sent uncompressed after the stable tools.
    pub(crate) owned: Vec<ToolDefinition>,
    /// Why each kept flat tool was kept.
    pub(crate) kept: Vec<(ToolName, KeepReason)>,
    /// Validators for namespace members (their schemas are not on the wire).
    pub(crate) members: BTreeMap<ToolName, ArgumentValidator>,
    /// The toolkit each loaded tool came from.
    pub(crate) toolkit_of: BTreeMap<ToolName, String>,
    /// The registry this selection was made from: its flat tools, namespaces and
    /// toolkits. A call is routed against the selection the model was shown; when the
    /// registry has changed since, the tool the call reaches is checked against the
    /// current registry (see the dispatch entry point).
    pub(crate) registry: Arc<[ToolDefinition]>,
    /// The namespaces of that registry.
    pub(crate) namespaces: Vec<ToolGroup>,
    /// The toolkits of that registry.
    pub(crate) toolkits: Vec<ToolGroup>,
    /// Tools registered with `defer_loading`. Compression drops the flag (its wire tools
    /// carry name, description and schema only); it is put back on the wire tool of the
    /// same name, which exists at levels 0 and 1.
    pub(crate) deferred: std::collections::BTreeSet<ToolName>,
}

impl TurnTools {
    /// The wire tools in order: stable, owned, loaded.
    pub(crate) fn wire_tools(&self) -> Vec<ToolDefinition> {
        let mut tools = self.stable.tools().to_vec();
        tools.extend(self.owned.iter().cloned());
        if let Some(loaded) = &self.loaded {
            // Compression sorts by name; the extra tools go last in the order they joined,
            // so a tool found later never moves one found earlier (at levels 0–1 each wire
            // tool is its real tool, of the same name).
            let is_extra = |t: &ToolDefinition| self.extra.iter().any(|(n, _)| n == &t.name);
            tools.extend(loaded.tools().iter().filter(|t| !is_extra(t)).cloned());
            for (name, _) in &self.extra {
                tools.extend(loaded.tools().iter().filter(|t| &t.name == name).cloned());
            }
        }
        if !self.deferred.is_empty() {
            for tool in &mut tools {
                if self.deferred.contains(&tool.name) {
                    tool.defer_loading = true;
                }
            }
        }
        tools
    }

    /// The tool of this request named `name` on the wire (stable, owned or loaded), as the
    /// model was shown it: [`wire_tools`](Self::wire_tools) without building them.
    pub(crate) fn offered(&self, name: &str) -> Option<&ToolDefinition> {
        let loaded = self.loaded.iter().flat_map(|l| l.tools().iter());
        self.stable
            .tools()
            .iter()
            .chain(&self.owned)
            .chain(loaded)
            .find(|t| t.name.as_str() == name)
    }

    /// The system preamble of the compressed sets (stable first), then the discovery note.
    pub(crate) fn preamble(&self) -> String {
        let mut text = self.stable.system().to_owned();
        if self.discovery {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(DISCOVERY_NOTE);
        }
        if let Some(loaded) = &self.loaded
            && !loaded.system().is_empty()
        {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(loaded.system());
        }
        text
    }

    /// Real names the model can reach this turn, in a fixed order.
    pub(crate) fn reachable(&self) -> Vec<ToolName> {
        let mut names: Vec<ToolName> = self.kept.iter().map(|(n, _)| n.clone()).collect();
        names.extend(self.members.keys().cloned());
        names.extend(self.toolkit_of.keys().cloned());
        names.extend(self.extra.iter().map(|(n, _)| n.clone()));
        names.extend(self.owned.iter().map(|t| t.name.clone()));
        names.sort();
        names.dedup();
        names
    }
}

/// The registry's flat tools prepared for compression ([`Catalogue`]), for one registry
/// epoch: each selection of them (task pruning changes it turn by turn) is compressed from
/// it, sharing each tool's normalised schema, compiled validator and map line.
pub(crate) struct RegistryCatalogue {
    epoch: u64,
    /// `None` when some registry tool is refused (a schema normalisation rejects, say):
    /// selections are then compressed directly, so one that leaves that tool out works.
    catalogue: Option<Catalogue>,
    /// Registry position of each tool name.
    index: std::collections::HashMap<ToolName, usize>,
}

impl std::fmt::Debug for RegistryCatalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryCatalogue")
            .field("epoch", &self.epoch)
            .field("tools", &self.catalogue.as_ref().map(Catalogue::len))
            .finish_non_exhaustive()
    }
}

/// Compresses the kept flat tools: from the registry's catalogue (made once per epoch)
/// when every kept tool is a registry tool, else directly. The output is the same bytes
/// either way (`Catalogue::compress_subset` equals `compress` of the same tools).
fn compress_kept(
    kept: &[ToolDefinition],
    input: &SelectInput<'_>,
    catalogue: &mut Option<Arc<RegistryCatalogue>>,
) -> Result<Compressed, ChefError> {
    prepare_registry(input.pruner, input.epoch, input.options, catalogue);
    let Some(RegistryCatalogue {
        catalogue: Some(prepared),
        index,
        ..
    }) = catalogue.as_deref()
    else {
        return Ok(chef_compress::compress(kept, input.options)?);
    };
    let indices: Option<Vec<usize>> = kept.iter().map(|t| index.get(&t.name).copied()).collect();
    Ok(match indices {
        Some(indices) => prepared.compress_subset(&indices, input.options)?,
        None => chef_compress::compress(kept, input.options)?,
    })
}

/// The registry prepared for compression, made again when the epoch moved.
fn prepare_registry(
    pruner: &Pruner,
    epoch: u64,
    options: &Options,
    catalogue: &mut Option<Arc<RegistryCatalogue>>,
) {
    if catalogue.as_ref().is_some_and(|c| c.epoch == epoch) {
        return;
    }
    let registry = pruner.all_tools();
    *catalogue = Some(Arc::new(RegistryCatalogue {
        epoch,
        catalogue: Catalogue::with_limits(registry, options.limits()).ok(),
        index: registry
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect(),
    }));
}

/// The inputs of a selection that live in the session.
pub(crate) struct SelectInput<'a> {
    pub(crate) pruner: &'a Pruner,
    pub(crate) epoch: u64,
    pub(crate) policy: &'a PrunePolicy,
    pub(crate) task: &'a str,
    pub(crate) loaded: &'a [String],
    pub(crate) options: &'a Options,
    pub(crate) owned: &'a [ToolDefinition],
    /// Tools offered beyond the policy's own (found by the model's searches, or called in
    /// the history), in the order they joined: appended after the stable and owned tools.
    /// Those the policy keeps anyway are left out.
    pub(crate) extra: &'a [(ToolDefinition, KeepReason)],
    /// The session's allowlist: when set, no flat tool off it is kept, whatever the
    /// policy (case-insensitive exact names).
    pub(crate) allowlist: Option<&'a [String]>,
    /// The active skill's `allowed-tools` when skill pruning is on: a second allowlist,
    /// applied the same way (a tool must be on both).
    pub(crate) skill_bound: Option<&'a [String]>,
}

/// The tools of the turn and the caches that make them cheap: the latest selection, the
/// registry prepared for compression, and the owned tools for the settings they were made
/// for. The session only asks it for a selection and tells it when the registry moved.
#[derive(Default)]
pub(crate) struct Selection {
    /// The latest selection (`None`: none yet, or the registry moved since).
    last: Option<Arc<TurnTools>>,
    /// The owned tools and the settings they were made for.
    owned: Option<(super::OwnedKey, Vec<ToolDefinition>)>,
    /// The registry prepared for compression, for its current epoch (made on the first
    /// selection that needs compressing).
    catalogue: Option<Arc<RegistryCatalogue>>,
}

impl Selection {
    /// The same caches, shared (a forked session starts from its parent's selection).
    pub(crate) fn fork(&self) -> Self {
        Self {
            last: self.last.clone(),
            owned: self.owned.clone(),
            catalogue: self.catalogue.clone(),
        }
    }

    /// Prepares the registry for compression now, as the first selection of `epoch` would
    /// (forks made afterwards share it).
    pub(crate) fn warm(&mut self, pruner: &Pruner, epoch: u64, options: &Options) {
        prepare_registry(pruner, epoch, options, &mut self.catalogue);
    }

    /// Forgets the latest selection: the registry moved.
    pub(crate) fn forget(&mut self) {
        self.last = None;
    }

    /// The selection for `input` (its `owned` is ignored: the owned tools for `owned_key`
    /// are used, made again when the key moved), kept as the latest. Returns whether it
    /// differs from the previous one.
    pub(crate) fn select(
        &mut self,
        input: SelectInput<'_>,
        owned_key: super::OwnedKey,
    ) -> Result<(Arc<TurnTools>, bool), ChefError> {
        // The owned tools depend on three settings only; they are made again when one moves.
        if self.owned.as_ref().is_none_or(|(key, _)| *key != owned_key) {
            let tools = owned_tools_for(&owned_key);
            self.owned = Some((owned_key, tools));
        }
        let owned = self.owned.as_ref().map_or(&[][..], |(_, t)| t.as_slice());
        let input = SelectInput { owned, ..input };
        let fresh = select(&input, self.last.as_ref(), &mut self.catalogue)?;
        let changed = !self.last.as_ref().is_some_and(|p| Arc::ptr_eq(p, &fresh));
        self.last = Some(Arc::clone(&fresh));
        Ok((fresh, changed))
    }

    /// The selection for `input` as [`select`](Self::select) makes it, without keeping it
    /// (for `&self` readers before any compile).
    pub(crate) fn peek(
        &self,
        input: SelectInput<'_>,
        owned_key: &super::OwnedKey,
    ) -> Result<Arc<TurnTools>, ChefError> {
        let fresh;
        let owned = match &self.owned {
            Some((key, tools)) if key == owned_key => tools.as_slice(),
            _ => {
                fresh = owned_tools_for(owned_key);
                fresh.as_slice()
            }
        };
        select(
            &SelectInput { owned, ..input },
            self.last.as_ref(),
            &mut None,
        )
    }
}

/// Chooses the flat tools to keep (before compression).
pub(crate) fn keep(
    input: &SelectInput<'_>,
) -> Result<Vec<(ToolDefinition, KeepReason)>, ChefError> {
    let pruner = input.pruner;
    let bound = match (input.allowlist, input.skill_bound) {
        (Some(a), Some(b)) => {
            let b = lowercase(b);
            Some(lowercase(a).into_iter().filter(|n| b.contains(n)).collect())
        }
        (a, b) => a.or(b).map(lowercase),
    };
    // A catalogue the discovery setting would show whole: every tool, nothing to find.
    let all = PrunePolicy::All;
    let policy = match input.policy {
        PrunePolicy::Discover { .. } if !input.policy.discovers_in(pruner) => &all,
        policy => policy,
    };
    // Under discovery a blocked tool is never offered (issue 43): the list follows the task
    // anyway, so dropping one costs no more than the re-rank at a new request. Everywhere
    // else the blocklist never edits the list (it is enforced at dispatch).
    let hide_blocked =
        matches!(input.policy, PrunePolicy::Discover { .. }) && !pruner.blocklist().is_empty();
    let offered = |name: &str| {
        bound
            .as_ref()
            .is_none_or(|a: &std::collections::BTreeSet<String>| a.contains(&name.to_lowercase()))
            && !(hide_blocked && pruner.blocklist().blocks(name))
    };
    let narrowed = bound.is_some() || hide_blocked;
    let mut kept: Vec<(ToolDefinition, KeepReason)> = match (narrowed, policy) {
        (
            true,
            PrunePolicy::Ranked { top_k, always_keep }
            | PrunePolicy::Discover { top_k, always_keep },
        ) => {
            // Rank among the offered tools only, so the allowlist (or, under discovery, the
            // blocklist) never costs ranked slots, nor makes the others fit when only a
            // tool that is not offered does (`rank_by_task_among`).
            let mut kept: Vec<(ToolDefinition, KeepReason)> = pruner
                .all_tools()
                .iter()
                .filter(|t| always_keep.iter().any(|n| n == t.name.as_str()))
                .filter(|t| offered(t.name.as_str()))
                .map(|t| (t.clone(), KeepReason::AlwaysKept))
                .collect();
            let ranked = pruner.rank_by_task_among(input.task, pruner.all_tools().len(), &offered);
            let mut count = 0;
            for (tool, reason) in ranked.tools.into_iter().zip(ranked.reasons) {
                if count < *top_k && !kept.iter().any(|(k, _)| k.name == tool.name) {
                    count += 1;
                    kept.push((tool, reason));
                }
            }
            kept
        }
        (_, policy) => {
            let result = policy.apply(pruner, input.task)?;
            result
                .tools
                .into_iter()
                .zip(result.reasons)
                .filter(|(t, _)| offered(t.name.as_str()))
                .collect()
        }
    };
    // Namespaces and toolkits add their group tools beside the flat tools: a registry of
    // both keeps both (the reference drops the flat tools in silence).
    kept.extend(
        pruner
            .group_tools()
            .into_iter()
            .map(|t| (t, KeepReason::Universal)),
    );
    Ok(kept)
}

fn lowercase(names: &[String]) -> std::collections::BTreeSet<String> {
    names.iter().map(|n| n.to_lowercase()).collect()
}

/// Builds the turn's tools, or returns `previous` when nothing it depends on changed.
pub(crate) fn select(
    input: &SelectInput<'_>,
    previous: Option<&Arc<TurnTools>>,
    catalogue: &mut Option<Arc<RegistryCatalogue>>,
) -> Result<Arc<TurnTools>, ChefError> {
    // Steady state of the default policy: every flat tool is kept, so the key can be
    // checked against the registry's names without cloning 149 definitions per turn.
    if let Some(previous) = previous
        && matches!(input.policy, PrunePolicy::All)
        && input.allowlist.is_none()
        && input.skill_bound.is_none()
        && input.extra.is_empty()
        && input.pruner.namespaces().is_empty()
        && input.pruner.toolkits().is_empty()
        && previous.key.epoch == input.epoch
        && previous.key.loaded == input.loaded
        && previous
            .key
            .kept
            .iter()
            .eq(input.pruner.all_tools().iter().map(|t| &t.name))
    {
        return Ok(Arc::clone(previous));
    }
    // A catalogue over the limit under the default policy is refused before any tool is
    // copied or prepared (50,000 tools took 2 s and 97 MB to be refused, at every compile).
    let limit = input.options.limits().max_tools;
    let flat = input.pruner.all_tools().len();
    if matches!(input.policy, PrunePolicy::All)
        && input.allowlist.is_none()
        && input.skill_bound.is_none()
        && flat > limit
    {
        return Err(chef_compress::CompressError::TooManyTools { count: flat, limit }.into());
    }
    let kept = keep(input)?;
    let extra: Vec<&(ToolDefinition, KeepReason)> = input
        .extra
        .iter()
        .filter(|(t, _)| !kept.iter().any(|(k, _)| k.name == t.name))
        .collect();
    // The note joins the preamble with chef's `find_tools` among the owned tools, which
    // the session offers only while it discovers: not when it is blocked, nor when an
    // agent's tool of that name took its place.
    let discovery = input
        .owned
        .iter()
        .any(|t| t.name.as_str() == owned::FIND_TOOLS);
    let key = SelectionKey {
        epoch: input.epoch,
        kept: kept.iter().map(|(t, _)| t.name.clone()).collect(),
        loaded: input.loaded.to_vec(),
        extra: extra.iter().map(|(t, _)| t.name.clone()).collect(),
        discovery,
    };
    if let Some(previous) = previous
        && previous.key == key
    {
        return Ok(Arc::clone(previous));
    }

    let pruner = input.pruner;
    let stable_tools: Vec<ToolDefinition> = kept.iter().map(|(t, _)| t.clone()).collect();
    let two_layer = !pruner.namespaces().is_empty() || !pruner.toolkits().is_empty();
    let stable = if two_layer {
        // The group tools are made per selection, not registry tools.
        chef_compress::compress(&stable_tools, input.options)?
    } else {
        compress_kept(&stable_tools, input, catalogue)?
    };

    let mut members = BTreeMap::new();
    for group in pruner.namespaces() {
        for tool in &group.tools {
            let validator = ArgumentValidator::with_limits(
                tool.name.as_str(),
                &tool.input_schema,
                input.options.limits(),
            )
            .map_err(|e| ChefError::Schema(Box::new(e)))?;
            members.insert(tool.name.clone(), validator);
        }
    }

    let mut toolkit_of = BTreeMap::new();
    let mut loaded_tools = Vec::new();
    for kit_name in input.loaded {
        let Ok(kit) = pruner.extract_toolkit(kit_name) else {
            continue; // a toolkit unregistered since it was loaded offers nothing
        };
        for tool in &kit.tools {
            if toolkit_of
                .insert(tool.name.clone(), kit.name.clone())
                .is_none()
            {
                loaded_tools.push(tool.clone());
            }
        }
    }
    for (tool, _) in &extra {
        if !toolkit_of.contains_key(&tool.name) && !loaded_tools.iter().any(|t| t.name == tool.name)
        {
            loaded_tools.push(tool.clone());
        }
    }
    let loaded = if loaded_tools.is_empty() {
        None
    } else {
        // Level 1 at most (level 0 stays 0): loaded tools travel beside the stable ones.
        let level = input.options.level().min(Level::One);
        Some(chef_compress::compress(
            &loaded_tools,
            &input.options.clone().with_level(level),
        )?)
    };

    // Two tools of one name on the wire are refused by every provider. Registration
    // refuses the clashes it can see; this catches the rest (a loaded toolkit's tool
    // named like a level-2 compound tool, say) before anything is sent.
    let mut on_wire = std::collections::BTreeSet::new();
    let loaded_names = loaded.iter().flat_map(|l| l.tools().iter());
    for tool in stable.tools().iter().chain(input.owned).chain(loaded_names) {
        if !on_wire.insert(tool.name.as_str()) {
            return Err(ChefError::DuplicateWireTool {
                name: tool.name.clone(),
            });
        }
    }

    // Levels 2–4 fold tools into compound or dispatcher tools: nothing to defer there.
    let one_to_one = input.options.level().sends_each_tool();
    let deferred = stable_tools
        .iter()
        .filter(|_| one_to_one)
        .chain(&loaded_tools)
        .filter(|t| t.defer_loading)
        .map(|t| t.name.clone())
        .collect();
    Ok(Arc::new(TurnTools {
        deferred,
        key,
        stable,
        loaded,
        extra: extra
            .into_iter()
            .map(|(t, r)| (t.name.clone(), r.clone()))
            .collect(),
        discovery,
        owned: input.owned.to_vec(),
        kept: kept.into_iter().map(|(t, r)| (t.name, r)).collect(),
        members,
        toolkit_of,
        registry: Arc::clone(pruner.shared_tools()),
        namespaces: pruner.namespaces().to_vec(),
        toolkits: pruner.toolkits().to_vec(),
    }))
}

/// The owned tools compile emits for a mode.
/// The owned tools for the settings `key` holds.
fn owned_tools_for(
    (mode, keys, handoff, skill, discovery, answer): &super::OwnedKey,
) -> Vec<ToolDefinition> {
    let mut tools = owned_tools(*mode, keys.as_ref().map(|k| k.as_deref()), *handoff);
    if *skill {
        tools.push(owned::load_skill_tool());
    }
    if *discovery {
        tools.push(owned::find_tools_tool());
    }
    if *answer {
        tools.push(owned::final_answer_tool());
    }
    tools
}

/// What the model is told about the discovery setting, in the system preamble (static
/// text, so it stays in the cached prefix).
pub(crate) const DISCOVERY_NOTE: &str = "The tools listed are the ones that best fit the \
request, not all the tools you have. If none of them does what you need, call find_tools \
with a few words saying what the tool should do: the tools it finds can be called by name \
from your next step. If it finds nothing that fits, do not call a tool: answer in text.";

pub(crate) fn owned_tools(
    mode: owned::ToolsMode,
    memory_allowed_keys: Option<Option<&[String]>>,
    handoff: bool,
) -> Vec<ToolDefinition> {
    match mode {
        owned::ToolsMode::Legacy => match memory_allowed_keys {
            Some(allowed) => vec![
                owned::create_memory_tool(allowed.unwrap_or(&[])),
                owned::modify_memory_tool(),
            ],
            None => Vec::new(),
        },
        owned::ToolsMode::Unified => {
            let mut tools = vec![owned::context_tool()];
            if handoff {
                tools.push(owned::new_context_tool());
            }
            tools
        }
    }
}
