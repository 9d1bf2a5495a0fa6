//! Ranked pruning: the catalogue search index over the flat tools, the hybrid of BM25F and
//! an embedding model, and `rank_by_task`.

use chef_compress::search::CatalogIndex;
use chef_ir::ToolDefinition;

use super::{KeepReason, PruneResult, Pruner};

/// [`Pruner`]'s cache of itself restricted to some of its flat tools (the mask, in
/// registration order). Shared by clones, which hold the same tools and ranking until
/// either changes (and the cache with it).
#[derive(Debug, Clone, Default)]
pub(super) struct Restricted(std::sync::Arc<parking_lot::Mutex<Option<KeptOnly>>>);

/// Which flat tools were kept (in registration order), and the registry of them alone.
type KeptOnly = (Vec<bool>, std::sync::Arc<Pruner>);

impl Pruner {
    /// The catalogue search index over the flat tools (built once per registration).
    pub fn index(&self) -> &CatalogIndex {
        self.index
            .get_or_init(|| std::sync::Arc::new(CatalogIndex::build(&self.flat)))
    }

    /// Ranks [`rank_by_task`](Self::rank_by_task) with the hybrid of BM25F and this
    /// embedding model (`chef_compress::search::dense`) instead of the default one. The
    /// tools are embedded on the first ranking after each registration; if the model
    /// fails, the lexical index ranks.
    ///
    /// Without a model set, ranking is already hybrid: with the static model bundled in
    /// chef (`chef_compress::search::dense::BundledStatic`, the `bundled-model` feature,
    /// on by default), else BM25F alone.
    pub fn set_embedder(&mut self, config: chef_compress::search::dense::DenseConfig) -> &mut Self {
        self.dense = Some(config);
        self.lexical_only = false;
        self.reset_ranking();
        self
    }

    /// Ranks with BM25F alone (the lexical index and its abstention rule), not with the
    /// hybrid; [`set_embedder`](Self::set_embedder) goes back to a hybrid.
    pub fn set_lexical_ranking(&mut self) -> &mut Self {
        self.dense = None;
        self.lexical_only = true;
        self.reset_ranking();
        self
    }

    /// Ranks as `other` does (its model, or lexical ranking): a restore keeps the
    /// session's own ranking, which is code and not snapshot state.
    pub(crate) fn keep_ranking_of(&mut self, other: &Self) {
        self.dense.clone_from(&other.dense);
        self.lexical_only = other.lexical_only;
        self.reset_ranking();
    }

    /// Forgets what was built from the flat tools and the ranking (after either changed).
    pub(super) fn reset_ranking(&mut self) {
        self.hybrid = std::sync::OnceLock::new();
        self.restricted = Restricted::default();
    }

    /// The embedding model set with [`set_embedder`](Self::set_embedder), if any (`None`
    /// also when the bundled default ranks: see [`ranker`](Self::ranker)).
    pub fn embedder(&self) -> Option<&chef_compress::search::dense::DenseConfig> {
        self.dense.as_ref()
    }

    /// What ranks: `"lexical"`, or the model id of the hybrid's embedder (for the bundled
    /// default, `static-bundled:…`). Builds the hybrid index if it is not built yet.
    pub fn ranker(&self) -> String {
        self.hybrid_index().map_or_else(
            || "lexical".to_owned(),
            |h| h.embedder().model_id().to_owned(),
        )
    }

    /// The hybrid index, unless ranking is lexical: over the set model, else the bundled
    /// one; `None` when neither could embed the catalogue.
    pub fn hybrid_index(&self) -> Option<&chef_compress::search::dense::HybridIndex> {
        if self.lexical_only {
            return None;
        }
        self.hybrid
            .get_or_init(|| {
                let config = match &self.dense {
                    Some(config) => config.clone(),
                    None => chef_compress::search::dense::DenseConfig::bundled().ok()?,
                };
                config.build(&self.flat).ok().map(std::sync::Arc::new)
            })
            .as_deref()
    }

    /// [`rank_by_task`](Self::rank_by_task) for a search the model writes (`find_tools`):
    /// when the index abstains on `query` as a whole, the query's words that this catalogue
    /// uses are ranked instead, if they alone find a tool by the lexical index's rule
    /// ([`CatalogIndex::sentence_fallback`]) — the rule `q` answers by. A sentence's words
    /// that no tool mentions ("with Bob next Tuesday at 10am") then cannot turn a clear match
    /// into "nothing fits"; a query that shares only common words with the catalogue still
    /// finds nothing.
    ///
    /// ```
    /// use chef::prune::{Pruner, Strategy};
    /// use chef_ir::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let mut pruner = Pruner::new(Strategy::default());
    /// pruner.register_tools(vec![
    ///     ToolDefinition::new("mute_monitor", json!({"type": "object"}))
    ///         .with_description("Mute an alerting monitor for a while."),
    ///     ToolDefinition::new("send_email", json!({"type": "object"}))
    ///         .with_description("Send an email to a recipient."),
    ///     ToolDefinition::new("read_file", json!({"type": "object"}))
    ///         .with_description("Read a text file."),
    ///     ToolDefinition::new("create_invoice", json!({"type": "object"}))
    ///         .with_description("Create an invoice for a customer."),
    /// ])?;
    /// pruner.set_lexical_ranking();
    /// let query = "mute the noisy monitor on the checkout box until Monday morning, thanks";
    /// let found = pruner.rank_search(query, 3);
    /// assert_eq!(found.tools[0].name.as_str(), "mute_monitor");
    /// assert!(pruner.rank_search("what is the weather like in Paris", 3).tools.is_empty());
    /// # Ok::<(), chef::prune::RegistryError>(())
    /// ```
    pub fn rank_search(&self, query: &str, k: usize) -> PruneResult {
        let ranked = self.rank_by_task(query, k);
        if !ranked.tools.is_empty() {
            return ranked;
        }
        match self.index().sentence_fallback(query) {
            Some(known) => self.rank_by_task(&known, k),
            None => ranked,
        }
    }

    /// [`rank_search`](Self::rank_search) among the flat tools `keep` accepts (the ones a
    /// caller may offer: not blocked, on the allowlist): the others are ranked with them,
    /// then dropped, so they cost no place. When one of them was ranked, the index is asked
    /// again as if only the kept tools were registered, and if it abstains there, nothing
    /// is returned: a tool that may not be offered does not make the others fit. (The
    /// index over the kept tools is built on first need and kept while the registry, the
    /// ranking and what `keep` accepts stay the same.)
    ///
    /// ```
    /// use chef::prune::{Pruner, Strategy};
    /// use chef_ir::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let mut pruner = Pruner::new(Strategy::default());
    /// pruner.register_tools(vec![
    ///     ToolDefinition::new("purge_cdn_cache", json!({"type": "object"}))
    ///         .with_description("Purge the CDN cache of a site."),
    ///     ToolDefinition::new("send_email", json!({"type": "object"}))
    ///         .with_description("Send an email to a recipient."),
    ///     ToolDefinition::new("list_repositories", json!({"type": "object"}))
    ///         .with_description("List the repositories of an account."),
    /// ])?;
    /// pruner.set_lexical_ranking();
    /// let open = |name: &str| name != "purge_cdn_cache";
    /// // The one tool that fits may not be offered: nothing fits, not the next-ranked.
    /// assert!(!pruner.rank_search("purge the CDN cache of my site", 5).tools.is_empty());
    /// assert!(pruner.rank_search_among("purge the CDN cache of my site", 5, &open).tools.is_empty());
    /// let found = pruner.rank_search_among("list my repositories", 5, &open);
    /// assert_eq!(found.tools[0].name.as_str(), "list_repositories");
    /// # Ok::<(), chef::prune::RegistryError>(())
    /// ```
    pub fn rank_search_among(
        &self,
        query: &str,
        depth: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> PruneResult {
        self.rank_search_among_with_best(query, depth, keep).0
    }

    /// [`rank_search_among`](Self::rank_search_among), with the best score of the whole
    /// ranking, the tools `keep` refuses included (0 when nothing was ranked): a search
    /// that lists what scores near its best measures "near" from there, so dropping a
    /// blocked tool does not let the tools it outranked by far into the answer.
    pub fn rank_search_among_with_best(
        &self,
        query: &str,
        depth: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> (PruneResult, f64) {
        let ranked = self.rank_search(query, depth);
        let best = ranked
            .reasons
            .iter()
            .filter_map(KeepReason::score)
            .fold(0.0, f64::max);
        let kept = self.only_fitting(ranked, keep, |kept| {
            kept.rank_search(query, depth).tools.is_empty()
        });
        (kept, best)
    }

    /// [`rank_by_task`](Self::rank_by_task) among the flat tools `keep` accepts, as
    /// [`rank_search_among`](Self::rank_search_among) ranks among them.
    pub fn rank_by_task_among(
        &self,
        task: &str,
        depth: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> PruneResult {
        let ranked = self.rank_by_task(task, depth);
        self.only_fitting(ranked, keep, |kept| {
            kept.rank_by_task(task, depth).tools.is_empty()
        })
    }

    /// `ranked` less the tools `keep` refuses; nothing when one was ranked and the registry
    /// of the kept tools alone `abstains`.
    fn only_fitting(
        &self,
        ranked: PruneResult,
        keep: &dyn Fn(&str) -> bool,
        abstains: impl FnOnce(&Pruner) -> bool,
    ) -> PruneResult {
        let dropped = ranked.tools.iter().any(|t| !keep(t.name.as_str()));
        if dropped && abstains(&self.restricted_to(keep)) {
            return PruneResult::keeping(&self.flat, Vec::new(), Vec::new());
        }
        let (tools, reasons): (Vec<_>, Vec<_>) = ranked
            .tools
            .into_iter()
            .zip(ranked.reasons)
            .filter(|(tool, _)| keep(tool.name.as_str()))
            .unzip();
        PruneResult::keeping(&self.flat, tools, reasons)
    }

    /// This registry with only the flat tools `keep` accepts, ranked as this one ranks
    /// (cached: see the `restricted` field).
    fn restricted_to(&self, keep: &dyn Fn(&str) -> bool) -> std::sync::Arc<Pruner> {
        let mask: Vec<bool> = self.flat.iter().map(|t| keep(t.name.as_str())).collect();
        let mut cached = self.restricted.0.lock();
        if let Some((kept, pruner)) = cached.as_ref()
            && *kept == mask
        {
            return std::sync::Arc::clone(pruner);
        }
        let tools: Vec<ToolDefinition> = self
            .flat
            .iter()
            .zip(&mask)
            .filter(|(_, kept)| **kept)
            .map(|(tool, _)| tool.clone())
            .collect();
        let pruner = std::sync::Arc::new(Pruner {
            flat: tools.into(),
            dense: self.dense.clone(),
            lexical_only: self.lexical_only,
            ..Pruner::default()
        });
        *cached = Some((mask, std::sync::Arc::clone(&pruner)));
        pruner
    }

    /// The `k` flat tools the catalogue index ranks best for `task`, best first, each with
    /// its score and the matched terms. Empty when the index abstains (nothing fits).
    /// Unless ranking is lexical ([`set_lexical_ranking`](Self::set_lexical_ranking)), the
    /// hybrid ranks and abstains, with the set model or the bundled one (scores are then
    /// hybrid scores, `0..=1`).
    ///
    /// A task of several lines (a session's task for a short reply is the request, the
    /// question it answers and the reply, one per line) on which the index abstains as a
    /// whole — each line's chatter counting against the others — is ranked line by line
    /// instead, the last line first, and the lines' hits are merged in turns (the best of
    /// each line, then the second of each, …), each tool once, up to `k`. A line on which
    /// the index abstains adds nothing.
    pub fn rank_by_task(&self, task: &str, k: usize) -> PruneResult {
        let search = |text: &str| match self.hybrid_index().map(|h| h.search(text, k)) {
            Some(Ok(results)) => results,
            _ => self.index().search(text, k),
        };
        let whole = search(task);
        // Only when the whole abstains: the lines of a multi-line task.
        let lines = whole
            .abstained
            .then(|| {
                task.lines()
                    .filter(|l| !l.trim().is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|lines| lines.len() > 1);
        let hits = if let Some(lines) = lines {
            let per_line: Vec<Vec<chef_compress::search::Hit>> =
                lines.iter().rev().map(|l| search(l).hits).collect();
            let mut merged: Vec<chef_compress::search::Hit> = Vec::new();
            let deepest = per_line.iter().map(Vec::len).max().unwrap_or(0);
            for depth in 0..deepest {
                for hit in per_line.iter().filter_map(|hits| hits.get(depth)) {
                    if merged.len() < k && !merged.iter().any(|m| m.index == hit.index) {
                        merged.push(hit.clone());
                    }
                }
            }
            merged
        } else {
            whole.hits
        };
        let mut tools = Vec::new();
        let mut reasons = Vec::new();
        for (rank, hit) in hits.iter().enumerate() {
            let Some(tool) = self.flat.get(hit.index) else {
                continue;
            };
            tools.push(tool.clone());
            reasons.push(KeepReason::Ranked {
                rank: rank + 1,
                score: f64::from(hit.score),
                matched_terms: hit.matched_terms.clone(),
            });
        }
        PruneResult::keeping(&self.flat, tools, reasons)
    }
}
