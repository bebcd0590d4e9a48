//! ModelState helpers (placeholder).
