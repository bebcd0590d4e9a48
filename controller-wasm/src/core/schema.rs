//! [`Schema`]: a tool's `inputSchema` compiled once, when the tool is registered, for checking arguments (pure).
//!
//! The checked keywords are the JSON Schema (2020-12) that model providers document for tools: `type` (a name or
//! an array of names), `properties`, `additionalProperties`, `required`, `items` (one schema), `enum`, `const`,
//! `anyOf`, local `$ref` with `$defs`, `minimum` / `maximum` / `exclusiveMinimum` / `exclusiveMaximum`,
//! `multipleOf`, `minLength` / `maxLength`, `minItems` / `maxItems`, `pattern` and `format` (the formats of
//! `formats`), and OpenAPI's `nullable: true` beside a `type` (it adds `null`, as models that follow OpenAPI expect).
//! Every other keyword is ignored, whatever its value (`allOf`, `oneOf`, `not`, `patternProperties`,
//! `prefixItems`, the array form of `items`, `uniqueItems`, draft 4's boolean `exclusiveMinimum` /
//! `exclusiveMaximum`, …): none of them can make a valid call invalid here, they can only let through what a full
//! validator would refuse (no checked keyword negates a schema, so ignoring one never refuses more). A `$ref`
//! resolves any JSON Pointer into the schema, so `#/definitions/…` (older generators) works, and so does a
//! pointer into an ignored keyword (`#/allOf/0`): what it points to is used as a schema.
//!
//! A schema that cannot be used is refused with the keyword and JSON Pointer at fault: a keyword of the wrong
//! shape, a `$ref` that is not a pointer inside the schema (remote, or an anchor), a pointer to nothing, a nested
//! `$id` (which would change what `#` means below it), a pattern the host's ECMAScript `RegExp` refuses (flag
//! `u`; the host's [`RegexEngine`] compiles each pattern here, once), or a `$ref` cycle that never reaches the
//! arguments (`{"$ref": "#"}`: checking it would never end).
//!
//! The reader is driven by one keyword table ([`KEYWORDS`]): a keyword is looked up once and handled by the arm
//! of its group (counts, bounds, schema lists, single schemas, named schemas), so each shape of keyword has one
//! piece of code in the wasm bundle rather than one per keyword.

use std::borrow::Cow;

use patchbridge_protocol::number::Decimal;
use serde_json::{Map, Number, Value};

use super::formats::Format;
use super::host::RegexEngine;
use super::pattern::Pattern;
use super::pointer::{count_value, decimal, index_value, percent_decode, pointer_push, unescape};

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

/// A numeric rule: `minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum` or `multipleOf`.
#[derive(Debug, Clone)]
pub struct Bound {
    /// The bound or divisor.
    pub value: Decimal,
    /// It as the schema writes it, for the violation text.
    pub text: Number,
    /// Which rule: 0 `minimum` (`>=`), 1 `exclusiveMinimum` (`>`), 2 `maximum` (`<=`), 3 `exclusiveMaximum`
    /// (`<`), 4 `multipleOf`.
    pub kind: u8,
    /// The bound as an `i64` when it is written as one: most bounds and arguments are small integers, compared
    /// without building a [`Decimal`].
    pub small: Option<i64>,
}

/// No upper count: `maxLength` and the like when absent.
pub const UNBOUNDED: u64 = u64::MAX;

/// The checks of one schema object. Sub-schemas are indices into [`Schema::nodes`].
#[derive(Debug, Clone)]
pub struct Rules {
    /// Allowed types (bits); 0 when `type` is absent.
    pub types: u8,
    /// `properties`, in schema order.
    pub properties: Vec<(String, usize)>,
    /// `additionalProperties`.
    pub additional_properties: Option<usize>,
    /// `required`.
    pub required: Vec<String>,
    /// `items`: one schema for the items after those `prefixItems` lists.
    pub items: Option<usize>,
    /// How many items `prefixItems` lists (not checked: `items` starts after them).
    pub items_from: usize,
    /// `enum`.
    pub enumeration: Option<Vec<Value>>,
    /// `const`.
    pub constant: Option<Value>,
    /// `anyOf`.
    pub any_of: Vec<usize>,
    /// `$ref`, resolved.
    pub reference: Option<usize>,
    /// `minimum` / `exclusiveMinimum` / `maximum` / `exclusiveMaximum` / `multipleOf`, in schema order.
    pub bounds: Vec<Bound>,
    /// `minLength`, `maxLength` (characters), `minItems`, `maxItems`; absent ones are 0 and [`UNBOUNDED`],
    /// which nothing breaks.
    pub counts: [u64; 4],
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `format`, when it is one this runtime checks.
    pub format: Option<Format>,
    /// The format's [`Format::pattern`] compiled by the host, for the formats that have one.
    pub format_regex: Option<Pattern>,
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
    pub keyword: &'static str,
    /// JSON Pointer of the schema object holding it.
    pub pointer: String,
    /// What is wrong (for a pattern the host refuses, with the host's reason).
    pub problem: Cow<'static, str>,
}

impl Schema {
    /// Compiles `root`, its patterns by `regexes`; the error names the keyword and where it is.
    pub fn compile(root: &Value, regexes: &dyn RegexEngine) -> Result<Schema, SchemaError> {
        let mut compiler = Compiler {
            root,
            regexes,
            nodes: Vec::new(),
            at: Vec::new(),
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
    regexes: &'a dyn RegexEngine,
    nodes: Vec<Node>,
    /// The node compiled for each schema location (JSON Pointer), in compilation order.
    at: Vec<(String, usize)>,
}

// Not inlined: one call per refusal keeps the keyword reader small.
#[cold]
#[inline(never)]
fn error(
    keyword: &'static str,
    pointer: &str,
    problem: impl Into<Cow<'static, str>>,
) -> SchemaError {
    SchemaError {
        keyword,
        pointer: pointer.to_owned(),
        problem: problem.into(),
    }
}

/// The keywords the reader acts on, grouped by shape: the index ranges below pick the arm that reads each.
const KEYWORDS: [&str; 25] = [
    // 0..4: counts, the index into `Rules::counts`.
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    // 4..9: numeric rules, the index minus 4 being `Bound::kind`.
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    // 9..11: objects of named schemas.
    "properties",
    "$defs",
    // 11..13: one schema.
    "additionalProperties",
    "items",
    // 13..: one each.
    "anyOf",
    "type",
    "required",
    "enum",
    "const",
    "$ref",
    "pattern",
    "format",
    "$id",
    // Ignored, but they change which properties and items `additionalProperties` and `items` cover.
    "patternProperties",
    "prefixItems",
    // OpenAPI's `nullable: true` adds `null` to `type`: only ever more lenient than JSON Schema, which ignores it.
    "nullable",
];

impl<'a> Compiler<'a> {
    /// Compiles the schema `value` found at `pointer` (once per location), `keyword` being what holds it.
    fn node(
        &mut self,
        value: &'a Value,
        pointer: String,
        keyword: &'static str,
    ) -> Result<usize, SchemaError> {
        if let Some((_, index)) = self.at.iter().find(|(p, _)| *p == pointer) {
            return Ok(*index);
        }
        let index = self.nodes.len();
        self.nodes.push(Node::Bool(true));
        self.at.push((pointer.clone(), index));
        let node = match value {
            Value::Bool(b) => Node::Bool(*b),
            Value::Object(map) => {
                // Read into its final place: a refusal then leaves nothing half-built to drop on each of the
                // reader's many error paths.
                let mut rules = Box::new(Rules {
                    types: 0,
                    properties: Vec::new(),
                    additional_properties: None,
                    required: Vec::new(),
                    items: None,
                    items_from: 0,
                    enumeration: None,
                    constant: None,
                    any_of: Vec::new(),
                    reference: None,
                    bounds: Vec::new(),
                    counts: [0, UNBOUNDED, 0, UNBOUNDED],
                    pattern: None,
                    format: None,
                    format_regex: None,
                });
                self.rules(&mut rules, map, &pointer)?;
                Node::Rules(rules)
            }
            _ => {
                return Err(error(
                    keyword,
                    &pointer,
                    "must be a schema (an object or a boolean)",
                ))
            }
        };
        if let Some(slot) = self.nodes.get_mut(index) {
            *slot = node;
        }
        Ok(index)
    }

    /// The schemas of `anyOf`, each compiled.
    fn list(
        &mut self,
        value: &'a Value,
        pointer: &str,
        key: &'static str,
    ) -> Result<Vec<usize>, SchemaError> {
        let items = match value {
            Value::Array(items) if !items.is_empty() => items,
            _ => return Err(error(key, pointer, "must be a non-empty array of schemas")),
        };
        let base = pointer_push(pointer, key);
        let mut nodes = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            nodes.push(self.node(item, pointer_push(&base, &decimal(i as u64)), key)?);
        }
        Ok(nodes)
    }

    /// The schemas of an object keyword (`properties`, `$defs`) with their names, each compiled.
    fn named(
        &mut self,
        value: &'a Value,
        pointer: &str,
        key: &'static str,
    ) -> Result<Vec<(String, usize)>, SchemaError> {
        let Value::Object(members) = value else {
            return Err(error(key, pointer, "must be an object of schemas"));
        };
        let base = pointer_push(pointer, key);
        let mut nodes = Vec::with_capacity(members.len());
        for (name, schema) in members {
            nodes.push((
                name.clone(),
                self.node(schema, pointer_push(&base, name), key)?,
            ));
        }
        Ok(nodes)
    }

    /// One pass over the schema object's keywords.
    fn rules(
        &mut self,
        rules: &mut Rules,
        map: &'a Map<String, Value>,
        pointer: &str,
    ) -> Result<(), SchemaError> {
        let mut ignore_additional = false;
        let mut nullable = false;
        for (key, value) in map {
            let Some((k, &keyword)) = KEYWORDS.iter().enumerate().find(|(_, w)| *w == key) else {
                continue;
            };
            match k {
                0..=3 => {
                    let count = match value.as_number().map(Decimal::of) {
                        Some(n) if !n.negative && n.is_integer() => count_value(&n),
                        _ => return Err(error(keyword, pointer, "must be a non-negative integer")),
                    };
                    if let Some(slot) = rules.counts.get_mut(k) {
                        *slot = count;
                    }
                }
                // Draft 4's boolean `exclusiveMinimum` / `exclusiveMaximum` are ignored like any keyword outside
                // the checked set.
                5 | 7 if value.is_boolean() => {}
                4..=8 => {
                    let Value::Number(text) = value else {
                        return Err(error(keyword, pointer, "must be a number"));
                    };
                    let n = Decimal::of(text);
                    if k == 8 && (n.negative || n.is_zero() || n.digits.len() > 9) {
                        return Err(error(
                            keyword,
                            pointer,
                            "must be a number above 0 with at most 9 significant digits",
                        ));
                    }
                    rules.bounds.push(Bound {
                        value: n,
                        text: text.clone(),
                        kind: k as u8 - 4,
                        small: text.as_i64(),
                    });
                }
                9 => rules.properties = self.named(value, pointer, keyword)?,
                10 => {
                    self.named(value, pointer, keyword)?;
                }
                // The array form of `items` (older drafts' tuples) is ignored.
                12 if value.is_array() => {}
                11 | 12 => {
                    let node = Some(self.node(value, pointer_push(pointer, keyword), keyword)?);
                    if k == 11 {
                        rules.additional_properties = node;
                    } else {
                        rules.items = node;
                    }
                }
                13 => rules.any_of = self.list(value, pointer, keyword)?,
                14 => rules.types = type_bits(value, pointer)?,
                15 => rules.required = names(value, pointer)?,
                16 => match value {
                    Value::Array(values) => rules.enumeration = Some(values.clone()),
                    _ => return Err(error(keyword, pointer, "must be an array")),
                },
                17 => rules.constant = Some(value.clone()),
                18 => rules.reference = Some(self.reference(value, pointer)?),
                19 | 20 => {
                    let Value::String(text) = value else {
                        return Err(error(keyword, pointer, "must be a string"));
                    };
                    if k == 19 {
                        rules.pattern =
                            Some(self.pattern(Cow::Owned(text.clone()), keyword, pointer)?);
                    } else {
                        rules.format = Format::named(text);
                        if let Some(source) = rules.format.and_then(Format::pattern) {
                            rules.format_regex =
                                Some(self.pattern(Cow::Borrowed(source), keyword, pointer)?);
                        }
                    }
                }
                21 if !pointer.is_empty() => {
                    return Err(error(
                        keyword,
                        pointer,
                        "a nested $id (a second schema resource) is not supported: use $defs",
                    ))
                }
                // Which properties `additionalProperties` covers would take the ignored patterns: it is not
                // checked beside `patternProperties`, so ignoring them never refuses a property they allow.
                22 => ignore_additional = true,
                23 => rules.items_from = value.as_array().map_or(0, Vec::len),
                24 => nullable = value == &Value::Bool(true),
                _ => {}
            }
        }
        if ignore_additional {
            rules.additional_properties = None;
        }
        if nullable && rules.types != 0 {
            rules.types |= NULL;
        }
        Ok(())
    }

    /// Compiles a pattern with the host's `RegExp` (flag `u`); one the host refuses refuses the schema.
    fn pattern(
        &self,
        source: Cow<'static, str>,
        keyword: &'static str,
        pointer: &str,
    ) -> Result<Pattern, SchemaError> {
        Pattern::compile(self.regexes, source).map_err(|reason| {
            error(
                keyword,
                pointer,
                format!("is not an ECMAScript regular expression (flag u): {reason}"),
            )
        })
    }

    /// Resolves a `$ref` to the node of the location it points to (compiled on first use).
    fn reference(&mut self, target: &Value, pointer: &str) -> Result<usize, SchemaError> {
        let Value::String(text) = target else {
            return Err(error("$ref", pointer, "must be a string"));
        };
        // A fragment (`#`, then a JSON Pointer) with well-formed `%XX` escapes, or nothing this reader can follow.
        let Some(fragment) = text
            .as_bytes()
            .strip_prefix(b"#")
            .and_then(percent_decode)
            .filter(|f| f.first().is_none_or(|b| *b == b'/'))
        else {
            return Err(error(
                "$ref",
                pointer,
                "must be # or a JSON Pointer into this schema (#/$defs/…): remote URIs, anchors and malformed %-escapes are not supported",
            ));
        };
        let mut value = self.root;
        let mut resolved = String::new();
        for token in fragment.split(|b| *b == b'/').skip(1) {
            let token = unescape(token);
            // Keys are compared as bytes: a token that is not UTF-8 names nothing.
            let (next, name) = match value {
                Value::Object(map) => map
                    .iter()
                    .find(|(key, _)| key.as_bytes() == token)
                    .map(|(key, next)| (next, key.clone())),
                Value::Array(items) => index_value(&token).and_then(|i| items.get(i)).map(|next| {
                    // An index is ASCII digits (with an optional `+`), kept as written.
                    (next, token.iter().map(|b| char::from(*b)).collect())
                }),
                _ => None,
            }
            .ok_or_else(|| error("$ref", pointer, "points to nothing in the schema"))?;
            value = next;
            resolved = pointer_push(&resolved, &name);
        }
        self.node(value, resolved, "$ref")
    }

    /// Refuses a cycle of `$ref` / `anyOf` that returns to a schema without moving into the arguments: checking it
    /// would never end.
    fn check_cycles(&self) -> Result<(), SchemaError> {
        // 0: not visited, 1: on the current path, 2: done.
        let mut state = vec![0u8; self.nodes.len()];
        for start in 0..self.nodes.len() {
            self.visit(start, &mut state)?;
        }
        Ok(())
    }

    /// Visits `index` unless it was (`get` everywhere: no index can fail, so no panic path is linked).
    fn visit(&self, index: usize, state: &mut [u8]) -> Result<(), SchemaError> {
        match state.get_mut(index) {
            Some(s @ 0) => *s = 1,
            _ => return Ok(()),
        }
        if let Some(Node::Rules(rules)) = self.nodes.get(index) {
            for &next in rules.reference.iter().chain(&rules.any_of) {
                if state.get(next) == Some(&1) {
                    let pointer = self
                        .at
                        .iter()
                        .find(|(_, i)| *i == index)
                        .map(|(p, _)| p.as_str())
                        .unwrap_or_default();
                    return Err(error(
                        "$ref",
                        pointer,
                        "refers back to itself without descending into a property or item (a cycle without a base case)",
                    ));
                }
                self.visit(next, state)?;
            }
        }
        if let Some(s) = state.get_mut(index) {
            *s = 2;
        }
        Ok(())
    }
}

fn type_bits(value: &Value, pointer: &str) -> Result<u8, SchemaError> {
    let one = std::slice::from_ref(value);
    let names = match value {
        Value::Array(names) if !names.is_empty() => names.as_slice(),
        Value::String(_) => one,
        _ => {
            return Err(error(
                "type",
                pointer,
                "must be a type name or a non-empty array of them",
            ))
        }
    };
    let mut bits = 0;
    for name in names {
        let bit = TYPE_NAMES
            .iter()
            .find(|(_, n)| Some(*n) == name.as_str())
            .ok_or_else(|| error("type", pointer, "names an unknown type"))?;
        bits |= bit.0;
    }
    Ok(bits)
}

fn names(value: &Value, pointer: &str) -> Result<Vec<String>, SchemaError> {
    let mut names = Vec::new();
    if let Value::Array(items) = value {
        for item in items {
            let Value::String(name) = item else {
                break;
            };
            names.push(name.clone());
        }
        if names.len() == items.len() {
            return Ok(names);
        }
    }
    Err(error(
        "required",
        pointer,
        "must be an array of property names",
    ))
}
