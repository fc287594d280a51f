//! Engine benchmarks, each reported as a ratio to a baseline measured in the
//! same run on the same filesystem:
//! - append throughput and p50/p99 ack latency at batch 1, 16, 256 for
//!   256 B and 4 KiB records, against a raw `pwrite + fdatasync` loop writing
//!   the same bytes per batch, and against `okaywal` (one entry per batch,
//!   one chunk per record, committed durably);
//! - recovery time of a newest segment of 1, 16 and 256 MiB, against the
//!   codec's in-memory scan of the same bytes;
//! - random-read latency.
//!
//! `cargo bench -p felix-engine --bench engine` (criterion's estimates for
//! the batch-1 case, then the full table). `FELIX_BENCH_QUICK=1` shrinks it;
//! `FELIX_BENCH_ONLY=recovery` runs only the recovery table, `=reads` only the reads.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use std::fs::OpenOptions;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use felix_codec::scan::segment::scan_segment;
use felix_codec::scan::ScanContext;
use felix_engine::shard::{Config, Shard};
use felix_engine::{Io, OsIo};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

struct Run {
    records_per_sec: f64,
    p50: Duration,
    p99: Duration,
}

fn measure(batches: usize, mut one_batch: impl FnMut()) -> Vec<Duration> {
    let mut lat = Vec::with_capacity(batches);
    for _ in 0..batches {
        let t = Instant::now();
        one_batch();
        lat.push(t.elapsed());
    }
    lat
}

fn summarize(mut lat: Vec<Duration>, batch: usize) -> Run {
    let total: Duration = lat.iter().sum();
    lat.sort_unstable();
    Run { records_per_sec: (lat.len() * batch) as f64 / total.as_secs_f64(), p50: percentile(&lat, 0.5), p99: percentile(&lat, 0.99) }
}

fn felix(dir: &Path, size: usize, batch: usize, batches: usize) -> Run {
    let config = Config { segment_size_bytes: 1 << 30, ..Config::default() };
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir.join("felix"), config).unwrap();
    let payload = vec![0x5Au8; size];
    let refs: Vec<&[u8]> = (0..batch).map(|_| payload.as_slice()).collect();
    summarize(
        measure(batches, || {
            black_box(shard.append(&refs).unwrap());
        }),
        batch,
    )
}

fn raw(dir: &Path, size: usize, batch: usize, batches: usize) -> Run {
    let f = OpenOptions::new().create(true).truncate(true).read(true).write(true).open(dir.join("raw.bin")).unwrap();
    let bytes = vec![0x5Au8; (28 + size) * batch];
    let mut pos = 0u64;
    summarize(
        measure(batches, || {
            f.write_all_at(&bytes, pos).unwrap();
            f.sync_data().unwrap();
            pos += bytes.len() as u64;
        }),
        batch,
    )
}

fn okay(dir: &Path, size: usize, batch: usize, batches: usize) -> Run {
    let log = okaywal::WriteAheadLog::recover(dir.join("okaywal"), okaywal::LogVoid).unwrap();
    let payload = vec![0x5Au8; size];
    let run = summarize(
        measure(batches, || {
            let mut w = log.begin_entry().unwrap();
            for _ in 0..batch {
                w.write_chunk(&payload).unwrap();
            }
            w.commit().unwrap();
        }),
        batch,
    );
    log.shutdown().unwrap();
    run
}

fn append_table(quick: bool) {
    println!("\nappend: records/s and ack latency (ratio = felix records/s / baseline records/s, same run)");
    println!(
        "{:>6} {:>6} {:>12} {:>10} {:>10} {:>12} {:>9} {:>12} {:>9}",
        "size", "batch", "felix rec/s", "p50", "p99", "raw rec/s", "vs raw", "okaywal/s", "vs okay"
    );
    for size in [256usize, 4096] {
        for batch in [1usize, 16, 256] {
            let batches = if quick { 50 } else { (4000 / batch).clamp(100, 1000) };
            let tmp = tempfile::tempdir_in(".").unwrap();
            let r = raw(tmp.path(), size, batch, batches);
            let f = felix(tmp.path(), size, batch, batches);
            let o = okay(tmp.path(), size, batch, batches);
            println!(
                "{size:>6} {batch:>6} {:>12.0} {:>10.2?} {:>10.2?} {:>12.0} {:>9.2} {:>12.0} {:>9.2}",
                f.records_per_sec,
                f.p50,
                f.p99,
                r.records_per_sec,
                f.records_per_sec / r.records_per_sec,
                o.records_per_sec,
                f.records_per_sec / o.records_per_sec
            );
        }
    }
}

fn recovery_table(quick: bool) {
    println!("\nrecovery of a newest segment (ratio = open MiB/s / codec in-memory scan MiB/s, same bytes)");
    println!("{:>8} {:>12} {:>14} {:>14} {:>8}", "MiB", "open ms", "open MiB/s", "scan MiB/s", "ratio");
    let sizes: &[u64] = if quick { &[1, 16] } else { &[1, 16, 256] };
    for &mib in sizes {
        let tmp = tempfile::tempdir_in(".").unwrap();
        let dir = tmp.path().join("s");
        let config = Config { segment_size_bytes: 1 << 40, ..Config::default() };
        {
            let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, config.clone()).unwrap();
            let payload = vec![7u8; 4096 - 28];
            let refs: Vec<&[u8]> = (0..256).map(|_| payload.as_slice()).collect();
            for _ in 0..(mib * 1024 * 1024 / (4096 * 256)).max(1) {
                shard.append(&refs).unwrap();
            }
        }
        let bytes = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
        let real_mib = bytes.len() as f64 / f64::from(1 << 20);
        let open = (0..3)
            .map(|_| {
                let t = Instant::now();
                let _ = black_box(Shard::open_dir(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, config.clone()).unwrap());
                t.elapsed()
            })
            .min()
            .unwrap();
        let scan = (0..3)
            .map(|_| {
                let t = Instant::now();
                black_box(scan_segment(&bytes, ScanContext::default()));
                t.elapsed()
            })
            .min()
            .unwrap();
        let (o, s) = (real_mib / open.as_secs_f64(), real_mib / scan.as_secs_f64());
        println!("{real_mib:>8.1} {:>12.1} {o:>14.0} {s:>14.0} {:>8.2}", open.as_secs_f64() * 1000.0, o / s);
    }
}

fn read_table() {
    let tmp = tempfile::tempdir_in(".").unwrap();
    // (the shard directory is r/ under tmp)
    let config = Config { segment_size_bytes: 8 << 20, ..Config::default() };
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()) as Arc<dyn Io>, &tmp.path().join("r"), config).unwrap();
    let payload = vec![1u8; 256];
    let refs: Vec<&[u8]> = (0..256).map(|_| payload.as_slice()).collect();
    for _ in 0..400 {
        shard.append(&refs).unwrap();
    }
    let n = shard.next_offset();
    let random_reads = |shard: &Shard| -> (Vec<Duration>, Duration) {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut lat: Vec<Duration> = (0..10_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let t = Instant::now();
                black_box(shard.read(seed % n, 1).unwrap());
                t.elapsed()
            })
            .collect();
        let total = lat.iter().sum();
        lat.sort_unstable();
        (lat, total)
    };
    let (lat, _) = random_reads(&shard);
    println!(
        "\nrandom reads of one 256 B record over {n} records (~27 MiB, 4 segments), the writer's handle: p50 {:.2?}, p99 {:.2?}",
        percentile(&lat, 0.5),
        percentile(&lat, 0.99)
    );
    drop(shard);
    // A fresh reader: every index entry of a sealed segment is verified against
    // the record chain before a read trusts it (once per stretch, then remembered).
    let t = Instant::now();
    let (reader, _) = Shard::open_read_only(Arc::new(OsIo::new()) as Arc<dyn Io>, &tmp.path().join("r"), Config::default()).unwrap();
    let open = t.elapsed();
    let (lat, total) = random_reads(&reader);
    let (warm, warm_total) = random_reads(&reader);
    println!(
        "  a fresh reader: open {open:.2?}; first 10,000 reads p50 {:.2?}, p99 {:.2?}, max {:.2?}, total {total:.2?} \
         (entry verification included); again: p50 {:.2?}, p99 {:.2?}, total {warm_total:.2?}",
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        lat[lat.len() - 1],
        percentile(&warm, 0.5),
        percentile(&warm, 0.99),
    );
}

fn main() {
    let quick = std::env::var_os("FELIX_BENCH_QUICK").is_some();
    if std::env::var("FELIX_BENCH_ONLY").as_deref() == Ok("recovery") {
        recovery_table(quick);
        return;
    }
    if std::env::var("FELIX_BENCH_ONLY").as_deref() == Ok("reads") {
        read_table();
        return;
    }
    let mut c = Criterion::default().configure_from_args().sample_size(20).measurement_time(Duration::from_secs(3));
    let tmp = tempfile::tempdir_in(".").unwrap();
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()) as Arc<dyn Io>, &tmp.path().join("c"), Config::default()).unwrap();
    let raw_file = OpenOptions::new().create(true).truncate(true).write(true).open(tmp.path().join("raw")).unwrap();
    let payload = [0x5Au8; 256];
    let framed = [0x5Au8; 284];
    let mut pos = 0;
    let mut g = c.benchmark_group("append_256B_batch1");
    g.bench_function("felix_append_fdatasync", |b| b.iter(|| shard.append(&[&payload]).unwrap()));
    g.bench_function("raw_pwrite_fdatasync", |b| {
        b.iter(|| {
            raw_file.write_all_at(&framed, pos).unwrap();
            raw_file.sync_data().unwrap();
            pos += 284;
        });
    });
    g.finish();
    c.final_summary();
    append_table(quick);
    recovery_table(quick);
    read_table();
}
