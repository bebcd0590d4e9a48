//! The npm package's TypeScript declarations of every wire and state type, generated from the Rust types with
//! ts-rs (a test-only dependency: nothing here is in the wasm build). The hand-written `npm/*.d.ts` keep only the
//! API surface (classes, functions, options) and import these.
//!
//! Generated, and committed (the package ships them):
//! - `npm/generated/types.d.ts`: the protocol's wire types (`Message`, `Block`, `StreamEvent`, …) and the
//!   runtime's state types (`AgentState`, `HookEvent`, `ExecutionResult`, …), with the Rust doc comments;
//! - `npm/generated/error-codes.js` and `.d.ts`: one constant per [`ErrorCode`] and `ErrorCodes`.
//!
//! [`generated_files_match_the_rust_types`] fails when a committed file differs from what the types give now;
//! `PATCHBRIDGE_WRITE_TYPES=1 cargo test -p patchbridge-agent --lib typescript` rewrites them.
//!
//! Where a value is not a derived `Serialize` of one Rust type, the shape is declared as a mirror type
//! (`shapes.rs`) deriving both `Serialize` and `TS`, and a test converts real values into it (an exhaustive
//! `match` or destructuring, so a new variant or field does not compile until it is mirrored) and requires the
//! mirror to serialise to exactly the JSON the runtime produces: `ExecutionEvent` (`ExecutionEvent::to_json`),
//! the draft and `AgentState` (`ControllerState::to_json`), and `RelayErrorDetails` (`relay_error_details`,
//! `http_error`).
//!
//! ts-rs prints each declaration on one line; [`layout`] puts long ones on several lines (whitespace only).
//!
//! TypeScript-only choices live in `ts(...)` attributes beside the fields: `JsonValue` / `JsonObject` for
//! pass-through JSON, `Required<Usage>` where the runtime always reports every count, the `AgentError` class where
//! the bindings turn the error into one, readonly arrays where JavaScript receives frozen values.

mod layout;
mod shapes;

use std::path::{Path, PathBuf};

use patchbridge_protocol::{
    Block, BlockKind, ConversationPage, ConversationSummary, DocumentSource, ImageSource, Message,
    ModelRequest, ModelState, Role, Source, SpendingLimit, StopReason, StreamEvent, ToolDefinition,
    Usage,
};
use ts_rs::{Config, TS};

use crate::core::{
    ConversationInfo, Elicitation, ElicitationAction, ElicitationMode, ErrorCode, ExecutionResult,
    HookContext, HookEvent, HookFailure, InspectionSource, Interrupt, InterruptKind, LimitName,
    Limits, ModelCallContext, Outcome, Status, ToolCallResult,
};
use layout::layout_declaration;
use shapes::{AgentStateShape, DraftBlockShape, ExecutionEventShape, RelayErrorDetailsShape};

fn config() -> Config {
    // Every integer the runtime sends is within JavaScript's safe range (limits and counts are checked to be).
    Config::new().with_large_int("number")
}

/// A closed set of stable strings (`string_enum!`) as a TypeScript union of its texts, under its public name.
macro_rules! string_union {
    ($($ty:ty => $name:literal, $doc:literal;)*) => {$(
        impl TS for $ty {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn docs() -> Option<String> {
                Some(ts_rs::format_docs(&[concat!(" ", $doc)]))
            }
            fn name(_: &Config) -> String {
                $name.to_owned()
            }
            fn inline(_: &Config) -> String {
                <$ty>::ALL
                    .iter()
                    .map(|value| format!("\"{}\"", value.as_str()))
                    .collect::<Vec<_>>()
                    .join(" | ")
            }
            fn decl(cfg: &Config) -> String {
                format!("type {} = {};", $name, Self::inline(cfg))
            }
            fn decl_concrete(cfg: &Config) -> String {
                Self::decl(cfg)
            }
            fn output_path() -> Option<PathBuf> {
                Some(PathBuf::from(concat!($name, ".ts")))
            }
        }
    )*};
}

string_union! {
    ErrorCode => "AgentErrorCode",
        "Stable error codes of @patchbridge/agent (compare `error.code` against these).";
    LimitName => "LimitName",
        "The five limit names (`AgentError.limit` for AGENT_LIMIT_EXCEEDED / AGENT_INVALID_LIMITS).";
    Outcome => "Outcome", "How an execution ended without an error.";
    Status => "ControllerStatus", "What the controller is doing.";
    InspectionSource => "InspectionSource",
        "`current-execution` while a turn runs (its frozen snapshot), else `current-registry`.";
    InterruptKind => "InterruptKind", "The kinds of interrupt: a tool confirmation, a running tool's question.";
    ElicitationMode => "ElicitationMode", "How the person answers an elicitation: a small form, or a link to open.";
    ElicitationAction => "ElicitationAction", "The person's answer to an elicitation.";
}

/// One declaration of the generated file: its TypeScript name, text and the names it refers to.
struct Declaration {
    name: String,
    text: String,
    refers_to: Vec<String>,
}

fn declaration<T: TS + 'static>(cfg: &Config) -> Declaration {
    Declaration {
        name: T::ident(cfg),
        text: format!(
            "{}export {}\n",
            T::docs().unwrap_or_default(),
            layout_declaration(&T::decl(cfg))
        ),
        refers_to: T::dependencies(cfg)
            .into_iter()
            .map(|dependency| dependency.ts_name)
            .collect(),
    }
}

/// Every declaration of `npm/generated/types.d.ts`, in file order.
fn declarations() -> Vec<Declaration> {
    let cfg = &config();
    vec![
        // The wire protocol (docs/protocol.md), from `patchbridge-protocol`.
        declaration::<Role>(cfg),
        declaration::<ImageSource>(cfg),
        declaration::<DocumentSource>(cfg),
        declaration::<Source>(cfg),
        declaration::<Block>(cfg),
        declaration::<Message>(cfg),
        declaration::<ModelState>(cfg),
        declaration::<Usage>(cfg),
        declaration::<ToolDefinition>(cfg),
        declaration::<ModelRequest>(cfg),
        declaration::<StopReason>(cfg),
        declaration::<BlockKind>(cfg),
        declaration::<StreamEvent>(cfg),
        declaration::<ConversationSummary>(cfg),
        declaration::<ConversationPage>(cfg),
        declaration::<SpendingLimit>(cfg),
        declaration::<RelayErrorDetailsShape>(cfg),
        // The runtime's closed sets and state, from `controller-wasm/src/core`.
        declaration::<ErrorCode>(cfg),
        declaration::<LimitName>(cfg),
        declaration::<Limits>(cfg),
        declaration::<ToolCallResult>(cfg),
        declaration::<Outcome>(cfg),
        declaration::<HookEvent>(cfg),
        declaration::<HookContext>(cfg),
        declaration::<HookFailure>(cfg),
        declaration::<ModelCallContext>(cfg),
        declaration::<InterruptKind>(cfg),
        declaration::<Interrupt>(cfg),
        declaration::<ElicitationMode>(cfg),
        declaration::<ElicitationAction>(cfg),
        declaration::<Elicitation>(cfg),
        declaration::<ExecutionEventShape>(cfg),
        declaration::<ExecutionResult>(cfg),
        declaration::<Status>(cfg),
        declaration::<DraftBlockShape>(cfg),
        declaration::<ConversationInfo>(cfg),
        declaration::<AgentStateShape>(cfg),
        declaration::<InspectionSource>(cfg),
    ]
}

const REGENERATE: &str =
    "PATCHBRIDGE_WRITE_TYPES=1 cargo test -p patchbridge-agent --lib typescript";

fn header(comment: &str) -> String {
    format!(
        "{comment} Generated from the Rust types by controller-wasm/src/typescript/; do not edit.\n\
         {comment} After changing a type: {REGENERATE}\n"
    )
}

fn types_d_ts() -> String {
    let mut out = header("//");
    // Hand-written in the package: JSON values (pass-through data) and the error class.
    out.push_str("import type { JsonObject, JsonValue } from '../index.js';\n");
    out.push_str("import type { AgentError } from '../errors.js';\n");
    for declaration in declarations() {
        out.push('\n');
        out.push_str(&declaration.text);
    }
    out
}

/// The JSDoc comment of a stable string: its Rust doc comment.
fn jsdoc(doc: &str) -> String {
    ts_rs::format_docs(&doc.lines().collect::<Vec<_>>())
}

fn error_codes_js() -> String {
    let mut out = header("//");
    out.push_str("// Stable error codes (string constants, safe to compare and to log).\n");
    for (code, doc) in ErrorCode::ALL.iter().zip(ErrorCode::DOCS) {
        out.push_str(&format!(
            "\n{}export const {code} = '{code}';\n",
            jsdoc(doc)
        ));
    }
    out.push_str(
        "\n/** All codes, keyed by themselves: `ErrorCodes.AGENT_BUSY === 'AGENT_BUSY'`. */\n",
    );
    out.push_str("export const ErrorCodes = Object.freeze({\n");
    for code in ErrorCode::ALL {
        out.push_str(&format!("  {code},\n"));
    }
    out.push_str("});\n");
    out
}

fn error_codes_d_ts() -> String {
    let mut out = header("//");
    out.push_str("import type { AgentErrorCode } from './types.js';\n");
    for (code, doc) in ErrorCode::ALL.iter().zip(ErrorCode::DOCS) {
        out.push_str(&format!(
            "\n{}export declare const {code}: '{code}';\n",
            jsdoc(doc)
        ));
    }
    out.push_str("\n/** Every code keyed by itself. */\n");
    out.push_str("export declare const ErrorCodes: Readonly<{ [K in AgentErrorCode]: K }>;\n");
    out
}

fn generated_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../npm/generated")
}

fn generated_files() -> Vec<(&'static str, String)> {
    vec![
        ("types.d.ts", types_d_ts()),
        ("error-codes.js", error_codes_js()),
        ("error-codes.d.ts", error_codes_d_ts()),
    ]
}

#[test]
fn generated_files_match_the_rust_types() {
    let dir = generated_dir();
    let write = std::env::var_os("PATCHBRIDGE_WRITE_TYPES").is_some_and(|v| v != "0");
    let mut stale = Vec::new();
    for (name, expected) in generated_files() {
        let path = dir.join(name);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == expected {
            continue;
        }
        if write {
            std::fs::create_dir_all(&dir).expect("creating npm/generated");
            std::fs::write(&path, &expected).unwrap_or_else(|e| panic!("writing {name}: {e}"));
            continue;
        }
        let line = current
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(expected.lines().count()));
        stale.push(format!(
            "npm/generated/{name}, from line {}:\n  committed: {:?}\n  generated: {:?}",
            line + 1,
            current.lines().nth(line).unwrap_or("<end of file>"),
            expected.lines().nth(line).unwrap_or("<end of file>"),
        ));
    }
    assert!(
        stale.is_empty(),
        "the committed TypeScript declarations differ from the Rust types; regenerate them with\n  {REGENERATE}\n\
         and commit the result.\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_type_a_declaration_refers_to_is_declared_once() {
    let declarations = declarations();
    let names: Vec<&str> = declarations.iter().map(|d| d.name.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name), "{name} is declared twice");
    }
    for declaration in &declarations {
        for name in &declaration.refers_to {
            assert!(
                names.contains(&name.as_str()),
                "{} refers to {name}, which is not declared",
                declaration.name
            );
        }
    }
}

#[test]
fn the_declared_limits_name_their_defaults() {
    let decl = Limits::decl(&config());
    for name in LimitName::ALL {
        let field = decl
            .find(&format!("{name}: number"))
            .unwrap_or_else(|| panic!("Limits declares no {name}"));
        let doc = &decl[decl[..field].rfind("/**").expect("a doc comment")..field];
        let default = format!("(default {})", Limits::DEFAULT.get(name));
        assert!(
            doc.contains(&default),
            "the doc of {name} does not say `{default}`: {doc}"
        );
    }
}
