//! JSON Pointers for the schema reader and the violations (pure): building one token by token, reading the
//! tokens of a `$ref` fragment (percent-decoding, `~0` / `~1`, array indices), and the small digit reader and
//! writer the validator shares (`from_str_radix` and `to_string` would each bring their own generic code).

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
pub fn decimal(mut n: u64) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&digits[at..])
        .unwrap_or_default()
        .to_owned()
}

/// The value of hexadecimal (`radix` 16) or decimal (10) digit text, as `from_str_radix` reads it (an optional
/// leading `+`, at least one digit, `None` on overflow), without its generic code.
fn digits_value(text: &str, radix: u32) -> Option<u32> {
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    let mut n: u32 = 0;
    for c in digits.chars() {
        n = n.checked_mul(radix)?.checked_add(c.to_digit(radix)?)?;
    }
    Some(n)
}

/// An array index token as `usize::from_str` reads it.
pub fn index_value(token: &str) -> Option<usize> {
    let digits = token.strip_prefix('+').unwrap_or(token);
    if digits.is_empty() {
        return None;
    }
    let mut n: usize = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
    }
    Some(n)
}

/// A JSON Pointer token's text (`~1` → `/`, `~0` → `~`).
pub fn unescape(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('1') => out.push('/'),
                Some('0') => out.push('~'),
                Some(other) => {
                    out.push('~');
                    out.push(other);
                }
                None => out.push('~'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A `$ref` fragment with its `%XX` escapes decoded; `None` when an escape is malformed or the result is not UTF-8.
pub fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::try_from(digits_value(hex, 16)?).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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
