//! The relay has no import circles: every file can be read knowing only the files below it, and a domain
//! module (spending, the store) takes its inputs as parameters instead of reaching back into the state or the
//! HTTP error type. The graph and its rules are in `protocol/tests/import_graph/mod.rs` (shared with the
//! protocol crate's test of the same name); `main.rs` is the binary's own crate root and is read apart.

#[path = "../../protocol/tests/import_graph/mod.rs"]
mod import_graph;

use std::path::Path;

fn graph() -> import_graph::Graph {
    import_graph::read_crate(Path::new(env!("CARGO_MANIFEST_DIR")), &["main.rs"])
}

#[test]
fn relay_files_import_each_other_without_circles() {
    let graph = graph();
    assert!(
        graph.edges.values().map(|e| e.len()).sum::<usize>() > 50,
        "the graph found the imports at all"
    );
    graph.assert_no_circles("relay-server");
}

#[test]
fn spending_and_the_store_know_nothing_of_the_http_layer() {
    let graph = graph();
    for (module, deps) in &graph.edges {
        if !(module.starts_with("spending") || module.starts_with("store")) {
            continue;
        }
        for forbidden in ["state", "error", "model", "crate"] {
            assert!(
                !deps.contains(forbidden),
                "{} imports `{forbidden}`: spending and the store take their inputs as parameters",
                graph.files[module]
            );
        }
    }
}
