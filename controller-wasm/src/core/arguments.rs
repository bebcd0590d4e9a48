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

use super::json::to_text;
use super::schema::{
    decimal, pointer_push, Node, Rules, Schema, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT,
    STRING, TYPE_NAMES, UNBOUNDED,
};
use super::tool_result::INVALID_ARGUMENTS_PREFIX;

/// Violations listed in one error result.
pub const MAX_LISTED: usize = 20;

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

/// Message text from its pieces, appended in order: the one writer every message uses (a `format!` per
/// message would set up its own arguments at each call site).
fn cat(parts: &[&str]) -> String {
    let mut out = String::new();
    for part in parts {
        out.push_str(part);
    }
    out
}

/// A string as JSON text (quoted and escaped).
fn quoted(text: &str) -> String {
    to_text(&Value::String(text.to_owned()))
}

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

/// Violations found, the first [`MAX_LISTED`] kept.
#[derive(Default)]
struct Found {
    listed: Vec<Violation>,
    total: usize,
    /// The types asked for by the type violations found (bits of `schema`'s type constants).
    wanted_types: u8,
}

impl Found {
    #[inline(never)]
    fn add(&mut self, path: &Path<'_>, expected: String, got: String) {
        self.total += 1;
        if self.listed.len() < MAX_LISTED {
            self.listed.push(Violation {
                pointer: path.pointer(),
                expected,
                got,
            });
        }
    }

    fn add_type(&mut self, path: &Path<'_>, types: u8, got: String) {
        self.wanted_types |= types;
        self.add(path, expected_types(types), got);
    }
}

/// A value being checked: the arguments object is held as a `Map`, every other value as a `Value`.
#[derive(Clone, Copy)]
enum ValueRef<'a> {
    Object(&'a Map<String, Value>),
    Other(&'a Value),
}

impl ValueRef<'_> {
    fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (ValueRef::Object(a), Value::Object(b)) => object_equal(a, b),
            (ValueRef::Other(a), b) => json_equal(a, b),
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            ValueRef::Object(_) => "object".into(),
            ValueRef::Other(value) => describe(value),
        }
    }
}

impl Schema {
    /// The violations of `arguments` (empty when they match), the first [`MAX_LISTED`], and how many in all.
    pub fn check(&self, arguments: &Map<String, Value>) -> (Vec<Violation>, usize) {
        let mut found = Found::default();
        // The arguments are an object; borrowing it as a `Value` would need a copy.
        self.check_node(0, ValueRef::Object(arguments), &Path::Root, &mut found);
        (found.listed, found.total)
    }

    /// [`Schema::check`] for any JSON value (the official test suite checks scalars and arrays too).
    pub fn check_value_at_root(&self, value: &Value) -> (Vec<Violation>, usize) {
        let mut found = Found::default();
        self.check_value(0, value, &Path::Root, &mut found);
        (found.listed, found.total)
    }

    fn check_value(&self, node: usize, value: &Value, path: &Path<'_>, found: &mut Found) {
        let value = match value {
            Value::Object(object) => ValueRef::Object(object),
            other => ValueRef::Other(other),
        };
        self.check_node(node, value, path, found);
    }

    fn check_node(&self, node: usize, value: ValueRef<'_>, path: &Path<'_>, found: &mut Found) {
        let rules = match &self.nodes[node] {
            Node::Bool(true) => return,
            Node::Bool(false) => {
                return found.add(
                    path,
                    "no value here (the schema is false)".into(),
                    value.describe(),
                )
            }
            Node::Rules(rules) => rules,
        };
        match value {
            ValueRef::Object(object) => {
                if rules.types != 0 && rules.types & OBJECT == 0 {
                    return found.add(path, expected_types(rules.types), "object".into());
                }
                self.check_object(rules, object, path, found);
            }
            ValueRef::Other(value) => {
                if rules.types != 0 && !has_type(value, rules.types) {
                    return found.add_type(path, rules.types, describe(value));
                }
                match value {
                    Value::Number(n) if !rules.bounds.is_empty() || rules.multiple_of.is_some() => {
                        check_number(rules, n, value, path, found)
                    }
                    Value::String(s) => check_string(rules, s, value, path, found),
                    Value::Array(items) => self.check_array(rules, items, value, path, found),
                    _ => {}
                }
            }
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
                let mut list = String::new();
                for (i, a) in allowed.iter().enumerate() {
                    if i > 0 {
                        list.push_str(", ");
                    }
                    list.push_str(&to_text(a));
                }
                found.add(
                    path,
                    cat(&["one of [", &cut(&list, 200), "]"]),
                    value.describe(),
                );
            }
        }
        if let Some(constant) = &rules.constant {
            if !value.equals(constant) {
                found.add(
                    path,
                    cat(&["exactly ", &cut(&to_text(constant), 200)]),
                    value.describe(),
                );
            }
        }
        if let Some(target) = rules.reference {
            self.check_node(target, value, path, found);
        }
        for &node in &rules.all_of {
            self.check_node(node, value, path, found);
        }
        if !rules.any_of.is_empty() {
            let (matching, failed) = self.alternatives(&rules.any_of, value, path, true);
            if matching == 0 {
                report_alternatives(rules.any_of.len(), "anyOf", failed, value, path, found);
            }
        }
        if !rules.one_of.is_empty() {
            let (matching, failed) = self.alternatives(&rules.one_of, value, path, false);
            match matching {
                1 => {}
                0 => report_alternatives(rules.one_of.len(), "oneOf", failed, value, path, found),
                _ => found.add(
                    path,
                    "a value matching exactly one alternative of oneOf".into(),
                    cat(&[
                        &value.describe(),
                        " (matches ",
                        &decimal(matching as u64),
                        " of them)",
                    ]),
                ),
            }
        }
        if let Some(node) = rules.not {
            let mut branch = Found::default();
            self.check_node(node, value, path, &mut branch);
            if branch.total == 0 {
                found.add(
                    path,
                    "a value that does not match the schema under not".into(),
                    value.describe(),
                );
            }
        }
    }

    /// How many of `nodes` the value matches, and the violations of each one it does not (checking stops at the
    /// first match when `first_match_is_enough`).
    fn alternatives(
        &self,
        nodes: &[usize],
        value: ValueRef<'_>,
        path: &Path<'_>,
        first_match_is_enough: bool,
    ) -> (usize, Vec<Found>) {
        let mut matching = 0;
        let mut failed = Vec::new();
        for &node in nodes {
            let mut branch = Found::default();
            self.check_node(node, value, path, &mut branch);
            if branch.total == 0 {
                matching += 1;
                if first_match_is_enough {
                    break;
                }
            } else {
                failed.push(branch);
            }
        }
        (matching, failed)
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
            let present = if object.len() <= 16 {
                object.keys().any(|key| key == name)
            } else {
                object.contains_key(name)
            };
            if !present {
                found.add(
                    path,
                    cat(&["required property ", &quoted(name)]),
                    "no such property".into(),
                );
            }
        }
        for (key, value) in object {
            let child = Path::Key(path, key);
            let mut matched = false;
            if let Some((_, node)) = rules.properties.iter().find(|(name, _)| name == key) {
                matched = true;
                self.check_value(*node, value, &child, found);
            }
            for (pattern, node) in &rules.pattern_properties {
                if pattern.is_match(key) {
                    matched = true;
                    self.check_value(*node, value, &child, found);
                }
            }
            if matched {
                continue;
            }
            if let Some(node) = rules.additional_properties {
                if matches!(self.nodes[node], Node::Bool(false)) {
                    found.add(
                        &child,
                        additional_refused(rules, key),
                        describe(value),
                    );
                } else {
                    self.check_value(node, value, &child, found);
                }
            }
        }
        let n = object.len() as u64;
        count_bounds(rules, 4, n, path, found, || {
            cat(&["object with ", &decimal(n), " properties"])
        });
    }

    fn check_array(
        &self,
        rules: &Rules,
        items: &[Value],
        value: &Value,
        path: &Path<'_>,
        found: &mut Found,
    ) {
        for (i, item) in items.iter().enumerate() {
            let node = rules.prefix_items.get(i).copied().or(rules.items);
            if let Some(node) = node {
                self.check_value(node, item, &Path::Index(path, i), found);
            }
        }
        count_bounds(rules, 2, items.len() as u64, path, found, || describe(value));
        if rules.unique_items {
            for (i, a) in items.iter().enumerate() {
                if let Some(j) = items[..i].iter().position(|b| json_equal(a, b)) {
                    found.add(
                        &Path::Index(path, i),
                        cat(&["unique items (this one repeats item ", &decimal(j as u64), ")"]),
                        describe(a),
                    );
                }
            }
        }
    }
}

/// The expectation for a property `additionalProperties: false` refuses: it names the allowed ones.
#[cold]
fn additional_refused(rules: &Rules, key: &str) -> String {
    let mut allowed = String::new();
    for (i, (name, _)) in rules.properties.iter().enumerate() {
        if i > 0 {
            allowed.push_str(", ");
        }
        allowed.push_str(&quoted(name));
    }
    let allowed = if allowed.is_empty() {
        "none".to_owned()
    } else {
        cut(&allowed, 200)
    };
    cat(&[
        "no property ",
        &quoted(key),
        " (additionalProperties is false; allowed: ",
        &allowed,
        ")",
    ])
}

fn check_number(rules: &Rules, number: &Number, value: &Value, path: &Path<'_>, found: &mut Found) {
    let small = number.as_i64();
    let mut exact: Option<Decimal> = None;
    // Minimums first, then maximums, each in schema order.
    for maximum in [false, true] {
        for bound in rules.bounds.iter().filter(|b| b.maximum == maximum) {
            let order = match (small, bound.small) {
                (Some(x), Some(b)) => x.cmp(&b),
                _ => Ord::cmp(
                    &*exact.get_or_insert_with(|| Decimal::of(number)),
                    &bound.value,
                ),
            };
            let inside = if maximum {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let ok = order == inside || (order == Ordering::Equal && !bound.exclusive);
            if !ok {
                let op = [">=", ">", "<=", "<"][usize::from(maximum) * 2 + usize::from(bound.exclusive)];
                found.add(
                    path,
                    cat(&["a number ", op, " ", &decimal_text(&bound.value)]),
                    describe(value),
                );
            }
        }
    }
    if let Some(divisor) = &rules.multiple_of {
        let n = exact.get_or_insert_with(|| Decimal::of(number));
        if n.is_multiple_of(divisor) == Some(false) {
            found.add(
                path,
                cat(&["a multiple of ", &decimal_text(divisor)]),
                describe(value),
            );
        }
    }
}

fn check_string(rules: &Rules, s: &str, value: &Value, path: &Path<'_>, found: &mut Found) {
    if rules.counts[..2] != [0, UNBOUNDED] {
        let n = s.chars().count() as u64;
        count_bounds(rules, 0, n, path, found, || {
            cat(&[&describe(value), " (", &decimal(n), " characters)"])
        });
    }
    if let Some((text, pattern)) = &rules.pattern {
        if !pattern.is_match(s) {
            found.add(
                path,
                cat(&["a string matching the pattern ", &quoted(text)]),
                describe(value),
            );
        }
    }
    if let Some(format) = rules.format {
        if !format.accepts(s) {
            found.add(
                path,
                cat(&["a string in the format ", format.name()]),
                describe(value),
            );
        }
    }
}

/// The units of the count pairs of [`Rules::counts`].
const UNITS: [&str; 3] = ["characters", "items", "properties"];

/// Checks `n` against the count pair at `at` of [`Rules::counts`].
fn count_bounds(
    rules: &Rules,
    at: usize,
    n: u64,
    path: &Path<'_>,
    found: &mut Found,
    got: impl Fn() -> String,
) {
    let (min, max) = (rules.counts[at], rules.counts[at + 1]);
    for (broken, word, bound) in [(n < min, "at least ", min), (n > max, "at most ", max)] {
        if broken {
            found.add(path, cat(&[word, &decimal(bound), " ", UNITS[at / 2]]), got());
        }
    }
}

/// Reports a value that matches none of `count` alternatives. When each alternative only wants another type
/// here (the optional-value shape `anyOf: [{type: string}, {type: null}]`), one line names them all; otherwise a
/// line says so and the alternative with the fewest violations lists what it needs.
fn report_alternatives(
    count: usize,
    keyword: &str,
    failed: Vec<Found>,
    value: ValueRef<'_>,
    path: &Path<'_>,
    found: &mut Found,
) {
    let here = path.pointer();
    let only_types = failed
        .iter()
        .all(|f| f.total == 1 && f.wanted_types != 0 && f.listed[0].pointer == here);
    if only_types {
        let types = failed.iter().fold(0, |bits, f| bits | f.wanted_types);
        return found.add_type(path, types, value.describe());
    }
    found.add(
        path,
        cat(&[
            "a value matching one of the ",
            &decimal(count as u64),
            " alternatives of ",
            keyword,
            "; the closest one needs what follows",
        ]),
        value.describe(),
    );
    let mut closest: Option<Found> = None;
    for f in failed {
        if closest.as_ref().is_none_or(|c| f.total < c.total) {
            closest = Some(f);
        }
    }
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

/// `type a`, `type a or b`, `type a, b or c`.
fn expected_types(types: u8) -> String {
    let mut out = String::from("type ");
    let mut names = TYPE_NAMES.iter().filter(|(bit, _)| types & bit != 0).peekable();
    let mut first = true;
    while let Some((_, name)) = names.next() {
        if !first {
            out.push_str(if names.peek().is_some() { ", " } else { " or " });
        }
        out.push_str(name);
        first = false;
    }
    if first {
        return "no type".into();
    }
    out
}

/// A short description of a value: its type and, for scalars, its JSON text (long strings cut).
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => cat(&["boolean ", if *b { "true" } else { "false" }]),
        Value::Number(n) => cat(&["number ", n.as_str()]),
        Value::String(_) => cat(&["string ", &cut(&to_text(value), 60)]),
        Value::Array(items) => cat(&["array of ", &decimal(items.len() as u64), " items"]),
        Value::Object(_) => "object".into(),
    }
}

/// `text` cut to `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    let mut out = prefix(text, max).to_owned();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// The first `max` characters of `text`.
fn prefix(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

fn decimal_text(n: &Decimal) -> String {
    if n.is_zero() {
        return "0".into();
    }
    let mut digits = String::new();
    for d in &n.digits {
        digits.push(char::from(b'0' + d));
    }
    let zeros = |count: i64| "0".repeat(count as usize);
    let sign = if n.negative { "-" } else { "" };
    let e = n.exponent;
    let len = n.digits.len() as i64;
    if (0..=21).contains(&e) && len <= e {
        cat(&[sign, &digits, &zeros(e - len)])
    } else if e > 0 && e < len {
        let (int, frac) = digits.split_at(e as usize);
        cat(&[sign, int, ".", frac])
    } else if (-6..=0).contains(&e) {
        cat(&[sign, "0.", &zeros(-e), &digits])
    } else {
        let exponent = if e < 0 {
            cat(&["-", &decimal(e.unsigned_abs())])
        } else {
            decimal(e as u64)
        };
        cat(&[sign, "0.", &digits, "e", &exponent])
    }
}

/// The error result's content for a call to `tool` whose arguments broke `listed` (of `total`) rules, cut to
/// `max` characters.
pub fn invalid_arguments_text(tool: &str, listed: &[Violation], total: usize, max: u64) -> String {
    let mut text = cat(&[
        INVALID_ARGUMENTS_PREFIX,
        "The call to ",
        tool,
        " was not run: its arguments do not match the tool's inputSchema. Correct them and call the tool again.",
    ]);
    for v in listed {
        text.push_str(&cat(&[
            "\n- ",
            &quoted(&v.pointer),
            ": expected ",
            &v.expected,
            "; got ",
            &v.got,
        ]));
    }
    if total > listed.len() {
        text.push_str(&cat(&["\n- … and ", &decimal((total - listed.len()) as u64), " more"]));
    }
    prefix(&text, usize::try_from(max).unwrap_or(usize::MAX)).to_owned()
}
