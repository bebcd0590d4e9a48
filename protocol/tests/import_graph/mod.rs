//! The import graph of one crate's `src/`, read from the source text, and its circles. Shared by the
//! no-import-circle tests of `protocol` (`tests/no_import_circles.rs`) and `relay-server` (which includes this
//! file by path).
//!
//! A node is a source file (`lib.rs` is `crate`, `a/mod.rs` and `a.rs` are `a`, `a/b.rs` is `a::b`). An edge
//! `f → g` is a path in `f`, outside comments and string literals, that names `g` or an item of `g`:
//! `crate::…`, `super::…`, `self::…`, or a path starting with one of `f`'s child modules (`config::X` in
//! `lib.rs`). A path is resolved to the deepest file it names; a name that file only re-exports (`pub use`)
//! is followed to where it is declared, so `crate::RelayError` is an edge to `error.rs`, not to `lib.rs`, and
//! a file's own `pub use` lines are not edges of that file (they forward, they do not use). `mod x { … }`
//! blocks inside a file (tests, macro bodies) count as the file: their `super::` is the file itself.
//! `#[cfg(test)]` code counts like any other.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's files and their edges.
pub struct Graph {
    /// Module path (`crate`, `a`, `a::b`) → file path relative to the crate (for messages).
    pub files: BTreeMap<String, String>,
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

/// Reads `src/` of the crate at `crate_dir`; `skip` names files that are other crates' roots (`main.rs`).
pub fn read_crate(crate_dir: &Path, skip: &[&str]) -> Graph {
    let src = crate_dir.join("src");
    let mut paths = Vec::new();
    collect(&src, &mut paths);
    let mut modules: BTreeMap<String, PathBuf> = BTreeMap::new();
    for path in paths {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if skip.contains(&rel.as_str()) {
            continue;
        }
        modules.insert(module_of(&rel), path);
    }
    let mut parsed: BTreeMap<String, Parsed> = BTreeMap::new();
    for (module, path) in &modules {
        let text = std::fs::read_to_string(path).unwrap();
        let children: BTreeSet<String> = modules
            .keys()
            .filter_map(|m| child_name(module, m))
            .collect();
        parsed.insert(module.clone(), parse(&code_only(&text), module, &children));
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, p) in &parsed {
        let mut mine = BTreeSet::new();
        for path in &p.uses {
            if let Some(target) = resolve(path, &modules, &parsed, 0) {
                if &target != module {
                    mine.insert(target);
                }
            }
        }
        edges.insert(module.clone(), mine);
    }
    let files = modules
        .iter()
        .map(|(m, p)| {
            let rel = p
                .strip_prefix(crate_dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (m.clone(), rel)
        })
        .collect();
    Graph { files, edges }
}

impl Graph {
    /// Every circle (strongly connected component of more than one file), each as its files sorted, plus one
    /// cycle through them in import order for the message.
    pub fn circles(&self) -> Vec<(Vec<String>, Vec<String>)> {
        let sccs = tarjan(&self.edges);
        sccs.into_iter()
            .filter(|c| c.len() > 1)
            .map(|mut c| {
                c.sort();
                let cycle = self.one_cycle(&c);
                (c, cycle)
            })
            .collect()
    }

    /// A shortest cycle through the first file of `component`, by breadth-first search inside it.
    fn one_cycle(&self, component: &[String]) -> Vec<String> {
        let inside: BTreeSet<&str> = component.iter().map(String::as_str).collect();
        let start = component[0].as_str();
        let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(at) = queue.pop_front() {
            for next in &self.edges[at] {
                let next = next.as_str();
                if !inside.contains(next) {
                    continue;
                }
                if next == start {
                    let mut cycle = vec![at.to_owned()];
                    let mut back = at;
                    while back != start {
                        back = parent[back];
                        cycle.push(back.to_owned());
                    }
                    cycle.reverse();
                    cycle.push(start.to_owned());
                    return cycle;
                }
                if !parent.contains_key(next) && next != start {
                    parent.insert(next, at);
                    queue.push_back(next);
                }
            }
        }
        component.to_vec()
    }

    /// Files by the length of their longest import chain, bottom first (for the log).
    pub fn layers(&self) -> Vec<Vec<String>> {
        let mut level: BTreeMap<&str, usize> = BTreeMap::new();
        fn depth<'a>(
            m: &'a str,
            edges: &'a BTreeMap<String, BTreeSet<String>>,
            level: &mut BTreeMap<&'a str, usize>,
            guard: usize,
        ) -> usize {
            if let Some(l) = level.get(m) {
                return *l;
            }
            if guard > edges.len() {
                return 0;
            }
            let l = edges[m]
                .iter()
                .map(|d| depth(d, edges, level, guard + 1) + 1)
                .max()
                .unwrap_or(0);
            level.insert(m, l);
            l
        }
        for m in self.edges.keys() {
            depth(m, &self.edges, &mut level, 0);
        }
        let mut layers = vec![Vec::new(); level.values().max().map_or(0, |m| m + 1)];
        for (m, l) in level {
            layers[l].push(m.to_owned());
        }
        layers
    }

    /// Panics naming every circle, with one cycle of each in import order; prints the layers otherwise.
    pub fn assert_no_circles(&self, crate_name: &str) {
        let circles = self.circles();
        let name = |m: &String| self.files[m].clone();
        assert!(
            circles.is_empty(),
            "{crate_name} has import circles (a file imports, directly or not, a file that imports it): move \
             the shared part into a module both can import, or pass it in as a parameter.\n{}",
            circles
                .iter()
                .map(|(files, cycle)| format!(
                    "- {} files: {}\n  e.g. {}",
                    files.len(),
                    files.iter().map(name).collect::<Vec<_>>().join(", "),
                    cycle.iter().map(name).collect::<Vec<_>>().join(" → ")
                ))
                .collect::<Vec<_>>()
                .join("\n")
        );
        println!("{crate_name}: files by import depth, bottom first:");
        for (i, layer) in self.layers().iter().enumerate() {
            println!("  {i}: {}", layer.join(", "));
        }
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `lib.rs` → `crate`; `a/mod.rs`, `a.rs` → `a`; `a/b.rs` → `a::b`.
fn module_of(rel: &str) -> String {
    let rel = rel.strip_suffix(".rs").unwrap();
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    if rel == "lib" {
        "crate".to_owned()
    } else {
        rel.replace('/', "::")
    }
}

/// `Some(name)` when `module` is a direct child of `parent`.
fn child_name(parent: &str, module: &str) -> Option<String> {
    let rest = if parent == "crate" {
        Some(module).filter(|m| *m != "crate")
    } else {
        module.strip_prefix(parent)?.strip_prefix("::")
    }?;
    (!rest.contains("::")).then(|| rest.to_owned())
}

/// What one file uses (absolute paths, `crate` first) and what it re-exports (name → absolute path).
struct Parsed {
    uses: Vec<Vec<String>>,
    reexports: BTreeMap<String, Vec<String>>,
}

/// Resolves an absolute path (`["crate", "a", "B"]`) to the file declaring what it names.
fn resolve(
    path: &[String],
    modules: &BTreeMap<String, PathBuf>,
    parsed: &BTreeMap<String, Parsed>,
    hops: usize,
) -> Option<String> {
    if path.first().map(String::as_str) != Some("crate") || hops > 16 {
        return None;
    }
    let mut module = "crate".to_owned();
    let mut used = 1;
    for (i, seg) in path.iter().enumerate().skip(1) {
        let candidate = if module == "crate" {
            seg.clone()
        } else {
            format!("{module}::{seg}")
        };
        if modules.contains_key(&candidate) {
            module = candidate;
            used = i + 1;
        } else {
            break;
        }
    }
    if let Some(name) = path.get(used) {
        if let Some(target) = parsed[&module].reexports.get(name) {
            let mut next = target.clone();
            next.extend(path[used + 1..].iter().cloned());
            return resolve(&next, modules, parsed, hops + 1).or(Some(module));
        }
    }
    Some(module)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other(char),
}

fn tokens(code: &str) -> Vec<Tok> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
            continue;
        }
        out.push(match c {
            ':' if chars.get(i + 1) == Some(&':') => {
                i += 1;
                Tok::Colons
            }
            '{' => Tok::Open,
            '}' => Tok::Close,
            ',' => Tok::Comma,
            ';' => Tok::Semi,
            '*' => Tok::Star,
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            c => Tok::Other(c),
        });
        i += 1;
    }
    out
}

/// The paths of one file, made absolute. `module`: the file's module path; `children`: its child modules.
fn parse(code: &str, module: &str, children: &BTreeSet<String>) -> Parsed {
    let toks = tokens(code);
    let mut uses = Vec::new();
    let mut reexports = BTreeMap::new();
    // Inline `mod x {` blocks open at these brace depths.
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Open => {
                depth += 1;
                i += 1;
                continue;
            }
            Tok::Close => {
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
                continue;
            }
            Tok::Ident(k) if k == "mod" => {
                if let (Some(Tok::Ident(_)), Some(Tok::Open)) = (toks.get(i + 1), toks.get(i + 2)) {
                    inline.push(depth + 1);
                }
                i += 1;
                continue;
            }
            Tok::Ident(k) if k == "use" => {
                let public = i > 0
                    && (toks[i - 1] == Tok::Ident("pub".into())
                        || matches!(toks[i - 1], Tok::Other(')'))
                            && toks[..i]
                                .iter()
                                .rev()
                                .take(6)
                                .any(|t| *t == Tok::Ident("pub".into())));
                let (end, trees) = use_tree(&toks, i + 1, Vec::new());
                for (path, alias) in trees {
                    if let Some(abs) = absolute(&path, module, children, inline.len()) {
                        if public && inline.is_empty() {
                            if let Some(alias) = alias {
                                reexports.insert(alias, abs);
                            }
                        } else {
                            uses.push(abs);
                        }
                    }
                }
                i = end;
                continue;
            }
            Tok::Ident(first) => {
                let after_colons = i > 0 && toks[i - 1] == Tok::Colons;
                if !after_colons {
                    let mut path = vec![first.clone()];
                    let mut j = i + 1;
                    while toks.get(j) == Some(&Tok::Colons) {
                        match toks.get(j + 1) {
                            Some(Tok::Ident(seg)) => {
                                path.push(seg.clone());
                                j += 2;
                            }
                            _ => break,
                        }
                    }
                    if path.len() > 1 {
                        if let Some(abs) = absolute(&path, module, children, inline.len()) {
                            uses.push(abs);
                        }
                    }
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Parsed { uses, reexports }
}

/// One leaf of a use tree: its path and the name it makes visible (`None` for a glob).
type Leaf = (Vec<String>, Option<String>);

/// Expands the use tree starting at `toks[at]` (after `use`); returns the index after its `;` and every leaf
/// path with its visible name (`None` for a glob).
fn use_tree(toks: &[Tok], at: usize, prefix: Vec<String>) -> (usize, Vec<Leaf>) {
    let mut out = Vec::new();
    let end = tree(toks, at, prefix, &mut out);
    let mut end = end;
    while end < toks.len() && toks[end] != Tok::Semi {
        end += 1;
    }
    (end + 1, out)
}

/// One subtree at `at`; pushes its leaves; returns the index after it.
fn tree(toks: &[Tok], mut at: usize, mut prefix: Vec<String>, out: &mut Vec<Leaf>) -> usize {
    if toks.get(at) == Some(&Tok::Colons) {
        at += 1;
    }
    loop {
        match toks.get(at) {
            Some(Tok::Ident(seg)) => {
                prefix.push(seg.clone());
                at += 1;
                if toks.get(at) == Some(&Tok::Colons) {
                    at += 1;
                    continue;
                }
                let mut name = prefix.last().cloned();
                if name.as_deref() == Some("self") {
                    prefix.pop();
                    name = prefix.last().cloned();
                }
                if toks.get(at) == Some(&Tok::Ident("as".into())) {
                    if let Some(Tok::Ident(alias)) = toks.get(at + 1) {
                        name = Some(alias.clone());
                    }
                    at += 2;
                }
                out.push((prefix, name));
                return at;
            }
            Some(Tok::Star) => {
                out.push((prefix, None));
                return at + 1;
            }
            Some(Tok::Open) => {
                at += 1;
                loop {
                    match toks.get(at) {
                        Some(Tok::Close) => return at + 1,
                        Some(Tok::Comma) => at += 1,
                        None => return at,
                        _ => at = tree(toks, at, prefix.clone(), out),
                    }
                }
            }
            _ => return at,
        }
    }
}

/// `path` as seen from `module` (inside `inline` inline modules), made absolute; `None` when it is not a path
/// into this crate.
fn absolute(
    path: &[String],
    module: &str,
    children: &BTreeSet<String>,
    inline: usize,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = if module == "crate" {
        vec!["crate".into()]
    } else {
        std::iter::once("crate".to_owned())
            .chain(module.split("::").map(str::to_owned))
            .collect()
    };
    let mut inline = inline;
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => return Some(path.to_vec()),
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                if inline > 0 {
                    inline -= 1;
                } else {
                    base.pop()?;
                }
                rest = &rest[1..];
            }
        }
        Some(first) if inline == 0 && children.contains(first) => {}
        _ => return None,
    }
    if base.is_empty() {
        return None;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Tarjan's strongly connected components.
fn tarjan(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct St<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, edges: &'a BTreeMap<String, BTreeSet<String>>, s: &mut St<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        for w in &edges[v] {
            let w = w.as_str();
            if !edges.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(w, edges, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = St {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(v, edges, &mut s);
        }
    }
    s.out
}

/// The source without comments, and with string and char literals emptied (so neither can fake a path).
pub fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let is_ident = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
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
        } else if (c == 'r' || c == 'b')
            && (next == Some('"') || next == Some('#') || (c == 'b' && next == Some('r')))
            && !is_ident(i.checked_sub(1).and_then(|p| chars.get(p)))
        {
            // A raw or byte string: r"…", r#"…"#, b"…", br"…".
            let mut j = i + 1;
            if c == 'b' && chars.get(j) == Some(&'r') {
                j += 1;
            }
            let raw = chars[i..j].contains(&'r');
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
            while j < chars.len() {
                if !raw && chars[j] == '\\' {
                    j += 2;
                    continue;
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
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
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
