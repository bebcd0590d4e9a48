//! The wire-types crate has no import circles: every file can be read knowing only the files below it. The
//! graph and its rules are in `import_graph/mod.rs` (shared with the relay's test of the same name).

mod import_graph;

#[test]
fn protocol_files_import_each_other_without_circles() {
    let graph = import_graph::read_crate(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), &[]);
    assert!(
        graph.edges.values().map(|e| e.len()).sum::<usize>() > 10,
        "the graph found the imports at all"
    );
    graph.assert_no_circles("protocol");
}
