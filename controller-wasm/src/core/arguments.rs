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
    pointer_push, Bound, Node, Rules, Schema, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT,
    STRING, TYPE_NAMES,
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
            Path::Index(parent, i) => format!("{}/{i}", parent.pointer()),
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

impl Schema {
    /// The violations of `arguments` (empty when they match), the first [`MAX_LISTED`], and how many in all.
    pub fn check(&self, arguments: &Map<String, Value>) -> (Vec<Violation>, usize) {
        let mut found = Found::default();
        // The arguments are an object; borrowing it as a `Value` would need a copy.
        self.check_object_node(0, arguments, &Path::Root, &mut found);
        (found.listed, found.total)
    }

    /// [`Schema::check`] for any JSON value (the official test suite checks scalars and arrays too).
    pub fn check_value_at_root(&self, value: &Value) -> (Vec<Violation>, usize) {
        let mut found = Found::default();
        self.check_value(0, value, &Path::Root, &mut found);
        (found.listed, found.total)
    }

    fn check_object_node(
        &self,
        node: usize,
        object: &Map<String, Value>,
        path: &Path<'_>,
        found: &mut Found,
    ) {
        match &self.nodes[node] {
            Node::Bool(true) => {}
            Node::Bool(false) => found.add(
                path,
                "no value here (the schema is false)".into(),
                "object".into(),
            ),
            Node::Rules(rules) => {
                if rules.types.is_some_and(|t| t & OBJECT == 0) {
                    found.add(
                        path,
                        expected_types(rules.types.unwrap_or(0)),
                        "object".into(),
                    );
                    return;
                }
                self.check_object(rules, object, path, found);
                self.check_applicators(rules, ValueRef::Object(object), path, found);
            }
        }
    }

    fn check_value(&self, node: usize, value: &Value, path: &Path<'_>, found: &mut Found) {
        if let Value::Object(object) = value {
            return self.check_object_node(node, object, path, found);
        }
        let rules = match &self.nodes[node] {
            Node::Bool(true) => return,
            Node::Bool(false) => {
                return found.add(
                    path,
                    "no value here (the schema is false)".into(),
                    describe(value),
                )
            }
            Node::Rules(rules) => rules,
        };
        if let Some(types) = rules.types {
            if !has_type(value, types) {
                return found.add_type(path, types, describe(value));
            }
        }
        match value {
            Value::Number(n)
                if !rules.minimum.is_empty()
                    || !rules.maximum.is_empty()
                    || rules.multiple_of.is_some() =>
            {
                self.check_number(rules, n, value, path, found)
            }
            Value::String(s) => check_string(rules, s, value, path, found),
            Value::Array(items) => self.check_array(rules, items, value, path, found),
            _ => {}
        }
        self.check_applicators(rules, ValueRef::Other(value), path, found);
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
                let list: Vec<String> = allowed.iter().map(to_text).collect();
                found.add(
                    path,
                    format!("one of [{}]", cut(&joined(&list), 200)),
                    value.describe(),
                );
            }
        }
        if let Some(constant) = &rules.constant {
            if !value.equals(constant) {
                found.add(
                    path,
                    format!("exactly {}", cut(&to_text(constant), 200)),
                    value.describe(),
                );
            }
        }
        if let Some(target) = rules.reference {
            self.check_ref(target, value, path, found);
        }
        for &node in &rules.all_of {
            self.check_ref(node, value, path, found);
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
                    format!("{} (matches {matching} of them)", value.describe()),
                ),
            }
        }
        if let Some(node) = rules.not {
            let mut branch = Found::default();
            self.check_ref(node, value, path, &mut branch);
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
            self.check_ref(node, value, path, &mut branch);
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

    fn check_ref(&self, node: usize, value: ValueRef<'_>, path: &Path<'_>, found: &mut Found) {
        match value {
            ValueRef::Object(object) => self.check_object_node(node, object, path, found),
            ValueRef::Other(value) => self.check_value(node, value, path, found),
        }
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
                    format!(
                        "required property {}",
                        to_text(&Value::String(name.clone()))
                    ),
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
                    let names: Vec<String> = rules
                        .properties
                        .iter()
                        .map(|(n, _)| to_text(&Value::String(n.clone())))
                        .collect();
                    let allowed = if names.is_empty() {
                        "none".to_owned()
                    } else {
                        cut(&joined(&names), 200)
                    };
                    found.add(
                        &child,
                        format!(
                            "no property {} (additionalProperties is false; allowed: {allowed})",
                            to_text(&Value::String(key.clone()))
                        ),
                        describe(value),
                    );
                } else {
                    self.check_value(node, value, &child, found);
                }
            }
        }
        let n = object.len() as u64;
        count_bounds(rules.property_count, n, "properties", path, found, || {
            format!("object with {n} properties")
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
        let n = items.len() as u64;
        count_bounds(rules.item_count, n, "items", path, found, || {
            describe(value)
        });
        if rules.unique_items {
            for (i, a) in items.iter().enumerate() {
                if let Some(j) = items[..i].iter().position(|b| json_equal(a, b)) {
                    found.add(
                        &Path::Index(path, i),
                        format!("unique items (this one repeats item {j})"),
                        describe(a),
                    );
                }
            }
        }
    }

    fn check_number(
        &self,
        rules: &Rules,
        number: &Number,
        value: &Value,
        path: &Path<'_>,
        found: &mut Found,
    ) {
        let small = number.as_i64();
        let mut exact: Option<Decimal> = None;
        let mut compare = |bound: &Bound| match (small, bound.small) {
            (Some(x), Some(b)) => x.cmp(&b),
            _ => Ord::cmp(
                &*exact.get_or_insert_with(|| Decimal::of(number)),
                &bound.value,
            ),
        };
        for (bounds, below) in [(&rules.minimum, true), (&rules.maximum, false)] {
            for bound in bounds {
                let order = compare(bound);
                let ok = match (below, bound.exclusive) {
                    (true, true) => order == Ordering::Greater,
                    (true, false) => order != Ordering::Less,
                    (false, true) => order == Ordering::Less,
                    (false, false) => order != Ordering::Greater,
                };
                if !ok {
                    let op = match (below, bound.exclusive) {
                        (true, true) => ">",
                        (true, false) => ">=",
                        (false, true) => "<",
                        (false, false) => "<=",
                    };
                    found.add(
                        path,
                        format!("a number {op} {}", decimal_text(&bound.value)),
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
                    format!("a multiple of {}", decimal_text(divisor)),
                    describe(value),
                );
            }
        }
    }
}

fn check_string(rules: &Rules, s: &str, value: &Value, path: &Path<'_>, found: &mut Found) {
    if rules.length != (None, None) {
        let n = s.chars().count() as u64;
        count_bounds(rules.length, n, "characters", path, found, || {
            format!("{} ({n} characters)", describe(value))
        });
    }
    if let Some((text, pattern)) = &rules.pattern {
        if !pattern.is_match(s) {
            found.add(
                path,
                format!(
                    "a string matching the pattern {}",
                    to_text(&Value::String(text.clone()))
                ),
                describe(value),
            );
        }
    }
    if let Some(format) = rules.format {
        if !format.accepts(s) {
            found.add(
                path,
                format!("a string in the format {}", format.name()),
                describe(value),
            );
        }
    }
}

fn count_bounds(
    bounds: (Option<u64>, Option<u64>),
    n: u64,
    unit: &str,
    path: &Path<'_>,
    found: &mut Found,
    got: impl Fn() -> String,
) {
    if let Some(min) = bounds.0.filter(|&min| n < min) {
        found.add(path, format!("at least {min} {unit}"), got());
    }
    if let Some(max) = bounds.1.filter(|&max| n > max) {
        found.add(path, format!("at most {max} {unit}"), got());
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
        format!("a value matching one of the {count} alternatives of {keyword}; the closest one needs what follows"),
        value.describe(),
    );
    if let Some(closest) = failed.into_iter().min_by_key(|f| f.total) {
        for violation in closest.listed {
            found.total += 1;
            if found.listed.len() < MAX_LISTED {
                found.listed.push(violation);
            }
        }
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

/// JSON equality as JSON Schema defines it: numbers by value (`1` equals `1.0`), objects regardless of order.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Decimal::of(x) == Decimal::of(y),
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
        Value::Number(n) => return types & INTEGER != 0 && Decimal::of(n).is_integer(),
    };
    types & bit != 0
}

fn expected_types(types: u8) -> String {
    let names: Vec<&str> = TYPE_NAMES
        .iter()
        .filter(|(bit, _)| types & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    match names.split_last() {
        Some((last, [])) => format!("type {last}"),
        Some((last, rest)) => format!("type {} or {last}", joined(rest)),
        None => "no type".into(),
    }
}

/// A short description of a value: its type and, for scalars, its JSON text (long strings cut).
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {}", n.as_str()),
        Value::String(_) => format!("string {}", cut(&to_text(value), 60)),
        Value::Array(items) => format!("array of {} items", items.len()),
        Value::Object(_) => "object".into(),
    }
}

/// The items separated by `, ` (without `[T]::join`, which would add its own generic code to the bundle).
fn joined<S: AsRef<str>>(items: &[S]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(item.as_ref());
    }
    out
}

/// `text` cut to `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn decimal_text(n: &Decimal) -> String {
    if n.is_zero() {
        return "0".into();
    }
    let digits: String = n.digits.iter().map(|d| char::from(b'0' + d)).collect();
    let sign = if n.negative { "-" } else { "" };
    let e = n.exponent;
    let len = n.digits.len() as i64;
    if (0..=21).contains(&e) && len <= e {
        format!("{sign}{digits}{}", "0".repeat((e - len) as usize))
    } else if e > 0 && e < len {
        format!("{sign}{}.{}", &digits[..e as usize], &digits[e as usize..])
    } else if (-6..=0).contains(&e) {
        format!("{sign}0.{}{digits}", "0".repeat((-e) as usize))
    } else {
        format!("{sign}0.{digits}e{e}")
    }
}

/// The error result's content for a call to `tool` whose arguments broke `listed` (of `total`) rules, cut to
/// `max` characters.
pub fn invalid_arguments_text(tool: &str, listed: &[Violation], total: usize, max: u64) -> String {
    let mut text = format!(
        "{INVALID_ARGUMENTS_PREFIX}The call to {tool} was not run: its arguments do not match the tool's inputSchema. Correct them and call the tool again."
    );
    for v in listed {
        text.push_str(&format!(
            "\n- {}: expected {}; got {}",
            to_text(&Value::String(v.pointer.clone())),
            v.expected,
            v.got
        ));
    }
    if total > listed.len() {
        text.push_str(&format!("\n- … and {} more", total - listed.len()));
    }
    match text
        .char_indices()
        .nth(usize::try_from(max).unwrap_or(usize::MAX))
    {
        Some((at, _)) => text[..at].to_owned(),
        None => text,
    }
}
