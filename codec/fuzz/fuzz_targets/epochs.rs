//! Never panics; whatever decodes re-encodes to the same bytes.
#![no_main]
use felix_codec::format::epochs;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = epochs::decode(data) {
        assert_eq!(epochs::encode(&entries).unwrap(), data);
    }
    let (entries, defect) = epochs::read_or_empty(data);
    assert!(defect.is_none() || entries.is_empty());
});
