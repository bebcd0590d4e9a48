//! A user's counted usage as data: the counter slices from some start on, and the calls running now. What
//! the rules ([`super::policy`]) read and the counter store ([`super::port`]) returns; no behaviour.

/// One counter slice of one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceRow {
    /// `""`: all models; else a model id.
    pub scope: String,
    pub slice_seconds: i64,
    pub slice_start: i64,
    pub calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// A user's recorded usage: the slices from some start on, and the calls running now by model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub slices: Vec<SliceRow>,
    pub running: Vec<(String, i64)>,
}
