//! [`Schema`]: a tool's `inputSchema` compiled once, when the tool is registered, for checking arguments (pure).
//!
//! The supported keywords are the JSON Schema (2020-12) that model providers accept for tools: `type` (names,
//! arrays of names, `nullable: true`), `properties`, `patternProperties`, `additionalProperties`, `required`,
//! `items` (a schema, or the older array form with `additionalItems`), `prefixItems`, `enum`, `const`, `anyOf`,
//! `allOf`, `oneOf`, `not`, local `$ref` with `$defs` / `definitions`, `minimum` / `maximum` /
//! `exclusiveMinimum` / `exclusiveMaximum` (numbers, or the older boolean form), `multipleOf`, `minLength` /
//! `maxLength`, `minItems` / `maxItems`, `minProperties` / `maxProperties`, `uniqueItems`, `pattern` and
//! `format` (the formats of `formats`). Every other keyword is ignored: none of them can make a valid call
//! invalid here, they can only let through what a full validator would refuse.
//!
//! A schema that cannot be used is refused with the keyword and JSON Pointer at fault: a keyword of the wrong
//! shape, a `$ref` that is not a pointer inside the schema (remote, or an anchor), a pointer to nothing, a nested
//! `$id` (which would change what `#` means below it), a pattern this runtime cannot run, or a `$ref` cycle that
//! never reaches the arguments (`{"$ref": "#"}`: checking it would never end).

use std::collections::HashMap;

use patchbridge_protocol::number::Decimal;
use serde_json::{Map, Value};

use super::formats::Format;
use super::pattern::Pattern;

/// JSON types, as the bits of a [`Types`] set.
pub const NULL: u8 = 1;
/// `boolean`.
pub const BOOLEAN: u8 = 2;
/// `object`.
pub const OBJECT: u8 = 4;
/// `array`.
pub const ARRAY: u8 = 8;
/// `number` (any number, integers included).
pub const NUMBER: u8 = 16;
/// `integer` (a number with a whole value, `1.0` included).
pub const INTEGER: u8 = 32;
/// `string`.
pub const STRING: u8 = 64;

/// The type names in the order violations list them.
pub const TYPE_NAMES: [(u8, &str); 7] = [
    (OBJECT, "object"),
    (ARRAY, "array"),
    (STRING, "string"),
    (NUMBER, "number"),
    (INTEGER, "integer"),
    (BOOLEAN, "boolean"),
    (NULL, "null"),
];

/// A numeric bound: its value, and whether the value itself is excluded.
#[derive(Debug, Clone)]
pub struct Bound {
    /// The bound.
    pub value: Decimal,
    /// `exclusiveMinimum` / `exclusiveMaximum`.
    pub exclusive: bool,
}

/// The checks of one schema object. Sub-schemas are indices into [`Schema::nodes`].
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Allowed types (bits); `None` when `type` is absent.
    pub types: Option<u8>,
    /// `properties`, in schema order.
    pub properties: Vec<(String, usize)>,
    /// `patternProperties`.
    pub pattern_properties: Vec<(Pattern, usize)>,
    /// `additionalProperties`.
    pub additional_properties: Option<usize>,
    /// `required`.
    pub required: Vec<String>,
    /// `prefixItems` (or the array form of `items`).
    pub prefix_items: Vec<usize>,
    /// `items` after the prefix (or `additionalItems` with the array form).
    pub items: Option<usize>,
    /// `enum`.
    pub enumeration: Option<Vec<Value>>,
    /// `const`.
    pub constant: Option<Value>,
    /// `anyOf`.
    pub any_of: Vec<usize>,
    /// `allOf`.
    pub all_of: Vec<usize>,
    /// `oneOf`.
    pub one_of: Vec<usize>,
    /// `not`.
    pub not: Option<usize>,
    /// `$ref`, resolved.
    pub reference: Option<usize>,
    /// `minimum` / `exclusiveMinimum` (the stricter when both are given).
    pub minimum: Vec<Bound>,
    /// `maximum` / `exclusiveMaximum`.
    pub maximum: Vec<Bound>,
    /// `multipleOf`.
    pub multiple_of: Option<Decimal>,
    /// `minLength` / `maxLength` (characters).
    pub length: (Option<u64>, Option<u64>),
    /// `minItems` / `maxItems`.
    pub item_count: (Option<u64>, Option<u64>),
    /// `minProperties` / `maxProperties`.
    pub property_count: (Option<u64>, Option<u64>),
    /// `uniqueItems: true`.
    pub unique_items: bool,
    /// `pattern`, with its text for messages.
    pub pattern: Option<(String, Pattern)>,
    /// `format`, when it is one this runtime checks.
    pub format: Option<Format>,
}

/// A compiled schema node.
#[derive(Debug, Clone)]
pub enum Node {
    /// `true` (anything) or `false` (nothing).
    Bool(bool),
    /// A schema object.
    Rules(Box<Rules>),
}

/// A compiled schema; node 0 is the root.
#[derive(Debug, Clone)]
pub struct Schema {
    /// Every schema location reachable from the root, each compiled once.
    pub nodes: Vec<Node>,
}

/// Why a schema cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The keyword at fault.
    pub keyword: String,
    /// JSON Pointer of the schema object holding it.
    pub pointer: String,
    /// What is wrong.
    pub problem: String,
}

/// Appends `token` to `pointer`, escaped (`~` → `~0`, `/` → `~1`).
pub fn pointer_push(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", token.replace('~', "~0").replace('/', "~1"))
}

impl Schema {
    /// Compiles `root`; the error names the keyword and where it is.
    pub fn compile(root: &Value) -> Result<Schema, SchemaError> {
        let mut compiler = Compiler {
            root,
            nodes: Vec::new(),
            at: HashMap::new(),
        };
        compiler.node(root, String::new(), "inputSchema")?;
        compiler.check_cycles()?;
        Ok(Schema {
            nodes: compiler.nodes,
        })
    }
}

struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    at: HashMap<String, usize>,
}

fn error(keyword: &str, pointer: &str, problem: impl Into<String>) -> SchemaError {
    SchemaError {
        keyword: keyword.to_owned(),
        pointer: pointer.to_owned(),
        problem: problem.into(),
    }
}

impl<'a> Compiler<'a> {
    /// Compiles the schema `value` found at `pointer` (once per location), `keyword` being what holds it.
    fn node(
        &mut self,
        value: &'a Value,
        pointer: String,
        keyword: &str,
    ) -> Result<usize, SchemaError> {
        if let Some(&index) = self.at.get(&pointer) {
            return Ok(index);
        }
        let index = self.nodes.len();
        self.nodes.push(Node::Bool(true));
        self.at.insert(pointer.clone(), index);
        let node = match value {
            Value::Bool(b) => Node::Bool(*b),
            Value::Object(map) => Node::Rules(Box::new(self.rules(map, &pointer)?)),
            _ => {
                return Err(error(
                    keyword,
                    &pointer,
                    "a schema must be an object or a boolean",
                ))
            }
        };
        self.nodes[index] = node;
        Ok(index)
    }

    fn child(
        &mut self,
        map: &'a Map<String, Value>,
        pointer: &str,
        key: &str,
    ) -> Result<Option<usize>, SchemaError> {
        match map.get(key) {
            Some(value) => self.node(value, pointer_push(pointer, key), key).map(Some),
            None => Ok(None),
        }
    }

    fn list(
        &mut self,
        map: &'a Map<String, Value>,
        pointer: &str,
        key: &str,
    ) -> Result<Vec<usize>, SchemaError> {
        let Some(value) = map.get(key) else {
            return Ok(Vec::new());
        };
        let items = value
            .as_array()
            .filter(|items| !items.is_empty())
            .ok_or_else(|| {
                error(
                    key,
                    pointer,
                    format!("{key} must be a non-empty array of schemas"),
                )
            })?;
        let base = pointer_push(pointer, key);
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.node(item, pointer_push(&base, &i.to_string()), key))
            .collect()
    }

    fn named(
        &mut self,
        map: &'a Map<String, Value>,
        pointer: &str,
        key: &str,
    ) -> Result<Vec<(&'a str, usize)>, SchemaError> {
        let Some(value) = map.get(key) else {
            return Ok(Vec::new());
        };
        let members = value
            .as_object()
            .ok_or_else(|| error(key, pointer, format!("{key} must be an object of schemas")))?;
        let base = pointer_push(pointer, key);
        members
            .iter()
            .map(|(name, schema)| {
                Ok((
                    name.as_str(),
                    self.node(schema, pointer_push(&base, name), key)?,
                ))
            })
            .collect()
    }

    fn rules(&mut self, map: &'a Map<String, Value>, pointer: &str) -> Result<Rules, SchemaError> {
        let mut rules = Rules::default();
        if !pointer.is_empty() && map.contains_key("$id") {
            return Err(error(
                "$id",
                pointer,
                "a nested $id (a second schema resource) is not supported; move the definition under $defs",
            ));
        }
        for defs in ["$defs", "definitions"] {
            self.named(map, pointer, defs)?;
        }
        if let Some(types) = map.get("type") {
            let names: Vec<&Value> = match types {
                Value::Array(names) if !names.is_empty() => names.iter().collect(),
                Value::String(_) => vec![types],
                _ => {
                    return Err(error(
                        "type",
                        pointer,
                        "type must be a type name or a non-empty array of them",
                    ))
                }
            };
            let mut bits = 0;
            for name in names {
                let bit = TYPE_NAMES
                    .iter()
                    .find(|(_, n)| Some(*n) == name.as_str())
                    .map(|(bit, _)| *bit)
                    .ok_or_else(|| error("type", pointer, format!("unknown type name {name}")))?;
                bits |= bit;
            }
            rules.types = Some(bits);
        }
        match map.get("nullable") {
            Some(Value::Bool(true)) => rules.types = rules.types.map(|bits| bits | NULL),
            Some(Value::Bool(false)) | None => {}
            Some(_) => return Err(error("nullable", pointer, "nullable must be a boolean")),
        }
        rules.properties = self
            .named(map, pointer, "properties")?
            .into_iter()
            .map(|(name, node)| (name.to_owned(), node))
            .collect();
        for (text, node) in self.named(map, pointer, "patternProperties")? {
            let pattern = Pattern::new(text).map_err(|problem| {
                error(
                    "patternProperties",
                    pointer,
                    format!("the pattern {text:?} cannot be used: {problem}"),
                )
            })?;
            rules.pattern_properties.push((pattern, node));
        }
        rules.additional_properties = self.child(map, pointer, "additionalProperties")?;
        if let Some(required) = map.get("required") {
            rules.required = required
                .as_array()
                .and_then(|names| {
                    names
                        .iter()
                        .map(|n| n.as_str().map(str::to_owned))
                        .collect()
                })
                .ok_or_else(|| {
                    error(
                        "required",
                        pointer,
                        "required must be an array of property names",
                    )
                })?;
        }
        rules.prefix_items = self.list(map, pointer, "prefixItems")?;
        match map.get("items") {
            Some(Value::Array(_)) => {
                rules.prefix_items = self.list(map, pointer, "items")?;
                rules.items = self.child(map, pointer, "additionalItems")?;
            }
            _ => rules.items = self.child(map, pointer, "items")?,
        }
        if let Some(values) = map.get("enum") {
            rules.enumeration = Some(
                values
                    .as_array()
                    .cloned()
                    .ok_or_else(|| error("enum", pointer, "enum must be an array"))?,
            );
        }
        rules.constant = map.get("const").cloned();
        rules.any_of = self.list(map, pointer, "anyOf")?;
        rules.all_of = self.list(map, pointer, "allOf")?;
        rules.one_of = self.list(map, pointer, "oneOf")?;
        rules.not = self.child(map, pointer, "not")?;
        if let Some(target) = map.get("$ref") {
            rules.reference = Some(self.reference(target, pointer)?);
        }
        for (key, maximum) in [("minimum", false), ("maximum", true)] {
            let exclusive_key = if maximum {
                "exclusiveMaximum"
            } else {
                "exclusiveMinimum"
            };
            let exclusive_flag = matches!(map.get(exclusive_key), Some(Value::Bool(true)));
            let mut bounds = Vec::new();
            if let Some(value) = map.get(key) {
                bounds.push(Bound {
                    value: number(value, key, pointer)?,
                    exclusive: exclusive_flag,
                });
            }
            match map.get(exclusive_key) {
                Some(Value::Bool(_)) | None => {}
                Some(value) => bounds.push(Bound {
                    value: number(value, exclusive_key, pointer)?,
                    exclusive: true,
                }),
            }
            if maximum {
                rules.maximum = bounds;
            } else {
                rules.minimum = bounds;
            }
        }
        if let Some(value) = map.get("multipleOf") {
            let divisor = number(value, "multipleOf", pointer)?;
            if divisor.negative || divisor.is_zero() || divisor.digits.len() > 18 {
                return Err(error(
                    "multipleOf",
                    pointer,
                    "multipleOf must be a number above 0 with at most 18 significant digits",
                ));
            }
            rules.multiple_of = Some(divisor);
        }
        let count = |key: &str| -> Result<Option<u64>, SchemaError> {
            let Some(value) = map.get(key) else {
                return Ok(None);
            };
            let n = value.as_number().map(Decimal::of);
            match n {
                Some(n) if !n.negative && n.is_integer() => Ok(Some(count_value(&n))),
                _ => Err(error(
                    key,
                    pointer,
                    format!("{key} must be a non-negative integer"),
                )),
            }
        };
        rules.length = (count("minLength")?, count("maxLength")?);
        rules.item_count = (count("minItems")?, count("maxItems")?);
        rules.property_count = (count("minProperties")?, count("maxProperties")?);
        match map.get("uniqueItems") {
            Some(Value::Bool(b)) => rules.unique_items = *b,
            None => {}
            Some(_) => {
                return Err(error(
                    "uniqueItems",
                    pointer,
                    "uniqueItems must be a boolean",
                ))
            }
        }
        if let Some(value) = map.get("pattern") {
            let text = value
                .as_str()
                .ok_or_else(|| error("pattern", pointer, "pattern must be a string"))?;
            let pattern = Pattern::new(text).map_err(|problem| {
                error(
                    "pattern",
                    pointer,
                    format!("the pattern {text:?} cannot be used: {problem}"),
                )
            })?;
            rules.pattern = Some((text.to_owned(), pattern));
        }
        if let Some(value) = map.get("format") {
            let name = value
                .as_str()
                .ok_or_else(|| error("format", pointer, "format must be a string"))?;
            rules.format = Format::named(name);
        }
        Ok(rules)
    }

    /// Resolves a `$ref` to the node of the location it points to (compiled on first use).
    fn reference(&mut self, target: &Value, pointer: &str) -> Result<usize, SchemaError> {
        let Some(text) = target.as_str() else {
            return Err(error("$ref", pointer, "$ref must be a string"));
        };
        let Some(fragment) = text.strip_prefix('#') else {
            return Err(error(
                "$ref",
                pointer,
                format!("$ref {text:?} points outside the schema; only local references (\"#/$defs/…\") are supported"),
            ));
        };
        let fragment = percent_decode(fragment).ok_or_else(|| {
            error(
                "$ref",
                pointer,
                format!("$ref {text:?} is not a valid URI fragment"),
            )
        })?;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(error(
                "$ref",
                pointer,
                format!("$ref {text:?} names an anchor; only JSON Pointer references (\"#/$defs/…\") are supported"),
            ));
        }
        let mut value = self.root;
        let mut resolved = String::new();
        for token in fragment.split('/').skip(1) {
            let token = token.replace("~1", "/").replace("~0", "~");
            value = match value {
                Value::Object(map) => map.get(&token),
                Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            }
            .ok_or_else(|| {
                error(
                    "$ref",
                    pointer,
                    format!("$ref {text:?} points to nothing in the schema"),
                )
            })?;
            resolved = pointer_push(&resolved, &token);
        }
        self.node(value, resolved, "$ref")
    }

    /// Refuses a cycle of `$ref` / `anyOf` / `allOf` / `oneOf` / `not` that returns to a schema without moving
    /// into the arguments: checking it would never end.
    fn check_cycles(&self) -> Result<(), SchemaError> {
        // 0: not visited, 1: on the current path, 2: done.
        let mut state = vec![0u8; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if state[start] == 0 {
                self.visit(start, &mut state)?;
            }
        }
        Ok(())
    }

    fn visit(&self, index: usize, state: &mut [u8]) -> Result<(), SchemaError> {
        state[index] = 1;
        if let Node::Rules(rules) = &self.nodes[index] {
            let same_place = rules
                .reference
                .iter()
                .chain(&rules.any_of)
                .chain(&rules.all_of)
                .chain(&rules.one_of)
                .chain(&rules.not);
            for &next in same_place {
                match state[next] {
                    1 => {
                        let pointer = self
                            .at
                            .iter()
                            .find(|(_, &i)| i == index)
                            .map(|(p, _)| p.clone())
                            .unwrap_or_default();
                        return Err(error(
                            "$ref",
                            &pointer,
                            "the schema refers back to itself without descending into a property or item (a cycle without a base case)",
                        ));
                    }
                    0 => self.visit(next, state)?,
                    _ => {}
                }
            }
        }
        state[index] = 2;
        Ok(())
    }
}

fn number(value: &Value, key: &str, pointer: &str) -> Result<Decimal, SchemaError> {
    value
        .as_number()
        .map(Decimal::of)
        .ok_or_else(|| error(key, pointer, format!("{key} must be a number")))
}

/// A non-negative integer count, saturated at `u64::MAX` (no string or array is that long).
fn count_value(n: &Decimal) -> u64 {
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

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
