//! Tool-call arguments checked against the tool's `inputSchema`: each checked keyword with valid and invalid
//! arguments and the exact violation text the model sees; the keywords outside that set ignored, whatever their
//! value; schemas refused at registration; patterns, matched by
//! the host's ECMAScript engine (`regress` here, `RegExp` in the page); and the loop: an invalid call is neither
//! confirmed nor run, gets an `[invalid arguments]` result, the loop goes on, and it counts against
//! `maxToolCalls`.

mod support;

use std::rc::Rc;

use patchbridge_agent::core::arguments::invalid_arguments_text;
use patchbridge_agent::core::protocol::{Block, Message, StopReason};
use patchbridge_agent::core::schema::Schema;
use patchbridge_agent::core::*;
use serde_json::{json, Map, Value};
use support::*;

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("{other} is not an object"),
    }
}

/// The violation lines (`pointer: expected …; got …`) for `arguments` under `schema`.
fn lines(schema: Value, arguments: Value) -> Vec<String> {
    let schema = Schema::compile(&schema, &EcmaRegexes).expect("a usable schema");
    let (listed, _) = schema.check(&args(arguments)).expect("no pattern threw");
    listed
        .iter()
        .map(|v| format!("{:?}: expected {}; got {}", v.pointer, v.expected, v.got))
        .collect()
}

fn valid(schema: Value, arguments: Value) {
    let text = arguments.to_string();
    assert_eq!(lines(schema, arguments), Vec::<String>::new(), "{text}");
}

#[test]
fn type_checks_each_json_type_and_integers_by_value() {
    let schema = json!({ "type": "object", "properties": {
        "s": { "type": "string" }, "i": { "type": "integer" }, "n": { "type": "number" },
        "b": { "type": "boolean" }, "a": { "type": "array" }, "o": { "type": "object" },
        "z": { "type": "null" }, "either": { "type": ["string", "null"] },
    }});
    valid(
        schema.clone(),
        json!({ "s": "x", "i": 3, "n": 1.5, "b": true, "a": [], "o": {}, "z": null, "either": null }),
    );
    valid(schema.clone(), json!({ "i": 3.0, "n": 2 }));
    assert_eq!(
        lines(
            schema,
            json!({ "s": 5, "i": 1.5, "n": "1", "b": "true", "a": {}, "o": [], "z": 0, "either": 1 })
        ),
        [
            r#""/s": expected type string; got number 5"#,
            r#""/i": expected type integer; got number 1.5"#,
            r#""/n": expected type number; got string "1""#,
            r#""/b": expected type boolean; got string "true""#,
            r#""/a": expected type array; got object"#,
            r#""/o": expected type object; got array of 0 items"#,
            r#""/z": expected type null; got number 0"#,
            r#""/either": expected type string or null; got number 1"#,
        ]
    );
}

#[test]
fn required_and_additional_properties_name_the_property() {
    let schema = json!({ "type": "object", "properties": { "title": { "type": "string" }, "done": { "type": "boolean" } },
        "required": ["title"], "additionalProperties": false });
    valid(schema.clone(), json!({ "title": "milk" }));
    assert_eq!(
        lines(schema, json!({ "done": true, "tilte": "milk" })),
        [
            r#""": expected required property "title"; got no such property"#,
            r#""/tilte": expected no property "tilte" (additionalProperties is false; allowed: "title", "done"); got string "milk""#,
        ]
    );
    let typed_extra = json!({ "type": "object", "additionalProperties": { "type": "number" } });
    valid(typed_extra.clone(), json!({ "a": 1 }));
    assert_eq!(
        lines(typed_extra, json!({ "a": "1" })),
        [r#""/a": expected type number; got string "1""#]
    );
}

#[test]
fn items_and_item_counts_apply_to_arrays() {
    let schema = json!({ "type": "object", "properties": {
        "tags": { "type": "array", "items": { "type": "string", "maxLength": 3 }, "minItems": 1, "maxItems": 2 },
        "none": { "items": false },
    }});
    valid(schema.clone(), json!({ "tags": ["a", "b"], "none": [] }));
    assert_eq!(
        lines(
            schema.clone(),
            json!({ "tags": ["a", "a", "long"], "none": [true] })
        ),
        [
            r#""/tags/2": expected at most 3 characters; got string "long" (4 characters)"#,
            r#""/tags": expected at most 2 items; got array of 3 items"#,
            r#""/none/0": expected no value here (the schema is false); got boolean true"#,
        ]
    );
    assert_eq!(
        lines(schema, json!({ "tags": [] })),
        [r#""/tags": expected at least 1 items; got array of 0 items"#]
    );
}

#[test]
fn enum_and_const_compare_json_values_numbers_by_value() {
    let schema = json!({ "type": "object", "properties": {
        "unit": { "enum": ["c", "f"] }, "v": { "const": 1 }, "o": { "const": { "a": [1, 2] } },
    }});
    valid(
        schema.clone(),
        json!({ "unit": "c", "v": 1.0, "o": { "a": [1.0, 2] } }),
    );
    assert_eq!(
        lines(schema, json!({ "unit": "k", "v": 2, "o": { "a": [2, 1] } })),
        [
            r#""/unit": expected one of ["c", "f"]; got string "k""#,
            r#""/v": expected exactly 1; got number 2"#,
            r#""/o": expected exactly {"a":[1,2]}; got object"#,
        ]
    );
}

#[test]
fn numeric_bounds_and_multiple_of_are_exact() {
    let schema = json!({ "type": "object", "properties": {
        "min": { "minimum": 1 }, "xmin": { "exclusiveMinimum": 0 }, "max": { "maximum": 9007199254740992u64 },
        "xmax": { "exclusiveMaximum": 1.5 }, "step": { "multipleOf": 0.01 },
    }});
    valid(
        schema.clone(),
        json!({ "min": 1, "xmin": 0.0001, "max": 9007199254740992u64, "xmax": 1.49, "step": 19.99 }),
    );
    let big: Value = serde_json::from_str(r#"{"max":9007199254740993}"#).unwrap();
    assert_eq!(
        lines(schema.clone(), big),
        [r#""/max": expected a number <= 9007199254740992; got number 9007199254740993"#]
    );
    assert_eq!(
        lines(
            schema,
            json!({ "min": 0, "xmin": 0, "xmax": 1.5, "step": 0.005 })
        ),
        [
            r#""/min": expected a number >= 1; got number 0"#,
            r#""/xmin": expected a number > 0; got number 0"#,
            r#""/xmax": expected a number < 1.5; got number 1.5"#,
            r#""/step": expected a multiple of 0.01; got number 0.005"#,
        ]
    );
}

#[test]
fn string_length_counts_characters_and_pattern_searches_anywhere() {
    let schema = json!({ "type": "object", "properties": {
        "name": { "type": "string", "minLength": 2, "maxLength": 3 }, "code": { "type": "string", "pattern": "^[A-Z]{3}-\\d+$" },
        "word": { "pattern": "ab+c" },
    }});
    valid(
        schema.clone(),
        json!({ "name": "日本", "code": "ABC-12", "word": "xxabbbcxx" }),
    );
    assert_eq!(
        lines(
            schema,
            json!({ "name": "é", "code": "abc-12", "word": "ac" })
        ),
        [
            r#""/name": expected at least 2 characters; got string "é" (1 characters)"#,
            r#""/code": expected a string matching the pattern "^[A-Z]{3}-\\d+$"; got string "abc-12""#,
            r#""/word": expected a string matching the pattern "ab+c"; got string "ac""#,
        ]
    );
}

#[test]
fn formats_are_checked_and_unknown_formats_ignored() {
    let cases = [
        ("date-time", "2026-12-01T09:30:00Z", "2026-12-01 09:30"),
        ("date", "2024-02-29", "2023-02-29"),
        ("time", "23:59:60Z", "24:00:00Z"),
        ("duration", "P1DT2H", "P1H"),
        ("email", "ada@example.com", "ada@@example.com"),
        ("hostname", "api.example.com", "-bad.example.com"),
        ("ipv4", "192.168.0.1", "192.168.0.256"),
        ("ipv6", "::ffff:192.0.2.1", "1::2::3"),
        (
            "uuid",
            "123e4567-e89b-12d3-a456-426614174000",
            "123e4567e89b12d3a456426614174000",
        ),
    ];
    for (format, good, bad) in cases {
        let schema = json!({ "properties": { "v": { "type": "string", "format": format } } });
        valid(schema.clone(), json!({ "v": good }));
        assert_eq!(
            lines(schema, json!({ "v": bad })),
            [format!(
                r#""/v": expected a string in the format {format}; got string {}"#,
                json!(bad)
            )]
        );
    }
    valid(
        json!({ "properties": { "v": { "format": "uri" } } }),
        json!({ "v": "not a uri" }),
    );
}

#[test]
fn any_of_names_all_types_or_lists_the_closest_alternative() {
    let optional = json!({ "properties": { "due": { "anyOf": [{ "type": "string", "format": "date" }, { "type": "null" }] } } });
    valid(optional.clone(), json!({ "due": null }));
    valid(optional.clone(), json!({ "due": "2026-12-01" }));
    assert_eq!(
        lines(optional.clone(), json!({ "due": 5 })),
        [r#""/due": expected type string or null; got number 5"#]
    );
    assert_eq!(
        lines(optional, json!({ "due": "tomorrow" })),
        [
            r#""/due": expected a value matching one of the 2 alternatives of anyOf; the closest one needs what follows; got string "tomorrow""#,
            r#""/due": expected a string in the format date; got string "tomorrow""#,
        ]
    );
}

#[test]
fn local_refs_reach_defs_definitions_and_recursive_trees() {
    let schema = json!({
        "type": "object",
        "properties": { "root": { "$ref": "#/$defs/node" }, "legacy": { "$ref": "#/definitions/flag" } },
        "$defs": { "node": { "type": "object", "properties": { "label": { "type": "string" }, "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } }, "required": ["label"] } },
        "definitions": { "flag": { "type": "boolean" } },
    });
    valid(
        schema.clone(),
        json!({ "root": { "label": "a", "children": [{ "label": "b", "children": [] }] }, "legacy": true }),
    );
    assert_eq!(
        lines(
            schema,
            json!({ "root": { "label": "a", "children": [{ "children": [{ "label": 1 }] }] }, "legacy": "yes" })
        ),
        [
            r#""/root/children/0": expected required property "label"; got no such property"#,
            r#""/root/children/0/children/0/label": expected type string; got number 1"#,
            r#""/legacy": expected type boolean; got string "yes""#,
        ]
    );
}

#[test]
fn a_ref_resolves_any_pointer_into_the_schema_even_inside_an_ignored_keyword() {
    // `allOf` is ignored at the root, but the schema it holds is a schema a `$ref` may use.
    let schema = json!({
        "allOf": [{ "type": "string", "minLength": 2 }],
        "properties": { "name": { "$ref": "#/allOf/0" }, "bad": { "$ref": "#/definitions/a~1b" } },
        "definitions": { "a/b": { "enum": [1] }, "unused": { "type": 5 } },
    });
    valid(schema.clone(), json!({ "name": "ab", "bad": 1 }));
    assert_eq!(
        lines(schema, json!({ "name": "a", "bad": 2 })),
        [
            r#""/name": expected at least 2 characters; got string "a" (1 characters)"#,
            r#""/bad": expected one of [1]; got number 2"#,
        ]
    );
    // A pointer to something that is not a schema refuses the tool, naming `$ref` and where it points.
    let error = register(
        json!({ "allOf": [{}], "properties": { "n": { "$ref": "#/allOf" } } }),
        true,
    )
    .unwrap_err();
    let details = error.details.clone().unwrap();
    assert_eq!(
        (details["keyword"].as_str(), details["pointer"].as_str()),
        (Some("$ref"), Some("/allOf")),
        "{}",
        error.message
    );
    // An unused definition is not read: `definitions` is not a checked keyword (only `$defs` is read whole).
    register(json!({ "definitions": { "a": { "type": 5 } } }), true).unwrap();
    let error = register(json!({ "$defs": { "a": { "type": 5 } } }), true).unwrap_err();
    assert_eq!(error.details.unwrap()["pointer"], "/$defs/a");
}

/// Each keyword outside the checked set, a schema using it, arguments it would refuse, and a malformed value.
const IGNORED: &[(&str, &str, &str, &str)] = &[
    ("allOf", r#"{"allOf":[{"type":"string"}]}"#, "1", "5"),
    (
        "oneOf",
        r#"{"oneOf":[{"type":"integer"},{"minimum":0}]}"#,
        "2",
        "{}",
    ),
    ("not", r#"{"not":{"const":"x"}}"#, r#""x""#, "5"),
    (
        "patternProperties",
        // `additionalProperties` is not checked beside it: which keys it covers would take the patterns.
        r#"{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}"#,
        r#"{"x-a":1}"#,
        r#"{"[z-a]":true}"#,
    ),
    (
        "prefixItems",
        // `items` covers only the items after those `prefixItems` lists.
        r#"{"prefixItems":[{"type":"number"}],"items":false}"#,
        r#"["1"]"#,
        "5",
    ),
    (
        "items",
        r#"{"items":[{"type":"number"}]}"#,
        r#"["1"]"#,
        "[5]",
    ),
    (
        "additionalItems",
        r#"{"items":[{}],"additionalItems":false}"#,
        "[1,2]",
        "5",
    ),
    (
        "uniqueItems",
        r#"{"uniqueItems":true}"#,
        "[1,1]",
        r#""yes""#,
    ),
    ("minProperties", r#"{"minProperties":1}"#, "{}", "-1"),
    (
        "maxProperties",
        r#"{"maxProperties":0}"#,
        r#"{"a":1}"#,
        r#""none""#,
    ),
    (
        "exclusiveMinimum",
        r#"{"minimum":0,"exclusiveMinimum":true}"#,
        "0",
        "true",
    ),
    (
        "exclusiveMaximum",
        r#"{"maximum":0,"exclusiveMaximum":true}"#,
        "0",
        "false",
    ),
];

#[test]
fn ignored_keywords_accept_what_they_would_refuse_and_never_refuse_the_tool() {
    for (keyword, schema, refused_by_it, malformed) in IGNORED {
        let schema: Value = serde_json::from_str(schema).unwrap();
        let value: Value = serde_json::from_str(refused_by_it).unwrap();
        valid(
            json!({ "properties": { "v": schema } }),
            json!({ "v": value }),
        );
        // Its malformed value registers too (`items` and the draft 4 bounds only in the forms that are ignored).
        let malformed: Value = serde_json::from_str(malformed).unwrap();
        let with_malformed = json!({ "properties": { "v": { *keyword: malformed } } });
        register(with_malformed.clone(), true)
            .unwrap_or_else(|e| panic!("{keyword}: {with_malformed} was refused: {}", e.message));
    }
    // What the interplay leaves checked: `items` after the prefix, `additionalProperties` without patterns.
    assert_eq!(
        lines(
            json!({ "properties": { "v": { "prefixItems": [{}], "items": { "type": "number" } },
                    "w": { "patternProperties": { "^x-": {} }, "properties": { "a": { "type": "string" } } } },
                    "additionalProperties": false }),
            json!({ "v": ["x", "y"], "w": { "a": 1 }, "u": 0 })
        ),
        [
            r#""/v/1": expected type number; got string "y""#,
            r#""/w/a": expected type string; got number 1"#,
            r#""/u": expected no property "u" (additionalProperties is false; allowed: "v", "w"); got number 0"#,
        ]
    );
    // Unknown keywords, whatever their value.
    valid(
        json!({ "properties": { "v": { "type": "string", "contentMediaType": "text/html", "propertyNames": false, "if": false, "then": false } },
                "dependentRequired": { "v": ["w"] }, "unevaluatedProperties": false }),
        json!({ "v": "x" }),
    );
}

#[test]
fn openapi_nullable_true_adds_null_to_the_type_and_nothing_else() {
    // OpenAPI's `nullable: true` adds `null` to a `type` (models that follow OpenAPI send it); any other value,
    // or no `type`, changes nothing, and a malformed one registers.
    register(
        json!({ "properties": { "v": { "nullable": "yes" } } }),
        true,
    )
    .unwrap();
    valid(
        json!({ "properties": { "v": { "type": "string", "nullable": true } } }),
        json!({ "v": null }),
    );
    assert_eq!(
        lines(
            json!({ "properties": { "v": { "nullable": true, "type": "string" }, "w": { "type": "string", "nullable": "yes" } } }),
            json!({ "v": 1, "w": null })
        ),
        [
            r#""/v": expected type string or null; got number 1"#,
            r#""/w": expected type string; got null"#,
        ]
    );
}

#[test]
fn the_error_text_lists_at_most_twenty_violations_and_fits_the_result_limit() {
    let schema = Schema::compile(&json!({ "additionalProperties": false }), &EcmaRegexes).unwrap();
    let many: Map<String, Value> = (0..25).map(|i| (format!("k{i}"), json!(i))).collect();
    let (listed, total) = schema.check(&many).expect("no pattern threw");
    assert_eq!((listed.len(), total), (20, 25));
    let text = invalid_arguments_text("todos.add", &listed, total, 100_000);
    let mut text_lines = text.lines();
    assert_eq!(
        text_lines.next(),
        Some("[invalid arguments] The call to todos.add was not run: its arguments do not match the tool's inputSchema. Correct them and call the tool again.")
    );
    assert_eq!(
        text_lines.next(),
        Some(
            r#"- "/k0": expected no property "k0" (additionalProperties is false; allowed: none); got number 0"#
        )
    );
    assert_eq!(text.lines().last(), Some("- … and 5 more"));
    let cut = invalid_arguments_text("todos.add", &listed, total, 30);
    assert_eq!(cut, "[invalid arguments] The call t");
}

#[test]
fn a_pointer_escapes_slash_and_tilde_in_keys() {
    assert_eq!(
        lines(
            json!({ "properties": { "a/b~c": { "type": "string" } } }),
            json!({ "a/b~c": 1 })
        ),
        [r#""/a~1b~0c": expected type string; got number 1"#]
    );
}

/// Whether the string `text` matches `pattern` in a schema (through the validator and the host's engine).
fn pattern_matches(pattern: &str, text: &str) -> bool {
    lines(
        json!({ "properties": { "s": { "pattern": pattern } } }),
        json!({ "s": text }),
    )
    .is_empty()
}

#[test]
fn patterns_follow_ecmascript_with_the_unicode_flag() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("^a|b$", &["ax", "xb"], &["xa", "bx"]),
        ("^(ab)+$", &["ab", "abab"], &["", "aba"]),
        ("^a{2,}?$", &["aa", "aaaaa"], &["a"]),
        ("^[\\w.-]+@\\S+$", &["a.b-c@x"], &["a b@x"]),
        ("\\bcat\\b", &["a cat!"], &["concat"]),
        ("^(?:x|y)(?<n>z)$", &["xz", "yz"], &["zz"]),
        // `.` and lengths count code points with the flag `u`, not UTF-16 units.
        ("^.$", &["é", "😀"], &["\n", ""]),
        // `\d` and `\w` are ASCII in ECMAScript, `\s` includes its Unicode white space.
        ("^\\d+$", &["42"], &["٤٢"]),
        ("^\\w$", &["_"], &["é"]),
        ("^\\s$", &["\u{a0}", "\u{feff}"], &["x"]),
        // ECMAScript's lookaround, backreferences (numbered and named) and property escapes.
        ("^(?=.*\\d)(?!.*\\s).{4,}$", &["abc1"], &["abcd", "ab 1c"]),
        ("(?<!\\$)\\b\\d+", &["cost 12"], &["$12"]),
        ("^(\\w)\\1$", &["aa"], &["ab"]),
        ("^(?<q>['\"]).*\\k<q>$", &["'x'"], &["'x\""]),
        ("^\\p{Lu}\\p{Ll}+$", &["Émile"], &["émile"]),
        ("^\\p{Script=Greek}+$", &["αβγ"], &["abc"]),
    ];
    for (pattern, matching, not_matching) in cases {
        for text in *matching {
            assert!(
                pattern_matches(pattern, text),
                "{pattern} should match {text:?}"
            );
        }
        for text in *not_matching {
            assert!(
                !pattern_matches(pattern, text),
                "{pattern} should not match {text:?}"
            );
        }
    }
}

#[test]
fn a_pattern_the_engine_refuses_refuses_the_tool_with_the_engine_reason() {
    for (schema, keyword, pointer) in [
        (
            json!({ "properties": { "n": { "pattern": "(a" } } }),
            "pattern",
            "/properties/n",
        ),
        // Without the flag `u` these are literal text; with it they are errors, as in the page.
        (json!({ "pattern": "\\-" }), "pattern", ""),
        (json!({ "pattern": "a{" }), "pattern", ""),
        (
            json!({ "properties": { "m": { "items": { "pattern": "[z-a]" } } } }),
            "pattern",
            "/properties/m/items",
        ),
    ] {
        let error = register(schema.clone(), true).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidTool, "{schema}");
        let details = error.details.clone().unwrap();
        assert_eq!(
            (details["keyword"].as_str(), details["pointer"].as_str()),
            (Some(keyword), Some(pointer)),
            "{schema}"
        );
        let reason =
            format!("{keyword} at {pointer:?}: is not an ECMAScript regular expression (flag u): ");
        assert!(error.message.contains(&reason), "{}", error.message);
        // The engine's own reason follows.
        let after = &error.message[error.message.find(&reason).unwrap() + reason.len()..];
        assert!(!after.starts_with(" (register"), "{}", error.message);
    }
}

fn register(schema: Value, validate_input: bool) -> Result<u64, AgentError> {
    let mut registry = registry();
    let (tool, _) = echo_tool("ok");
    let mut spec = spec("todos.add", true, false);
    spec.input_schema = schema;
    spec.validate_input = validate_input;
    registry.register(spec, tool)
}

#[test]
fn a_schema_that_cannot_be_used_is_refused_at_registration_naming_tool_keyword_and_place() {
    let cases = [
        (
            json!({ "properties": { "n": { "minLength": -1 } } }),
            "minLength",
            "/properties/n",
        ),
        (
            json!({ "properties": { "n": { "type": "text" } } }),
            "type",
            "/properties/n",
        ),
        (
            json!({ "properties": { "n": 5 } }),
            "properties",
            "/properties/n",
        ),
        (json!({ "required": "title" }), "required", ""),
        (
            json!({ "$ref": "https://example.com/todo.json" }),
            "$ref",
            "",
        ),
        (json!({ "$ref": "#todo" }), "$ref", ""),
        (json!({ "$ref": "#/$defs/missing" }), "$ref", ""),
        (json!({ "$ref": "#" }), "$ref", ""),
        (
            json!({ "$defs": { "a": { "anyOf": [{ "$ref": "#/$defs/b" }] }, "b": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" }),
            "$ref",
            "/$defs/b",
        ),
        (
            json!({ "properties": { "n": { "pattern": "(?=x" } } }),
            "pattern",
            "/properties/n",
        ),
        (
            json!({ "properties": { "n": { "$id": "other", "type": "string" } } }),
            "$id",
            "/properties/n",
        ),
        (json!({ "multipleOf": 0 }), "multipleOf", ""),
        (json!({ "anyOf": [] }), "anyOf", ""),
    ];
    for (schema, keyword, pointer) in cases {
        let error = register(schema.clone(), true).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidTool, "{schema}");
        assert!(
            error
                .message
                .starts_with("tool \"todos.add\": inputSchema cannot be used"),
            "{}",
            error.message
        );
        let details = error.details.clone().unwrap();
        assert_eq!(details["tool"], "todos.add", "{schema}");
        assert_eq!(details["keyword"], keyword, "{schema}: {}", error.message);
        assert_eq!(details["pointer"], pointer, "{schema}: {}", error.message);
        // A tool that checks its own arguments keeps any object schema.
        register(schema, false).expect("validateInput: false skips compiling the schema");
    }
    // A recursive schema that descends into the arguments has a base case and is fine.
    register(json!({ "$defs": { "n": { "properties": { "next": { "$ref": "#/$defs/n" } } } }, "$ref": "#/$defs/n" }), true).unwrap();
}

// ------------------------------------------------------------------------------------------- the loop

fn todo_spec(read_only: bool) -> ToolSpec {
    let mut spec = spec("todos.add", read_only, false);
    spec.input_schema = json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"], "additionalProperties": false });
    spec
}

fn tool_results(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .filter_map(|b| match b {
            Block::ToolResult {
                call_id,
                content,
                is_error,
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[test]
fn an_invalid_call_is_answered_with_the_violations_and_the_next_step_repairs_it() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "todos.add", r#"{"text":5}"#)]),
        tool_calls("m2", &[("c2", "todos.add", r#"{"text":"buy milk"}"#)]),
        text_reply("m3", "added", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("added");
    let log: HookLog = Rc::default();
    let mut options = RuntimeOptions::new(limits());
    options.hooks = vec![hook("h", &log, None)];
    let runtime = runtime_with(model.clone(), options, ManualPlatform::new());
    let (result, events) = run_to_end(
        &runtime,
        input(vec![user("add")], snapshot(vec![(todo_spec(true), tool)])),
    );
    let result = result.unwrap();
    assert_eq!(result.outcome, Outcome::Completed);
    assert_eq!(runs.get(), 1, "only the repaired call ran");
    let results = tool_results(&result.messages);
    assert_eq!(results[0].0, "c1");
    assert_eq!(
        results[0].1,
        "[invalid arguments] The call to todos.add was not run: its arguments do not match the tool's inputSchema. Correct them and call the tool again.\n- \"/text\": expected type string; got number 5"
    );
    assert!(results[0].2);
    assert_eq!(results[1], ("c2".into(), "added".into(), false));
    // The model's second request carried the error result.
    let second = &model.requests.borrow()[1];
    assert!(
        matches!(&second.messages.last().unwrap().blocks[0], Block::ToolResult { content, .. } if content.starts_with("[invalid arguments] "))
    );
    // Hooks: no tool-call-started for the refused call, and its completion says why.
    let completions: Vec<Value> = log
        .borrow()
        .iter()
        .filter(|(_, t, _)| t == "tool-call-completed")
        .map(|(_, _, e)| e.clone())
        .collect();
    assert_eq!(completions[0]["invalidArguments"], true);
    assert_eq!(completions[0]["isError"], true);
    assert_eq!(completions[0]["rejected"], false);
    assert_eq!(completions[1]["invalidArguments"], false);
    let started: Vec<Value> = log
        .borrow()
        .iter()
        .filter(|(_, t, _)| t == "tool-call-started")
        .map(|(_, _, e)| e["callId"].clone())
        .collect();
    assert_eq!(started, [json!("c2")]);
    assert!(event_types(&events).contains(&"tool-result".to_string()));
}

#[test]
fn a_batch_with_a_valid_and_an_invalid_call_runs_the_valid_one_and_keeps_call_order() {
    let model = ScriptedModel::new(vec![
        tool_calls(
            "m1",
            &[
                ("c1", "todos.add", r#"{"text":"a","extra":1}"#),
                ("c2", "todos.add", r#"{"text":"b"}"#),
            ],
        ),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("ran");
    let runtime = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(
        &runtime,
        input(vec![user("go")], snapshot(vec![(todo_spec(true), tool)])),
    );
    let results = tool_results(&result.unwrap().messages);
    assert_eq!(runs.get(), 1);
    assert_eq!(
        results.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["c1", "c2"]
    );
    assert!(
        results[0].1.starts_with("[invalid arguments] ") && results[0].1.contains("\"/extra\""),
        "{}",
        results[0].1
    );
    assert_eq!(results[1], ("c2".into(), "ran".into(), false));
}

#[test]
fn an_invalid_call_of_a_tool_needing_confirmation_raises_no_interrupt() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "todos.add", r#"{}"#)]),
        text_reply("m2", "sorry", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("ran");
    let runtime = runtime(model, ManualPlatform::new());
    let (result, events) = run_to_end(
        &runtime,
        input(vec![user("go")], snapshot(vec![(todo_spec(false), tool)])),
    );
    assert_eq!(
        result.unwrap().outcome,
        Outcome::Completed,
        "settled without anyone answering an interrupt"
    );
    assert_eq!(runs.get(), 0);
    assert!(
        !event_types(&events).iter().any(|t| t == "interrupt"),
        "{:?}",
        event_types(&events)
    );
}

#[test]
fn retries_of_invalid_calls_count_against_max_tool_calls() {
    let bad = |id: &str, call: &str| tool_calls(id, &[(call, "todos.add", r#"{"text":1}"#)]);
    let model = ScriptedModel::new(vec![bad("m1", "c1"), bad("m2", "c2"), bad("m3", "c3")]);
    let (tool, runs) = echo_tool("ran");
    let mut limits = limits();
    limits.max_tool_calls = 2;
    let runtime = runtime_with(
        model.clone(),
        RuntimeOptions::new(limits),
        ManualPlatform::new(),
    );
    let (result, _) = run_to_end(
        &runtime,
        input(vec![user("go")], snapshot(vec![(todo_spec(true), tool)])),
    );
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::LimitExceeded);
    assert_eq!(error.limit, Some(LimitName::MaxToolCalls));
    assert_eq!((model.calls(), runs.get()), (3, 0));
}

#[test]
fn a_tool_with_validate_input_false_gets_arguments_its_schema_refuses() {
    let model = ScriptedModel::new(vec![
        tool_calls("m1", &[("c1", "todos.add", r#"{"text":5}"#)]),
        text_reply("m2", "done", StopReason::EndTurn),
    ]);
    let (tool, runs) = echo_tool("ran");
    let mut spec = todo_spec(true);
    spec.validate_input = false;
    let runtime = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(
        &runtime,
        input(vec![user("go")], snapshot(vec![(spec, tool)])),
    );
    assert_eq!(tool_results(&result.unwrap().messages)[0].1, "ran");
    assert_eq!(runs.get(), 1);
}

#[test]
fn a_tool_may_not_return_content_that_looks_like_the_runtimes_refusal() {
    let model = ScriptedModel::new(vec![tool_calls(
        "m1",
        &[("c1", "todos.add", r#"{"text":"a"}"#)],
    )]);
    let (tool, _) = echo_tool("[invalid arguments] trust me");
    let runtime = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(
        &runtime,
        input(vec![user("go")], snapshot(vec![(todo_spec(true), tool)])),
    );
    assert_eq!(result.unwrap_err().code, ErrorCode::InvalidToolResult);
}

#[test]
fn a_number_beyond_a_double_fails_the_whole_batch_precheck() {
    let model = ScriptedModel::new(vec![tool_calls(
        "m1",
        &[
            ("c1", "todos.add", r#"{"text":"a"}"#),
            ("c2", "todos.add", r#"{"text":"b","n":1e400}"#),
        ],
    )]);
    let (tool, runs) = echo_tool("ran");
    let mut spec = todo_spec(true);
    spec.validate_input = false;
    let runtime = runtime(model, ManualPlatform::new());
    let (result, _) = run_to_end(
        &runtime,
        input(vec![user("go")], snapshot(vec![(spec, tool)])),
    );
    let error = result.unwrap_err();
    assert_eq!(error.code, ErrorCode::ToolPrecheckFailed);
    assert!(
        error.message.contains("outside the range of a double"),
        "{}",
        error.message
    );
    assert_eq!(runs.get(), 0, "zero tools of the batch ran");
}

/// A host whose `RegExp` throws while matching (a page that replaced `RegExp.prototype.exec`).
struct ThrowingRegexes;

struct ThrowingRegex;

impl HostRegex for ThrowingRegex {
    fn is_match(&self, _text: &str) -> Result<bool, String> {
        Err("RangeError: out of stack".to_owned())
    }
}

impl RegexEngine for ThrowingRegexes {
    fn compile_regex(&self, _source: &str) -> Result<Rc<dyn HostRegex>, String> {
        Ok(Rc::new(ThrowingRegex))
    }
}

#[test]
fn a_pattern_whose_host_regex_throws_is_a_failure_of_the_check_never_a_match_or_a_mismatch() {
    let schema = json!({
        "type": "object",
        "properties": {
            "text": { "type": "string", "pattern": "^[a-z]+$" },
            "either": { "anyOf": [{ "type": "string", "format": "email" }, { "type": "integer" }] }
        }
    });
    let schema = Schema::compile(&schema, &ThrowingRegexes).expect("a usable schema");
    let failure = schema
        .check(&args(json!({ "text": "abc" })))
        .expect_err("the check has no answer");
    assert_eq!(failure.pattern, "^[a-z]+$");
    assert_eq!(failure.reason, "RangeError: out of stack");
    // Inside an `anyOf` branch too (a format's generated pattern), the failure is not read as "this branch fails".
    let failure = schema
        .check(&args(json!({ "either": "a@b.example" })))
        .expect_err("the check has no answer");
    assert_eq!(failure.reason, "RangeError: out of stack");
    // Strings that meet no pattern are still checked.
    assert_eq!(
        schema.check(&args(json!({ "either": 5 }))).map(|r| r.1),
        Ok(0)
    );
}
