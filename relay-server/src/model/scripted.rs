//! The deterministic scripted demo model: what the relay serves when it runs as a demo with no provider
//! configured (a relay feature, not a provider translation). It is a pure function of the request (no randomness, no clock), says in its first answer of
//! every conversation that it is a scripted demo and not AI (once: a page shows the relay's `previewOnly` as a
//! banner, and the same words under every reply only bury the answer), and shows the agent loop working end to end: it greets, echoes, and when the
//! user obviously asks for something one of the page's tools does ("add todo buy milk", "list todos", "what
//! time is it", or naming a tool), it calls that tool with valid JSON input, then summarises the tool's result.
//! Asked with a leading "sloppy" ("sloppy add todo buy milk") it first makes the mistake weak models make — the
//! text argument sent as a list — and, when the runtime answers with its `[invalid arguments]` error result
//! (`docs/protocol.md`, "Tool results the runtime writes"), repairs the call in its next step, so a person can
//! watch argument validation and the repair.
//!
//! It has no ModelState of its own and passes the request's state through unchanged, so switching a
//! conversation to the demo model and back never drops another provider's state.

use patchbridge_protocol::{
    Block, BlockKind, ModelRequest, Role, StopReason, StreamEvent, ToolDefinition, Usage,
};
use serde_json::{Map, Value};

use patchbridge_providers::unique_message_id;

/// The first answer of every conversation starts with this, so nobody mistakes the demo for a model.
pub const DISCLAIMER: &str = "[Scripted demo, not AI]";

/// The word that makes the script send its first call with a deliberate mistake.
const SLOPPY: &str = "sloppy";

/// How the runtime's error result for arguments that do not match the tool's schema starts.
const INVALID_ARGUMENTS: &str = "[invalid arguments] ";

/// Answers `request` with a complete, well-formed neutral event stream.
pub fn respond(request: &ModelRequest) -> Vec<StreamEvent> {
    let n = request.messages.len();
    let id = unique_message_id(Some(&format!("scripted-{n}")), request);
    let mut out = vec![StreamEvent::MessageStart {
        id: Some(id.clone()),
        model: None,
    }];
    let (text, call) = decide(request);
    let first = !request.messages.iter().any(|m| m.role == Role::Assistant);
    let text = if first {
        format!("{DISCLAIMER} {text}")
    } else {
        text
    };
    push_text(&mut out, 0, &text);
    let stop_reason = match call {
        Some((name, input)) => {
            out.push(StreamEvent::BlockStart {
                index: 1,
                block: BlockKind::ToolCall {
                    call_id: format!("{id}-call-0"),
                    name,
                },
            });
            out.push(StreamEvent::BlockDelta {
                index: 1,
                delta: Value::Object(input).to_string(),
            });
            out.push(StreamEvent::block_stop(1));
            StopReason::ToolUse
        }
        None => StopReason::EndTurn,
    };
    out.push(StreamEvent::MessageStop {
        stop_reason,
        usage: Usage::default(),
        model_state: request.model_state.clone(),
    });
    out
}

/// Streams text in word-sized deltas so the demo shows incremental rendering.
fn push_text(out: &mut Vec<StreamEvent>, index: u32, text: &str) {
    out.push(StreamEvent::BlockStart {
        index,
        block: BlockKind::Text,
    });
    let mut piece = String::new();
    for ch in text.chars() {
        piece.push(ch);
        if ch == ' ' && piece.len() >= 12 {
            out.push(StreamEvent::BlockDelta {
                index,
                delta: std::mem::take(&mut piece),
            });
        }
    }
    if !piece.is_empty() {
        out.push(StreamEvent::BlockDelta {
            index,
            delta: piece,
        });
    }
    out.push(StreamEvent::block_stop(index));
}

type Call = (String, Map<String, Value>);

fn decide(request: &ModelRequest) -> (String, Option<Call>) {
    let Some(last) = request.messages.last() else {
        return (greeting(request), None);
    };
    match last.role {
        Role::Tool => match repair(request, &last.blocks) {
            Some(repaired) => repaired,
            None => (summarise_results(request, &last.blocks), None),
        },
        Role::Assistant => ("I have nothing to add.".into(), None),
        Role::User => {
            let text: String = last
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" ");
            let images = last
                .blocks
                .iter()
                .filter(|b| matches!(b, Block::Image { .. } | Block::Document { .. }))
                .count();
            let text = text.trim();
            match strip_word(text, SLOPPY) {
                Some(rest) => sloppy(answer_user(request, rest, images)),
                None => answer_user(request, text, images),
            }
        }
    }
}

/// `text` without a leading `word` (any case) and the spaces after it.
fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}

/// The same answer with the call's first string argument sent as a one-element list: a type mistake the
/// runtime's argument validation refuses.
fn sloppy((text, call): (String, Option<Call>)) -> (String, Option<Call>) {
    let Some((name, mut input)) = call else {
        return (text, None);
    };
    let Some((key, value)) = input.iter_mut().find(|(_, v)| v.is_string()) else {
        return (text, Some((name, input)));
    };
    let key = key.clone();
    *value = Value::Array(vec![value.take()]);
    (
        format!("Calling {name} sloppily: I send \"{key}\" as a list instead of a string, to show the runtime refusing arguments that do not match the tool's schema."),
        Some((name, input)),
    )
}

/// After the runtime refused a call's arguments: the same call with one-element lists turned back into their
/// element (the only mistake this script makes). `None` when the last results hold no such refusal, or when
/// there is nothing to repair (never the same call twice).
fn repair(request: &ModelRequest, results: &[Block]) -> Option<(String, Option<Call>)> {
    let refused = results.iter().find_map(|b| match b {
        Block::ToolResult {
            call_id,
            content,
            is_error: true,
        } if content.starts_with(INVALID_ARGUMENTS) => Some(call_id),
        _ => None,
    })?;
    let (name, input) = request
        .messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .find_map(|b| match b {
            Block::ToolCall {
                call_id,
                name,
                input,
            } if call_id == refused => Some((name, input)),
            _ => None,
        })?;
    let mut repaired = input.clone();
    let mut changed = false;
    for value in repaired.values_mut() {
        if let Value::Array(items) = value {
            if let [Value::String(item)] = items.as_slice() {
                *value = Value::String(item.clone());
                changed = true;
            }
        }
    }
    changed.then(|| {
        (
            format!("The runtime refused my arguments for {name}. Repairing the call: sending the text as a string this time."),
            Some((name.clone(), repaired)),
        )
    })
}

fn greeting(request: &ModelRequest) -> String {
    let mut s = String::from(
        "Hello! I am a scripted demo model: I follow fixed rules and do not understand language.",
    );
    if request.tools.is_empty() {
        s.push_str(" This page offers no tools, so I can only echo what you write.");
    } else {
        let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        s.push_str(&format!(
            " This page offers the tools {}. Try \"add todo buy milk\", \"list todos\" or \"what time is it\" (\"sloppy add todo buy milk\" shows a mistaken call refused and repaired).",
            names.join(", ")
        ));
    }
    s
}

/// Intents the script recognises, each with the words that pick a tool for it.
struct Intent {
    tool_words: &'static [&'static str],
    needs_argument: bool,
}

const ADD: Intent = Intent {
    tool_words: &["add", "create", "new", "insert"],
    needs_argument: true,
};
const REMOVE: Intent = Intent {
    tool_words: &["remove", "delete"],
    needs_argument: true,
};
const COMPLETE: Intent = Intent {
    tool_words: &["complete", "done", "toggle", "check", "finish"],
    needs_argument: true,
};
const LIST: Intent = Intent {
    tool_words: &["list", "all", "get", "show"],
    needs_argument: false,
};
const TIME: Intent = Intent {
    tool_words: &["time", "clock", "now", "date"],
    needs_argument: false,
};

/// The scripted rules read at most this many characters of a message: matching every tool name against the
/// text costs tools × text, which a megabyte message would turn into minutes of CPU.
const MAX_MATCHED_CHARS: usize = 2000;

fn answer_user(request: &ModelRequest, text: &str, images: usize) -> (String, Option<Call>) {
    let text = match text.char_indices().nth(MAX_MATCHED_CHARS) {
        Some((cut, _)) => &text[..cut],
        None => text,
    };
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let word_set: std::collections::HashSet<&str> = words.iter().copied().collect();
    let has = |w: &str| word_set.contains(w);

    // A tool named outright wins: "run local.device_get".
    let named = |t: &&ToolDefinition| {
        let name = t.name.to_lowercase();
        if name.chars().all(char::is_alphanumeric) {
            has(&name)
        } else {
            lower.contains(&name)
        }
    };
    if let Some(tool) = request.tools.iter().find(named) {
        if let Some(input) = build_input(tool, None) {
            return (
                format!("Calling {} as you asked.", tool.name),
                Some((tool.name.clone(), input)),
            );
        }
    }
    let verb_argument = |verbs: &[&str]| -> Option<String> {
        let first = words.first()?;
        if !verbs.contains(first) {
            return None;
        }
        // The argument is the original text after the verb, without "a todo:", "to my list" and the like.
        let start = text.to_lowercase().find(first)?;
        let rest = text.get(start + first.len()..)?.trim();
        Some(strip_noise(rest))
    };
    let attempts: [(&Intent, Option<String>); 5] = [
        (&ADD, verb_argument(&["add", "create", "new"])),
        (&REMOVE, verb_argument(&["remove", "delete"])),
        (
            &COMPLETE,
            verb_argument(&["complete", "finish", "done", "check"]),
        ),
        (
            &LIST,
            (matches!(words.first(), Some(&("list" | "show")))
                || (has("list") && (has("todos") || has("todo") || has("tasks") || has("items"))))
            .then(String::new),
        ),
        (
            &TIME,
            (has("time") || (has("date") && has("what")) || lower.contains("what day"))
                .then(String::new),
        ),
    ];
    for (intent, argument) in attempts {
        let Some(argument) = argument else { continue };
        if intent.needs_argument && argument.is_empty() {
            continue;
        }
        let Some(tool) = pick_tool(request, intent, &words) else {
            continue;
        };
        let arg = intent.needs_argument.then_some(argument.as_str());
        if let Some(input) = build_input(tool, arg) {
            return (
                format!(
                    "That looks like a job for the {} tool. Calling it now.",
                    tool.name
                ),
                Some((tool.name.clone(), input)),
            );
        }
    }

    if words.is_empty() && images == 0 {
        return (greeting(request), None);
    }
    if matches!(
        words.first(),
        Some(&("hi" | "hello" | "hey" | "hallo" | "greetings"))
    ) {
        return (greeting(request), None);
    }
    let mut reply = format!("You wrote: \"{text}\".");
    if images > 0 {
        reply.push_str(&format!(
            " You attached {images} file(s); a scripted demo cannot look at them."
        ));
    }
    if !request.tools.is_empty() {
        reply.push_str(" I only react to simple commands such as \"add todo buy milk\", \"list todos\" or \"what time is it\".");
    }
    (reply, None)
}

fn strip_noise(rest: &str) -> String {
    // Prefixes and suffixes are ASCII, so an ASCII-case-insensitive byte match keeps slicing on char bounds.
    let starts = |s: &str, p: &str| {
        s.len() >= p.len() && s.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
    };
    let ends = |s: &str, p: &str| {
        s.len() >= p.len() && s.as_bytes()[s.len() - p.len()..].eq_ignore_ascii_case(p.as_bytes())
    };
    let mut s = rest.trim().to_owned();
    for prefix in [
        "a new todo",
        "a todo",
        "new todo",
        "todo",
        "a task",
        "task",
        "to-do",
        "item",
        ":",
        "-",
    ] {
        if starts(&s, prefix) {
            s = s[prefix.len()..].trim_start().to_owned();
        }
    }
    // Repeat until stable: "eggs to my list please" loses "please", then "to my list".
    let suffixes = [
        "to my todos",
        "to my todo list",
        "to the todo list",
        "to my list",
        "to the list",
        "to todos",
        "please",
    ];
    while let Some(suffix) = suffixes.iter().find(|p| ends(&s, p)) {
        s.truncate(s.len() - suffix.len());
        s = s.trim_end().trim_end_matches(',').trim_end().to_owned();
    }
    s.trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c.is_whitespace())
        .to_owned()
}

/// The words of a tool name: split at punctuation and at camelCase humps, lowercased
/// (`todo.addItem` → `todo`, `add`, `item`).
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            words.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    words.extend((!current.is_empty()).then_some(current));
    words
}

/// The tool for an intent: its name must contain one of the intent's words (earlier words preferred); among
/// those, a tool whose name also shares a word with the user's text wins ("list notes" picks `notes.list` over
/// `todo.list`), then the first registered.
fn pick_tool<'a>(
    request: &'a ModelRequest,
    intent: &Intent,
    user_words: &[&str],
) -> Option<&'a ToolDefinition> {
    let mentions = |word: &str| {
        user_words.iter().any(|u| {
            *u == word || u.strip_suffix('s') == Some(word) || word.strip_suffix('s') == Some(u)
        })
    };
    intent.tool_words.iter().find_map(|verb| {
        let candidates: Vec<&ToolDefinition> = request
            .tools
            .iter()
            .filter(|t| name_words(&t.name).iter().any(|w| w == verb))
            .collect();
        let topical = candidates
            .iter()
            .copied()
            .find(|t| name_words(&t.name).iter().any(|w| w != verb && mentions(w)));
        topical.or_else(|| candidates.first().copied())
    })
}

/// Valid input for `tool` from its JSON schema: the argument goes to the first required string property (or a
/// property with a telling name, or the first string property). `None` when the schema needs something the
/// script cannot supply.
fn build_input(tool: &ToolDefinition, argument: Option<&str>) -> Option<Map<String, Value>> {
    let schema = &tool.input_schema;
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let is_string = |name: &str| {
        properties
            .get(name)
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            == Some("string")
    };
    let mut input = Map::new();
    if let Some(argument) = argument {
        let target = required
            .iter()
            .copied()
            .find(|p| is_string(p))
            .or_else(|| {
                [
                    "text",
                    "title",
                    "name",
                    "item",
                    "task",
                    "description",
                    "content",
                    "query",
                ]
                .into_iter()
                .find(|p| is_string(p))
            })
            .or_else(|| properties.keys().map(String::as_str).find(|p| is_string(p)))?;
        input.insert(target.to_owned(), Value::String(argument.to_owned()));
    }
    for name in required {
        if !input.contains_key(name) {
            // A required property the script has no value for: use the schema's default, or give up.
            let default = properties.get(name).and_then(|p| p.get("default"))?;
            input.insert(name.to_owned(), default.clone());
        }
    }
    Some(input)
}

fn summarise_results(request: &ModelRequest, blocks: &[Block]) -> String {
    let name_of = |call_id: &str| -> String {
        request
            .messages
            .iter()
            .flat_map(|m| m.blocks.iter())
            .find_map(|b| match b {
                Block::ToolCall {
                    call_id: c, name, ..
                } if c == call_id => Some(name.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "the tool".into())
    };
    let mut lines = Vec::new();
    for block in blocks {
        if let Block::ToolResult {
            call_id,
            content,
            is_error,
        } = block
        {
            let name = name_of(call_id);
            let shown: String = content.chars().take(400).collect();
            let more = if content.chars().count() > 400 {
                "…"
            } else {
                ""
            };
            if *is_error {
                lines.push(format!("{name} reported an error: {shown}{more}"));
            } else if content.trim().is_empty() {
                lines.push(format!("{name} finished without output."));
            } else {
                lines.push(format!("{name} returned: {shown}{more}"));
            }
        }
    }
    if lines.is_empty() {
        return "The tool finished.".into();
    }
    format!("Here is what happened. {}", lines.join(" "))
}
