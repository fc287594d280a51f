//! Never panics, never reads past the slice; a record that decodes re-encodes identically.
#![no_main]
use felix_codec::read::reader::SegmentReader;
use felix_codec::read::reader::{ChunkedReader, Step};
use felix_codec::format::record::{decode_record, encode_record, ExpectedOffset};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((r, used)) = decode_record(data, ExpectedOffset::Any) {
        let mut out = Vec::new();
        encode_record(r.header.offset, r.header.timestamp_micros, r.payload, &mut out).unwrap();
        assert_eq!(out[..], data[..used]);
    }
    for item in SegmentReader::at_position(data, 32, ExpectedOffset::Any) {
        let _ = item;
    }
    // The chunked reader never asks for more than one record, whatever the bytes claim.
    let mut reader = ChunkedReader::headers_only(0, ExpectedOffset::Any, data.len() as u64);
    while let Step::Header { .. } | Step::NeedBytes { .. } = reader.step(data, 0) {
        if let Step::NeedBytes { len, .. } = reader.step(data, 0) {
            assert!(len <= 28 + felix_codec::MAX_PAYLOAD_BYTES as usize);
            break;
        }
    }
});
