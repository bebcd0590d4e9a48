//! The string `format`s that tool-argument validation checks (pure): the ones model providers document for tool
//! schemas and that need no large dependency. Other format names are annotations and are not checked.
//!
//! The formats that are regular languages (`duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`) are
//! [`Format::pattern`]s, matched by the host's ECMAScript engine like a schema's `pattern` (no checking code in
//! the wasm bundle). The date and time formats need arithmetic a pattern cannot do exactly (leap years, a leap
//! second only at 23:59:60 UTC whatever the offset), so [`Format::accepts`] checks them on the text's bytes with
//! plain loops: they are ASCII, a non-ASCII byte simply fails the test it meets, and `str`'s pattern searches
//! would each add their own generic searcher to the bundle.

/// The checked formats' names; a [`Format`] is an index into it.
const NAMES: [&str; 9] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// A checked format (closed set): RFC 3339 `date-time`, `date` (full-date), `time` (full-time), `duration`
/// (ISO 8601 as in RFC 3339 appendix A), `email` (RFC 5321 mailbox, dot-atom local part), `hostname`
/// (RFC 1123), `ipv4` (dotted quad), `ipv6` (RFC 4291), `uuid` (RFC 4122, `8-4-4-4-12` hexadecimal digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format(u8);

impl Format {
    /// The checked format called `name`; `None` for formats this runtime does not check.
    pub fn named(name: &str) -> Option<Format> {
        NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Format(i as u8))
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        NAMES.get(usize::from(self.0)).copied().unwrap_or_default()
    }

    /// The ECMAScript pattern (flag `u`) that accepts exactly this format, for the formats that have one.
    pub fn pattern(self) -> Option<&'static str> {
        PATTERNS.get(usize::from(self.0).checked_sub(3)?).copied()
    }

    /// Whether `text` is in this format, for the formats without a [`Format::pattern`] (the others are the
    /// pattern's to decide: `true` here).
    pub fn accepts(self, text: &str) -> bool {
        let t = text.as_bytes();
        match self.0 {
            0 => date_time(t),
            1 => date(t),
            2 => time(t),
            _ => true,
        }
    }
}

/// The value of `text` when it is one or more ASCII digits (saturated; callers bound the length).
fn number(text: &[u8]) -> Option<u32> {
    if text.is_empty() {
        return None;
    }
    let mut n: u32 = 0;
    for &b in text {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.saturating_mul(10).saturating_add(u32::from(b - b'0'));
    }
    Some(n)
}

/// The leading ASCII digits' count.
fn digit_run(text: &[u8]) -> usize {
    text.iter().take_while(|b| b.is_ascii_digit()).count()
}

// The readers below take the text apart with slice patterns: no index can fail, so they hold no panic path.

fn date(t: &[u8]) -> bool {
    let &[y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = t else {
        return false;
    };
    let (Some(year), Some(month), Some(day)) = (
        number(&[y0, y1, y2, y3]),
        number(&[m0, m1]),
        number(&[d0, d1]),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

fn time(t: &[u8]) -> bool {
    let &[h0, h1, b':', m0, m1, b':', s0, s1, ref rest @ ..] = t else {
        return false;
    };
    let (Some(hour), Some(minute), Some(second)) =
        (number(&[h0, h1]), number(&[m0, m1]), number(&[s0, s1]))
    else {
        return false;
    };
    let mut rest = rest;
    if let [b'.', fraction @ ..] = rest {
        let n = digit_run(fraction);
        if n == 0 {
            return false;
        }
        rest = fraction.get(n..).unwrap_or_default();
    }
    let offset_minutes: i64 = match *rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), a, b, b':', c, d] => {
            let (Some(h), Some(m)) = (number(&[a, b]), number(&[c, d])) else {
                return false;
            };
            if h > 23 || m > 59 {
                return false;
            }
            let minutes = i64::from(h * 60 + m);
            if sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return false,
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    // A leap second exists only at 23:59:60 UTC.
    let utc = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
    second < 60 || utc == 23 * 60 + 59
}

fn date_time(t: &[u8]) -> bool {
    let at = t.iter().position(|&b| b == b'T' || b == b't');
    match at.and_then(|at| t.split_at_checked(at)) {
        Some((d, [_, rest @ ..])) => date(d) && time(rest),
        _ => false,
    }
}

// The formats below are regular languages: each is checked by a pattern generated here and matched by the host's
// ECMAScript engine (flag `u`), like a schema's `pattern`. Every pattern accepts exactly what the RFC text of the
// [`Format`] doc says (a differential run against byte-level checks of the same rules, 1.8 million generated
// strings, found no difference, and the IPv6 pattern's compact form against the one alternative per position it
// replaced, 7.8 million: docs/adr/008). The pieces are macros so the patterns are literals built at compile time.

/// A hexadecimal digit.
macro_rules! hex {
    () => {
        "[0-9A-Fa-f]"
    };
}

/// One to four hexadecimal digits: an IPv6 group.
macro_rules! h16 {
    () => {
        concat!(hex!(), "{1,4}")
    };
}

/// A dotted quad: four decimal octets 0–255 without leading zeros.
macro_rules! ipv4 {
    () => {
        concat!(
            "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)",
            "(?:\\.(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}"
        )
    };
}

/// RFC 4291 text form: eight groups (the last two optionally written as a dotted quad), or groups around one `::`
/// (which stands for at least one group), at most seven of them, a dotted quad counting two. The count is asserted
/// by two lookaheads over the whole address rather than by one alternative per number of groups before the `::`:
/// no eight runs of hexadecimal digits, and no six runs ended by `:` before a dotted quad (each run ended by `:` is
/// a whole group, so the lookaheads count groups; the address is always followed by its end or `]`).
macro_rules! ipv6 {
    () => {
        concat!(
            "(?:(?:",
            h16!(),
            ":){6}(?:",
            h16!(),
            ":",
            h16!(),
            "|",
            ipv4!(),
            ")|(?!:*(?:",
            hex!(),
            "+:+){7}",
            hex!(),
            ")(?!:*(?:",
            hex!(),
            "+:+){6}[0-9A-Fa-f:]*\\.)(?:",
            h16!(),
            "(?::",
            h16!(),
            ")*)?::(?:",
            h16!(),
            "(?::",
            h16!(),
            ")*|(?:",
            h16!(),
            ":)*",
            ipv4!(),
            ")?)"
        )
    };
}

/// RFC 1123: labels of 1–63 letters, digits and `-` (not at either end), 253 characters at most without the one
/// optional trailing dot.
macro_rules! hostname {
    () => {
        concat!(
            "(?=.{1,253}\\.?$)",
            "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?",
            "(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?"
        )
    };
}

/// The patterns of the formats from `duration` on, in the order of [`NAMES`].
const PATTERNS: [&str; 6] = [
    // ISO 8601 durations as in RFC 3339 appendix A: weeks alone, or date units then time units, each in order,
    // at least one unit, and a `T` only before a time unit.
    "^P(?:\\d+W|(?=\\d|T\\d)(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?(?:T(?=\\d)(?:\\d+H)?(?:\\d+M)?(?:\\d+S)?)?)$",
    // RFC 5321 mailbox: a dot-atom or quoted local part of at most 64 characters, then a hostname or an address
    // literal.
    concat!(
        "^(?=[\\s\\S]{1,64}@[^@]*$)",
        "(?:[\\w!#-'*+\\-/=?^`{-~]+(?:\\.[\\w!#-'*+\\-/=?^`{-~]+)*|\"[ !#-\\[\\]-~]*\")",
        "@(?:\\[(?:IPv6:",
        ipv6!(),
        "|",
        ipv4!(),
        ")\\]|",
        hostname!(),
        ")$"
    ),
    concat!("^", hostname!(), "$"),
    concat!("^", ipv4!(), "$"),
    concat!("^", ipv6!(), "$"),
    "^[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}$",
];
