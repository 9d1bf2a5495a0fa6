//! [`Code`]: the short name a level-3/4 map gives a tool (`a0`, `ab12`).

/// A level-3/4 code, held inline: namespace letters then the decimal position (`a0`,
/// `ab12`). The longest possible (`usize::MAX` of each) is 14 letters and 20 digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Code {
    bytes: [u8; 34],
    len: u8,
}

impl Default for Code {
    fn default() -> Self {
        Self {
            bytes: [0; 34],
            len: 0,
        }
    }
}

impl Code {
    /// The code of operation `oi` of namespace `ni`.
    pub(crate) fn new(ni: usize, oi: usize) -> Self {
        let mut code = Self::default();
        // Letters: bijective base 26 (`a`…`z`, `aa`…), written backwards then reversed.
        let mut n = ni + 1;
        let mut letters = 0;
        while n > 0 && letters < 14 {
            n -= 1;
            code.push(b'a' + u8::try_from(n % 26).unwrap_or(0));
            letters += 1;
            n /= 26;
        }
        code.bytes.get_mut(..letters).map(<[u8]>::reverse);
        let start = letters;
        let mut n = oi;
        loop {
            code.push(b'0' + u8::try_from(n % 10).unwrap_or(0));
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let end = usize::from(code.len);
        code.bytes.get_mut(start..end).map(<[u8]>::reverse);
        code
    }

    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.bytes.get_mut(usize::from(self.len)) {
            *slot = byte;
            self.len += 1;
        }
    }

    /// Appends the code to `out` (ASCII, so no UTF-8 check is needed).
    pub(crate) fn push_to(&self, out: &mut String) {
        let bytes = self.bytes.get(..usize::from(self.len)).unwrap_or_default();
        out.extend(bytes.iter().map(|&b| char::from(b)));
    }

    /// The code as text.
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII letters and digits are ever pushed.
        std::str::from_utf8(self.bytes.get(..usize::from(self.len)).unwrap_or_default())
            .unwrap_or_default()
    }
}

impl std::ops::Deref for Code {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// The letters of namespace `ni`: `a`…`z`, then `aa`…`zz`, then `aaa`… (bijective base 26,
/// so codes never run out and never collide).
#[cfg(test)]
fn code_prefix(ni: usize) -> String {
    let mut letters = Vec::with_capacity(3);
    let mut n = ni + 1;
    while n > 0 {
        n -= 1;
        letters.push(b'a' + u8::try_from(n % 26).unwrap_or(0));
        n /= 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_namespace_letters_and_the_decimal_position() {
        for (ni, oi) in [
            (0, 0),
            (25, 9),
            (26, 10),
            (27, 1234567),
            (701, 3),
            (702, 99),
        ] {
            assert_eq!(
                Code::new(ni, oi).as_str(),
                format!("{}{oi}", code_prefix(ni))
            );
        }
        let longest = Code::new(usize::MAX - 1, usize::MAX);
        assert_eq!(
            longest.as_str(),
            format!("{}{}", code_prefix(usize::MAX - 1), usize::MAX)
        );
        assert_eq!(Code::default().as_str(), "");
    }

    #[test]
    fn code_prefixes_are_bijective_base_26() {
        for (index, prefix) in [
            (0, "a"),
            (25, "z"),
            (26, "aa"),
            (27, "ab"),
            (51, "az"),
            (52, "ba"),
            (701, "zz"),
            (702, "aaa"),
        ] {
            assert_eq!(code_prefix(index), prefix, "{index}");
        }
    }
}
