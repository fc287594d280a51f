//! Never panics; a header that decodes re-encodes to the same bytes (reserved aside).
#![no_main]
use felix_codec::format::segment_header::SegmentHeader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((h, used)) = SegmentHeader::decode(data) {
        assert_eq!(used, 32);
        let again = h.encode();
        assert_eq!(again[..28], data[..28]);
    }
});
