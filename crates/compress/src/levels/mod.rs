//! One module per compression level, each behind [`LevelCodec`]: what the level puts on
//! the wire (rendering), how a model's call against it is read back (resolve, encode), and
//! when its size makes it the advised level (size rules).
//!
//! The pipeline (`crate::pipeline`) is the same at every level (check the selection, sort,
//! group into namespaces, render, count); it asks the level's codec at each step that
//! differs. `Compressed::resolve`, `encode_call`, `tool_for_name` and `recommend_level` ask
//! it too. So the behaviour of a level lives in its file, and [`codec`] is the one place
//! that maps a [`Level`] to it.
//!
//! Levels 3 and 4 share the dispatcher (`t` and `q`, codes, the lenient reading of calls)
//! in `dispatch`; each implements its `Dialect`, saying only what differs (the map it
//! renders, how it names an unknown tool, how it answers a lookup). Level 3's map line
//! styles live in `styles`, one module per [`MapStyle`](crate::MapStyle) behind the same
//! kind of registry.

mod dispatch;
mod four;
mod one;
pub(crate) mod styles;
mod three;
mod two;
mod zero;

use chef_ir::ToolDefinition;
use serde_json::Value;

use crate::{
    compile::{compiled_docstring, verify_line},
    compress::{Compressed, EncodedCall, Entry, Namespace},
    error::CompressError,
    measured::Measured,
    options::{Level, MapStyle, Options},
    resolve::{Resolution, ResolveError, as_object, unreadable_bag},
};

/// The codec of `level`: the one registration point of a level.
pub(crate) fn codec(level: Level) -> &'static dyn LevelCodec {
    match level {
        Level::Zero => &zero::Zero,
        Level::One => &one::One,
        Level::Two => &two::Two,
        Level::Three => &three::Three,
        Level::Four => &four::Four,
    }
}

impl Level {
    /// True at levels 3 and 4, where the model calls tools by code through `t` (as the
    /// level's own module says).
    pub fn is_dispatcher(self) -> bool {
        codec(self).dispatcher()
    }

    /// True at levels 0 and 1, where each tool goes on the wire as its own tool under its
    /// real name (so a provider can defer or search tools one by one); levels 2–4 fold
    /// tools into compound or dispatcher tools.
    ///
    /// ```
    /// use chef_compress::Level;
    /// assert!(Level::One.sends_each_tool());
    /// assert!(!Level::Two.sends_each_tool());
    /// ```
    pub fn sends_each_tool(self) -> bool {
        codec(self).sends_each_tool()
    }

    /// What a refusal of an unknown tool name adds at this level (how to name a tool here).
    pub(crate) fn unknown_tool_hint(self) -> &'static str {
        codec(self).unknown_tool_hint()
    }
}

/// Which real tools a resolver must not suggest (asked with the real name).
pub(crate) type Hidden<'a> = &'a dyn Fn(&str) -> bool;

/// One compression level: its rendering, its reading back and its size rules.
///
/// The provided methods describe a level that sends every tool under its real name (as
/// levels 0 and 1 do): a call names the tool, the arguments are the tool's own. A level
/// with another wire overrides `resolve`, `tool_for_name` and `encode_call` together;
/// `pipeline::levels_contract::every_level_round_trips_its_own_calls` checks they agree for
/// every level.
pub(crate) trait LevelCodec: Sync {
    /// The level this codec renders ([`codec`] of it is this codec).
    fn level(&self) -> Level;

    /// Whether the model calls tools by code through the dispatcher `t` (entries get codes,
    /// the preamble is worth a cache breakpoint).
    fn dispatcher(&self) -> bool {
        false
    }

    /// Whether each tool goes on the wire as its own tool, under its real name (what a
    /// provider can defer or search one by one).
    fn sends_each_tool(&self) -> bool {
        true
    }

    /// Refuses options this level cannot compress with, before anything is grouped.
    fn check(&self, options: &Options) -> Result<(), CompressError> {
        let _ = options;
        Ok(())
    }

    /// Gives the grouped entries and namespaces what this level addresses them by (codes,
    /// level-2 aliases and operations). Nothing by default: real names need nothing.
    fn address(&self, entries: &mut [Entry], namespaces: &mut Vec<Namespace>, options: &Options) {
        let _ = (entries, namespaces, options);
    }

    /// The wire tools and the system text for `input`.
    ///
    /// # Errors
    /// What the level cannot render (missing compiled lines, unusable aliases).
    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError>;

    /// The text `ResolveError::UnknownTool` adds after "No tool named …" at this level:
    /// how tools are invoked here ("" when a tool is called by its name).
    fn unknown_tool_hint(&self) -> &'static str {
        ""
    }

    /// Reads a model's call back: a real call with validated arguments, a lookup answer,
    /// or an error for the model. `hidden` tools are never suggested.
    fn resolve(&self, c: &Compressed, name: &str, args: &Value, hidden: Hidden<'_>) -> Resolution {
        let _ = hidden;
        match c.entry_by_name(name) {
            Some(entry) => c.call_read(entry, as_object(Some(args)), || unreadable_bag(Some(args))),
            None => Resolution::Error(ResolveError::UnknownTool {
                name: name.to_owned(),
                level: self.level(),
            }),
        }
    }

    /// The tool `written`, used as the tool name of a call, reaches (see
    /// `Compressed::tool_for_name`).
    fn tool_for_name<'c>(&self, c: &'c Compressed, written: &str) -> Option<&'c Entry> {
        c.entry_by_name(written)
    }

    /// The call a model would write to invoke `entry` with `args`; [`resolve`](Self::resolve)
    /// of it gives back `entry` and `args`.
    fn encode_call(&self, c: &Compressed, entry: &Entry, args: Value) -> EncodedCall {
        let _ = c;
        EncodedCall {
            name: entry.name.clone(),
            args,
        }
    }

    /// This level's size rule: the advice (reason and quoted measurements) when the
    /// measured sizes make it the level to use, else `None`. The rules of the levels
    /// partition every case (`recommend_level` takes the one that answers); a level that is
    /// never advised keeps the default.
    fn advise(&self, sizes: &Sizes) -> Option<Advice> {
        let _ = sizes;
        None
    }
}

/// What a level renders from: the grouped selection, in sorted order.
pub(crate) struct RenderInput<'a> {
    /// The entries, sorted by name (coded at levels 3–4).
    pub(crate) entries: &'a [Entry],
    /// Each entry's input definition.
    pub(crate) sorted: &'a [&'a ToolDefinition],
    /// Each entry's schema as the renderers read it.
    pub(crate) views: &'a [&'a Value],
    /// The namespaces, in code order.
    pub(crate) namespaces: &'a [Namespace],
    /// The map style selected.
    pub(crate) style: MapStyle,
    /// The options asked for.
    pub(crate) options: &'a Options,
}

impl RenderInput<'_> {
    /// Entries in code order with their views (namespace order, members in sorted order;
    /// holes left by pinned codes skipped).
    pub(crate) fn code_order(&self) -> impl Iterator<Item = (u32, &Entry, &Value)> {
        self.namespaces
            .iter()
            .flat_map(|ns| ns.members.iter().copied())
            .filter_map(|m| {
                let entry = self.entries.get(m as usize)?;
                let view = self.views.get(m as usize)?;
                Some((m, entry, *view))
            })
    }
}

/// What a level's renderer made.
pub(crate) struct Rendered {
    /// The wire tools.
    pub(crate) wire: Vec<ToolDefinition>,
    /// The system-prompt text (empty at levels 0–2).
    pub(crate) system: String,
    /// The lookalike figures `(ambiguous, largest)` at levels 3–4.
    pub(crate) lookalikes: Option<(usize, usize)>,
    /// What level 4 found in the compiled map.
    pub(crate) compiled_report: Option<CompiledReport>,
    /// The level-4 map lines by entry index (stored in the entries, for `q`).
    pub(crate) l4_lines: Vec<MapLine>,
}

impl Rendered {
    /// Wire tools alone: no system text, no figures.
    fn tools(wire: Vec<ToolDefinition>) -> Self {
        Self {
            wire,
            system: String::new(),
            lookalikes: None,
            compiled_report: None,
            l4_lines: Vec::new(),
        }
    }
}

/// A rendered level-4 map line and the index of its entry.
pub(crate) type MapLine = (u32, String);

/// What level 4 found in the compiled map.
pub(crate) struct CompiledReport {
    pub(crate) uncompiled: Unusable,
    /// Map keys naming no tool, sorted.
    pub(crate) orphans: Vec<String>,
}

/// Tools without a usable compiled line, and the stale entries among them.
#[derive(Debug, Default)]
pub(crate) struct Unusable {
    pub(crate) count: usize,
    pub(crate) stale: Vec<String>,
}

impl Unusable {
    /// Refuses when `options` require compiled lines and some tool has none.
    fn require(&self, options: &Options, tool_count: usize) -> Result<(), CompressError> {
        if options.require_compiled && self.count > 0 {
            return Err(CompressError::MissingCompiledLines {
                uncompiled: self.count,
                tool_count,
                stale: self.stale.clone(),
            });
        }
        Ok(())
    }
}

/// The verified docstring of `e`'s compiled line (levels 1 and 4 read the compiled map);
/// records a missing or stale line.
fn verified_docstring<'a>(
    e: &Entry,
    schema: &Value,
    options: &'a Options,
    unusable: &mut Unusable,
) -> Option<&'a str> {
    let Some(line) = options.compiled.get(&e.name) else {
        unusable.count += 1;
        return None;
    };
    match verify_line(line, &e.name, schema) {
        Ok(()) => compiled_docstring(line),
        Err(problem) => {
            unusable.count += 1;
            unusable.stale.push(format!("{}: {problem}", e.name));
            None
        }
    }
}

fn wire_tool(name: &str, description: String, input_schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, input_schema).with_description(description)
}

/// The sizes the size rules read: the selection measured at levels 1 and 3.
pub(crate) struct Sizes {
    /// Number of tools.
    pub(crate) tool_count: usize,
    /// Characters of the level-0 block (the tools as they are, nothing added): what
    /// level 1's signature lines are weighed against.
    pub(crate) level0_chars: usize,
    pub(crate) level1: Measure,
    pub(crate) level3: Measure,
    /// The level-1 block's size as the reasons quote it (`88,829 characters (21,147
    /// o200k_base tokens)`).
    pub(crate) figure: String,
}

/// One level's compression of the selection, as the size rules read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measure {
    /// Characters of the block (`Stats::compressed_chars`).
    pub(crate) chars: usize,
    /// `Stats::saved_pct`.
    pub(crate) saved_pct: f64,
    /// Map lines shared with another tool, and the largest such group (0 and 1 below
    /// level 3).
    pub(crate) lookalikes: (usize, usize),
}

impl Measure {
    pub(crate) fn of(stats: &crate::stats::Stats) -> Self {
        Self {
            chars: stats.compressed_chars,
            saved_pct: stats.saved_pct,
            lookalikes: (
                stats.ambiguous_map_lines.unwrap_or(0),
                stats.largest_lookalike_group.unwrap_or(1),
            ),
        }
    }
}

impl Sizes {
    /// Level-1 blocks of at least this many characters are worth moving to a dispatcher.
    pub(crate) const THRESHOLD_CHARS: usize = 21_000;

    /// Whether the level-1 block is below [`THRESHOLD_CHARS`](Self::THRESHOLD_CHARS):
    /// reclaiming it would not change what fits, so the provider's own argument
    /// validation is worth more.
    pub(crate) fn small(&self) -> bool {
        self.level1.chars < Self::THRESHOLD_CHARS
    }

    /// Whether level 1 saves nothing here (its signature lines cost more than the prose
    /// they replace): it is no smaller than the input, or larger than level 0 (an input
    /// whose annotations level 0 already drops can look "saved" by level 1 while level 1
    /// adds to what level 0 sends).
    pub(crate) fn level1_grows(&self) -> bool {
        // A saving that is not a positive number (NaN included) saves nothing.
        self.level1.saved_pct.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
            || self.level1.chars > self.level0_chars
    }

    /// How much larger level 1 makes the block than level 0 (or than the input, when
    /// level 0 is no smaller), in percent.
    pub(crate) fn level1_growth_pct(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "block sizes are far below 2^52")]
        let (l0, l1) = (self.level0_chars as f64, self.level1.chars as f64);
        if self.level1.chars > self.level0_chars && self.level0_chars > 0 {
            (l1 - l0) / l0 * 100.0
        } else {
            self.level1.saved_pct.abs()
        }
    }
}

/// A level's advice: why, and the model runs the reason quotes.
pub(crate) struct Advice {
    pub(crate) reason: String,
    pub(crate) measured: Vec<Measured>,
    /// Show this many best-ranked tools plus `find_tools` (the discovery setting).
    pub(crate) discover_top: Option<usize>,
}

impl Advice {
    fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            measured: Vec::new(),
            discover_top: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_has_one_codec_for_every_level() {
        // `Level::ALL` is every level there is: each number the parser takes, in order.
        let parsed: Vec<Level> = (0..=u8::MAX)
            .filter_map(|n| Level::try_from(n).ok())
            .collect();
        assert_eq!(parsed, Level::ALL);
        for level in Level::ALL {
            assert_eq!(
                codec(level).level(),
                level,
                "{level} is registered as another"
            );
        }
    }

    #[test]
    fn exactly_one_size_rule_advises_in_every_case() {
        let advised = |tool_count, chars, level1_saved_pct, level3_saved_pct| {
            let sizes = Sizes {
                tool_count,
                level0_chars: chars,
                level1: Measure {
                    chars,
                    saved_pct: level1_saved_pct,
                    lookalikes: (0, 1),
                },
                level3: Measure {
                    chars: chars / 20,
                    saved_pct: level3_saved_pct,
                    lookalikes: (tool_count / 2, 2),
                },
                figure: format!("{chars} characters"),
            };
            Level::ALL
                .into_iter()
                .filter(|&level| codec(level).advise(&sizes).is_some())
                .collect::<Vec<_>>()
        };
        for tool_count in [0, 1, 40, 400] {
            for chars in [2, 20_999, 21_000, 90_000] {
                for l1 in [-4.0, 0.0, 12.5, f64::NAN] {
                    for l3 in [-30.0, 0.0, 96.5] {
                        let levels = advised(tool_count, chars, l1, l3);
                        assert_eq!(
                            levels.len(),
                            1,
                            "{tool_count} tools, {chars} chars, {l1}%, {l3}%: {levels:?}"
                        );
                    }
                }
            }
        }
        assert_eq!(advised(0, 2, 0.0, 0.0), [Level::Zero]);
        assert_eq!(advised(5, 20_999, -1.0, 50.0), [Level::Zero]);
        assert_eq!(advised(5, 20_999, 10.0, 50.0), [Level::One]);
        // Level 1 "saves" against an input level 0 already trims, yet adds to level 0's
        // block: level 0 (session 38's README audit: 985 characters against 1,150).
        let trimmed = Sizes {
            tool_count: 7,
            level0_chars: 985,
            level1: Measure {
                chars: 1_150,
                saved_pct: 16.3,
                lookalikes: (0, 1),
            },
            level3: Measure {
                chars: 746,
                saved_pct: 45.7,
                lookalikes: (7, 2),
            },
            figure: "1,150 characters".to_owned(),
        };
        let levels: Vec<Level> = Level::ALL
            .into_iter()
            .filter(|&level| codec(level).advise(&trimmed).is_some())
            .collect();
        assert_eq!(levels, [Level::Zero]);
        assert!((trimmed.level1_growth_pct() - 16.75).abs() < 0.01);
        // A large block: level 1 with discovery (issue 43), whatever level 1 saves.
        assert_eq!(advised(5, 21_000, -1.0, 50.0), [Level::One]);
        assert_eq!(advised(400, 90_000, 12.5, 96.5), [Level::One]);
    }
}
