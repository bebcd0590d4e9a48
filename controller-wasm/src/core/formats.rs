//! The string `format`s that tool-argument validation checks (pure): the ones model providers document for tool
//! schemas and that need no large dependency. Other format names are annotations and are not checked.
//!
//! Every check works on the text's bytes with plain loops: the formats are ASCII, a non-ASCII byte simply fails
//! the test it meets, and `str`'s pattern searches (`split`, `find`, `rsplit_once` …) would each add their own
//! generic searcher to the wasm bundle.

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
        NAMES[usize::from(self.0)]
    }

    /// Whether `text` is in this format.
    pub fn accepts(self, text: &str) -> bool {
        let t = text.as_bytes();
        match self.0 {
            0 => date_time(t),
            1 => date(t),
            2 => time(t),
            3 => duration(t),
            4 => email(t),
            5 => hostname(t),
            6 => ipv4(t),
            7 => ipv6(t),
            _ => uuid(t),
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

/// Exactly two digits at `at` (`None` past the end).
fn two(text: &[u8], at: usize) -> Option<u32> {
    number(text.get(at..at + 2)?)
}

/// Where `b` first occurs in `text`.
fn find(text: &[u8], b: u8) -> Option<usize> {
    text.iter().position(|&x| x == b)
}

/// The leading ASCII digits' count.
fn digit_run(text: &[u8]) -> usize {
    text.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// Whether every `sep`-separated part of `text` passes `part` (one part when `sep` does not occur).
fn all_parts(text: &[u8], sep: u8, part: fn(&[u8]) -> bool) -> bool {
    text.split(|&b| b == sep).all(part)
}

fn date(t: &[u8]) -> bool {
    let (Some(year), Some(month), Some(day)) =
        (number(t.get(..4).unwrap_or_default()), two(t, 5), two(t, 8))
    else {
        return false;
    };
    if t.len() != 10 || t[4] != b'-' || t[7] != b'-' {
        return false;
    }
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
    let (Some(hour), Some(minute), Some(second)) = (two(t, 0), two(t, 3), two(t, 6)) else {
        return false;
    };
    if t[2] != b':' || t[5] != b':' {
        return false;
    }
    let mut rest = &t[8..];
    if rest.first() == Some(&b'.') {
        let n = digit_run(&rest[1..]);
        if n == 0 {
            return false;
        }
        rest = &rest[1 + n..];
    }
    let offset_minutes: i64 = match rest {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (Some(h), Some(m)) = (two(rest, 1), two(rest, 4)) else {
                return false;
            };
            if h > 23 || m > 59 {
                return false;
            }
            let minutes = i64::from(h * 60 + m);
            if *sign == b'-' {
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
    match t.iter().position(|&b| b == b'T' || b == b't') {
        Some(at) => date(&t[..at]) && time(&t[at + 1..]),
        None => false,
    }
}

/// A duration part: number+designator pairs with the designators in the order of `designators`; how many.
fn units(part: &[u8], designators: &[u8]) -> Option<usize> {
    let mut count = 0;
    let mut allowed = designators;
    let mut rest = part;
    while !rest.is_empty() {
        let n = digit_run(rest);
        let at = find(allowed, *rest.get(n)?)?;
        if n == 0 {
            return None;
        }
        allowed = &allowed[at + 1..];
        rest = &rest[n + 1..];
        count += 1;
    }
    Some(count)
}

fn duration(t: &[u8]) -> bool {
    let Some((b'P', rest)) = t.split_first() else {
        return false;
    };
    let (date_part, time_part) = match find(rest, b'T') {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    if let Some((b'W', weeks)) = date_part.split_last() {
        return time_part.is_none() && number(weeks).is_some();
    }
    let Some(date_units) = units(date_part, b"YMD") else {
        return false;
    };
    match time_part {
        None => date_units > 0,
        Some(time_part) => units(time_part, b"HMS").is_some_and(|n| n > 0),
    }
}

fn label(l: &[u8]) -> bool {
    !l.is_empty()
        && l.len() <= 63
        && l[0] != b'-'
        && l[l.len() - 1] != b'-'
        && l.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'-')
}

fn hostname(t: &[u8]) -> bool {
    let t = t.strip_suffix(b".").unwrap_or(t);
    !t.is_empty() && t.len() <= 253 && all_parts(t, b'.', label)
}

fn atom(part: &[u8]) -> bool {
    !part.is_empty()
        && part
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&b))
}

fn email(t: &[u8]) -> bool {
    let Some(at) = t.iter().rposition(|&b| b == b'@') else {
        return false;
    };
    let (local, domain) = (&t[..at], &t[at + 1..]);
    let local_ok = match local {
        [b'"', quoted @ .., b'"'] => quoted
            .iter()
            .all(|&b| b != b'"' && b != b'\\' && (b' '..=b'~').contains(&b)),
        _ => all_parts(local, b'.', atom),
    };
    let domain_ok = match domain {
        [b'[', literal @ .., b']'] => match literal.strip_prefix(b"IPv6:") {
            Some(v6) => ipv6(v6),
            None => ipv4(literal),
        },
        _ => hostname(domain),
    };
    local_ok && domain_ok && local.len() <= 64
}

fn octet(part: &[u8]) -> bool {
    number(part).is_some_and(|n| n <= 255)
        && part.len() <= 3
        && (part.len() == 1 || part[0] != b'0')
}

fn ipv4(t: &[u8]) -> bool {
    t.iter().filter(|&&b| b == b'.').count() == 3 && all_parts(t, b'.', octet)
}

/// The count of `:`-separated hexadecimal groups of `part` (0 when empty), `None` when one is not a group.
fn groups(part: &[u8]) -> Option<usize> {
    if part.is_empty() {
        return Some(0);
    }
    let mut n = 0;
    for g in part.split(|&b| b == b':') {
        if g.is_empty() || g.len() > 4 || !g.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        n += 1;
    }
    Some(n)
}

/// Where `::` first occurs.
fn double_colon(t: &[u8]) -> Option<usize> {
    t.windows(2).position(|w| w == b"::")
}

fn ipv6(t: &[u8]) -> bool {
    // An IPv4 tail counts as two groups; the head keeps a `::` before it, and drops a single `:`.
    let (head, tail_groups) = match t.iter().rposition(|&b| b == b':') {
        Some(at) if find(&t[at + 1..], b'.').is_some() => {
            if !ipv4(&t[at + 1..]) {
                return false;
            }
            let head = &t[..=at];
            (
                if head.ends_with(b"::") {
                    head
                } else {
                    &t[..at]
                },
                2,
            )
        }
        _ => (t, 0),
    };
    match double_colon(head) {
        Some(at) => {
            let (left, right) = (&head[..at], &head[at + 2..]);
            if double_colon(right).is_some() {
                return false;
            }
            matches!((groups(left), groups(right)), (Some(l), Some(r)) if l + r + tail_groups <= 7)
        }
        None => groups(head).is_some_and(|n| n + tail_groups == 8),
    }
}

fn uuid(t: &[u8]) -> bool {
    t.len() == 36
        && t.iter().enumerate().all(|(i, &b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}
