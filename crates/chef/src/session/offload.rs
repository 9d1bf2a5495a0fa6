//! The session side of offloading large tool results (see [`crate::offload`]): the policy,
//! replacing a result where it enters the history, the store writes, and the lifecycle.
//!
//! A result is replaced as it is pushed — synchronously, so `push` stays a plain call and
//! the history holds the preview from the first compile on — and its full text waits in
//! the session's pending list (carried by snapshots) until the next async step writes it:
//! [`OffloadsMut::flush`], [`Chef::handle_tool`], [`Chef::compile_async`] or the
//! lifecycle calls ([`Chef::save_to_store`] snapshots the pending list, it does not write
//! it). A write that fails puts the full result back into the history, and a flush cut
//! short leaves the unwritten results pending, so nothing is lost.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use chef_ir::{Content, Message, Role, ToolResult};
use serde_json::{Map, Value};

use super::Chef;
use crate::{
    error::ChefError,
    events::ChefEvent,
    offload::{
        self, CleanupReport, EvictReason, Evicted, FlushReport, Limit, OffloadCaps, OffloadPolicy,
        Offloaded, PendingOffload, ReconcileReport, meta,
    },
    overflow::Tokenizer,
    store::{Entry, Expect, Namespace, StorageBackend, StoreError, StoreKey},
};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn vfs() -> Result<Namespace, StoreError> {
    Ok(Namespace::new(offload::VFS_NAMESPACE)?)
}

fn key_of(key: &str) -> Result<StoreKey, StoreError> {
    Ok(StoreKey::new(key)?)
}

fn stored_meta(content: &str, tool: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(meta::USED_MS.into(), now_ms().into());
    m.insert(meta::BYTES.into(), content.len().into());
    m.insert(meta::CHARS.into(), content.chars().count().into());
    m.insert(meta::LINES.into(), offload::line_count(content).into());
    if let Some(tool) = tool {
        m.insert(meta::TOOL.into(), tool.into());
    }
    m
}

/// Stores `content` under its content-addressed key; the key used and whether the store
/// already held it. A short key taken by other content moves to the full 64-digit one.
async fn store_content(
    store: &dyn StorageBackend,
    content: &str,
    tool: Option<&str>,
) -> Result<(String, bool), StoreError> {
    let ns = vfs()?;
    for full in [false, true] {
        let key = offload::content_key(content, full);
        let store_key = key_of(&key)?;
        for _ in 0..2 {
            match store.get(&ns, &store_key).await? {
                Some(existing) if existing.value.content() == content => {
                    // Seen again: its age starts over (best effort; another writer may
                    // have touched it meanwhile, which does the same).
                    let mut kept = existing.value.meta().clone();
                    kept.insert(meta::USED_MS.into(), now_ms().into());
                    let touched = Entry::new(content).with_meta_map(kept);
                    let _ = store
                        .put(&ns, &store_key, touched, Expect::Version(existing.version))
                        .await;
                    return Ok((key, true));
                }
                Some(_) => break, // another content under the short name
                None => {
                    let entry = Entry::new(content).with_meta_map(stored_meta(content, tool));
                    match store.put(&ns, &store_key, entry, Expect::Absent).await {
                        Ok(_) => return Ok((key, false)),
                        // Written by someone else meanwhile: read again.
                        Err(e) if e.is_conflict() => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    Err(StoreError::Backend {
        message: "offload: both content-addressed names are taken by other content".into(),
        source: None,
    })
}

/// Offloading as it stands: the policy and the results not yet written. Reached with
/// [`Chef::offloads`]; to change it, [`Chef::offloads_mut`].
#[derive(Debug, Clone, Copy)]
pub struct Offloads<'a> {
    chef: &'a Chef,
}

/// Offloading, to change: set the policy, store content, write the pending results, evict
/// and adopt entries of the store's `vfs` namespace (see [`crate::offload`]). Reached with
/// [`Chef::offloads_mut`].
#[derive(Debug)]
pub struct OffloadsMut<'a> {
    chef: &'a mut Chef,
}

impl Chef {
    /// Offloading as it stands: the policy and the pending results.
    #[must_use]
    pub fn offloads(&self) -> Offloads<'_> {
        Offloads { chef: self }
    }

    /// Offloading, to change: the policy, the writes and the store's upkeep.
    #[must_use]
    pub fn offloads_mut(&mut self) -> OffloadsMut<'_> {
        OffloadsMut { chef: self }
    }
}

impl<'a> Offloads<'a> {
    /// The offload policy in force.
    pub fn policy(&self) -> Option<&'a OffloadPolicy> {
        self.chef.offloading.offload.as_ref()
    }

    /// Results offloaded from the history whose store write has not happened yet.
    pub fn pending(&self) -> &'a [PendingOffload] {
        &self.chef.offloading.offload_pending
    }
}

impl OffloadsMut<'_> {
    /// Sets the offload policy (replacing any), or turns offloading off with `None`.
    ///
    /// From now on a tool result [pushed](Chef::push) whose text is over the policy's limit
    /// for its tool is stored whole in the context store's `vfs` namespace and replaced in
    /// the history by the [`preview`](crate::offload::preview) the policy keeps, with its
    /// `context://vfs/…` address (see [`crate::offload`]). Results already in the history
    /// are left as they are. Snapshots and the journal carry the policy.
    ///
    /// The model reads an offloaded result back with the owned `context` tool (`view` with
    /// `offset` and `limit`, or `search`), so offer it: [`ToolsMode::Unified`]. Without it,
    /// each compile's notices say the content is out of the model's reach.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, ToolsMode, offload::OffloadPolicy};
    /// use chef_ir::{Content, Message, ToolCall, ToolResult};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// let mut chef = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified));
    /// chef.offloads_mut().set_policy(Some(OffloadPolicy::chars(2_000)));
    /// chef.push(Message::assistant_with(vec![Content::ToolCall(ToolCall::new(
    ///     "c1", "read_log", json!({}),
    /// ))]));
    /// let log: String = (0..5_000).map(|i| format!("{i} GET /health 200\n")).collect();
    /// chef.push(Message::tool_results(vec![ToolResult::text("c1", log.clone())]));
    ///
    /// let result = chef.history()[1].tool_results_iter().next().unwrap();
    /// let kept = result.content[0].as_text().unwrap();
    /// assert!(kept.starts_with("[Tool result offloaded: 103,890 characters in 5,000 lines"));
    /// assert!(kept.len() < 2_500); // marker, 1,500 characters of head, 500 of tail
    /// chef.offloads_mut().flush().await?; // written to the store (compile_async does this too)
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`ToolsMode::Unified`]: crate::ToolsMode::Unified
    pub fn set_policy(&mut self, policy: Option<OffloadPolicy>) -> &mut Self {
        self.chef.offloading.offload = policy;
        self
    }

    /// Stores `text` in the `vfs` namespace now and returns its address and the preview to
    /// show instead (with the policy's [`Keep`](crate::offload::Keep), or the default one
    /// without a policy). For callers that hold large content outside a tool result.
    /// Nothing in the session changes; a store failure is `Err` (keep the text).
    pub async fn store(self, text: &str) -> Result<Offloaded, ChefError> {
        let store = Arc::clone(&self.chef.storage.store);
        let (key, deduplicated) = store_content(&*store, text, None).await?;
        let uri = offload::vfs_uri(&key);
        self.chef.emit(&ChefEvent::Offloaded {
            uri: uri.clone(),
            bytes: text.len(),
            tool: None,
            deduplicated,
        });
        let keep = self
            .chef
            .offloading
            .offload
            .as_ref()
            .map(|p| p.keep)
            .unwrap_or_default();
        Ok(Offloaded {
            preview: offload::preview(text, &uri, &keep),
            chars: text.chars().count(),
            bytes: text.len(),
            lines: offload::line_count(text),
            deduplicated,
            uri,
        })
    }

    /// Writes the pending offloads to the store (see [`Offloads::pending`]).
    ///
    /// A result the store refuses goes back whole into the history (the message is
    /// rewritten, so the next compile cannot reuse the history prefix once); the next
    /// compile's notices and a [`ChefEvent::OffloadFailed`] say so. Only the refusal of a
    /// result is handled this way: `Err` is never returned for it, so the loop goes on.
    pub async fn flush(self) -> Result<FlushReport, ChefError> {
        let mut report = FlushReport::default();
        if self.chef.offloading.offload_pending.is_empty() {
            return Ok(report);
        }
        let store = Arc::clone(&self.chef.storage.store);
        // Each result leaves the pending list only once its write has ended: a flush that
        // is dropped mid-way (a timeout around it) leaves the rest pending, not lost.
        while let Some(first) = self.chef.offloading.offload_pending.first() {
            let written = store_content(&*store, &first.content, first.tool.as_deref()).await;
            let item = self.chef.offloading.offload_pending.remove(0);
            let uri = offload::vfs_uri(&item.key);
            match written {
                Ok((key, deduplicated)) => {
                    let stored = offload::vfs_uri(&key);
                    if key != item.key {
                        // The short name was taken: point the preview at the long one.
                        self.chef.repoint(&item.call_id, &uri, &stored);
                    }
                    report.deduplicated += usize::from(deduplicated);
                    self.chef.emit(&ChefEvent::Offloaded {
                        uri: stored.clone(),
                        bytes: item.content.len(),
                        tool: item.tool.clone(),
                        deduplicated,
                    });
                    report.stored.push(stored);
                }
                Err(e) => {
                    let why = e.to_string();
                    self.chef.keep_whole(&item, &uri);
                    self.chef.offloading.offload_notices.push(format!(
                        "offloading the result of call {} ({}) failed ({why}); the full \
                         result stays in the history",
                        item.call_id,
                        item.tool.as_deref().unwrap_or("unknown tool"),
                    ));
                    self.chef.emit(&ChefEvent::OffloadFailed {
                        uri: uri.clone(),
                        error: why.clone(),
                    });
                    report.kept_whole.push((uri, why));
                }
            }
        }
        Ok(report)
    }

    /// Evicts offloaded entries over `caps` from the store's `vfs` namespace; never runs by
    /// itself (not inside [`compile`](Chef::compile)). Pending offloads are written first.
    ///
    /// Entries are ranked newest first by the last time their content was offloaded (ties
    /// by address); an entry goes when it is older than `max_age`, beyond `max_entries`, or
    /// past `max_bytes` counted from the newest — the first cap it breaks is its reason.
    /// Entries the session's history still points to are kept unless
    /// [`OffloadCaps::evicting_referenced`]. Deletes are compare-and-set: an entry another
    /// writer touched meanwhile is left. Entries without chef's bookkeeping count as
    /// offloaded now (see [`reconcile`](Self::reconcile)). Each eviction is
    /// a [`ChefEvent::OffloadEvicted`].
    pub async fn cleanup(self, caps: &OffloadCaps) -> Result<CleanupReport, ChefError> {
        self.chef.offloads_mut().flush().await?;
        let store = Arc::clone(&self.chef.storage.store);
        let ns = vfs()?;
        let now = now_ms();
        let mut entries: Vec<(String, u64, u64, u64)> = store
            .scan(&ns, "")
            .await?
            .into_iter()
            .map(|(key, entry)| {
                let used = entry
                    .value
                    .meta()
                    .get(meta::USED_MS)
                    .and_then(Value::as_u64)
                    .unwrap_or(now);
                let bytes = entry.value.content().len() as u64;
                (key.as_str().to_owned(), used, bytes, entry.version)
            })
            .collect();
        entries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let referenced = self.chef.referenced_offloads();
        let mut report = CleanupReport::default();
        let mut count = 0usize;
        let mut bytes = 0u64;
        let mut evict = Vec::new();
        for (key, used, size, version) in entries {
            let uri = offload::vfs_uri(&key);
            let reason = if caps.max_age.is_some_and(|age| {
                now.saturating_sub(used) > u64::try_from(age.as_millis()).unwrap_or(u64::MAX)
            }) {
                Some(EvictReason::Age)
            } else if caps.max_entries.is_some_and(|n| count >= n) {
                Some(EvictReason::Count)
            } else if caps.max_bytes.is_some_and(|n| bytes + size > n) {
                Some(EvictReason::Bytes)
            } else {
                None
            };
            match reason {
                Some(reason) if caps.evict_referenced || !referenced.contains(&uri) => {
                    evict.push((key, uri, size, version, reason));
                }
                Some(_) => {
                    report.kept_referenced.push(uri);
                    count += 1;
                    bytes += size;
                }
                None => {
                    count += 1;
                    bytes += size;
                }
            }
        }
        // Oldest first.
        evict.reverse();
        // An entry another writer changed meanwhile stays: it counts as kept, bytes too.
        let mut skipped_bytes = 0;
        for (key, uri, size, version, reason) in evict {
            let store_key = key_of(&key)?;
            match store
                .delete(&ns, &store_key, Expect::Version(version))
                .await
            {
                Ok(true) => {
                    self.chef.emit(&ChefEvent::OffloadEvicted {
                        uri: uri.clone(),
                        bytes: size,
                        reason,
                    });
                    report.evicted.push(Evicted {
                        uri,
                        bytes: size,
                        reason,
                    });
                }
                Ok(false) => {}
                Err(e) if e.is_conflict() => {
                    skipped_bytes += size;
                    report.skipped_changed.push(uri);
                }
                Err(e) => return Err(e.into()),
            }
        }
        report.kept = count + report.skipped_changed.len();
        report.kept_bytes = bytes + skipped_bytes;
        Ok(report)
    }

    /// Adopts the `vfs` entries an earlier process (or another writer) left: each entry
    /// without chef's bookkeeping gets it (size, lines, and an age counted from now), so
    /// [`cleanup`](Self::cleanup) ranks it like the others. Reports the
    /// namespace's totals, the adopted entries, and content-addressed entries whose
    /// content does not match their name (reported; their content is never changed, and
    /// without bookkeeping they are adopted like any other, so cleanup can evict them). Pending offloads are written first.
    pub async fn reconcile(self) -> Result<ReconcileReport, ChefError> {
        self.chef.offloads_mut().flush().await?;
        let store = Arc::clone(&self.chef.storage.store);
        let ns = vfs()?;
        let mut report = ReconcileReport::default();
        for (key, entry) in store.scan(&ns, "").await? {
            let content = entry.value.content();
            report.entries += 1;
            report.bytes += content.len() as u64;
            let uri = offload::vfs_uri(key.as_str());
            if offload::is_content_key(key.as_str())
                && offload::content_key(content, key.as_str().len() == 64) != key.as_str()
            {
                report.mismatched.push(uri.clone());
            }
            if entry.value.meta().get(meta::USED_MS).is_some() {
                continue;
            }
            let mut kept = entry.value.meta().clone();
            for (k, v) in stored_meta(content, None) {
                kept.entry(k).or_insert(v);
            }
            let adopted = Entry::new(content).with_meta_map(kept);
            match store
                .put(&ns, &key, adopted, Expect::Version(entry.version))
                .await
            {
                Ok(_) => report.adopted.push(uri),
                Err(e) if e.is_conflict() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(report)
    }
}

impl Chef {
    /// The `context://vfs/…` addresses the history's offload markers point to.
    fn referenced_offloads(&self) -> std::collections::BTreeSet<String> {
        let prefix = format!(
            "{}context://{}/",
            offload::STORED_AT,
            offload::VFS_NAMESPACE
        );
        let mut out = std::collections::BTreeSet::new();
        for message in self.conversation.history.iter() {
            for result in message.tool_results_iter() {
                for part in &result.content {
                    if let Content::Text { text, .. } = part
                        && let Some(at) = text.find(&prefix)
                    {
                        let rest = &text[at + prefix.len()..];
                        let key: String =
                            rest.chars().take_while(char::is_ascii_hexdigit).collect();
                        out.insert(offload::vfs_uri(&key));
                    }
                }
            }
        }
        out
    }

    /// The message to append for `message` under the policy: tool results over their
    /// limit replaced by their previews, their full text queued for the store.
    pub(super) fn offload_incoming(&mut self, mut message: Message) -> Message {
        let Some(policy) = self.offloading.offload.clone() else {
            return message;
        };
        if message.role != Role::Tool && message.role != Role::User {
            return message;
        }
        for part in &mut message.content {
            let Content::ToolResult(result) = part else {
                continue;
            };
            if let Some(pending) = self.offload_result(&policy, result) {
                self.offloading.offload_pending.push(pending);
            }
        }
        message
    }

    /// Replaces one result by its preview when it is over its limit; the pending write.
    fn offload_result(
        &self,
        policy: &OffloadPolicy,
        result: &mut ToolResult,
    ) -> Option<PendingOffload> {
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if texts.is_empty() {
            return None;
        }
        let total_len: usize = texts.iter().map(|t| t.len()).sum();
        // Cheap first: a text shorter (in bytes) than every character limit cannot be over.
        let smallest_chars = std::iter::once(policy.threshold)
            .chain(policy.tools.values().filter_map(|r| match r {
                offload::ToolRule::Over(l) => Some(*l),
                offload::ToolRule::Never => None,
            }))
            .map(|l| match l {
                Limit::Chars(n) => Some(n),
                Limit::Tokens(_) => None,
            })
            .collect::<Option<Vec<usize>>>()
            .and_then(|v| v.into_iter().min());
        if smallest_chars.is_some_and(|n| total_len <= n) {
            return None;
        }
        let text = texts.join("\n");
        let (tool, readback) = self.result_tool(result);
        if readback {
            return None;
        }
        let over = match policy.limit_for(tool.as_deref())? {
            Limit::Chars(n) => text.chars().count() > n,
            Limit::Tokens(n) => self.count_text_tokens(&text) > n as u64,
        };
        // Head and tail would show it whole: offloading would only add the marker (the
        // context audit saw 3,000 characters become 3,132).
        if !over || offload::shows_every_line(&text, &policy.keep) {
            return None;
        }
        let key = offload::content_key(&text, false);
        let uri = offload::vfs_uri(&key);
        let single = matches!(result.content.as_slice(), [Content::Text { text: t, thought_signature: None }] if *t == text);
        let original = (!single).then(|| result.content.clone());
        let preview = offload::preview(&text, &uri, &policy.keep);
        let mut placed = false;
        result.content.retain_mut(|c| match c {
            Content::Text { text: t, .. } => {
                if placed {
                    false
                } else {
                    *t = preview.clone();
                    placed = true;
                    true
                }
            }
            _ => true,
        });
        Some(PendingOffload {
            key,
            content: text,
            tool,
            call_id: result.tool_call_id.as_str().to_owned(),
            original,
        })
    }

    /// The real tool a result answers (from its call in the history, named as `route`
    /// names it, blocked or not: a tool blocked between its call and its result keeps its
    /// per-tool rule), and whether the call read offloaded or stored content back (`context` view
    /// or search, `recall_context`), which is never offloaded again.
    fn result_tool(&self, result: &ToolResult) -> (Option<String>, bool) {
        let call = self.conversation.history.iter().rev().find_map(|m| {
            m.content.iter().find_map(|c| match c {
                Content::ToolCall(call) if call.id == result.tool_call_id => Some(call),
                _ => None,
            })
        });
        let Some(call) = call else {
            return (result.name.as_ref().map(|n| n.as_str().to_owned()), false);
        };
        let routed = self.tool_of_call(call);
        let tool = routed
            .tool()
            .map(str::to_owned)
            .or_else(|| result.name.as_ref().map(|n| n.as_str().to_owned()))
            .or_else(|| Some(call.name.as_str().to_owned()));
        let readback = match tool.as_deref() {
            Some(crate::owned::RECALL_CONTEXT) => true,
            Some(crate::owned::CONTEXT) => {
                let args = match &call.arguments {
                    Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
                    other => other.clone(),
                };
                matches!(
                    args.get("command").and_then(Value::as_str),
                    Some("view" | "search")
                )
            }
            _ => false,
        };
        (tool, readback)
    }

    /// Tokens of a text under the session's tokenizer (see [`Limit::Tokens`]).
    fn count_text_tokens(&self, text: &str) -> u64 {
        let message = Message::user(text);
        match &self.conversation.tokenizer {
            Some(t) => t.count(&message),
            None => default_tokenizer().count(&message),
        }
    }

    /// Puts a result whose write failed back whole into the history.
    fn keep_whole(&mut self, item: &PendingOffload, uri: &str) {
        let content = item
            .original
            .clone()
            .unwrap_or_else(|| vec![Content::text(item.content.clone())]);
        self.rewrite_result(&item.call_id, uri, |result| result.content = content);
    }

    /// Points a preview at another address.
    fn repoint(&mut self, call_id: &str, from: &str, to: &str) {
        let marker = offload::stored_at(from);
        let replacement = offload::stored_at(to);
        self.rewrite_result(call_id, from, |result| {
            for part in &mut result.content {
                if let Content::Text { text, .. } = part {
                    *text = text.replacen(&marker, &replacement, 1);
                }
            }
        });
    }

    /// Applies `change` to the result of `call_id` whose preview names `uri` (the latest
    /// such), rewriting the history only when there is one.
    fn rewrite_result(&mut self, call_id: &str, uri: &str, change: impl FnOnce(&mut ToolResult)) {
        let marker = offload::stored_at(uri);
        let found = self.conversation.history.iter().enumerate().rev().find_map(|(i, m)| {
            m.content.iter().position(|c| {
                matches!(c, Content::ToolResult(r) if r.tool_call_id.as_str() == call_id
                    && r.content.iter().any(|p| matches!(p, Content::Text { text, .. } if text.contains(&marker))))
            })
            .map(|j| (i, j))
        });
        if let Some((i, j)) = found {
            self.conversation.history.rewrite(|messages| {
                if let Some(Content::ToolResult(result)) =
                    messages.get_mut(i).and_then(|m| m.content.get_mut(j))
                {
                    change(result);
                }
            });
        }
    }

    /// The notice for offloaded results the model cannot read back, and failed offloads.
    pub(super) fn offload_compile_notices(&mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.offloading.offload_notices);
        if self.offloading.offload.is_some() {
            let reachable = self.config.tools_mode == crate::ToolsMode::Unified
                && self.blocked(&[crate::owned::CONTEXT]).is_none();
            if !reachable {
                out.push(
                    "an offload policy is set but the context tool is not offered (tools \
                     mode legacy, or blocked): the model cannot read offloaded results back"
                        .to_owned(),
                );
            }
            if !self.offloading.offload_pending.is_empty() {
                out.push(format!(
                    "{} offloaded result(s) not yet written to the store; run \
                     chef.offloads_mut().flush() (Python: flush_offloads()), or \
                     compile_async, to write them",
                    self.offloading.offload_pending.len()
                ));
            }
        }
        out
    }
}

#[cfg(feature = "tokens")]
fn default_tokenizer() -> crate::overflow::O200k {
    crate::overflow::O200k
}

#[cfg(not(feature = "tokens"))]
fn default_tokenizer() -> crate::overflow::Heuristic {
    crate::overflow::Heuristic
}
