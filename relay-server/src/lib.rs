//! PatchBridge relay (placeholder; see issue 3).
