//! o200k_base token counts (the GPT-4o family's tokenizer), as an offline estimate.
//!
//! The tables are compiled into the binary by `tiktoken-rs`; nothing is fetched. Counts are
//! an estimate of what a provider bills: Anthropic and Gemini use their own tokenizers.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn encoder() -> Option<&'static CoreBPE> {
    static ENCODER: OnceLock<Option<CoreBPE>> = OnceLock::new();
    ENCODER
        .get_or_init(|| tiktoken_rs::o200k_base().ok())
        .as_ref()
}

/// The number of o200k_base tokens in `text`, special tokens treated as ordinary text.
///
/// Returns `None` only if the compiled-in tables failed to load, which would be a build
/// defect rather than an input problem.
///
/// ```
/// assert_eq!(chef_compress::tokens::count_o200k("hello world"), Some(2));
/// ```
pub fn count_o200k(text: &str) -> Option<usize> {
    encoder().map(|bpe| bpe.encode_ordinary(text).len())
}
