//! The module structure of `src/core` and `src/bindings` is one-way: each directory's `mod.rs` lists its modules
//! in dependency order, and a module may use only modules listed above it. So every module can be read knowing
//! only what is above it, and no import cycle can come back unnoticed. Also pinned here: the core knows nothing
//! of `wasm_bindgen` (docs/adr/001), and `bindings/js.rs` only declares imports, one `extern` block per JS
//! module.
//!
//! Dependencies are read from the source text: every `super::name` (in `use` lines, paths and `{…}` groups)
//! outside comments and string literals. Inside `core`, `crate::core::…` and the root re-exports are refused, so
//! that each dependency names the module it comes from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The source without comments, and with string and char literals emptied (so neither can fake a path).
fn code_only(text: &str) -> String {
    strip(text, false)
}

/// The source without comments; string literals are kept when `keep_strings`.
fn strip(text: &str, keep_strings: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !is_ident(chars.get(i.wrapping_sub(1)))
        {
            // A raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            if keep_strings {
                out.extend(&chars[start..i.min(chars.len())]);
            } else {
                out.push_str("\"\"");
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{…}') or a lifetime ('a), which is kept.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The first names of every path that starts with `prefix` (`super::` or `crate::core::`): `prefix name` or
/// each top-level name of a group `prefix {a::b, c}`.
fn heads_after(code: &str, prefix: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().last();
        rest = &rest[at + prefix.len()..];
        if is_ident(before.as_ref()) {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            let mut at_item_start = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => at_item_start = true,
                    _ => {}
                }
                if depth == 1 && at_item_start {
                    if is_ident(Some(&c)) {
                        item.push(c);
                    } else if !item.is_empty() {
                        heads.push(std::mem::take(&mut item));
                        at_item_start = false;
                    }
                }
            }
            if !item.is_empty() {
                heads.push(item);
            }
        } else {
            let name: String = rest.chars().take_while(|c| is_ident(Some(c))).collect();
            heads.push(if name.is_empty() {
                "*".to_owned()
            } else {
                name
            });
        }
    }
    heads
}

/// The modules `mod.rs` lists in its `//! - [`name`] — …` (or `` `name` ``) layout lines, in order.
fn documented_order(dir: &str) -> Vec<String> {
    read(&src(dir).join("mod.rs"))
        .lines()
        .filter_map(|line| line.strip_prefix("//! - "))
        .filter_map(|item| {
            let item = item.strip_prefix('[').unwrap_or(item);
            let name = item.strip_prefix('`')?;
            Some(name[..name.find('`')?].to_owned())
        })
        .collect()
}

fn module_files(dir: &str) -> BTreeSet<String> {
    std::fs::read_dir(src(dir))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .filter(|name| name != "mod")
        .collect()
}

/// Each module's dependencies on its siblings, checked against the documented order. Returns the layers
/// (modules grouped by the length of their longest dependency chain), for the failure message and the log.
fn check_layers(dir: &str, forbidden_prefix: &str) -> Vec<Vec<String>> {
    let order = documented_order(dir);
    let files = module_files(dir);
    assert_eq!(
        order.iter().cloned().collect::<BTreeSet<_>>(),
        files,
        "{dir}/mod.rs must list every module file of {dir}/ exactly once, in dependency order"
    );
    assert_eq!(
        order.len(),
        files.len(),
        "{dir}/mod.rs lists a module twice"
    );
    let position: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let mut deps: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut problems = Vec::new();
    for module in &order {
        let code = code_only(&read(&src(dir).join(format!("{module}.rs"))));
        if code.contains(forbidden_prefix) {
            problems.push(format!(
                "{dir}/{module}.rs: uses `{forbidden_prefix}…`; name the sibling module with `super::module::…`"
            ));
        }
        let mut mine = BTreeSet::new();
        for head in heads_after(&code, "super::") {
            match position.get(head.as_str()) {
                Some(_) if head == *module => {}
                Some(_) => {
                    mine.insert(order[position[head.as_str()]].as_str());
                }
                None => problems.push(format!(
                    "{dir}/{module}.rs: `super::{head}` is not a module of {dir}/ (a glob or a re-export hides \
                     which module a name comes from)"
                )),
            }
        }
        for dep in &mine {
            if position[dep] > position[module.as_str()] {
                problems.push(format!(
                    "{dir}/{module}.rs uses `{dep}`, which {dir}/mod.rs lists after it: move the shared part down \
                     (or reorder the list if `{dep}` does not depend on `{module}`)"
                ));
            }
        }
        deps.insert(module.as_str(), mine);
    }
    assert!(
        problems.is_empty(),
        "module layering of {dir}/:\n{}",
        problems.join("\n")
    );

    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    for module in &order {
        let l = deps[module.as_str()]
            .iter()
            .map(|d| level[d] + 1)
            .max()
            .unwrap_or(0);
        level.insert(module.as_str(), l);
    }
    let mut layers = vec![Vec::new(); level.values().max().map_or(0, |m| m + 1)];
    for module in &order {
        layers[level[module.as_str()]].push(module.clone());
    }
    println!("{dir}/ layers, bottom first:");
    for (i, layer) in layers.iter().enumerate() {
        println!("  {i}: {}", layer.join(", "));
    }
    layers
}

#[test]
fn core_modules_depend_only_on_modules_listed_above_them() {
    let layers = check_layers("core", "crate::core::");
    assert!(layers.len() > 3, "the check found the dependencies at all");
}

#[test]
fn bindings_modules_depend_only_on_modules_listed_above_them() {
    let layers = check_layers("bindings", "crate::bindings::");
    assert_eq!(
        layers[0],
        ["js"],
        "js.rs is the bottom layer: it depends on no other module"
    );
}

#[test]
fn the_core_knows_nothing_of_wasm_bindgen() {
    for module in module_files("core").into_iter().chain(["mod".to_owned()]) {
        let code = code_only(&read(&src("core").join(format!("{module}.rs"))));
        for word in [
            "wasm_bindgen",
            "js_sys",
            "web_sys",
            "JsValue",
            "crate::bindings",
        ] {
            assert!(
                !code.contains(word),
                "core/{module}.rs mentions `{word}` (see docs/adr/001)"
            );
        }
    }
}

#[test]
fn bindings_js_only_declares_imports_one_block_per_module() {
    let code = strip(&read(&src("bindings").join("js.rs")), true);
    let mut modules = Vec::new();
    let mut rest = code.as_str();
    loop {
        let trimmed = rest.trim_start();
        if trimmed.is_empty() {
            break;
        }
        if let Some(after) = trimmed.strip_prefix("use ") {
            rest = &after[after.find(';').expect("use ends with ;") + 1..];
            continue;
        }
        let attribute = trimmed.strip_prefix("#[wasm_bindgen").unwrap_or_else(|| {
            panic!(
                "js.rs: only `use` lines and #[wasm_bindgen] extern blocks, found: {:.60}",
                trimmed
            )
        });
        let close = attribute.find(']').unwrap();
        modules.push(attribute[..close].to_owned());
        let block = attribute[close + 1..].trim_start();
        let body = block.strip_prefix("extern \"C\" {").unwrap_or_else(|| {
            panic!(
                "js.rs: #[wasm_bindgen] on something other than an extern block: {:.60}",
                block
            )
        });
        let mut depth = 1;
        let end = body
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .expect("extern block closes")
            .0;
        assert!(
            !body[..end].contains('{'),
            "js.rs: an extern block holds a body"
        );
        rest = &body[end + 1..];
    }
    let unique: BTreeSet<&String> = modules.iter().collect();
    assert_eq!(
        unique.len(),
        modules.len(),
        "js.rs imports a JS module from two extern blocks: {modules:?}"
    );
    assert!(
        modules.iter().any(|m| m.contains("adapter")),
        "js.rs imports adapter.js"
    );
}
