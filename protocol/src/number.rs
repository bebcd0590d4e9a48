//! JSON numbers read exactly from their text, without parsing them as floats.
//!
//! Numbers keep their text (`arbitrary_precision`), so two questions are answered from the digits themselves:
//! how two numbers compare (JSON Schema bounds, in the runtime's argument validation), and whether a number lies
//! in the range of a double (what a browser can hold). Parsing as `f64` would answer the second too, but it
//! links core's float parser (about 15 KB of code and tables) into the wasm bundle, and it answers the first
//! only approximately (`9007199254740993` and `9007199254740992` are one double).

use std::cmp::Ordering;

use serde_json::Number;

/// A JSON number as `sign × 0.d₁d₂…dₙ × 10^exponent`, its digits without leading or trailing zeros (zero has no
/// digits), so that equal values have equal representations (`1.50`, `15e-1` and `0.15e1` are one `Decimal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decimal {
    /// Whether the value is below zero (never set for zero: `-0` equals `0`).
    pub negative: bool,
    /// Significant digits, each 0..=9, the first and the last not 0.
    pub digits: Vec<u8>,
    /// The power of ten the digits are scaled by, read as a fraction `0.d₁d₂…`.
    pub exponent: i64,
}

/// Exponents are kept within this bound: beyond it every comparison and range question is already decided, and
/// the arithmetic on them cannot overflow.
const EXPONENT_BOUND: i64 = 1 << 40;

/// The digits of 2^1024 − 2^970, the least magnitude a double rounds to infinity (halfway between the largest
/// finite double and 2^1024, where round-half-to-even goes up): `0.1797…792 × 10^309`.
const DOUBLE_OVERFLOW: &str = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
const DOUBLE_OVERFLOW_EXPONENT: i64 = 309;

impl Decimal {
    /// Reads JSON number text (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`); `None` for anything else.
    pub fn parse(text: &str) -> Option<Decimal> {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], exponent_value(&unsigned[at + 1..])?),
            None => (unsigned, 0),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((int, frac)) if !frac.is_empty() => (int, frac),
            Some(_) => return None,
            None => (mantissa, ""),
        };
        let leading_zero_ok = int == "0" || !int.starts_with('0');
        if int.is_empty() || !leading_zero_ok || !all_digits(int) || !all_digits(frac) {
            return None;
        }
        let all = int.bytes().chain(frac.bytes()).map(|b| b - b'0');
        let mut digits: Vec<u8> = all.skip_while(|&d| d == 0).collect();
        let skipped = int.len() + frac.len() - digits.len();
        while digits.last() == Some(&0) {
            digits.pop();
        }
        if digits.is_empty() {
            return Some(Decimal {
                negative: false,
                digits,
                exponent: 0,
            });
        }
        let exponent =
            (int.len() as i64 - skipped as i64 + exponent).clamp(-EXPONENT_BOUND, EXPONENT_BOUND);
        Some(Decimal {
            negative,
            digits,
            exponent,
        })
    }

    /// The value of a serde_json number (its text, kept by `arbitrary_precision`).
    pub fn of(number: &Number) -> Decimal {
        Decimal::parse(number.as_str()).expect("serde_json keeps only valid JSON number text")
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the value is a whole number (`3`, `3.0`, `3e2`; JSON Schema's `integer`).
    pub fn is_integer(&self) -> bool {
        self.digits.len() as i64 <= self.exponent || self.is_zero()
    }

    /// Whether a double holds this value without overflowing to ±infinity (a value below the smallest
    /// subnormal rounds to zero, like any other digits a double cannot hold, and counts as in range).
    pub fn within_double_range(&self) -> bool {
        match self.exponent.cmp(&DOUBLE_OVERFLOW_EXPONENT) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => {
                let limit = DOUBLE_OVERFLOW.bytes().map(|b| b - b'0');
                self.digits.iter().copied().lt(limit)
            }
        }
    }

    /// The value's magnitude compared with `other`'s.
    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => self
                .exponent
                .cmp(&other.exponent)
                .then_with(|| self.digits.cmp(&other.digits)),
        }
    }

    /// Whether `self / divisor` is a whole number; `None` when the divisor is zero or has more significant
    /// digits than this exact check handles (9: the arithmetic stays within `u64`).
    pub fn is_multiple_of(&self, divisor: &Decimal) -> Option<bool> {
        if divisor.is_zero() || divisor.digits.len() > 9 {
            return None;
        }
        if self.is_zero() {
            return Some(true);
        }
        // self = D × 10^e and divisor = E × 10^f with D, E whole and without trailing zeros; the quotient is
        // D / E × 10^(e − f).
        let e = self.exponent - self.digits.len() as i64;
        let f = divisor.exponent - divisor.digits.len() as i64;
        let modulus = divisor
            .digits
            .iter()
            .fold(0u64, |n, &d| n * 10 + u64::from(d));
        if e < f {
            // D has no trailing zero, so D / (E × 10^(f − e)) is never whole.
            return Some(false);
        }
        let remainder = self
            .digits
            .iter()
            .fold(0u64, |r, &d| (r * 10 + u64::from(d)) % modulus);
        let scaled = remainder * pow_mod(10, (e - f) as u64, modulus) % modulus;
        Some(scaled == 0)
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn all_digits(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit())
}

/// An exponent's value, saturated at [`EXPONENT_BOUND`] (`1e99999999999999999999` is as infinite as `1e400`).
fn exponent_value(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !all_digits(digits) {
        return None;
    }
    let magnitude = digits.bytes().fold(0i64, |n, b| {
        (n * 10 + i64::from(b - b'0')).min(EXPONENT_BOUND)
    });
    Some(if negative { -magnitude } else { magnitude })
}

fn pow_mod(base: u64, mut exponent: u64, modulus: u64) -> u64 {
    let mut result = 1 % modulus;
    let mut base = base % modulus;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * base % modulus;
        }
        base = base * base % modulus;
        exponent >>= 1;
    }
    result
}
