//! The report's file-identity hash, measured: SHA-256 (`sha2`, which uses the
//! CPU's SHA extensions when it has them) against BLAKE3 (`blake3`: SIMD, and
//! on every core with `update_rayon`), over 256 MiB in memory, with
//! `crc32fast::hash` over the same bytes as the memory-speed yardstick (the
//! scan runs at about its speed). Issue 8 asks which hash the report should
//! carry; docs/report-format.md records the decision and these figures.
//!
//! `cargo bench -p felix-codec --bench hash` prints criterion's estimates, then
//! a table of MiB/s and ratios (same run, best of 7).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

mod common;
use common::best;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use sha2::Digest;

const BYTES: usize = 256 << 20;

fn sha256(bytes: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(bytes).into()
}

fn blake3_one_thread(bytes: &[u8]) -> [u8; 32] {
    blake3::hash(bytes).into()
}

fn blake3_all_cores(bytes: &[u8]) -> [u8; 32] {
    blake3::Hasher::new().update_rayon(bytes).finalize().into()
}

fn main() {
    let bytes: Vec<u8> = (0..BYTES).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("hash_256MiB");
    g.sample_size(10).measurement_time(Duration::from_secs(5)).throughput(Throughput::Bytes(BYTES as u64));
    g.bench_function("crc32fast_hash", |b| b.iter(|| crc32fast::hash(black_box(&bytes))));
    g.bench_function("sha256", |b| b.iter(|| sha256(black_box(&bytes))));
    g.bench_function("blake3_one_thread", |b| b.iter(|| blake3_one_thread(black_box(&bytes))));
    g.bench_function("blake3_all_cores", |b| b.iter(|| blake3_all_cores(black_box(&bytes))));
    g.finish();
    c.final_summary();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    println!("\nfile-identity hash over 256 MiB in memory (same run, best of 7; {cores} cores)");
    println!("{:>22} {:>10} {:>12} {:>12}", "", "MiB/s", "vs SHA-256", "vs crc32");
    let mib = BYTES as f64 / f64::from(1 << 20);
    let rate = |d: Duration| mib / d.as_secs_f64();
    let crc = rate(best(7, || {
        black_box(crc32fast::hash(black_box(&bytes)));
    }));
    let sha = rate(best(7, || {
        black_box(sha256(black_box(&bytes)));
    }));
    let one = rate(best(7, || {
        black_box(blake3_one_thread(black_box(&bytes)));
    }));
    let all = rate(best(7, || {
        black_box(blake3_all_cores(black_box(&bytes)));
    }));
    for (name, r) in [("crc32fast::hash", crc), ("SHA-256 (sha2)", sha), ("BLAKE3, one thread", one), ("BLAKE3, every core", all)] {
        println!("{name:>22} {r:>10.0} {:>12.2} {:>12.2}", r / sha, r / crc);
    }
}
