//! Reversible mapping between real tool names and names a provider accepts.
//!
//! Real catalogues hold names that providers refuse: dots (`triangle_properties.get`),
//! spaces, slashes, or more than 64 characters. Anthropic and OpenAI accept only
//! `[a-zA-Z0-9_-]{1,64}`; Gemini accepts `[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}`. A [`WireNames`]
//! table maps every real name to a valid wire name and back, so that a caller only ever sees
//! real names.
//!
//! # The mapping
//!
//! - A name the rule accepts maps to itself. These names are reserved first, so a mapped
//!   name can never take a valid real name.
//! - Any other name is sanitised. A character outside ASCII is written in ASCII letters
//!   where it has a reading (`café` → `cafe`, `straße` → `strasse`, `Привет` → `Privet`,
//!   `天気` → `Tian_Qi`: one word per ideogram, `_` between words), so the model reads a
//!   name, not a row of underscores; every other refused character becomes `_`. A first
//!   character the rule allows only later in a name (under Gemini's: a digit, `-`, `.`,
//!   `:`) gets a `_` prefix, an empty name becomes `t_`, and the result is cut to fit. If
//!   sanitising added a prefix or cut the name, or the result is already taken, a suffix
//!   `_` + 8 lowercase hex digits of the FNV-1a hash of the real name is appended (the base
//!   is cut so the whole fits the length limit).
//! - Names are processed in byte order, so the table depends only on the *set* of names,
//!   never on registration order. Rare hash collisions are resolved with a counter.
//!
//! ```
//! use chef_ir::{NameRule, ToolName, WireNames};
//!
//! let names = [ToolName::from("triangle_properties.get"), ToolName::from("search")];
//! let table = WireNames::new(&names, NameRule::ANTHROPIC);
//! assert_eq!(table.to_wire("search"), "search");
//! assert_eq!(table.to_wire("triangle_properties.get"), "triangle_properties_get");
//! assert_eq!(table.to_real("triangle_properties_get"), "triangle_properties.get");
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::tool::ToolName;

/// The bytes every rule accepts: ASCII letters, digits, `_` and `-` (the table of a rule
/// with no extra punctuation).
static BASE_BYTES: [bool; 256] = NameRule::ANTHROPIC.byte_table();

/// Which names a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameRule {
    /// Maximum length in characters (all accepted characters are ASCII).
    pub max_len: usize,
    /// Extra punctuation accepted besides ASCII letters, digits, `_` and `-`.
    pub extra: &'static [char],
    /// Whether the first character must be a letter or `_`.
    pub letter_first: bool,
}

impl NameRule {
    /// Anthropic Messages: `^[a-zA-Z0-9_-]{1,64}$`.
    pub const ANTHROPIC: Self = Self {
        max_len: 64,
        extra: &[],
        letter_first: false,
    };
    /// OpenAI Chat Completions and Responses: `^[a-zA-Z0-9_-]{1,64}$`.
    pub const OPENAI: Self = Self::ANTHROPIC;
    /// Gemini function declarations: a letter or `_` first, then letters, digits, `_`,
    /// `.`, `:` or `-`, 64 characters at most.
    pub const GEMINI: Self = Self {
        max_len: 64,
        extra: &['.', ':'],
        letter_first: true,
    };

    /// The bytes the rule allows after the first, as a table indexed by byte: ASCII
    /// letters, digits, `_`, `-` and the ASCII characters of [`extra`](Self::extra). Built
    /// at compile time, it lets a provider crate check names with one lookup a byte:
    ///
    /// ```
    /// use chef_ir::NameRule;
    ///
    /// static GEMINI: [bool; 256] = NameRule::GEMINI.byte_table();
    /// assert!(GEMINI[usize::from(b':')] && !GEMINI[usize::from(b'/')]);
    /// assert!(!NameRule::OPENAI.byte_table()[usize::from(b':')]);
    /// ```
    #[allow(
        clippy::indexing_slicing,
        reason = "const loops over the table's own length and over ASCII bytes; `get_mut` is not const here"
    )]
    pub const fn byte_table(&self) -> [bool; 256] {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
            b += 1;
        }
        let mut extra = self.extra;
        while let [c, rest @ ..] = extra {
            if c.is_ascii() {
                table[*c as usize] = true;
            }
            extra = rest;
        }
        table
    }

    fn allows(&self, c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_' || c == '-' || self.extra.contains(&c)
    }

    fn allows_first(&self, c: char) -> bool {
        if self.letter_first {
            c.is_ascii_alphabetic() || c == '_'
        } else {
            self.allows(c)
        }
    }

    /// Whether the provider accepts `name` as it is.
    pub fn accepts(&self, name: &str) -> bool {
        // Every accepted character is ASCII, so a byte scan decides (a multi-byte
        // character's bytes are all non-ASCII and fail the test).
        if name.len() > self.max_len {
            return false;
        }
        let allows = |b: u8| {
            BASE_BYTES.get(usize::from(b)).copied().unwrap_or(false)
                || (!self.extra.is_empty() && b.is_ascii() && self.extra.contains(&char::from(b)))
        };
        match name.as_bytes().split_first() {
            None => false,
            Some((&first, rest)) => {
                (if self.letter_first {
                    first.is_ascii_alphabetic() || first == b'_'
                } else {
                    allows(first)
                }) && rest.iter().all(|&b| allows(b))
            }
        }
    }

    /// [`accepts`](Self::accepts) by characters: the definition the byte scan must match.
    #[cfg(test)]
    fn accepts_by_chars(&self, name: &str) -> bool {
        let mut chars = name.chars();
        match chars.next() {
            None => false,
            Some(first) => {
                self.allows_first(first)
                    && chars.all(|c| self.allows(c))
                    && name.len() <= self.max_len
            }
        }
    }
}

/// A two-way table between real tool names and provider wire names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireNames {
    to_wire: BTreeMap<String, String>,
    to_real: BTreeMap<String, String>,
}

impl WireNames {
    /// Builds the table for a set of real names under `rule`.
    pub fn new<'a, I>(names: I, rule: NameRule) -> Self
    where
        I: IntoIterator<Item = &'a ToolName>,
    {
        let names: Vec<&str> = names.into_iter().map(ToolName::as_str).collect();
        // The common case, every name accepted as it is, needs no table.
        if names.iter().all(|n| rule.accepts(n)) {
            return Self::default();
        }
        let names: BTreeSet<&str> = names.into_iter().collect();
        let mut taken: BTreeSet<String> = names
            .iter()
            .filter(|n| rule.accepts(n))
            .map(|n| (*n).to_owned())
            .collect();
        let mut table = Self::default();
        for name in names.iter().filter(|n| !rule.accepts(n)) {
            let wire = Self::mapped(name, rule, &taken);
            taken.insert(wire.clone());
            table.to_wire.insert((*name).to_owned(), wire.clone());
            table.to_real.insert(wire, (*name).to_owned());
        }
        table
    }

    fn mapped(name: &str, rule: NameRule, taken: &BTreeSet<String>) -> String {
        let mut base = sanitised(name, rule);
        let mut exact = true;
        if let Some(first) = base.chars().next() {
            if !rule.allows_first(first) {
                base.insert(0, '_');
                exact = false;
            }
        } else {
            base.push_str("t_");
            exact = false;
        }
        if base.len() > rule.max_len {
            exact = false;
        }
        if exact && !taken.contains(&base) {
            return base;
        }
        let hash = fnv1a(name.as_bytes());
        for attempt in 0u32.. {
            let suffix = if attempt == 0 {
                format!("_{hash:08x}")
            } else {
                format!("_{hash:08x}_{attempt}")
            };
            let keep = rule.max_len.saturating_sub(suffix.len());
            let mut candidate: String = base.chars().take(keep).collect();
            candidate.push_str(&suffix);
            if !taken.contains(&candidate) {
                return candidate;
            }
        }
        // `0u32..` yields until a free name is found; there are far fewer names than
        // attempts, so the loop always returns.
        unreachable_fallback(name)
    }

    /// The wire name for a real name; names not in the table are returned unchanged.
    pub fn to_wire<'s>(&'s self, real: &'s str) -> &'s str {
        self.to_wire.get(real).map_or(real, String::as_str)
    }

    /// The real name for a wire name; names not in the table are returned unchanged (a
    /// model may invent names; the resolver answers those).
    pub fn to_real<'s>(&'s self, wire: &'s str) -> &'s str {
        self.to_real.get(wire).map_or(wire, String::as_str)
    }

    /// True when every name is sent as it is.
    pub fn is_identity(&self) -> bool {
        self.to_wire.is_empty()
    }

    /// The renamed pairs `(real, wire)`, in real-name byte order.
    pub fn renamed(&self) -> impl Iterator<Item = (&str, &str)> {
        self.to_wire.iter().map(|(r, w)| (r.as_str(), w.as_str()))
    }
}

/// `name` with each character `rule` refuses replaced: a character outside ASCII by its
/// ASCII reading (deunicode's) where it has one, a reading that is a word (an ideogram's,
/// an emoji's: "Tian " for 天) set apart by `_` from letters and digits on either side;
/// anything else by `_`.
fn sanitised(name: &str, rule: NameRule) -> String {
    let mut out = String::with_capacity(name.len());
    // The last reading ended a word: a letter or digit written next is a new word.
    let mut word_ended = false;
    let push = |out: &mut String, c: char, word_ended: &mut bool| {
        if *word_ended
            && c.is_ascii_alphanumeric()
            && out.ends_with(|l: char| l.is_ascii_alphanumeric())
        {
            out.push('_');
        }
        *word_ended = false;
        out.push(if rule.allows(c) { c } else { '_' });
    };
    for c in name.chars() {
        if rule.allows(c) || c.is_ascii() {
            push(&mut out, c, &mut word_ended);
            continue;
        }
        let reading = deunicode::deunicode_char(c)
            .map(str::trim_end)
            .filter(|r| r.chars().any(|r| r.is_ascii_alphanumeric()));
        match reading {
            Some(reading) => {
                let is_word = deunicode::deunicode_char(c).is_some_and(|r| r.ends_with(' '));
                // A word is set apart from letters before it too.
                word_ended |= is_word;
                for r in reading.chars() {
                    push(&mut out, r, &mut word_ended);
                }
                word_ended = is_word;
            }
            None => push(&mut out, '_', &mut word_ended),
        }
    }
    out
}

fn unreachable_fallback(name: &str) -> String {
    format!("t_{:016x}", fnv1a(name.as_bytes()))
}

/// 32-bit FNV-1a: tiny, stable across machines and releases (unlike `DefaultHasher`).
/// Which tool call ids a provider accepts (ids pair a call with its result; the provider
/// makes its own for new calls, so only ids made elsewhere — by another provider, a
/// text-call recovery, a caller — can break its rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallIdRule {
    /// Whether only ASCII letters, digits, `_` and `-` are accepted.
    pub base_chars: bool,
    /// The longest id accepted, in characters (`None`: no documented limit).
    pub max_len: Option<usize>,
}

impl CallIdRule {
    /// Anthropic Messages: `tool_use.id` must match `^[a-zA-Z0-9_-]+$`.
    pub const ANTHROPIC: Self = Self {
        base_chars: true,
        max_len: None,
    };
    /// OpenAI Chat Completions: a `tool_calls[].id` of more than 40 characters is refused
    /// ("string too long").
    pub const OPENAI_CHAT: Self = Self {
        base_chars: false,
        max_len: Some(40),
    };

    /// Whether `id` is accepted as it is.
    pub fn accepts(&self, id: &str) -> bool {
        !id.is_empty()
            && (!self.base_chars || id.bytes().all(is_base_byte))
            && self.max_len.is_none_or(|max| id.chars().count() <= max)
    }

    /// The id to send for `id`: itself when accepted, else `id` with each refused
    /// character written `_`, cut to fit, and `_` + 8 hex digits of the FNV-1a hash of the
    /// whole id appended (two ids never meet on one wire id but by a hash collision).
    /// A call and its result map alike, so they still pair.
    ///
    /// ```
    /// use chef_ir::CallIdRule;
    ///
    /// assert_eq!(CallIdRule::ANTHROPIC.wire_id("toolu_01"), "toolu_01");
    /// let wire = CallIdRule::ANTHROPIC.wire_id("gemini-fc-files.read-0");
    /// assert!(wire.starts_with("gemini-fc-files_read-0_") && CallIdRule::ANTHROPIC.accepts(&wire));
    /// assert_eq!(CallIdRule::OPENAI_CHAT.wire_id(&"x".repeat(50)).len(), 40);
    /// ```
    pub fn wire_id<'a>(&self, id: &'a str) -> std::borrow::Cow<'a, str> {
        if self.accepts(id) {
            return std::borrow::Cow::Borrowed(id);
        }
        let suffix = format!("_{:08x}", fnv1a(id.as_bytes()));
        let keep = self
            .max_len
            .map_or(usize::MAX, |max| max.saturating_sub(suffix.len()));
        let mut wire: String = id
            .chars()
            .take(keep)
            .map(|c| {
                if !self.base_chars || u8::try_from(c).is_ok_and(is_base_byte) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if wire.is_empty() {
            wire.push_str("call");
        }
        wire.push_str(&suffix);
        std::borrow::Cow::Owned(wire)
    }
}

/// Whether every name rule accepts the byte `b` (an ASCII letter, digit, `_` or `-`).
fn is_base_byte(b: u8) -> bool {
    BASE_BYTES.get(usize::from(b)).copied().unwrap_or(false)
}

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for b in bytes {
        hash ^= u32::from(*b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(names: &[&str], rule: NameRule) -> WireNames {
        let names: Vec<ToolName> = names.iter().map(|n| ToolName::from(*n)).collect();
        WireNames::new(&names, rule)
    }

    #[test]
    fn the_byte_scan_accepts_exactly_what_the_character_rule_accepts() {
        let long = "a".repeat(64);
        let longer = "a".repeat(65);
        let names = [
            "",
            "a",
            "_a",
            "-a",
            "1a",
            "a.b",
            "a:b",
            ".a",
            "a b",
            "a/b",
            "é",
            "aé",
            "a\u{0}",
            "Ω_tool",
            "a-b_c9",
            "日本",
            "a\u{7f}",
            "tool\u{2e}x",
            &long,
            &longer,
        ];
        for rule in [NameRule::ANTHROPIC, NameRule::GEMINI] {
            for name in names {
                assert_eq!(
                    rule.accepts(name),
                    rule.accepts_by_chars(name),
                    "{name:?} under {rule:?}"
                );
            }
        }
    }

    #[test]
    fn a_table_of_names_all_accepted_is_empty_and_maps_nothing() {
        let t = table(&["b", "a", "b"], NameRule::ANTHROPIC);
        assert_eq!(t, WireNames::default());
        assert_eq!(t.to_wire("a"), "a");
    }

    #[test]
    fn valid_names_map_to_themselves() {
        let t = table(&["a", "b-c", "d_e"], NameRule::ANTHROPIC);
        assert!(t.is_identity());
        assert_eq!(t.to_wire("b-c"), "b-c");
    }

    #[test]
    fn refused_names_map_reversibly_and_to_valid_names() {
        let long = "x".repeat(100);
        let names = [
            "triangle_properties.get",
            "with space",
            "a/b",
            long.as_str(),
            "ünïcode",
            "9lives",
            "",
        ];
        for rule in [NameRule::ANTHROPIC, NameRule::GEMINI] {
            let t = table(&names, rule);
            for n in names {
                let wire = t.to_wire(n);
                assert!(rule.accepts(wire), "{wire:?} for {n:?}");
                assert_eq!(t.to_real(wire), n);
            }
        }
    }

    #[test]
    fn gemini_keeps_dots_but_needs_a_letter_first() {
        let t = table(&["a.b", "9lives"], NameRule::GEMINI);
        assert_eq!(t.to_wire("a.b"), "a.b");
        assert!(t.to_wire("9lives").starts_with("_9lives_"));
    }

    #[test]
    fn collisions_never_take_a_valid_real_name() {
        let t = table(&["a.b", "a_b", "a b"], NameRule::ANTHROPIC);
        assert_eq!(t.to_wire("a_b"), "a_b");
        let x = t.to_wire("a.b");
        let y = t.to_wire("a b");
        assert_ne!(x, "a_b");
        assert_ne!(y, "a_b");
        assert_ne!(x, y);
        assert_eq!(t.to_real(x), "a.b");
        assert_eq!(t.to_real(y), "a b");
    }

    #[test]
    fn the_table_depends_only_on_the_set_of_names() {
        let a = table(&["a.b", "a b", "a:b", "c"], NameRule::ANTHROPIC);
        let b = table(&["c", "a:b", "a b", "a.b"], NameRule::ANTHROPIC);
        assert_eq!(a, b);
    }

    #[test]
    fn names_outside_ascii_are_read_in_ascii_letters() {
        let t = table(
            &[
                "café_menu",
                "天気",
                "天気_forecast",
                "straße",
                "Привет_мир",
                "😀tool",
                "東京の天気",
            ],
            NameRule::ANTHROPIC,
        );
        assert_eq!(t.to_wire("café_menu"), "cafe_menu");
        assert_eq!(t.to_wire("天気"), "Tian_Qi");
        assert_eq!(t.to_wire("天気_forecast"), "Tian_Qi_forecast");
        assert_eq!(t.to_wire("straße"), "strasse");
        assert_eq!(t.to_wire("Привет_мир"), "Privet_mir");
        assert_eq!(t.to_wire("😀tool"), "grinning_tool");
        assert_eq!(t.to_wire("東京の天気"), "Dong_Jing_no_Tian_Qi");
        assert_eq!(t.to_real("Tian_Qi"), "天気");
        // A reading that another name already is gets the hash suffix, never that name.
        let t = table(&["cafe", "café"], NameRule::ANTHROPIC);
        assert_eq!(t.to_wire("cafe"), "cafe");
        assert!(
            t.to_wire("café").starts_with("cafe_"),
            "{}",
            t.to_wire("café")
        );
        // A character with no reading is `_`, as before.
        let t = table(&["a\u{200b}b"], NameRule::ANTHROPIC);
        assert_eq!(t.to_wire("a\u{200b}b"), "a_b");
    }

    #[test]
    fn unknown_names_pass_through() {
        let t = table(&["a.b"], NameRule::ANTHROPIC);
        assert_eq!(t.to_real("hallucinated"), "hallucinated");
        assert_eq!(t.to_wire("other"), "other");
    }
}
