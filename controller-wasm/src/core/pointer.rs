//! JSON Pointers for the schema reader and the violations (pure): building one token by token, reading the
//! tokens of a `$ref` fragment as bytes (percent-decoding, `~0` / `~1`, array indices), and the small digit reader
//! and writer the validator shares (`from_str_radix`, `to_string` and a UTF-8 check would each bring their own
//! code).

use patchbridge_protocol::number::Decimal;

/// Appends `token` to `pointer`, escaped (`~` → `~0`, `/` → `~1`).
pub fn pointer_push(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `n` in decimal (one small writer: `to_string` / `format!` would bring their own call-site code).
pub fn decimal(n: u64) -> String {
    let mut out = if n >= 10 {
        decimal(n / 10)
    } else {
        String::new()
    };
    out.push(char::from(b'0' + (n % 10) as u8));
    out
}

/// The value of two hexadecimal digits as `u8::from_str_radix(_, 16)` reads them (an optional leading `+`, so `+F`
/// is one digit), without its generic code.
fn hex_byte(text: &[u8]) -> Option<u8> {
    let digits = text.strip_prefix(b"+").unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    let mut n: u8 = 0;
    for &c in digits {
        // Two digits at most: no overflow.
        n = n * 16 + char::from(c).to_digit(16)? as u8;
    }
    Some(n)
}

/// An array index token as `usize::from_str` reads it.
pub fn index_value(token: &[u8]) -> Option<usize> {
    let digits = token.strip_prefix(b"+").unwrap_or(token);
    if digits.is_empty() {
        return None;
    }
    let mut n: usize = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
    }
    Some(n)
}

/// A JSON Pointer token's bytes (`~1` → `/`, `~0` → `~`).
pub fn unescape(token: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len());
    let mut i = 0;
    while i < token.len() {
        let mut b = token[i];
        if b == b'~' {
            if let Some(&next @ (b'0' | b'1')) = token.get(i + 1) {
                b = if next == b'1' { b'/' } else { b'~' };
                i += 1;
            }
        }
        out.push(b);
        i += 1;
    }
    out
}

/// A `$ref` fragment's bytes with its `%XX` escapes decoded; `None` when an escape is malformed. The bytes are
/// compared with the schema's keys as they are, so they need no UTF-8 check: bytes that are not UTF-8 match no key.
pub fn percent_decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let mut b = text[i];
        if b == b'%' {
            b = hex_byte(text.get(i + 1..i + 3)?)?;
            i += 2;
        }
        out.push(b);
        i += 1;
    }
    Some(out)
}

/// A non-negative integer count, saturated at `u64::MAX` (no string or array is that long).
pub fn count_value(n: &Decimal) -> u64 {
    if n.is_zero() {
        return 0;
    }
    if n.exponent > 19 {
        return u64::MAX;
    }
    let mut value: u64 = 0;
    for i in 0..n.exponent as usize {
        let digit = u64::from(n.digits.get(i).copied().unwrap_or(0));
        value = value.saturating_mul(10).saturating_add(digit);
    }
    value
}
