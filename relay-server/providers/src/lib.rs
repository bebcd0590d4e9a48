//! Provider adapters (placeholder; see issue 3).
