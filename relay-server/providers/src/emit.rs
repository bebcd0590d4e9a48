//! Shared neutral event builder (placeholder).
