//! OpenAI's `prompt_cache_key`: a routing hint that sends requests sharing a key to the same cache, so the calls
//! of one conversation (each a longer prefix of the next) find the prefix their predecessor left.

/// The key for a conversation: a fixed-length digest (FNV-1a, 64 bits) of its id, so the provider sees neither
/// the id nor an arbitrarily long string.
pub(crate) fn prompt_cache_key(conversation_id: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in conversation_id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("pb-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_fixed_length_and_distinct() {
        // FNV-1a of "" is its offset basis: the digest is the documented algorithm, not a process-local hash.
        assert_eq!(prompt_cache_key(""), "pb-cbf29ce484222325");
        assert_eq!(prompt_cache_key("c_1"), prompt_cache_key("c_1"));
        assert_ne!(prompt_cache_key("c_1"), prompt_cache_key("c_2"));
        assert_eq!(prompt_cache_key(&"x".repeat(10_000)).len(), 19);
    }
}
