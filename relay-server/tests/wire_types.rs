//! The relay answers with the wire types of `protocol/` (`docs/protocol.md`), never with JSON built by hand:
//! no `json!` in the relay's source outside its tests, so a renamed or added field changes both sides at once.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_handler_builds_json_by_hand() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 20, "the relay's sources were found");
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // Unit tests (a `#[cfg(test)]` module, or `config/tests.rs`, which is one) may build inputs by hand.
        if file.ends_with("config/tests.rs") {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if line.contains("json!(") && !line.trim_start().starts_with("//") {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "hand-built JSON in the relay:\n{}",
        found.join("\n")
    );
}
