//! Never panics, never reads past the slice; a record that decodes re-encodes identically.
#![no_main]
use felix_codec::reader::SegmentReader;
use felix_codec::record::{decode_record, encode_record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((r, used)) = decode_record(data, None) {
        let mut out = Vec::new();
        encode_record(r.header.offset, r.header.timestamp_micros, r.payload, &mut out).unwrap();
        assert_eq!(out[..], data[..used]);
    }
    for item in SegmentReader::at_position(data, 32, None) {
        let _ = item;
    }
});
