//! Tool name mapping (placeholder).
