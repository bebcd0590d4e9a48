//! The string `format`s that tool-argument validation checks (pure): the ones model providers document for tool
//! schemas and that need no large dependency. Other format names are annotations and are not checked.

/// A checked format (closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// RFC 3339 `date-time` (`2026-12-01T09:30:00Z`).
    DateTime,
    /// RFC 3339 `full-date` (`2026-12-01`).
    Date,
    /// RFC 3339 `full-time` (`09:30:00+01:00`).
    Time,
    /// ISO 8601 duration as in RFC 3339 appendix A (`P1DT2H`).
    Duration,
    /// An e-mail address (`name@example.com`; RFC 5321 mailbox, dot-atom local part).
    Email,
    /// An RFC 1123 host name.
    Hostname,
    /// A dotted-quad IPv4 address.
    Ipv4,
    /// An RFC 4291 IPv6 address.
    Ipv6,
    /// An RFC 4122 UUID (`8-4-4-4-12` hexadecimal digits).
    Uuid,
}

impl Format {
    /// The checked format called `name`; `None` for formats this runtime does not check.
    pub fn named(name: &str) -> Option<Format> {
        Some(match name {
            "date-time" => Format::DateTime,
            "date" => Format::Date,
            "time" => Format::Time,
            "duration" => Format::Duration,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "uuid" => Format::Uuid,
            _ => return None,
        })
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        match self {
            Format::DateTime => "date-time",
            Format::Date => "date",
            Format::Time => "time",
            Format::Duration => "duration",
            Format::Email => "email",
            Format::Hostname => "hostname",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Uuid => "uuid",
        }
    }

    /// Whether `text` is in this format.
    pub fn accepts(self, text: &str) -> bool {
        match self {
            Format::DateTime => date_time(text),
            Format::Date => date(text),
            Format::Time => time(text),
            Format::Duration => duration(text),
            Format::Email => email(text),
            Format::Hostname => hostname(text),
            Format::Ipv4 => ipv4(text),
            Format::Ipv6 => ipv6(text),
            Format::Uuid => uuid(text),
        }
    }
}

/// Exactly `n` ASCII digits as a number.
fn digits(text: &str, n: usize) -> Option<u32> {
    (text.len() == n && text.bytes().all(|b| b.is_ascii_digit())).then(|| {
        text.bytes()
            .fold(0, |acc, b| acc * 10 + u32::from(b - b'0'))
    })
}

fn date(text: &str) -> bool {
    let (Some(year), Some(month), Some(day)) = (
        text.get(0..4).and_then(|s| digits(s, 4)),
        text.get(5..7).and_then(|s| digits(s, 2)),
        text.get(8..).and_then(|s| digits(s, 2)),
    ) else {
        return false;
    };
    let bytes = text.as_bytes();
    if bytes[4] != b'-' || bytes[7] != b'-' {
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

fn time(text: &str) -> bool {
    let (Some(hour), Some(minute), Some(second)) = (
        text.get(0..2).and_then(|s| digits(s, 2)),
        text.get(3..5).and_then(|s| digits(s, 2)),
        text.get(6..8).and_then(|s| digits(s, 2)),
    ) else {
        return false;
    };
    let bytes = text.as_bytes();
    if bytes[2] != b':' || bytes[5] != b':' {
        return false;
    }
    let mut rest = &text[8..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    let offset_minutes: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return false,
            };
            let (Some(h), Some(m)) = (
                rest.get(1..3).and_then(|s| digits(s, 2)),
                rest.get(4..).and_then(|s| digits(s, 2)),
            ) else {
                return false;
            };
            if rest.as_bytes()[3] != b':' || h > 23 || m > 59 {
                return false;
            }
            sign * i64::from(h * 60 + m)
        }
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    // A leap second exists only at 23:59:60 UTC.
    let utc = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
    second < 60 || utc == 23 * 60 + 59
}

fn date_time(text: &str) -> bool {
    match text.find(['T', 't']) {
        Some(at) => date(&text[..at]) && time(&text[at + 1..]),
        None => false,
    }
}

fn duration(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('P') else {
        return false;
    };
    let (date_part, time_part) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    // Each part is a sequence of number+designator with the designators in order.
    let units = |part: &str, designators: &str| -> Option<usize> {
        let mut count = 0;
        let mut allowed = designators;
        let mut rest = part;
        while !rest.is_empty() {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            let designator = rest[n..].chars().next()?;
            let at = allowed.find(designator)?;
            if n == 0 {
                return None;
            }
            allowed = &allowed[at + 1..];
            rest = &rest[n + 1..];
            count += 1;
        }
        Some(count)
    };
    if let Some(weeks) = date_part.strip_suffix('W') {
        return time_part.is_none()
            && !weeks.is_empty()
            && weeks.bytes().all(|b| b.is_ascii_digit());
    }
    let Some(date_units) = units(date_part, "YMD") else {
        return false;
    };
    match time_part {
        None => date_units > 0,
        Some(time_part) => units(time_part, "HMS").is_some_and(|n| n > 0),
    }
}

fn hostname(text: &str) -> bool {
    let text = text.strip_suffix('.').unwrap_or(text);
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let atom = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&b);
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        local[1..local.len() - 1]
            .bytes()
            .all(|b| b != b'"' && b != b'\\' && (b' '..=b'~').contains(&b))
    } else {
        !local.is_empty()
            && local
                .split('.')
                .all(|part| !part.is_empty() && part.bytes().all(atom))
    };
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => match literal.strip_prefix("IPv6:") {
            Some(v6) => ipv6(v6),
            None => ipv4(literal),
        },
        None => hostname(domain),
    };
    local_ok && domain_ok && local.len() <= 64
}

fn ipv4(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|part| {
            !part.is_empty()
                && part.len() <= 3
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part.len() == 1 || !part.starts_with('0'))
                && part.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

fn ipv6(text: &str) -> bool {
    // An IPv4 tail counts as two groups.
    let (head, tail_groups) = match text.rfind(':') {
        Some(at) if text[at + 1..].contains('.') => {
            if !ipv4(&text[at + 1..]) {
                return false;
            }
            (&text[..=at], 2)
        }
        _ => (text, 0),
    };
    let group = |g: &str| !g.is_empty() && g.len() <= 4 && g.bytes().all(|b| b.is_ascii_hexdigit());
    // A tail after the IPv4 split leaves `head` ending in ':'; give it a placeholder group back.
    let head = if tail_groups > 0 {
        match head.strip_suffix(':') {
            Some(h) if h.ends_with(':') => format!("{h}:"),
            Some(h) => h.to_owned(),
            None => return false,
        }
    } else {
        head.to_owned()
    };
    let count = |part: &str| -> Option<usize> {
        if part.is_empty() {
            return Some(0);
        }
        part.split(':')
            .try_fold(0, |n, g| group(g).then_some(n + 1))
    };
    let double_colon = |s: &str| s.as_bytes().windows(2).position(|w| w == b"::");
    match double_colon(&head) {
        Some(at) => {
            let (left, right) = (&head[..at], &head[at + 2..]);
            if double_colon(right).is_some() {
                return false;
            }
            matches!((count(left), count(right)), (Some(l), Some(r)) if l + r + tail_groups <= 7)
        }
        None => count(&head).is_some_and(|n| n + tail_groups == 8),
    }
}

fn uuid(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, &b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}
