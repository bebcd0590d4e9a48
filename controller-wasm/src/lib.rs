//! PatchBridge Agent runtime (placeholder; see issue 2).
