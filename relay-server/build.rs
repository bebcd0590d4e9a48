//! Build script: gathers the demo site that `patchbridge-relay demo` serves from the binary itself (the demo page
//! and the npm package's browser files) into `$OUT_DIR/demo-site/`, which `static_files` embeds with
//! `include_dir!`. The layout mirrors the repository, so the page's relative imports work the same from disk and
//! from the binary: `examples/demo/*`, `npm/dist/*` (the static widget script; source maps left out) and, from
//! `npm/pkg/`, only what that script loads at run time: the wasm (it fetches `../pkg/patchbridge_agent_bg.wasm`)
//! and the licence notices of the crates compiled into it.
//!
//! Where the files come from, first match wins:
//! 1. a clone of the repository (`../examples/demo` and `../npm` exist): `../npm/dist`, the output of
//!    `node widget/build.mjs`, and `../examples/demo`. A clone whose wasm is not built yet gets an empty site;
//!    `patchbridge-relay demo` then says how to build it. Staged copies in `demo-assets/` are never used here, so a
//!    stale staging cannot shadow a fresh build.
//! 2. anywhere else (the published crate, unpacked by `cargo install patchbridge-relay`): `demo-assets/`, which
//!    `scripts/stage-demo-assets.sh` fills before packaging.
//!
//! `PATCHBRIDGE_DEMO_SITE` (the gathered directory) and `PATCHBRIDGE_DEMO_SITE_SOURCE` (`repository`, `crate` or
//! `none`) are passed to the compiler.

use std::path::{Path, PathBuf};

/// The files without which the demo page cannot run.
const REQUIRED: [&str; 3] = [
    "examples/demo/index.html",
    "npm/dist/patchbridge-agent.js",
    "npm/pkg/patchbridge_agent_bg.wasm",
];

/// The files of `npm/pkg/` the static script needs; the rest of `pkg/` (the ES-module glue, declarations) is for
/// bundlers and stays out of the binary.
const PKG_FILES: [&str; 2] = ["patchbridge_agent_bg.wasm", "THIRD_PARTY_LICENSES.md"];

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("demo-site");
    println!("cargo:rerun-if-changed=build.rs");

    let repo = manifest.join("..");
    let in_repository = repo.join("examples/demo").is_dir() && repo.join("npm").is_dir();
    // (site directory, source) pairs to copy from: each maps a source directory to its place in the site.
    let (sources, source): (Vec<(PathBuf, &str)>, &str) = if in_repository {
        let dist = repo.join("npm/dist");
        let pkg = repo.join("npm/pkg");
        // A directory that does not exist would make cargo rerun this script on every build; watch its parent
        // until it appears.
        let npm = repo.join("npm");
        watch(if dist.is_dir() { &dist } else { &npm });
        watch(if pkg.is_dir() { &pkg } else { &npm });
        watch(&repo.join("examples/demo"));
        (
            vec![
                (repo.join("examples/demo"), "examples/demo"),
                (dist, "npm/dist"),
                (pkg, "npm/pkg"),
            ],
            "repository",
        )
    } else {
        let staged = manifest.join("demo-assets");
        watch(if staged.is_dir() { &staged } else { &manifest });
        (
            vec![
                (staged.join("examples/demo"), "examples/demo"),
                (staged.join("npm/dist"), "npm/dist"),
                (staged.join("npm/pkg"), "npm/pkg"),
            ],
            "crate",
        )
    };

    if out.exists() {
        std::fs::remove_dir_all(&out).expect("clear the demo site directory");
    }
    std::fs::create_dir_all(&out).expect("create the demo site directory");
    let complete = sources.iter().all(|(dir, _)| dir.is_dir())
        && REQUIRED.iter().all(|required| {
            sources.iter().any(|(dir, at)| {
                required
                    .strip_prefix(at)
                    .and_then(|rest| rest.strip_prefix('/'))
                    .is_some_and(|rest| dir.join(rest).is_file())
            })
        });
    let source = if complete {
        for (dir, at) in &sources {
            if *at == "npm/pkg" {
                std::fs::create_dir_all(out.join(at)).expect("create the demo site's npm/pkg");
                for name in PKG_FILES {
                    let from = dir.join(name);
                    if from.is_file() {
                        std::fs::copy(&from, out.join(at).join(name))
                            .unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
                    }
                }
            } else {
                copy_tree(dir, &out.join(at));
            }
        }
        source
    } else {
        "none"
    };
    println!("cargo:rustc-env=PATCHBRIDGE_DEMO_SITE={}", out.display());
    println!("cargo:rustc-env=PATCHBRIDGE_DEMO_SITE_SOURCE={source}");
}

fn watch(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}

/// Copies the regular files of `from` (recursively) into `to`, leaving out source maps and hidden files.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a demo site directory");
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .unwrap_or_else(|e| panic!("read {}: {e}", from.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name.ends_with(".map") {
            continue;
        }
        if path.is_dir() {
            copy_tree(&path, &to.join(name));
        } else if path.is_file() {
            std::fs::copy(&path, to.join(name))
                .unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
        }
    }
}
