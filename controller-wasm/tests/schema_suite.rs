//! The official JSON Schema Test Suite (draft 2020-12) cases, vendored in `tests/schema-suite/` (see its
//! README). For the keywords argument validation checks, every case whose schema the runtime can use must be
//! decided as the suite says, apart from any listed in `KNOWN_DIFFERENCES` with their reason (none: patterns run on
//! an ECMAScript engine, the page's `RegExp` and `regress` here, so even `ecmascript-regex.json` passes whole).
//! The cases of schemas using a keyword outside that set (`allOf`, `oneOf`, `not`, `patternProperties`,
//! `prefixItems`, `uniqueItems`, `minProperties`, `maxProperties`, …) pin that it is ignored: such a schema is
//! never refused, and every value the suite calls valid passes.

mod support;

use std::path::{Path, PathBuf};

use patchbridge_agent::core::schema::Schema;
use serde_json::Value;

/// Keywords the validator checks, annotations that never change a result, and `definitions`, which is not read
/// but holds schemas a `$ref` may point to (any local pointer resolves).
const UNDERSTOOD: &[&str] = &[
    "type",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "format",
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Cases decided differently, as `(file, group description, case description)`, each for a documented reason.
const KNOWN_DIFFERENCES: &[(&str, &str, &str, &str)] = &[];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema-suite")
}

fn files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [suite_dir(), suite_dir().join("format")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Whether every keyword of the schema (at any depth) is one the validator understands.
fn understood(schema: &Value, parent_is_map_of_schemas: bool) -> bool {
    match schema {
        Value::Object(map) => map.iter().all(|(key, value)| {
            if parent_is_map_of_schemas {
                return understood(value, false);
            }
            if !UNDERSTOOD.contains(&key.as_str()) {
                return false;
            }
            match key.as_str() {
                "properties" | "$defs" | "definitions" => understood(value, true),
                "enum" | "const" | "examples" | "default" | "required" => true,
                _ => understood(value, false),
            }
        }),
        Value::Array(items) => items.iter().all(|item| understood(item, false)),
        _ => true,
    }
}

fn known(file: &str, group: &str, case: &str, used: &mut [bool]) -> bool {
    let hit = KNOWN_DIFFERENCES
        .iter()
        .position(|(f, g, c, _)| *f == file && *g == group && (c.is_empty() || *c == case));
    if let Some(i) = hit {
        used[i] = true;
    }
    hit.is_some()
}

/// Only schemas needing what the runtime refuses may be refused: a remote or anchor `$ref`, a nested `$id`.
fn unexpected(refused: &[String]) -> Vec<&str> {
    refused
        .iter()
        .filter(|r| !(r.contains("keyword: \"$ref\"") || r.contains("keyword: \"$id\"")))
        .map(|s| s.as_str())
        .collect()
}

#[test]
fn the_official_suite_cases_of_the_checked_keywords_pass() {
    let mut ran = 0;
    let mut skipped_groups = 0;
    let mut refused_groups = Vec::new();
    let mut failures = Vec::new();
    let mut used = vec![false; KNOWN_DIFFERENCES.len()];
    for path in files() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for group in groups {
            let description = group["description"].as_str().unwrap().to_owned();
            let schema = &group["schema"];
            if !understood(schema, false) {
                skipped_groups += 1;
                continue;
            }
            let compiled = match Schema::compile(schema, &support::EcmaRegexes) {
                Ok(compiled) => compiled,
                Err(error) => {
                    if !known(&file, &description, "", &mut used) {
                        refused_groups.push(format!("{file} / {description}: {error:?}"));
                    }
                    continue;
                }
            };
            for case in group["tests"].as_array().unwrap() {
                let case_description = case["description"].as_str().unwrap();
                let expected = case["valid"].as_bool().unwrap();
                let (violations, total) = compiled
                    .check_value_at_root(&case["data"])
                    .expect("no pattern threw");
                let valid = total == 0;
                ran += 1;
                if valid != expected && !known(&file, &description, case_description, &mut used) {
                    failures.push(format!(
                        "{file} / {description} / {case_description}: expected valid={expected}, got {violations:?}"
                    ));
                }
            }
        }
    }
    println!("ran {ran} cases; skipped {skipped_groups} groups using ignored keywords");
    assert_no_refusals_nor_failures(&refused_groups, &failures);
    assert!(ran > 700, "only {ran} cases ran");
    let stale: Vec<_> = KNOWN_DIFFERENCES
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(k, _)| k)
        .collect();
    assert!(
        stale.is_empty(),
        "listed differences that no longer occur: {stale:?}"
    );
}

/// Ignoring a keyword can only let more through (no checked keyword negates a schema): every value the suite calls
/// valid passes, in the groups whose schemas use keywords outside the checked set too, and none of their schemas
/// is refused for such a keyword, whatever its value.
#[test]
fn the_official_suite_cases_of_ignored_keywords_never_refuse_what_is_valid() {
    let mut ran = 0;
    let mut refused_groups = Vec::new();
    let mut failures = Vec::new();
    for path in files() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for group in groups {
            let description = group["description"].as_str().unwrap().to_owned();
            let schema = &group["schema"];
            if understood(schema, false) {
                continue;
            }
            let compiled = match Schema::compile(schema, &support::EcmaRegexes) {
                Ok(compiled) => compiled,
                Err(error) => {
                    refused_groups.push(format!("{file} / {description}: {error:?}"));
                    continue;
                }
            };
            for case in group["tests"].as_array().unwrap() {
                if !case["valid"].as_bool().unwrap() {
                    continue;
                }
                let (violations, total) = compiled
                    .check_value_at_root(&case["data"])
                    .expect("no pattern threw");
                ran += 1;
                if total != 0 {
                    failures.push(format!(
                        "{file} / {description} / {}: valid, got {violations:?}",
                        case["description"].as_str().unwrap()
                    ));
                }
            }
        }
    }
    println!("ran {ran} valid cases of schemas using ignored keywords");
    assert_no_refusals_nor_failures(&refused_groups, &failures);
    assert!(ran > 100, "only {ran} cases ran");
}

/// The refusals no known difference explains, and the failed cases: none of either.
fn assert_no_refusals_nor_failures(refused_groups: &[String], failures: &[String]) {
    let unexpected_refusals = unexpected(refused_groups);
    assert!(
        unexpected_refusals.is_empty(),
        "refused:\n{}",
        unexpected_refusals.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
