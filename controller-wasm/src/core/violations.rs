//! The text of argument violations (pure): what the schema asks for and what came, written only for the
//! violations that are listed, and the error result that carries them (its format is in [`super::arguments`]).

use serde_json::{Map, Number, Value};

use super::formats::Format;
use super::json::to_text;
use super::pointer::decimal;
use super::schema::{Bound, Rules, TYPE_NAMES};
use super::tool_result::INVALID_ARGUMENTS_PREFIX;

/// One way the arguments differ from the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer of the offending value in the arguments (`""` is the arguments object).
    pub pointer: String,
    /// What the schema asks for there.
    pub expected: String,
    /// What the arguments hold there.
    pub got: String,
}

/// A value being checked: the arguments object is held as a `Map`, every other value as a `Value`.
#[derive(Clone, Copy)]
pub(super) enum ValueRef<'a> {
    Object(&'a Map<String, Value>),
    Other(&'a Value),
}

/// What the schema asks for where a violation is. Checks only name it; [`Expect::render`] writes the text,
/// and only for the violations that are listed.
pub(super) enum Expect<'a> {
    Text(&'static str),
    Types(u8),
    Required(&'a str),
    NoProperty(&'a Rules, &'a str),
    Enum(&'a [Value]),
    Const(&'a Value),
    /// A numeric rule (a bound or `multipleOf`).
    Bound(&'a Bound),
    /// `at least ` / `at most `, the count, its unit.
    Count(&'static str, u64, &'static str),
    Pattern(&'a str),
    Format(Format),
    /// How many alternatives `anyOf` has.
    Alternatives(usize),
}

/// What the arguments hold where a violation is (rendered like [`Expect`]).
pub(super) enum Got<'a> {
    Value(ValueRef<'a>),
    Text(&'static str),
    /// A string and its length in characters.
    Characters(&'a Value, u64),
    /// An array's item count.
    Items(u64),
    /// A number.
    Number(&'a Number),
}

/// Appends `n` in decimal.
fn push_number(out: &mut String, n: u64) {
    out.push_str(&decimal(n));
}

/// Appends a string as JSON text (quoted and escaped).
fn push_quoted(out: &mut String, text: &str) {
    out.push_str(&to_text(&Value::String(text.to_owned())));
}

/// Appends `text` cut to `max` characters, with `…` when cut.
fn push_cut(out: &mut String, text: &str, max: usize) {
    let kept = prefix(text, max);
    out.push_str(kept);
    if kept.len() < text.len() {
        out.push('…');
    }
}

impl Expect<'_> {
    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        let o = &mut out;
        match *self {
            Expect::Text(text) => o.push_str(text),
            Expect::Types(types) => push_types(o, types),
            Expect::Required(name) => {
                o.push_str("required property ");
                push_quoted(o, name);
            }
            Expect::NoProperty(rules, key) => {
                let mut allowed = String::new();
                for (name, _) in &rules.properties {
                    if !allowed.is_empty() {
                        allowed.push_str(", ");
                    }
                    push_quoted(&mut allowed, name);
                }
                o.push_str("no property ");
                push_quoted(o, key);
                o.push_str(" (additionalProperties is false; allowed: ");
                if allowed.is_empty() {
                    o.push_str("none");
                } else {
                    push_cut(o, &allowed, 200);
                }
                o.push(')');
            }
            Expect::Enum(values) => {
                let mut list = String::new();
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        list.push_str(", ");
                    }
                    list.push_str(&to_text(v));
                }
                o.push_str("one of [");
                push_cut(o, &list, 200);
                o.push(']');
            }
            Expect::Const(value) => {
                o.push_str("exactly ");
                push_cut(o, &to_text(value), 200);
            }
            Expect::Bound(bound) => {
                let rule = [
                    "a number >= ",
                    "a number > ",
                    "a number <= ",
                    "a number < ",
                    "a multiple of ",
                ]
                .get(usize::from(bound.kind));
                o.push_str(rule.copied().unwrap_or_default());
                o.push_str(bound.text.as_str());
            }
            Expect::Count(word, n, unit) => {
                o.push_str(word);
                push_number(o, n);
                o.push(' ');
                o.push_str(unit);
            }
            Expect::Pattern(text) => {
                o.push_str("a string matching the pattern ");
                push_quoted(o, text);
            }
            Expect::Format(format) => {
                o.push_str("a string in the format ");
                o.push_str(format.name());
            }
            Expect::Alternatives(count) => {
                o.push_str("a value matching one of the ");
                push_number(o, count as u64);
                o.push_str(" alternatives of anyOf; the closest one needs what follows");
            }
        }
        out
    }
}

impl Got<'_> {
    pub(super) fn render(&self) -> String {
        let mut out = String::new();
        let o = &mut out;
        match *self {
            Got::Value(value) => push_describe(o, value),
            Got::Text(text) => o.push_str(text),
            Got::Characters(value, n) => {
                push_describe(o, ValueRef::Other(value));
                o.push_str(" (");
                push_number(o, n);
                o.push_str(" characters)");
            }
            Got::Items(n) => push_items(o, n),
            Got::Number(n) => {
                o.push_str("number ");
                o.push_str(n.as_str());
            }
        }
        out
    }
}

impl<'a> Got<'a> {
    /// A copy, for a second violation of the same value.
    pub(super) fn again(&self) -> Got<'a> {
        match *self {
            Got::Value(v) => Got::Value(v),
            Got::Text(t) => Got::Text(t),
            Got::Characters(v, n) => Got::Characters(v, n),
            Got::Items(n) => Got::Items(n),
            Got::Number(n) => Got::Number(n),
        }
    }
}

/// `type a`, `type a or b`, `type a, b or c`.
fn push_types(out: &mut String, types: u8) {
    let mut names = TYPE_NAMES
        .iter()
        .filter(|(bit, _)| types & bit != 0)
        .peekable();
    if names.peek().is_none() {
        return out.push_str("no type");
    }
    out.push_str("type ");
    let mut first = true;
    while let Some((_, name)) = names.next() {
        if !first {
            out.push_str(if names.peek().is_some() { ", " } else { " or " });
        }
        out.push_str(name);
        first = false;
    }
}

fn push_items(out: &mut String, n: u64) {
    out.push_str("array of ");
    push_number(out, n);
    out.push_str(" items");
}

fn push_describe(out: &mut String, value: ValueRef<'_>) {
    match value {
        ValueRef::Object(_) => out.push_str("object"),
        ValueRef::Other(value) => out.push_str(&describe(value)),
    }
}

/// A short description of a value: its type and, for scalars, its JSON text (long strings cut).
pub fn describe(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "boolean true" } else { "boolean false" }),
        Value::Number(n) => {
            out.push_str("number ");
            out.push_str(n.as_str());
        }
        Value::String(_) => {
            out.push_str("string ");
            push_cut(&mut out, &to_text(value), 60);
        }
        Value::Array(items) => push_items(&mut out, items.len() as u64),
        Value::Object(_) => out.push_str("object"),
    }
    out
}

/// The first `max` characters of `text`.
fn prefix(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => text.get(..at).unwrap_or(text),
        None => text,
    }
}

/// The error result's content for a call to `tool` whose arguments broke `listed` (of `total`) rules, cut to
/// `max` characters.
pub fn invalid_arguments_text(tool: &str, listed: &[Violation], total: usize, max: u64) -> String {
    let mut text = String::from(INVALID_ARGUMENTS_PREFIX);
    text.push_str("The call to ");
    text.push_str(tool);
    text.push_str(" was not run: its arguments do not match the tool's inputSchema. Correct them and call the tool again.");
    for v in listed {
        text.push_str("\n- ");
        push_quoted(&mut text, &v.pointer);
        text.push_str(": expected ");
        text.push_str(&v.expected);
        text.push_str("; got ");
        text.push_str(&v.got);
    }
    if total > listed.len() {
        text.push_str("\n- … and ");
        push_number(&mut text, (total - listed.len()) as u64);
        text.push_str(" more");
    }
    prefix(&text, usize::try_from(max).unwrap_or(usize::MAX)).to_owned()
}
