//! Scan+verify throughput on 64 MiB segments of 64 B, 4 KiB and 1 MiB
//! payloads, against `crc32fast::hash` over the same bytes in the same run,
//! and the 20-byte header CRC on its own.
//!
//! `cargo bench -p felix-codec --bench scan` prints criterion's estimates,
//! then a table of ratios (scan throughput / crc32fast throughput; ≥ 0.8 is
//! the target for 4 KiB payloads and up), and a row for a zero-filled tail
//! (what a sparse or zeroed range costs the resync).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

mod common;
use common::best;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use felix_codec::format::record::{decode_record_header, encode_record};
use felix_codec::format::segment_header::SegmentHeader;
use felix_codec::read::scan::{ScanContext, SegmentScanner};

const SEGMENT_BYTES: usize = 64 << 20;
const CHUNK_BYTES: usize = 1 << 20;
const PAYLOADS: [usize; 4] = [64, 512, 4096, 1 << 20];

fn segment(payload_len: usize) -> Vec<u8> {
    let mut out = SegmentHeader::new(0, 0).encode().to_vec();
    let payload: Vec<u8> = (0..payload_len).map(|i| (i * 31 + 7) as u8).collect();
    let mut offset = 0;
    while out.len() + 28 + payload_len <= SEGMENT_BYTES {
        encode_record(offset, offset, &payload, &mut out).unwrap();
        offset += 1;
    }
    out
}

fn scan(bytes: &[u8]) -> u64 {
    let mut s = SegmentScanner::new(ScanContext { newest_segment: true, ..ScanContext::default() });
    for chunk in bytes.chunks(CHUNK_BYTES) {
        s.feed(chunk, &mut ());
    }
    let summary = s.finish(&mut ());
    assert!(summary.findings.findings.is_empty());
    summary.records
}

fn benches(c: &mut Criterion, segments: &[(usize, Vec<u8>)]) {
    let mut g = c.benchmark_group("scan_64MiB");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    for (payload, bytes) in segments {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("crc32fast_hash", payload), bytes, |b, bytes| b.iter(|| crc32fast::hash(black_box(bytes))));
        g.bench_with_input(BenchmarkId::new("scan_verify", payload), bytes, |b, bytes| b.iter(|| scan(black_box(bytes))));
    }
    g.finish();
    let mut h = c.benchmark_group("header_crc_20B");
    let mut rec = Vec::new();
    encode_record(7, 9, b"hi", &mut rec).unwrap();
    h.bench_function("crc32fast_hash_20B", |b| b.iter(|| crc32fast::hash(black_box(&rec[..20]))));
    h.bench_function("decode_record_header_28B", |b| b.iter(|| decode_record_header(black_box(&rec[..28])).unwrap()));
    h.finish();
}

fn main() {
    let segments: Vec<(usize, Vec<u8>)> = PAYLOADS.iter().map(|p| (*p, segment(*p))).collect();
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c, &segments);
    c.final_summary();
    println!("\nratio table (same run, best of 7; throughput relative to crc32fast::hash over the same bytes)");
    println!("{:>10} {:>14} {:>14} {:>8}", "payload", "crc32 MiB/s", "scan MiB/s", "ratio");
    for (payload, bytes) in &segments {
        let mib = bytes.len() as f64 / f64::from(1 << 20);
        let crc = best(7, || {
            black_box(crc32fast::hash(black_box(bytes)));
        });
        let sc = best(7, || {
            black_box(scan(black_box(bytes)));
        });
        let (crc_rate, scan_rate) = (mib / crc.as_secs_f64(), mib / sc.as_secs_f64());
        println!("{payload:>10} {crc_rate:>14.0} {scan_rate:>14.0} {:>8.2}", scan_rate / crc_rate);
    }
    // A zero-filled tail (a sparse file, a preallocated or zeroed range):
    // one record, then 64 MiB of zeros the resync crosses.
    let mut zeros = SegmentHeader::new(0, 0).encode().to_vec();
    encode_record(0, 0, b"one", &mut zeros).unwrap();
    zeros.resize(SEGMENT_BYTES, 0);
    let mib = zeros.len() as f64 / f64::from(1 << 20);
    let crc = best(7, || {
        black_box(crc32fast::hash(black_box(&zeros)));
    });
    let sc = best(7, || {
        black_box(scan_damaged(black_box(&zeros)));
    });
    let (crc_rate, scan_rate) = (mib / crc.as_secs_f64(), mib / sc.as_secs_f64());
    println!("{:>10} {crc_rate:>14.0} {scan_rate:>14.0} {:>8.2}", "zeros", scan_rate / crc_rate);
}

/// Scans bytes expected to hold damage; returns the findings' count.
fn scan_damaged(bytes: &[u8]) -> usize {
    let mut s = SegmentScanner::new(ScanContext { newest_segment: true, ..ScanContext::default() });
    for chunk in bytes.chunks(CHUNK_BYTES) {
        s.feed(chunk, &mut ());
    }
    s.finish(&mut ()).findings.findings.len()
}
