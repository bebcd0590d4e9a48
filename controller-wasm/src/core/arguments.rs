//! Checking a tool call's arguments against its tool's compiled [`Schema`], and the error result the model gets
//! when they do not match (pure).
//!
//! The result is the runtime's own, like a not-run result: `isError: true` and content starting with
//! [`INVALID_ARGUMENTS_PREFIX`] (reserved: a tool may not return it), then one line per violation:
//!
//! ```text
//! [invalid arguments] The call to todos.add was not run: its arguments do not match the tool's inputSchema. Correct them and call the tool again.
//! - "/text": expected type string; got number 5
//! - "": expected required property "title"; got no such property
//! ```
//!
//! Each line is `- <JSON Pointer as a JSON string>: expected <what the schema asks>; got <what came>`. At most
//! [`MAX_LISTED`] lines are listed (then `- … and N more`), and the text is cut to `maxToolResultCharacters`.

use patchbridge_protocol::number::Decimal;
use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use super::pointer::{decimal, pointer_push};
use super::schema::{
    Node, Rules, Schema, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING, UNBOUNDED,
};
pub use super::violations::{describe, invalid_arguments_text, Violation};
use super::violations::{Expect, Got, ValueRef};

/// Violations listed in one error result.
pub const MAX_LISTED: usize = 20;

/// Where a value sits in the arguments; rendered as a JSON Pointer only when a violation is reported.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn pointer(&self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Key(parent, key) => pointer_push(&parent.pointer(), key),
            Path::Index(parent, i) => pointer_push(&parent.pointer(), &decimal(*i as u64)),
        }
    }
}

/// The host's `RegExp` threw while matching a string of the arguments: the check has no answer (never read as
/// "no match"), and the caller ends the execution with it.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternFailure {
    /// The pattern as the schema writes it (or a format's generated pattern).
    pub pattern: String,
    /// The host's reason (the thrown value as text).
    pub reason: String,
}

/// Violations found, the first [`MAX_LISTED`] kept.
#[derive(Default)]
struct Found {
    listed: Vec<Violation>,
    total: usize,
    /// The types asked for by the type violations found (bits of `schema`'s type constants).
    wanted_types: u8,
    /// The first pattern whose matching threw; the violations found are then no answer.
    failure: Option<PatternFailure>,
}

impl Found {
    fn answer(self) -> Result<(Vec<Violation>, usize), PatternFailure> {
        match self.failure {
            Some(failure) => Err(failure),
            None => Ok((self.listed, self.total)),
        }
    }

    /// Whether `pattern` matches `s`; a throw is kept as the check's failure (and counts as a match, so nothing
    /// is reported for it: the whole answer is dropped anyway).
    fn matches(&mut self, pattern: &super::pattern::Pattern, s: &str) -> bool {
        match pattern.regex.is_match(s) {
            Ok(matched) => matched,
            Err(reason) => {
                self.failure.get_or_insert_with(|| PatternFailure {
                    pattern: pattern.source.to_string(),
                    reason,
                });
                true
            }
        }
    }

    #[inline(never)]
    fn add(&mut self, path: &Path<'_>, expected: Expect<'_>, got: Got<'_>) {
        self.total += 1;
        if let Expect::Types(types) = expected {
            if let Got::Value(ValueRef::Other(_)) = got {
                self.wanted_types |= types;
            }
        }
        if self.listed.len() < MAX_LISTED {
            self.listed.push(Violation {
                pointer: path.pointer(),
                expected: expected.render(),
                got: got.render(),
            });
        }
    }
}

impl ValueRef<'_> {
    fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (ValueRef::Object(a), Value::Object(b)) => object_equal(a, b),
            (ValueRef::Other(a), b) => json_equal(a, b),
            _ => false,
        }
    }
}

impl Schema {
    /// The violations of `arguments` (empty when they match), the first [`MAX_LISTED`], and how many in all; a
    /// [`PatternFailure`] when the host's `RegExp` threw on one of its strings.
    pub fn check(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<(Vec<Violation>, usize), PatternFailure> {
        let mut found = Found::default();
        // The arguments are an object; borrowing it as a `Value` would need a copy.
        self.check_node(0, ValueRef::Object(arguments), &Path::Root, &mut found);
        found.answer()
    }

    /// [`Schema::check`] for any JSON value (the official test suite checks scalars and arrays too).
    pub fn check_value_at_root(
        &self,
        value: &Value,
    ) -> Result<(Vec<Violation>, usize), PatternFailure> {
        let mut found = Found::default();
        self.check_value(0, value, &Path::Root, &mut found);
        found.answer()
    }

    fn check_value(&self, node: usize, value: &Value, path: &Path<'_>, found: &mut Found) {
        let value = match value {
            Value::Object(object) => ValueRef::Object(object),
            other => ValueRef::Other(other),
        };
        self.check_node(node, value, path, found);
    }

    fn check_node(&self, node: usize, value: ValueRef<'_>, path: &Path<'_>, found: &mut Found) {
        let rules = match self.nodes.get(node) {
            Some(Node::Rules(rules)) => rules,
            Some(Node::Bool(false)) => {
                return found.add(
                    path,
                    Expect::Text("no value here (the schema is false)"),
                    Got::Value(value),
                )
            }
            _ => return,
        };
        let types = rules.types;
        if types != 0 {
            let ok = match value {
                ValueRef::Object(_) => types & OBJECT != 0,
                ValueRef::Other(value) => has_type(value, types),
            };
            if !ok {
                // An object is reported as `object`, and (unlike other values) does not count as only wanting
                // another type when the alternatives of an `anyOf` are summed up.
                return found.add(path, Expect::Types(types), Got::Value(value));
            }
        }
        match value {
            ValueRef::Object(object) => self.check_object(rules, object, path, found),
            ValueRef::Other(Value::Number(n)) if !rules.bounds.is_empty() => {
                check_number(rules, n, path, found)
            }
            ValueRef::Other(v @ Value::String(s)) => check_string(rules, s, v, path, found),
            ValueRef::Other(Value::Array(items)) => self.check_array(rules, items, path, found),
            _ => {}
        }
        self.check_applicators(rules, value, path, found);
    }

    fn check_applicators(
        &self,
        rules: &Rules,
        value: ValueRef<'_>,
        path: &Path<'_>,
        found: &mut Found,
    ) {
        if let Some(allowed) = &rules.enumeration {
            if !allowed.iter().any(|a| value.equals(a)) {
                found.add(path, Expect::Enum(allowed), Got::Value(value));
            }
        }
        if let Some(constant) = &rules.constant {
            if !value.equals(constant) {
                found.add(path, Expect::Const(constant), Got::Value(value));
            }
        }
        if let Some(target) = rules.reference {
            self.check_node(target, value, path, found);
        }
        if rules.any_of.is_empty() {
            return;
        }
        let mut failed = Vec::new();
        for &node in &rules.any_of {
            let mut branch = Found::default();
            self.check_node(node, value, path, &mut branch);
            if branch.failure.is_some() {
                found.failure = branch.failure;
                return;
            }
            if branch.total == 0 {
                return;
            }
            failed.push(branch);
        }
        report_alternatives(failed, value, path, found);
    }

    fn check_object(
        &self,
        rules: &Rules,
        object: &Map<String, Value>,
        path: &Path<'_>,
        found: &mut Found,
    ) {
        for name in &rules.required {
            // Arguments objects are small: comparing keys beats hashing the name with SipHash.
            if !object.keys().any(|key| key == name) {
                found.add(path, Expect::Required(name), Got::Text("no such property"));
            }
        }
        for (key, value) in object {
            let child = Path::Key(path, key);
            if let Some((_, node)) = rules.properties.iter().find(|(name, _)| name == key) {
                self.check_value(*node, value, &child, found);
            } else if let Some(node) = rules.additional_properties {
                if matches!(self.nodes.get(node), Some(Node::Bool(false))) {
                    found.add(
                        &child,
                        Expect::NoProperty(rules, key),
                        Got::Value(ValueRef::Other(value)),
                    );
                } else {
                    self.check_value(node, value, &child, found);
                }
            }
        }
    }

    fn check_array(&self, rules: &Rules, items: &[Value], path: &Path<'_>, found: &mut Found) {
        if let Some(node) = rules.items {
            for (i, item) in items.iter().enumerate().skip(rules.items_from) {
                self.check_value(node, item, &Path::Index(path, i), found);
            }
        }
        let n = items.len() as u64;
        let [_, _, min_items, max_items] = rules.counts;
        count_bounds(
            [min_items, max_items],
            "items",
            n,
            path,
            found,
            Got::Items(n),
        );
    }
}

fn check_number(rules: &Rules, number: &Number, path: &Path<'_>, found: &mut Found) {
    let small = number.as_i64();
    let mut exact: Option<Decimal> = None;
    // Minimums first, then maximums, then `multipleOf`, each in schema order.
    for group in 0..3 {
        for bound in rules.bounds.iter().filter(|b| b.kind / 2 == group) {
            let broken = if bound.kind == 4 {
                let n = exact.get_or_insert_with(|| Decimal::of(number));
                n.is_multiple_of(&bound.value) == Some(false)
            } else {
                let order = match (small, bound.small) {
                    (Some(x), Some(b)) => x.cmp(&b),
                    _ => Ord::cmp(
                        &*exact.get_or_insert_with(|| Decimal::of(number)),
                        &bound.value,
                    ),
                };
                let inside = if bound.kind >= 2 {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                order != inside && (order != Ordering::Equal || bound.kind % 2 == 1)
            };
            if broken {
                found.add(path, Expect::Bound(bound), Got::Number(number));
            }
        }
    }
}

fn check_string(rules: &Rules, s: &str, value: &Value, path: &Path<'_>, found: &mut Found) {
    let [min_length, max_length, _, _] = rules.counts;
    if [min_length, max_length] != [0, UNBOUNDED] {
        let n = s.chars().count() as u64;
        let got = Got::Characters(value, n);
        count_bounds([min_length, max_length], "characters", n, path, found, got);
    }
    if let Some(pattern) = &rules.pattern {
        if !found.matches(pattern, s) {
            found.add(
                path,
                Expect::Pattern(&pattern.source),
                Got::Value(ValueRef::Other(value)),
            );
        }
    }
    if let Some(format) = rules.format {
        let accepted = match &rules.format_regex {
            Some(pattern) => found.matches(pattern, s),
            None => format.accepts(s),
        };
        if !accepted {
            found.add(
                path,
                Expect::Format(format),
                Got::Value(ValueRef::Other(value)),
            );
        }
    }
}

/// Checks the count `n` against a pair of [`Rules::counts`], in `unit`s.
fn count_bounds(
    [min, max]: [u64; 2],
    unit: &'static str,
    n: u64,
    path: &Path<'_>,
    found: &mut Found,
    got: Got<'_>,
) {
    if n < min {
        found.add(path, Expect::Count("at least ", min, unit), got.again());
    }
    if n > max {
        found.add(path, Expect::Count("at most ", max, unit), got);
    }
}

/// Reports a value that matches none of the alternatives of `anyOf`. When each alternative only wants another type
/// here (the optional-value shape `anyOf: [{type: string}, {type: null}]`), one line names them all; otherwise a
/// line says so and the alternative with the fewest violations lists what it needs.
fn report_alternatives(
    failed: Vec<Found>,
    value: ValueRef<'_>,
    path: &Path<'_>,
    found: &mut Found,
) {
    let here = path.pointer();
    let count = failed.len();
    let mut types = 0;
    let mut closest: Option<Found> = None;
    for f in failed {
        if types != u8::MAX {
            types = if f.total == 1
                && f.wanted_types != 0
                && f.listed.first().is_some_and(|v| v.pointer == here)
            {
                types | f.wanted_types
            } else {
                u8::MAX
            };
        }
        if closest.as_ref().is_none_or(|c| f.total < c.total) {
            closest = Some(f);
        }
    }
    if types != u8::MAX {
        return found.add(path, Expect::Types(types), Got::Value(value));
    }
    found.add(path, Expect::Alternatives(count), Got::Value(value));
    for violation in closest.map(|c| c.listed).unwrap_or_default() {
        found.total += 1;
        if found.listed.len() < MAX_LISTED {
            found.listed.push(violation);
        }
    }
}

/// JSON equality as JSON Schema defines it: numbers by value (`1` equals `1.0`), objects regardless of order.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Same text is the same number; only differing texts need their values.
        (Value::Number(x), Value::Number(y)) => {
            x.as_str() == y.as_str() || Decimal::of(x) == Decimal::of(y)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => object_equal(x, y),
        _ => a == b,
    }
}

fn object_equal(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| json_equal(v, w)))
}

/// Whether `value` is of one of the `types` (a number's integrality is read only when `integer` decides).
fn has_type(value: &Value, types: u8) -> bool {
    let bit = match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        Value::Number(_) if types & NUMBER != 0 => NUMBER,
        Value::Number(n) => {
            return types & INTEGER != 0 && (n.is_i64() || Decimal::of(n).is_integer())
        }
    };
    types & bit != 0
}
