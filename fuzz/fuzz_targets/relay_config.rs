//! The strict config parser: arbitrary text must parse or fail with a field path, never panic. Validation
//! runs too, with secrets only from the environment names the fuzzer cannot set.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(config) = patchbridge_relay::config::RelayConfig::from_json(text) {
        let _ = config.validate();
    }
});
