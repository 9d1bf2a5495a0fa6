//! The dispatcher levels' common part (levels 3 and 4): the `t` and `q` tools, codes (and
//! pinned codes), and the lenient reading of calls through them. A dispatcher level
//! implements [`Dialect`] (what differs) and is a [`LevelCodec`] through it.

use std::{
    borrow::Cow,
    collections::{BTreeMap, BTreeSet, HashMap, HashSet},
};

use chef_ir::ToolDefinition;
use serde_json::{Map, Value, json};

use super::{Advice, Hidden, LevelCodec, RenderInput, Rendered, Sizes, wire_tool};
use crate::{
    compress::{Code, Compressed, EncodedCall, Entry, HOLE, Namespace},
    error::CompressError,
    options::{Level, Options, ToolNamespace},
    resolve::{
        Resolution, ResolveError, as_object, as_text, declares, flat_args, is_empty, merged_bag,
        not_an_object, unreadable_bag, with_parameters, without,
    },
};

/// A dispatcher level: what it says in its own words. Every `Dialect` is a
/// [`LevelCodec`] through the impl below, which adds what levels 3 and 4 share.
pub(super) trait Dialect: Sync {
    /// The level.
    fn level(&self) -> Level;

    /// Refuses options this level cannot compress with (see [`LevelCodec::check`]).
    fn check(&self, options: &Options) -> Result<(), CompressError> {
        let _ = options;
        Ok(())
    }

    /// The map in the system text and what it found; the wire is [`tools`] of the
    /// level's descriptions.
    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError>;

    /// How tools are invoked here (see [`LevelCodec::unknown_tool_hint`]).
    fn unknown_tool_hint(&self) -> &'static str;

    /// This level's size rule (see [`LevelCodec::advise`]).
    fn advise(&self, sizes: &Sizes) -> Option<Advice> {
        let _ = sizes;
        None
    }

    /// The error for an `f` (or a `q(c=…)`) that names no tool; never suggests a `hidden`
    /// tool.
    fn unknown(&self, c: &Compressed, written: &str, hidden: Hidden<'_>) -> ResolveError;

    /// The answer to `q(c=written)` for `e`, before its parameter lines.
    fn describe(&self, written: &str, e: &Entry) -> String;

    /// Appends one `q(s=…)` hit's line for `e` to `out`.
    fn push_hit(&self, e: &Entry, out: &mut String);

    /// What `t(f=…)` names a tool by, as the model is taught: its code at level 3.
    fn call_key<'e>(&self, e: &'e Entry) -> &'e str {
        e.code.as_str()
    }
}

impl<D: Dialect> LevelCodec for D {
    fn level(&self) -> Level {
        Dialect::level(self)
    }

    fn dispatcher(&self) -> bool {
        true
    }

    fn sends_each_tool(&self) -> bool {
        false
    }

    fn check(&self, options: &Options) -> Result<(), CompressError> {
        Dialect::check(self, options)
    }

    fn address(&self, entries: &mut [Entry], namespaces: &mut Vec<Namespace>, options: &Options) {
        address(entries, namespaces, options);
    }

    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError> {
        Dialect::render(self, input)
    }

    fn unknown_tool_hint(&self) -> &'static str {
        Dialect::unknown_tool_hint(self)
    }

    fn resolve(&self, c: &Compressed, name: &str, args: &Value, hidden: Hidden<'_>) -> Resolution {
        resolve(self, c, name, args, hidden)
    }

    /// A code or real name used as a call's name; never the dispatcher itself.
    fn tool_for_name<'c>(&self, c: &'c Compressed, written: &str) -> Option<&'c Entry> {
        if written == "t" || written == "q" {
            return None;
        }
        c.lookup(written)
    }

    /// `t(f=key, a=args)`: the code at level 3, the function name at level 4.
    fn encode_call(&self, _c: &Compressed, entry: &Entry, args: Value) -> EncodedCall {
        let mut bag = Map::new();
        bag.insert(
            "f".to_owned(),
            Value::String(self.call_key(entry).to_owned()),
        );
        bag.insert("a".to_owned(), args);
        EncodedCall {
            name: "t".to_owned(),
            args: Value::Object(bag),
        }
    }

    fn advise(&self, sizes: &Sizes) -> Option<Advice> {
        Dialect::advise(self, sizes)
    }
}

/// The dispatcher's two wire tools, `t` (call) and `q` (look up).
pub(super) fn tools(t_desc: &str, q_desc: &str) -> Vec<ToolDefinition> {
    vec![
        wire_tool(
            "t",
            t_desc.to_owned(),
            json!({
                "type": "object",
                "properties": {"f": {"type": "string"}, "a": {"type": "object"}},
                "required": ["f"]
            }),
        ),
        wire_tool(
            "q",
            q_desc.to_owned(),
            json!({
                "type": "object",
                "properties": {"c": {"type": "string"}, "s": {"type": "string"}}
            }),
        ),
    ]
}

/// The lookalike figures from how many tools share each map line body: the tools whose
/// body another tool shares, and the size of the largest such group (1 when none repeat).
pub(super) fn lookalikes(group_sizes: impl Iterator<Item = usize>) -> (usize, usize) {
    group_sizes
        .filter(|&n| n >= 2)
        .fold((0, 1), |(ambiguous, largest), n| {
            (ambiguous + n, largest.max(n))
        })
}

/// Codes every entry: its namespace's letters and its place in the namespace, or the
/// code pinned for it (see [`Options::with_pinned_codes`]).
fn address(entries: &mut [Entry], namespaces: &mut Vec<Namespace>, options: &Options) {
    for (ni, ns) in namespaces.iter().enumerate() {
        for (oi, &m) in ns.members.iter().enumerate() {
            if let Some(e) = entries.get_mut(m as usize) {
                e.code = Code::new(ni, oi);
            }
        }
    }
    if !options.pinned_codes.is_empty() {
        *namespaces = pin_codes(std::mem::take(namespaces), entries, options);
    }
}

/// Recodes `entries` so that pinned tools keep their codes and no other tool takes a pinned
/// code (see [`Options::with_pinned_codes`]); returns the namespaces indexed by code letter,
/// with [`HOLE`]s at reserved places and empty namespaces at reserved letters.
fn pin_codes(
    namespaces: Vec<Namespace>,
    entries: &mut [Entry],
    options: &Options,
) -> Vec<Namespace> {
    let pins = &*options.pinned_codes;
    // Pins further out than this cannot come from a real history of this many tools.
    let bound = pins.len() + entries.len();
    let parse =
        |code: &str| crate::compress::parse_code(code).filter(|&(n, o)| n < bound && o < bound);
    // Pins further out are not applied, but no fresh code may land on one either: a fresh
    // place that is such a code is left a hole. Each can cost at most one hole, so a
    // hostile map still cannot make the compression allocate without bound.
    let far: HashSet<(usize, usize)> = pins
        .values()
        .filter_map(|code| crate::compress::parse_code(code))
        .filter(|&(n, o)| n >= bound || o >= bound)
        .collect();
    // Letter → the first op index no pin reserves.
    let mut reserved: BTreeMap<usize, usize> = BTreeMap::new();
    for code in pins.values() {
        if let Some((ni, oi)) = parse(code) {
            let next = reserved.entry(ni).or_insert(0);
            *next = (*next).max(oi + 1);
        }
    }
    // A pinned name's namespace is a function of the name, so a namespace keeps its letter
    // even when none of the tools that held it is here now. Each namespace takes the letter
    // of its first pin (in name order) that no earlier namespace took; new letters come
    // after every reserved one.
    let mut pinned_letters: HashMap<String, Vec<usize>> = HashMap::new();
    for (name, code) in pins.iter() {
        if let Some((ni, _)) = parse(code) {
            let ns = match &options.namespace_of {
                Some(f) => f(name).ns,
                None => ToolNamespace::split(name).ns,
            };
            pinned_letters.entry(ns).or_default().push(ni);
        }
    }
    let mut taken = BTreeSet::new();
    let mut letters: Vec<usize> = Vec::with_capacity(namespaces.len());
    let mut next_letter = reserved.keys().next_back().map_or(0, |n| n + 1);
    for ns in &namespaces {
        let pinned = pinned_letters
            .get(&ns.name)
            .and_then(|l| l.iter().copied().find(|ni| !taken.contains(ni)));
        let letter = pinned.unwrap_or_else(|| {
            next_letter += 1;
            next_letter - 1
        });
        taken.insert(letter);
        letters.push(letter);
    }
    let mut out: Vec<Namespace> = (0..next_letter)
        .map(|_| Namespace {
            name: String::new(),
            alias: String::new(),
            members: Vec::new(),
        })
        .collect();
    for (ns, letter) in namespaces.into_iter().zip(letters) {
        let mut slots: Vec<u32> = vec![HOLE; reserved.get(&letter).copied().unwrap_or(0)];
        let mut fresh: Vec<u32> = Vec::new();
        for &m in &ns.members {
            let Some(e) = entries.get(m as usize) else {
                continue;
            };
            match pins.get(&e.name).and_then(|c| parse(c)) {
                Some((ni, oi)) if ni == letter && slots.get(oi) == Some(&HOLE) => {
                    if let Some(slot) = slots.get_mut(oi) {
                        *slot = m;
                    }
                }
                _ => fresh.push(m),
            }
        }
        for m in fresh {
            while far.contains(&(letter, slots.len())) {
                slots.push(HOLE);
            }
            slots.push(m);
        }
        for (oi, &m) in slots.iter().enumerate() {
            if let Some(e) = entries.get_mut(m as usize) {
                e.code = Code::new(letter, oi);
                e.ns = u32::try_from(letter).unwrap_or(u32::MAX);
            }
        }
        if let Some(place) = out.get_mut(letter) {
            *place = Namespace {
                members: slots,
                ..ns
            };
        }
    }
    out
}

/// Reads a call through the dispatcher (see the `resolve` module notes for what is
/// accepted beyond `t(f=code, a={…})`).
fn resolve(
    dialect: &dyn Dialect,
    c: &Compressed,
    raw_name: &str,
    raw_args: &Value,
    hidden: Hidden<'_>,
) -> Resolution {
    let mut name: Cow<'_, str> = Cow::Borrowed(raw_name);
    let mut args = as_object(Some(raw_args));
    // `t` or `q` whose arguments cannot be read: which tool, code or search was meant is
    // unknown, so nothing is called, looked up or listed.
    if (raw_name == "t" || raw_name == "q")
        && is_empty(&args)
        && let Some(received) = unreadable_bag(Some(raw_args))
    {
        return Resolution::Error(ResolveError::UnreadableDispatch {
            name: raw_name.to_owned(),
            received: received.to_owned(),
            level: c.level,
        });
    }

    // (A) `q` or `t` routed through the dispatcher: unwrap one level.
    if name == "t"
        && let Some(Value::String(f)) = args.get("f")
        && (f == "q" || f == "t")
    {
        let inner_name = f.clone();
        let nested = as_object(args.get("a"));
        // Keys beside the outer `a` belong to the inner call too.
        let inner = if is_empty(&nested) {
            Cow::Owned(flat_args(&args))
        } else {
            match merged_bag(&inner_name, nested, &flat_args(&args)) {
                Ok(bag) => Cow::Owned(bag.into_owned()),
                Err(e) => return Resolution::Error(e),
            }
        };
        name = Cow::Owned(inner_name);
        args = inner;
    }

    // (B) the lookup tool.
    if name == "q" {
        return answer_lookup(dialect, c, &args, hidden);
    }

    // (C) a code or real name used as the tool name, else `t(f=…)`.
    let via = if name == "t" { None } else { c.lookup(&name) };
    if via.is_none() && name != "t" {
        return Resolution::Error(ResolveError::UnknownTool {
            name: name.into_owned(),
            level: c.level,
        });
    }
    let entry = match via {
        Some(e) => e,
        None => {
            let f = as_text(args.get("f"));
            match c.lookup(&f) {
                Some(e) => e,
                None => return Resolution::Error(dialect.unknown(c, &f, hidden)),
            }
        }
    };

    // (D) the argument bag: nested under `a` if that is a non-empty object, with the keys
    // written beside it merged in; else the flat keys. Refused when it comes out empty
    // although `a` (or the whole arguments) held something that cannot be read, and when
    // a key is written inside `a` and beside it with different values. A tool's own
    // parameter named `a` or `f` is that parameter: called by its name or code, the tool
    // that declares `a` is never unwrapped, and `f` is left out only when the tool does
    // not declare it; through `t`, `f` is the code, and `a` is the wrapper unless it is
    // not a non-empty object and the tool declares `a`.
    let schema = entry.schema();
    let own_a = declares(schema, "a");
    let by_name = via.is_some();
    let own_f = by_name && declares(schema, "f");
    let (strip_f, strip): (&[&str], &[&str]) = if own_f {
        (&[], &["a"])
    } else {
        (&["f"], &["f", "a"])
    };
    let nested = as_object(args.get("a"));
    let wrapper = !(own_a && (by_name || is_empty(&nested)));
    // An `a` that cannot be read is refused even with keys beside it: what it held would
    // be lost.
    if wrapper && let Some(received) = unreadable_bag(args.get("a")) {
        return not_an_object(entry, received);
    }
    let bag = if !wrapper {
        Cow::Owned(without(&args, strip_f))
    } else if args.get("a").is_some() && !is_empty(&nested) {
        match merged_bag(&entry.name, nested, &without(&args, strip)) {
            Ok(bag) => bag,
            Err(e) => return Resolution::Error(e),
        }
    } else {
        Cow::Owned(without(&args, strip))
    };
    // (An unreadable `a` was refused above; the whole arguments may still be unreadable.)
    c.call_read(entry, bag, || unreadable_bag(Some(raw_args)))
}

/// `q`: `c` looks a code (or name) up, `s` searches. A call with both a search text
/// and a `c` searches the text: small models put a code or a real name in `c` beside
/// the question they mean, and answering the code alone drops the question.
fn answer_lookup(
    dialect: &dyn Dialect,
    c: &Compressed,
    args: &Value,
    hidden: Hidden<'_>,
) -> Resolution {
    let has_text = matches!(args.get("s"), Some(Value::String(s)) if !s.trim().is_empty());
    if args.get("c").is_some() && !has_text {
        let written = as_text(args.get("c"));
        return match c.lookup(&written) {
            // A hidden tool is neither described nor listed: the model is never taught it.
            Some(e) if hidden(&e.name) => Resolution::Error(ResolveError::HiddenTool {
                tool: e.name.clone(),
            }),
            Some(e) => Resolution::Meta {
                name: "q",
                result: with_parameters(dialect.describe(&written, e), e.schema()),
            },
            None => Resolution::Error(dialect.unknown(c, &written, hidden)),
        };
    }
    let needle = match args.get("s") {
        None | Some(Value::Null | Value::Bool(false)) => Cow::Borrowed(""),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => Cow::Borrowed(""),
        other => as_text(other),
    };
    let hits = c.search_hits_open(&needle, hidden);
    let result = if hits.is_empty() {
        format!("No matches for \"{needle}\".")
    } else {
        let mut out = String::new();
        for (i, e) in hits.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            dialect.push_hit(e, &mut out);
        }
        out
    };
    Resolution::Meta { name: "q", result }
}
