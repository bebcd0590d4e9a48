//! The five execution limits and their validation (pure).
//!
//! Every limit must be a *safe positive integer* (1 ..= 2^53 − 1, the integers JavaScript represents exactly);
//! `maxDurationMs` must also be at most 2147483647 (the largest delay `setTimeout` honours). Unknown keys are an
//! error so that a typo cannot silently leave a limit at its default.
//!
//! Character limits count **Unicode scalar values** (Rust `char`s), not UTF-16 code units or bytes: one emoji
//! is one character, an ASCII letter is one character.

use patchbridge_protocol::write::Object;
use patchbridge_protocol::ToValue;
use serde_json::{Map, Value};

use super::error::{AgentError, LimitName};
use super::json::to_text;

/// The largest integer JavaScript represents exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The largest `maxDurationMs` (`2^31 − 1`, the largest `setTimeout` delay).
pub const MAX_DURATION_MS: u64 = 2_147_483_647;

patchbridge_protocol::wire! {
    written, ts(test);
    /// The five per-execution limits. `DefaultAgentRuntime` requires all; `createAgentController` takes a partial
    /// override of the defaults.
    // Built with `Limits::from_full_json`, `Limits::from_partial_json`, or by hand and then `Limits::validate`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Limits {
        /// `maxModelCalls`: model calls per execution (default 16).
        pub max_model_calls: u64 = "maxModelCalls",
        /// `maxToolCalls`: tool calls accepted per execution, cumulative over all batches (default 32).
        pub max_tool_calls: u64 = "maxToolCalls",
        /// `maxDurationMs`: wall time of the whole execution (model, tools and confirmation waits), in ms, at most
        /// 2147483647 (default 300000).
        pub max_duration_ms: u64 = "maxDurationMs",
        /// `maxModelOutputCharacters`: text + shown reasoning + tool-argument characters aggregated from one model
        /// call, counted as Unicode scalar values (default 100000).
        pub max_model_output_characters: u64 = "maxModelOutputCharacters",
        /// `maxToolResultCharacters`: Unicode scalar values of one tool result's `content` (default 100000).
        pub max_tool_result_characters: u64 = "maxToolResultCharacters",
    }
}

impl Limits {
    /// The factory defaults used by the controller (`createAgentController`) for keys not overridden.
    pub const DEFAULT: Limits = Limits {
        max_model_calls: 16,
        max_tool_calls: 32,
        max_duration_ms: 300_000,
        max_model_output_characters: 100_000,
        max_tool_result_characters: 100_000,
    };

    /// Reads one limit by name.
    pub fn get(&self, name: LimitName) -> u64 {
        match name {
            LimitName::MaxModelCalls => self.max_model_calls,
            LimitName::MaxToolCalls => self.max_tool_calls,
            LimitName::MaxDurationMs => self.max_duration_ms,
            LimitName::MaxModelOutputCharacters => self.max_model_output_characters,
            LimitName::MaxToolResultCharacters => self.max_tool_result_characters,
        }
    }

    fn set(&mut self, name: LimitName, value: u64) {
        match name {
            LimitName::MaxModelCalls => self.max_model_calls = value,
            LimitName::MaxToolCalls => self.max_tool_calls = value,
            LimitName::MaxDurationMs => self.max_duration_ms = value,
            LimitName::MaxModelOutputCharacters => self.max_model_output_characters = value,
            LimitName::MaxToolResultCharacters => self.max_tool_result_characters = value,
        }
    }

    /// Checks every limit is a safe positive integer and `maxDurationMs` <= 2147483647.
    pub fn validate(&self) -> Result<(), AgentError> {
        for name in LimitName::ALL {
            check_range(name, self.get(name))?;
        }
        Ok(())
    }

    /// Parses the complete form `DefaultAgentRuntime` requires: all five keys, nothing else.
    pub fn from_full_json(value: &Value) -> Result<Limits, AgentError> {
        let object = as_object(value)?;
        let mut limits = Limits::DEFAULT;
        apply(&mut limits, object)?;
        for name in LimitName::ALL {
            if !object.contains_key(name.as_str()) {
                return Err(AgentError::invalid_limits(
                    Some(name),
                    format!("limits.{name} is required: DefaultAgentRuntime merges no defaults"),
                ));
            }
        }
        Ok(limits)
    }

    /// Parses the partial override form the controller accepts: given keys replace [`Limits::DEFAULT`].
    /// `null`/absent means "no override".
    pub fn from_partial_json(value: &Value) -> Result<Limits, AgentError> {
        let mut limits = Limits::DEFAULT;
        if value.is_null() {
            return Ok(limits);
        }
        apply(&mut limits, as_object(value)?)?;
        Ok(limits)
    }

    /// The limits as JSON with camelCase keys.
    pub fn to_json(&self) -> Value {
        self.to_value()
    }
}

fn as_object(value: &Value) -> Result<&Map<String, Value>, AgentError> {
    value
        .as_object()
        .ok_or_else(|| AgentError::invalid_limits(None, "limits must be an object"))
}

fn apply(limits: &mut Limits, object: &Map<String, Value>) -> Result<(), AgentError> {
    for (key, raw) in object {
        let Some(name) = LimitName::parse(key) else {
            return Err(AgentError::invalid_limits(
                None,
                format!(
                    "unknown limit key {key:?}; known keys: {}",
                    LimitName::ALL.map(LimitName::as_str).join(", ")
                ),
            )
            .with_details(Object::new().put("key", key.as_str()).done()));
        };
        let value = safe_positive_integer(raw).ok_or_else(|| {
            AgentError::invalid_limits(
                Some(name),
                format!(
                    "limits.{name} must be a safe positive integer, got {}",
                    to_text(raw)
                ),
            )
        })?;
        check_range(name, value)?;
        limits.set(name, value);
    }
    Ok(())
}

/// Accepts JSON integers and integral floats (JavaScript numbers arrive as either) in 1 ..= 2^53 − 1.
pub fn safe_positive_integer(raw: &Value) -> Option<u64> {
    let number = raw.as_number()?;
    if let Some(u) = number.as_u64() {
        return Some(u);
    }
    integral_text(&number.to_string()).filter(|n| (1..=MAX_SAFE_INTEGER).contains(n))
}

/// The integer a JSON number's text denotes when it is integral (`4.0`, `1e3`, `1.5e1`), read from the digits
/// rather than through `f64`: numbers keep their text (serde_json's `arbitrary_precision`), and parsing it as a
/// float is what linked core's float parser (about 15 KB of code and tables) into the wasm bundle. The two
/// readings differ only for a literal with more significant digits than a double holds (`4.0000000000000000001`
/// rounds to 4 as a float, here it has a fraction), which JavaScript's JSON.stringify never writes.
fn integral_text(text: &str) -> Option<u64> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        // `get`: `i` is the boundary of an ASCII character, and a checked slice would keep a panic location.
        Some(i) => (text.get(..i)?, text.get(i + 1..)?.parse::<i32>().ok()?),
        None => (text, 0),
    };
    if mantissa.starts_with('-') {
        return None;
    }
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let trailing_zeros = digits.iter().rev().take_while(|&&b| b == b'0').count();
    let significant = &digits[..digits.len() - trailing_zeros];
    let scale = i64::from(exponent) + trailing_zeros as i64 - frac.len() as i64;
    if significant.is_empty() || scale < 0 {
        return None; // zero, or a fraction remains
    }
    let mut value: u64 = 0;
    for &b in significant {
        value = value
            .checked_mul(10)?
            .checked_add(u64::from(b.checked_sub(b'0')?))?;
    }
    for _ in 0..scale {
        value = value.checked_mul(10)?;
    }
    Some(value)
}

fn check_range(name: LimitName, value: u64) -> Result<(), AgentError> {
    if value == 0 || value > MAX_SAFE_INTEGER {
        return Err(AgentError::invalid_limits(
            Some(name),
            format!(
                "limits.{name} must be a safe positive integer (1..=9007199254740991), got {value}"
            ),
        ));
    }
    if name == LimitName::MaxDurationMs && value > MAX_DURATION_MS {
        return Err(AgentError::invalid_limits(
            Some(name),
            format!("limits.maxDurationMs must be at most 2147483647, got {value}"),
        ));
    }
    Ok(())
}
