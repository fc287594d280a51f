//! The broker's view of the engine, each figure against a baseline measured
//! in the same run on the same filesystem:
//! - **concurrency**: 1, 8 and 64 appenders × 256 B / 4 KiB × batch 1 / 16:
//!   records/s, per-append p50/p99, and fsyncs per append (group commit),
//!   against a raw `pwrite + fdatasync` loop (one writer, one sync per batch);
//! - **preallocation**: appends with and without `fallocate(KEEP_SIZE)` of each segment;
//! - **produce**: `felix-storage produce` as a process (stdin → acknowledged
//!   offsets on stdout) against the engine's own append loop, batch 1 / 16 / 256;
//! - **periodic**: how long an acknowledged record waits to be durable under
//!   `Durability::Interval`, against the interval.
//!
//! `cargo bench -p felix-engine --bench broker`; `FELIX_BENCH_ONLY=concurrency|prealloc|produce|periodic`
//! runs one table; `FELIX_BENCH_QUICK=1` shrinks them.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use felix_engine::io::{DirEntry, EntryType, LockGuard, LockHolder};
use felix_engine::shard::{Config, Durability, Shard};
use felix_engine::{Io, OsIo};

/// `OsIo`, counting `fdatasync`s.
#[derive(Debug, Default)]
struct Counting {
    os: OsIo,
    syncs: AtomicU64,
}

impl Io for Counting {
    fn stat(&self, path: &Path, links: felix_engine::io::Links) -> std::io::Result<felix_engine::io::Stat> {
        self.os.stat(path, links)
    }
    fn canonical(&self, path: &Path) -> std::io::Result<std::path::PathBuf> {
        self.os.canonical(path)
    }
    fn open_read(&self, path: &Path, links: felix_engine::io::Links) -> std::io::Result<Box<dyn felix_engine::io::ReadHandle + '_>> {
        self.os.open_read(path, links)
    }
    fn list(&self, d: &Path) -> std::io::Result<Vec<DirEntry>> {
        self.os.list(d)
    }
    fn kind(&self, p: &Path) -> std::io::Result<Option<EntryType>> {
        self.os.kind(p)
    }
    fn create_dir(&self, d: &Path) -> std::io::Result<()> {
        self.os.create_dir(d)
    }
    fn len(&self, p: &Path) -> std::io::Result<u64> {
        self.os.len(p)
    }
    fn read_at(&self, p: &Path, pos: u64, b: &mut [u8]) -> std::io::Result<usize> {
        self.os.read_at(p, pos, b)
    }
    fn create(&self, p: &Path) -> std::io::Result<()> {
        self.os.create(p)
    }
    fn write_at(&self, p: &Path, pos: u64, d: &[u8]) -> std::io::Result<()> {
        self.os.write_at(p, pos, d)
    }
    fn set_len(&self, p: &Path, l: u64) -> std::io::Result<()> {
        self.os.set_len(p, l)
    }
    fn sync_data(&self, p: &Path) -> std::io::Result<()> {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.os.sync_data(p)
    }
    fn sync_dir(&self, d: &Path) -> std::io::Result<()> {
        self.os.sync_dir(d)
    }
    fn rename(&self, f: &Path, t: &Path) -> std::io::Result<()> {
        self.os.rename(f, t)
    }
    fn link(&self, f: &Path, t: &Path) -> std::io::Result<()> {
        self.os.link(f, t)
    }
    fn remove(&self, p: &Path) -> std::io::Result<()> {
        self.os.remove(p)
    }
    fn lock(&self, p: &Path, w: bool) -> std::io::Result<LockGuard> {
        self.os.lock(p, w)
    }
    fn lock_holder(&self, p: &Path) -> std::io::Result<Option<LockHolder>> {
        self.os.lock_holder(p)
    }
    fn preallocate(&self, p: &Path, l: u64) -> std::io::Result<()> {
        self.os.preallocate(p, l)
    }
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Raw baseline: one writer, `pwrite` the batch's framed bytes, `fdatasync`.
fn raw_rate(dir: &Path, size: usize, batch: usize, batches: usize) -> f64 {
    let f = std::fs::OpenOptions::new().create(true).truncate(true).write(true).open(dir.join("raw")).unwrap();
    let buf = vec![0x5Au8; (size + 28) * batch];
    let mut pos = 0;
    let t = Instant::now();
    for _ in 0..batches {
        f.write_all_at(&buf, pos).unwrap();
        f.sync_data().unwrap();
        pos += buf.len() as u64;
    }
    (batches * batch) as f64 / t.elapsed().as_secs_f64()
}

struct Concurrent {
    records_per_sec: f64,
    p50: Duration,
    p99: Duration,
    syncs_per_append: f64,
}

fn concurrent(dir: &Path, appenders: usize, size: usize, batch: usize, appends_each: usize, config: Config) -> Concurrent {
    let io = Arc::new(Counting::default());
    let (shard, _) = Shard::open_dir(Arc::clone(&io) as Arc<dyn Io>, &dir.join("s"), config).unwrap();
    shard.append(&[b"warm"]).unwrap();
    let shard = Arc::new(shard);
    let before = io.syncs.load(Ordering::Relaxed);
    let barrier = Arc::new(Barrier::new(appenders + 1));
    let handles: Vec<_> = (0..appenders)
        .map(|_| {
            let (shard, barrier) = (Arc::clone(&shard), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let payload = vec![0x5Au8; size];
                let refs: Vec<&[u8]> = (0..batch).map(|_| payload.as_slice()).collect();
                barrier.wait();
                (0..appends_each)
                    .map(|_| {
                        let t = Instant::now();
                        shard.append(&refs).unwrap();
                        t.elapsed()
                    })
                    .collect::<Vec<Duration>>()
            })
        })
        .collect();
    barrier.wait();
    let t = Instant::now();
    let mut lat: Vec<Duration> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    let elapsed = t.elapsed();
    let syncs = io.syncs.load(Ordering::Relaxed) - before;
    lat.sort_unstable();
    let appends = (appenders * appends_each) as f64;
    Concurrent {
        records_per_sec: appends * batch as f64 / elapsed.as_secs_f64(),
        p50: pct(&lat, 0.5),
        p99: pct(&lat, 0.99),
        syncs_per_append: syncs as f64 / appends,
    }
}

fn concurrency_table(quick: bool) {
    println!("\nconcurrent appenders (on-commit), against raw pwrite+fdatasync (one writer, one sync per batch), same run");
    println!(
        "{:>9} {:>6} {:>6} {:>12} {:>10} {:>10} {:>13} {:>12} {:>8}",
        "appenders", "size", "batch", "records/s", "p50", "p99", "fsyncs/append", "raw rec/s", "vs raw"
    );
    let total_appends = if quick { 256 } else { 2048 };
    for appenders in [1usize, 8, 64] {
        for size in [256usize, 4096] {
            for batch in [1usize, 16] {
                let tmp = tempfile::tempdir_in(".").unwrap();
                let config = Config { segment_size_bytes: 1 << 30, ..Config::default() };
                let each = (total_appends / appenders).max(4);
                let c = concurrent(tmp.path(), appenders, size, batch, each, config);
                let raw = raw_rate(tmp.path(), size, batch, (total_appends / 4).max(64));
                println!(
                    "{appenders:>9} {size:>6} {batch:>6} {:>12.0} {:>10.2?} {:>10.2?} {:>13.3} {raw:>12.0} {:>8.2}",
                    c.records_per_sec,
                    c.p50,
                    c.p99,
                    c.syncs_per_append,
                    c.records_per_sec / raw
                );
            }
        }
    }
}

fn prealloc_table(quick: bool) {
    println!("\npreallocation: appends with fallocate(KEEP_SIZE) of each 64 MiB segment against without, same run, alternating");
    println!("{:>6} {:>6} {:>14} {:>14} {:>8}", "size", "batch", "without rec/s", "with rec/s", "ratio");
    let batches = if quick { 200 } else { 2000 };
    for size in [256usize, 4096] {
        for batch in [1usize, 16] {
            let mut without = Vec::new();
            let mut with = Vec::new();
            for round in 0..4 {
                for prealloc in [round % 2 == 0, round % 2 == 1] {
                    let tmp = tempfile::tempdir_in(".").unwrap();
                    let config = Config { segment_size_bytes: 64 << 20, preallocate_segments: prealloc, ..Config::default() };
                    let c = concurrent(tmp.path(), 1, size, batch, batches, config);
                    if prealloc { &mut with } else { &mut without }.push(c.records_per_sec);
                }
            }
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (w, wo) = (median(&mut with), median(&mut without));
            println!("{size:>6} {batch:>6} {wo:>14.0} {w:>14.0} {:>8.2}", w / wo);
        }
    }
}

/// `felix-storage produce` fed `lines` lines of `size` bytes: records/s from
/// the first line written to the last offset printed.
fn produce_rate(root: &Path, lines: usize, size: usize, batch: usize) -> f64 {
    let input: Vec<u8> = (0..lines).flat_map(|_| std::iter::repeat_n(b'x', size).chain([b'\n'])).collect();
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_felix-storage"))
        .args(["produce", root.to_str().unwrap(), "--shard", "bench/default/produce/0", "--batch", &batch.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let acked = BufReader::new(child.stdout.take().unwrap()).lines().count();
    feeder.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(acked, lines);
    lines as f64 / t.elapsed().as_secs_f64()
}

fn produce_table(quick: bool) {
    println!("\nfelix-storage produce (a process: stdin → offsets on stdout) against the engine's append loop, 256 B, same run");
    println!("{:>6} {:>14} {:>14} {:>8}", "batch", "engine rec/s", "produce rec/s", "ratio");
    for batch in [1usize, 16, 256] {
        let lines = if quick { 400 } else { 2000 } * if batch == 1 { 1 } else { batch.min(16) };
        let tmp = tempfile::tempdir_in(".").unwrap();
        let config = Config { segment_size_bytes: 1 << 30, ..Config::default() };
        let engine = concurrent(tmp.path(), 1, 256, batch, lines / batch, config).records_per_sec;
        let produce = produce_rate(tmp.path(), lines, 256, batch);
        println!("{batch:>6} {engine:>14.0} {produce:>14.0} {:>8.2}", produce / engine);
    }
}

fn periodic_table(quick: bool) {
    println!("\nperiodic durability: how long an acknowledged record waits to be durable, against the interval");
    println!("{:>10} {:>8} {:>12} {:>12} {:>12}", "interval", "records", "median wait", "p99 wait", "max wait");
    for interval_ms in [5u64, 50] {
        let tmp = tempfile::tempdir_in(".").unwrap();
        let config = Config { durability: Durability::Interval { micros: interval_ms * 1000 }, ..Config::default() };
        let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()), &tmp.path().join("p"), config).unwrap();
        let n = if quick { 50 } else { 400 };
        let mut waits = Vec::with_capacity(n);
        for i in 0..n {
            let acked_at = Instant::now();
            let offset = shard.append(&[format!("r{i}").as_bytes()]).unwrap().start;
            while shard.durable_offset() <= offset {
                std::thread::sleep(Duration::from_micros(50));
            }
            waits.push(acked_at.elapsed());
            // Spread appends over the interval so some land early, some late in it.
            std::thread::sleep(Duration::from_micros((i as u64 * 7919) % (interval_ms * 1000)));
        }
        waits.sort_unstable();
        println!("{:>8}ms {n:>8} {:>12.2?} {:>12.2?} {:>12.2?}", interval_ms, pct(&waits, 0.5), pct(&waits, 0.99), waits[waits.len() - 1]);
    }
}

fn main() {
    let quick = std::env::var_os("FELIX_BENCH_QUICK").is_some();
    let only = std::env::var("FELIX_BENCH_ONLY").ok();
    let run = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if run("concurrency") {
        concurrency_table(quick);
    }
    if run("prealloc") {
        prealloc_table(quick);
    }
    if run("produce") {
        produce_table(quick);
    }
    if run("periodic") {
        periodic_table(quick);
    }
}
