//! The openai_chat decoder fed arbitrary SSE bytes, cut at arbitrary points.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    patchbridge_fuzz::run_decoder(patchbridge_providers::ProviderKind::OpenAiChat, data);
});
