//! The shared corpus's verdicts equal the blessed ones, natively and in a
//! browser (wasm32 under wasm-bindgen-test), so the two agree.
//!
//! Regenerate `tests/data/verdicts.txt` after an intended change with
//! `FELIX_BLESS=1 cargo test -p felix-codec --test corpus` and review the diff.

#![allow(clippy::unwrap_used)]

mod common;

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

const BLESSED: &str = include_str!("data/verdicts.txt");

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn corpus_verdicts_match_the_blessed_file_in_every_chunking() {
    let whole = common::verdicts(usize::MAX);
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("FELIX_BLESS").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verdicts.txt"), &whole).unwrap();
        return;
    }
    assert_eq!(whole, BLESSED, "verdicts differ from tests/data/verdicts.txt");
    for chunk in [1, 3, 7, 28, 4096] {
        assert_eq!(common::verdicts(chunk), whole, "chunk size {chunk}");
    }
}
