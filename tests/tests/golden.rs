//! The spec's golden vectors, byte for byte, and each damaged twin's exact
//! finding (kind and byte range), through the paths users take: the strict
//! decoders and the scanner behind `inspect`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use felix_codec::doc::report::{FindingReport, Status};
use felix_codec::format::golden::*;
use felix_codec::shard::scan::inspect_in_memory;
use felix_codec::Repair;

fn segment_with(record: &[u8]) -> Vec<u8> {
    let mut b = SEGMENT_HEADER.to_vec();
    // The spec's header has base_offset 1; the spec's record has offset 7.
    // Rebase the header to 7 so the record is the segment's first.
    let mut h = felix_codec::format::segment_header::SegmentHeader::decode(&SEGMENT_HEADER).unwrap().0;
    h.base_offset = 7;
    b.copy_from_slice(&h.encode());
    b.extend_from_slice(record);
    b
}

fn findings(bytes: &[u8]) -> (Vec<FindingReport>, u64, Status) {
    let r = inspect_in_memory(None, &[("00000000000000000000.log".into(), bytes)], 7);
    let f = &r.files[0];
    (f.findings.clone(), f.records, f.status)
}

#[test]
fn spec_header_and_record_scan_clean() {
    let (f, records, status) = findings(&segment_with(&RECORD));
    assert_eq!((f.len(), records, status), (0, 1, Status::Clean));
}

#[test]
fn damaged_header_twin_is_reported_at_byte_0_through_28() {
    let mut b = SEGMENT_HEADER_DAMAGED.to_vec();
    b.extend_from_slice(&RECORD);
    let (f, records, _) = findings(&b);
    assert_eq!((f[0].kind.as_str(), f[0].position, f[0].end, f[0].repair), ("SegmentHeaderChecksum", 0, 28, Repair::Never));
    assert!(f[0].message.contains("stored 7A09E5B1, computed 54FFCD37"), "{}", f[0].message);
    assert_eq!(records, 1, "records are still scanned past a damaged header");
}

#[test]
fn damaged_payload_twin_is_a_record_checksum_over_the_whole_record() {
    let (f, records, status) = findings(&segment_with(&RECORD_PAYLOAD_DAMAGED));
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].kind.as_str(), f[0].position, f[0].end, f[0].offset), ("RecordChecksum", 32, 62, Some(7)));
    assert_eq!((f[0].repair, records, status), (Repair::OptIn, 0, Status::Damaged));
    assert!(f[0].message.contains("stored 2402152C, computed BD0B4496"), "{}", f[0].message);
}

#[test]
fn damaged_length_twin_is_a_header_checksum_that_skips_to_the_end() {
    let (f, _, _) = findings(&segment_with(&RECORD_LENGTH_DAMAGED));
    assert_eq!((f[0].kind.as_str(), f[0].position, f[0].end, f[0].offset), ("RecordHeaderChecksum", 32, 62, None));
    // Upstream's rule: opt-in only when the file ends within that header; the payload's 2 bytes follow it.
    assert_eq!(f[0].repair, Repair::Never);
    assert!(f[0].message.contains("stored C654DE27, computed 41F21564"), "{}", f[0].message);
}

#[test]
fn report_json_has_the_documented_shape() {
    let r = inspect_in_memory(None, &[("00000000000000000000.log".into(), &segment_with(&RECORD_PAYLOAD_DAMAGED)[..])], 4096);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["report_version"], 1);
    let file = &v["files"][0];
    for key in [
        "path",
        "kind",
        "size",
        "hash",
        "sha256",
        "base_offset",
        "records",
        "first_offset",
        "last_offset",
        "entries",
        "findings",
        "notes",
        "status",
        "changed_while_read",
    ] {
        assert!(file.get(key).is_some(), "missing {key}");
    }
    assert_eq!(file["kind"], "segment");
    let finding = &file["findings"][0];
    assert_eq!(finding["kind"], "RecordChecksum");
    assert_eq!(finding["repair"], "opt-in");
    assert_eq!((finding["position"].as_u64(), finding["end"].as_u64(), finding["offset"].as_u64()), (Some(32), Some(62), Some(7)));
    let back: felix_codec::doc::report::Report = serde_json::from_value(v).unwrap();
    assert_eq!(back, r, "the report model round-trips through JSON (the browser's permalink relies on it)");
}
