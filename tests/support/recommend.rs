//! What the `recommend` advice is checked against, shared by chef-compress's tests of the
//! library and chef-cli's of the command. Included by `#[path]`, as `fixtures.rs` is.

/// `42713` → `42,713`, as the advice writes its figures.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What the advice never says: no JavaScript spelling, no command that does not exist,
/// no figures from the reference library (its own figures come from chef's measured table).
pub(crate) const NEVER_SAID: [&str; 7] = [
    "mapStyle",
    "`chef compile`",
    "npx",
    "toolgz",
    "41,648",
    "2,980",
    "60/60",
];
