//! What a caller can ask of [`compress`](crate::compress): the level, the map style and the
//! knobs around them.
//!
//! Levels and map styles are closed sets we own, so they are plain enums matched
//! exhaustively. [`Options`] keeps its fields private behind `with_*` setters so later
//! issues (a compiled map for level 4, provider targets) can add knobs without breaking
//! callers.

use std::{collections::BTreeMap, fmt, str::FromStr, sync::Arc};

use serde::{Serialize, Serializer};

/// For an enum whose variants have names: `as_str` (the name), `FromStr` (exactly the
/// names, anything else the error type with what was asked for in its one field), and
/// `Display` and `Serialize` as the name (`"name+required"`).
macro_rules! named {
    (
        $ty:ident, $error:ident { $field:ident },
        #[doc = $doc:literal]
        $($variant:ident => $name:literal),+ $(,)?
    ) => {
        impl $ty {
            #[doc = $doc]
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }
        }

        impl FromStr for $ty {
            type Err = $error;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok(Self::$variant),)+
                    _ => Err($error {
                        $field: s.to_owned(),
                    }),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}

/// How hard to compress.
///
/// | level | wire tools | names the model sees | provider enforces the schema |
/// |---|---|---|---|
/// | 0 | every tool, unchanged | real | yes |
/// | 1 | every tool, prose stripped, signature-prefixed description | real | yes |
/// | 2 | one compound tool per namespace plus `describe_op` | namespace + op | no |
/// | 3 | `t` (dispatch) and `q` (look up), a code map in the system prompt | codes | no |
/// | 4 | level 3 with a model-compiled Python map (needs a compiled map) | real | no |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Level {
    /// Passthrough.
    Zero,
    /// Signature lines (the default).
    #[default]
    One,
    /// Namespace collapse.
    Two,
    /// Dispatcher plus a mechanical map.
    Three,
    /// Dispatcher plus a compiled Python map; [`compress`](crate::compress) refuses it with
    /// [`CompressError::NeedsCompiledMap`](crate::CompressError::NeedsCompiledMap) when
    /// [`Options::with_compiled`] gave no lines.
    Four,
}

/// For the levels, from one list of `variant => number`: `ALL` (every level, lowest
/// first), `as_u8`, `TryFrom<u8>` and `FromStr` (the number in decimal, exactly: no sign,
/// no spaces, no leading zeros), each refusing anything else with the error type. A
/// variant missing from the list fails to compile (`as_u8` matches exhaustively).
macro_rules! numbered {
    ($ty:ident, $error:ident { $field:ident }, $($variant:ident => $number:literal),+ $(,)?) => {
        impl $ty {
            /// Every level, lowest first.
            pub const ALL: [Self; [$($number),+].len()] = [$(Self::$variant),+];

            /// The level as its number.
            pub fn as_u8(self) -> u8 {
                match self {
                    $(Self::$variant => $number,)+
                }
            }
        }

        impl TryFrom<u8> for $ty {
            type Error = $error;

            fn try_from(value: u8) -> Result<Self, Self::Error> {
                match value {
                    $($number => Ok(Self::$variant),)+
                    _ => Err($error {
                        $field: value.to_string(),
                    }),
                }
            }
        }

        impl FromStr for $ty {
            type Err = $error;

            /// Parses the level's number exactly (no sign, no spaces, no leading zeros).
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $(stringify!($number) => Ok(Self::$variant),)+
                    _ => Err($error {
                        $field: s.to_owned(),
                    }),
                }
            }
        }
    };
}

// A level's number; its behaviour is its module in `crate::levels`, registered in
// `levels::codec` (which also gives `Level` the methods that ask a level's behaviour).
numbered! {
    Level, UnsupportedLevel { level },
    Zero => 0,
    One => 1,
    Two => 2,
    Three => 3,
    Four => 4,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_u8())
    }
}

impl Serialize for Level {
    /// Serialises as the bare number (`3`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.as_u8())
    }
}

/// A level that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported level: {level} (expected 0, 1, 2, 3 or 4)")]
pub struct UnsupportedLevel {
    /// What was asked for, as text.
    pub level: String,
}

/// How each tool is rendered in the level-3 map.
///
/// | style | tool with required params | tool without |
/// |---|---|---|
/// | `name+required` | `a0 github_create_issue owner,repo,title` | `b0 stripe_get_balance` |
/// | `explicit` | same | `b0 stripe_get_balance ()` |
/// | `signature` | `a0 github_create_issue(owner,repo,title,body?,labels?:string[])` | `b0 stripe_get_balance()` |
/// | `distinct` | `a0 github_create_issue owner,repo,title ~ labels` (only when a lookalike) | `b0 stripe_get_balance ~ pending` |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum MapStyle {
    /// Code, name and the required parameters (the conservative default).
    #[default]
    NameRequired,
    /// As `name+required`, but a tool without required parameters ends in ` ()`.
    Explicit,
    /// Code and the full signature line, so the model needs no lookups.
    Signature,
    /// As `name+required`, plus, on the lines of tools that would otherwise look alike
    /// (same required parameters), ` ~ ` and the fewest words from the tool's own
    /// description and schema that tell it apart from the rest of its group.
    ///
    /// The words are chosen without a model: a greedy set cover over the other members of
    /// the lookalike group, preferring words that are rare within the group (see the
    /// notes of `levels/styles/distinct.rs` in the crate source). Lines that are already unique are
    /// left exactly as `name+required` renders them.
    Distinct,
}

impl MapStyle {
    /// Every style, in a fixed order.
    pub const ALL: [Self; 4] = [
        Self::NameRequired,
        Self::Explicit,
        Self::Signature,
        Self::Distinct,
    ];
}

named! {
    MapStyle, UnsupportedMapStyle { style },
    /// The style's name (`name+required`, `explicit`, `signature`, `distinct`).
    NameRequired => "name+required",
    Explicit => "explicit",
    Signature => "signature",
    Distinct => "distinct",
}

/// A map style that does not exist (historic names such as `terse` or `nocode` included).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported map style: {style} (expected name+required, explicit, signature, distinct)")]
pub struct UnsupportedMapStyle {
    /// What was asked for.
    pub style: String,
}

/// What a model-specific map-style pick optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Objective {
    /// Context-window occupancy (the default; the policy table has no rows for it).
    #[default]
    Occupancy,
    /// Median cost per task.
    Cost,
}

named! {
    Objective, UnsupportedObjective { objective },
    /// The objective's name (`occupancy`, `cost`).
    Occupancy => "occupancy",
    Cost => "cost",
}

/// An objective that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported objective: {objective} (expected occupancy or cost)")]
pub struct UnsupportedObjective {
    /// What was asked for.
    pub objective: String,
}

/// A tool's namespace and operation, as a namespace function splits its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolNamespace {
    /// The namespace (groups tools at levels 2–4; picks the code letters at level 3).
    pub ns: String,
    /// The operation within the namespace (the level-2 `op` value).
    pub op: String,
}

impl ToolNamespace {
    /// A namespace and an operation.
    pub fn new(ns: impl Into<String>, op: impl Into<String>) -> Self {
        Self {
            ns: ns.into(),
            op: op.into(),
        }
    }

    /// The default split: at the first `_` or `.`; a name without either is its own
    /// namespace and operation. `-`, `:` and `/` are not separators.
    ///
    /// ```
    /// use chef_compress::ToolNamespace;
    /// assert_eq!(ToolNamespace::split("github_create_issue"), ToolNamespace::new("github", "create_issue"));
    /// assert_eq!(ToolNamespace::split("gdrive.sheets_append"), ToolNamespace::new("gdrive", "sheets_append"));
    /// assert_eq!(ToolNamespace::split("ping"), ToolNamespace::new("ping", "ping"));
    /// ```
    ///
    /// A split that would leave an empty part (`_private`, `trailing_`) keeps the whole
    /// name as namespace and operation instead: a valid tool name never fails the default
    /// split (the reference refused such names).
    ///
    /// ```
    /// # use chef_compress::ToolNamespace;
    /// assert_eq!(ToolNamespace::split("_private"), ToolNamespace::new("_private", "_private"));
    /// assert_eq!(ToolNamespace::split("trailing_"), ToolNamespace::new("trailing_", "trailing_"));
    /// ```
    pub fn split(name: &str) -> Self {
        match name.find(['_', '.']) {
            Some(i) if i > 0 && i + 1 < name.len() => Self::new(
                name.get(..i).unwrap_or_default(),
                name.get(i + 1..).unwrap_or_default(),
            ),
            _ => Self::new(name, name),
        }
    }
}

/// A caller-supplied namespace function (replaces [`ToolNamespace::split`]).
pub type NamespaceFn = Arc<dyn Fn(&str) -> ToolNamespace + Send + Sync>;

/// A caller-supplied alias function for level-2 wire tool names (namespace → wire name).
pub type AliasFn = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Options for [`compress`](crate::compress).
///
/// ```
/// use chef_compress::{Level, MapStyle, Objective, Options};
///
/// let options = Options::new()
///     .with_level(Level::Three)
///     .with_map_style(MapStyle::Signature)
///     .with_search_limit(5);
/// assert_eq!(options.level(), Level::Three);
/// let by_model = Options::new().with_level(Level::Three).with_model("gpt-5.6-sol").with_objective(Objective::Cost);
/// assert_eq!(by_model.model(), Some("gpt-5.6-sol"));
/// ```
#[derive(Clone)]
pub struct Options {
    pub(crate) level: Level,
    pub(crate) map_style: Option<MapStyle>,
    pub(crate) namespace_of: Option<NamespaceFn>,
    pub(crate) alias_of: Option<AliasFn>,
    pub(crate) signature_prefix: bool,
    pub(crate) search_limit: usize,
    pub(crate) validate: bool,
    pub(crate) model: Option<String>,
    pub(crate) objective: Objective,
    pub(crate) count_tokens: bool,
    pub(crate) compiled: Arc<BTreeMap<String, String>>,
    pub(crate) require_compiled: bool,
    pub(crate) pinned_codes: Arc<BTreeMap<String, String>>,
    pub(crate) limits: crate::validate::Limits,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            level: Level::One,
            map_style: None,
            namespace_of: None,
            alias_of: None,
            signature_prefix: true,
            search_limit: 8,
            validate: true,
            model: None,
            objective: Objective::Occupancy,
            count_tokens: false,
            compiled: Arc::default(),
            require_compiled: false,
            pinned_codes: Arc::default(),
            limits: crate::validate::Limits::default(),
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("level", &self.level)
            .field("map_style", &self.map_style)
            .field("namespace_of", &self.namespace_of.as_ref().map(|_| "fn"))
            .field("alias_of", &self.alias_of.as_ref().map(|_| "fn"))
            .field("signature_prefix", &self.signature_prefix)
            .field("search_limit", &self.search_limit)
            .field("validate", &self.validate)
            .field("model", &self.model)
            .field("objective", &self.objective)
            .field("count_tokens", &self.count_tokens)
            .field("compiled", &self.compiled.len())
            .field("require_compiled", &self.require_compiled)
            .field("pinned_codes", &self.pinned_codes.len())
            .field("limits", &self.limits)
            .finish()
    }
}

impl Options {
    /// The defaults: level 1, map style chosen by [`select_map_style`](crate::select_map_style),
    /// signature prefix on, search limit 8, validation on.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the resource limits (tool count, tool-name length, schema and argument
    /// nesting, string sizes, `$ref` inlining); see [`Limits`](crate::validate::Limits)
    /// for the defaults.
    ///
    /// ```
    /// use chef_compress::{Options, validate::Limits};
    ///
    /// let options = Options::new().with_limits(Limits { max_tools: 500, ..Limits::default() });
    /// assert_eq!(options.limits().max_tools, 500);
    /// ```
    #[must_use]
    pub fn with_limits(mut self, limits: crate::validate::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The resource limits.
    pub fn limits(&self) -> crate::validate::Limits {
        self.limits
    }

    /// Sets the level. `compress` never changes it on its own.
    #[must_use]
    pub fn with_level(mut self, level: Level) -> Self {
        self.level = level;
        self
    }

    /// Asks for a map style explicitly (honoured unless measured unsafe for `model`).
    #[must_use]
    pub fn with_map_style(mut self, style: MapStyle) -> Self {
        self.map_style = Some(style);
        self
    }

    /// Replaces the default namespace split (it groups tools at levels 2–4; at every level
    /// each tool's split must have a non-empty namespace and operation, or compression
    /// fails with [`CompressError::InvalidNamespace`](crate::CompressError::InvalidNamespace)).
    #[must_use]
    pub fn with_namespace_of(
        mut self,
        f: impl Fn(&str) -> ToolNamespace + Send + Sync + 'static,
    ) -> Self {
        self.namespace_of = Some(Arc::new(f));
        self
    }

    /// Names each level-2 namespace tool (default: the namespace itself).
    #[must_use]
    pub fn with_alias_of(mut self, f: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        self.alias_of = Some(Arc::new(f));
        self
    }

    /// Level 1: prefix each description with its signature line (default `true`).
    #[must_use]
    pub fn with_signature_prefix(mut self, on: bool) -> Self {
        self.signature_prefix = on;
        self
    }

    /// The most results one `q(s=…)` search returns (default 8).
    #[must_use]
    pub fn with_search_limit(mut self, limit: usize) -> Self {
        self.search_limit = limit;
        self
    }

    /// Validate arguments in `resolve` (default `true`; leave it on).
    #[must_use]
    pub fn with_validate(mut self, on: bool) -> Self {
        self.validate = on;
        self
    }

    /// The exact model id, used only to pick a measured map style.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// What a model-specific pick optimises (default occupancy).
    #[must_use]
    pub fn with_objective(mut self, objective: Objective) -> Self {
        self.objective = objective;
        self
    }

    /// Also count o200k_base tokens of the original and compressed payload in the stats.
    #[cfg(feature = "tokens")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokens")))]
    #[must_use]
    pub fn with_token_counts(mut self, on: bool) -> Self {
        self.count_tokens = on;
        self
    }

    /// A compiled map: real tool name → compiled Python line
    /// (`def name(params):"docstring"`), as `compile_tools` (feature `compile`) or `chef compile-map` writes it.
    ///
    /// Required at level 4, optional at level 1 (a verified line's docstring replaces the
    /// first sentence), ignored at levels 0, 2 and 3. Every line is verified against the
    /// tool's current schema at every compress; a line that no longer fits is not used.
    #[must_use]
    pub fn with_compiled<K, V>(mut self, map: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.compiled = Arc::new(map.into_iter().map(|(k, v)| (k.into(), v.into())).collect());
        self
    }

    /// Refuse to compress when a tool has no usable compiled line (level 4; level 1 when the
    /// compiled map is not empty). Default `false`: such tools fall back to their
    /// uncompiled rendering (level 1: signature and first sentence; level 4: the signature
    /// with a `(not compiled)` docstring).
    #[must_use]
    pub fn with_require_compiled(mut self, on: bool) -> Self {
        self.require_compiled = on;
        self
    }

    /// Codes that must not move: real tool name → the level-3/4 code it had
    /// ([`Compressed::codes`](crate::Compressed::codes) of an earlier compression, or every
    /// code ever issued).
    ///
    /// At levels 3–4 a tool named here keeps its code, and **no other tool is given a code
    /// in this map**, even when the tool it belonged to is gone: a call written against an
    /// earlier map then reaches the same tool or none, never another one. New tools take
    /// fresh codes after the pinned ones (a new namespace takes a new letter), and the map
    /// lists tools in code order. A pin is not applied (and its code stays reserved) when
    /// it is not a code (`a0`, `ab12`), when its letter is not its namespace's (a namespace
    /// takes the letter of its first pin in name order that no earlier namespace took), or
    /// when it lies further out than the number of pins and tools (so a hostile map cannot
    /// make a compression allocate without bound).
    /// Ignored at levels 0–2. Empty by default: codes follow the sorted order.
    #[must_use]
    pub fn with_pinned_codes<K, V>(mut self, pins: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.pinned_codes = Arc::new(
            pins.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        self
    }

    /// The pinned codes (empty unless set).
    pub fn pinned_codes(&self) -> &BTreeMap<String, String> {
        &self.pinned_codes
    }

    /// The compiled map (empty unless set).
    pub fn compiled(&self) -> &BTreeMap<String, String> {
        &self.compiled
    }

    /// The level asked for.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The explicitly requested map style, if any.
    pub fn map_style(&self) -> Option<MapStyle> {
        self.map_style
    }

    /// The model id, if any.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The objective.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    /// The search limit.
    pub fn search_limit(&self) -> usize {
        self.search_limit
    }

    pub(crate) fn alias(&self, ns: &str) -> String {
        match &self.alias_of {
            Some(f) => f(ns),
            None => ns.to_owned(),
        }
    }
}
