//! Engine benchmarks, each reported as a ratio to a baseline measured in the
//! same run on the same filesystem:
//! - append throughput and p50/p99 ack latency at batch 1, 16, 256 for
//!   256 B and 4 KiB records, against a raw `pwrite + fdatasync` loop writing
//!   the same bytes per batch, and against `okaywal` (one entry per batch,
//!   one chunk per record, committed durably);
//! - recovery time of a newest segment of 1, 16 and 256 MiB, against the
//!   codec's in-memory scan of the same bytes;
//! - random-read latency;
//! - `felix-storage inspect` (the process, as a user runs it) of one 256 MiB
//!   segment against a bare `read()` + `crc32fast` pass over the same file,
//!   and of a root of 4 shards of 64 MiB against inspecting them one after
//!   another (issue 8, goals 1 and 2);
//! - sequential `Shard::read` and zero-copy `Shard::read_ranges` over a
//!   256 MiB shard against the same bare pass (goal 4);
//! - `felix-storage diff A B --json` of two identical 256 MiB shards (every
//!   record compared) against `inspect --json` of one of them, and the peak
//!   resident memory of each process (issue 10).
//!
//! `cargo bench -p felix-engine --bench engine` (criterion's estimates for
//! the batch-1 case, then the full table). `FELIX_BENCH_QUICK=1` shrinks it;
//! `FELIX_BENCH_ONLY=recovery` runs only the recovery table, `=reads` only the
//! random reads, `=inspect` only the inspect tables, `=sequential` only the
//! sequential reads, `=diff` only the diff table, `=time` only the seeks by
//! time (`offset_for_time` against a read by offset and a linear scan). Page cache warm throughout (each file is read once first).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use std::fs::OpenOptions;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use felix_codec::format::index::build_index;
use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;
use felix_codec::read::scan::segment::scan_segment;
use felix_codec::read::scan::ScanContext;
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

/// A page-aligned buffer of `len` bytes (the kernel's copy into a buffer 16
/// bytes past a page boundary, where a large `Vec` starts, runs about 4x
/// slower on this machine's AMD CPU: the baseline gets the fast one).
fn aligned(len: usize) -> (Vec<u8>, usize) {
    let v = vec![0u8; len + 4096];
    let start = (4096 - v.as_ptr() as usize % 4096) % 4096;
    (v, start)
}

/// The baseline: a bare `read()` + `crc32fast` pass, 1 MiB page-aligned reads.
fn bare_read_crc(path: &Path) -> u32 {
    use std::io::Read;
    let (mut v, start) = aligned(1 << 20);
    let buf = &mut v[start..start + (1 << 20)];
    let mut f = std::fs::File::open(path).unwrap();
    let mut acc = 0;
    loop {
        let n = f.read(buf).unwrap();
        if n == 0 {
            return acc;
        }
        // crc32fast over each read (the codec's one CRC function): the same kernel as a running CRC.
        acc ^= felix_codec::format::be::crc32(&buf[..n]);
    }
}

/// The same pass hashing with SHA-256 instead (the report's file identity).
fn bare_read_sha256(path: &Path) -> Vec<u8> {
    use sha2::Digest;
    use std::io::Read;
    let (mut v, start) = aligned(1 << 20);
    let buf = &mut v[start..start + (1 << 20)];
    let mut f = std::fs::File::open(path).unwrap();
    let mut h = sha2::Sha256::new();
    loop {
        let n = f.read(buf).unwrap();
        if n == 0 {
            return h.finalize().to_vec();
        }
        h.update(&buf[..n]);
    }
}

/// Writes a segment of `bytes` (about) of records with `payload_len`-byte
/// payloads from offset `base`, and its index; returns the records written.
fn write_segment(dir: &Path, id: u64, base: u64, bytes: u64, payload_len: usize) -> u64 {
    write_timed_segment(dir, id, base, bytes, payload_len, |offset| 1_700_000_000_000_000 + offset - base)
}

/// [`write_segment`], the record at `base + n` stamped `stamp(base + n)`.
fn write_timed_segment(dir: &Path, id: u64, base: u64, bytes: u64, payload_len: usize, stamp: impl Fn(u64) -> u64) -> u64 {
    use std::io::Write;
    std::fs::create_dir_all(dir).unwrap();
    let mut out = std::io::BufWriter::with_capacity(4 << 20, std::fs::File::create(dir.join(format!("{id:020}.log"))).unwrap());
    out.write_all(&SegmentHeader::new(base, 1).encode()).unwrap();
    let payload: Vec<u8> = (0..payload_len).map(|i| (i * 31 + 7) as u8).collect();
    let (mut at, mut n, mut rec) = (32u64, 0u64, Vec::new());
    let mut positions = Vec::new();
    while at + 28 + payload_len as u64 <= bytes {
        rec.clear();
        encode_record(base + n, stamp(base + n), &payload, &mut rec).unwrap();
        out.write_all(&rec).unwrap();
        positions.push((base + n, at));
        at += rec.len() as u64;
        n += 1;
    }
    out.flush().unwrap();
    std::fs::write(dir.join(format!("{id:020}.index")), build_index(base, positions, 4096)).unwrap();
    n
}

/// Runs `felix-storage` with `args`, output discarded; panics unless it exits 0.
fn cli(args: &[&str]) {
    let status =
        std::process::Command::new(env!("CARGO_BIN_EXE_felix-storage")).args(args).stdout(std::process::Stdio::null()).status().unwrap();
    assert!(status.success(), "felix-storage {args:?}: {status}");
}

fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

/// `rounds` interleaved rounds of each measurement (so load hits all alike):
/// each one's times.
fn rounds(n: usize, fs: &mut [&mut dyn FnMut() -> Duration]) -> Vec<Vec<Duration>> {
    let mut out = vec![Vec::new(); fs.len()];
    for _ in 0..n {
        for (f, times) in fs.iter_mut().zip(out.iter_mut()) {
            times.push(f());
        }
    }
    out
}

/// "median (range min–max)" of a list of ratios, one per round.
fn spread(ratios: &[f64]) -> String {
    let best = ratios.iter().copied().fold(f64::MIN, f64::max);
    let worst = ratios.iter().copied().fold(f64::MAX, f64::min);
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    format!("{:.2} (median; range {worst:.2}–{best:.2})", sorted[sorted.len() / 2])
}

fn per_round(base: &[Duration], other: &[Duration]) -> Vec<f64> {
    base.iter().zip(other).map(|(b, o)| b.as_secs_f64() / o.as_secs_f64()).collect()
}

fn ms(d: &[Duration]) -> String {
    let mut v: Vec<f64> = d.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    v.sort_by(f64::total_cmp);
    format!("{:.0}–{:.0} ms", v[0], v[v.len() - 1])
}

fn inspect_tables(quick: bool) {
    let n = if quick { 3 } else { 7 };
    let tmp = tempfile::tempdir_in(".").unwrap();
    // Goal 1: one 256 MiB segment of 4 KiB records.
    let mib = if quick { 64 } else { 256 };
    let one = tmp.path().join("one");
    write_segment(&one, 0, 0, mib << 20, 4096 - 28);
    let log = one.join("00000000000000000000.log");
    let log_s = log.to_str().unwrap();
    bare_read_crc(&log);
    let mut base = || {
        time(|| {
            black_box(bare_read_crc(&log));
        })
    };
    let mut json = || time(|| cli(&["inspect", "--json", log_s]));
    let mut text = || time(|| cli(&["inspect", log_s]));
    let mut json1 = || time(|| cli(&["inspect", "--json", "--jobs", "1", log_s]));
    let mut sha = || {
        time(|| {
            black_box(bare_read_sha256(&log));
        })
    };
    // The hash alone, with no read and no scan: the bytes already in memory,
    // BLAKE3 on every core. `inspect --json` cannot beat this.
    let bytes = std::fs::read(&log).unwrap();
    let mut hash_only = || {
        time(|| {
            black_box(blake3::Hasher::new().update_rayon(&bytes).finalize());
        })
    };
    let t = rounds(n, &mut [&mut base, &mut json, &mut text, &mut json1, &mut sha, &mut hash_only]);
    println!(
        "
inspect of one {mib} MiB segment of 4 KiB records vs a bare read()+crc32fast pass (ratio = bare time / time; {n} interleaved rounds)"
    );
    println!("  bare read+crc32fast                 {}", ms(&t[0]));
    println!("  felix-storage inspect --json        {}  ratio {}", ms(&t[1]), spread(&per_round(&t[0], &t[1])));
    println!("  felix-storage inspect (text)        {}  ratio {}", ms(&t[2]), spread(&per_round(&t[0], &t[2])));
    println!("  felix-storage inspect --json -j 1   {}  ratio {}", ms(&t[3]), spread(&per_round(&t[0], &t[3])));
    println!("  bare read+SHA-256                   {}  ratio {}", ms(&t[4]), spread(&per_round(&t[0], &t[4])));
    println!(
        "  BLAKE3 alone, bytes in memory,      {}  ratio {}  (the ceiling of --json: its hash alone, every core)",
        ms(&t[5]),
        spread(&per_round(&t[0], &t[5]))
    );
    drop(bytes);

    // Goal 2: a root of 4 shards of 64 MiB, against the 4 one after another.
    let shard_mib = if quick { 16 } else { 64 };
    let root = tmp.path().join("root");
    let shards: Vec<String> = (0..4)
        .map(|i| {
            let dir = root.join(format!("acme_default_orders_{i}-{i:016x}"));
            write_segment(&dir, 0, 0, shard_mib << 20, 4096 - 28);
            bare_read_crc(&dir.join("00000000000000000000.log"));
            dir.to_str().unwrap().to_string()
        })
        .collect();
    let root_s = root.to_str().unwrap();
    for (label, flags) in [("--json", &["--json"][..]), ("text", &[][..])] {
        let args =
            |path: &str| -> Vec<String> { ["inspect"].iter().chain(flags).map(|s| (*s).to_string()).chain([path.to_string()]).collect() };
        let run = |a: Vec<String>| cli(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let mut seq = || time(|| shards.iter().for_each(|s| run(args(s))));
        let mut all = || time(|| run(args(root_s)));
        let mut one_job = || {
            time(|| {
                let mut a = args(root_s);
                a.insert(1, "--jobs=1".into());
                run(a);
            })
        };
        let t = rounds(n, &mut [&mut seq, &mut all, &mut one_job]);
        println!("
inspect {label} of a root of 4 shards of {shard_mib} MiB vs the 4 shards one after another (ratio = sequential / root; {n} rounds, {} cores)", felix_engine::tools::inspect::default_jobs());
        println!("  4 x inspect SHARD, in turn          {}", ms(&t[0]));
        println!("  inspect ROOT                        {}  ratio {}", ms(&t[1]), spread(&per_round(&t[0], &t[1])));
        println!("  inspect --jobs 1 ROOT               {}  ratio {}", ms(&t[2]), spread(&per_round(&t[0], &t[2])));
    }
}

/// Runs `felix-storage` with `args` (output discarded) and returns its time
/// and its peak resident set in KiB (`VmHWM`, sampled from /proc every
/// millisecond until it exits: streaming keeps it flat, so the peak is
/// reached early). Exit 0 or 1 (a diff that differs) are accepted.
fn cli_peak(args: &[&str]) -> (Duration, u64) {
    let t = Instant::now();
    let mut child =
        std::process::Command::new(env!("CARGO_BIN_EXE_felix-storage")).args(args).stdout(std::process::Stdio::null()).spawn().unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(hwm) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("VmHWM:").and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()))
        }) {
            peak = hwm;
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let took = t.elapsed();
    assert!(matches!(status.code(), Some(0 | 1)), "felix-storage {args:?}: {status}");
    (took, peak)
}

fn diff_table(quick: bool) {
    let n = if quick { 3 } else { 5 };
    let mib = if quick { 64 } else { 256 };
    let tmp = tempfile::tempdir_in(".").unwrap();
    let a = tmp.path().join("a").join("acme_default_orders_0-0d3aed4b998d2798");
    let b = tmp.path().join("b").join("acme_default_orders_0-0d3aed4b998d2798");
    write_segment(&a, 0, 0, mib << 20, 4096 - 28);
    write_segment(&b, 0, 0, mib << 20, 4096 - 28);
    for d in [&a, &b] {
        bare_read_crc(&d.join("00000000000000000000.log"));
    }
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (mut peak_diff, mut peak_inspect) = (0, 0);
    let mut base = || {
        time(|| {
            black_box(bare_read_crc(&a.join("00000000000000000000.log")));
        })
    };
    let mut inspect = || {
        let (t, kib) = cli_peak(&["inspect", "--json", a_s]);
        peak_inspect = peak_inspect.max(kib);
        t
    };
    let mut diff = || {
        let (t, kib) = cli_peak(&["diff", "--json", a_s, b_s]);
        peak_diff = peak_diff.max(kib);
        t
    };
    let t = rounds(n, &mut [&mut base, &mut inspect, &mut diff]);
    println!(
        "
diff of two identical {mib} MiB shards of 4 KiB records (every record compared) vs inspect --json of one (ratio = inspect time / diff time; {n} rounds)"
    );
    println!("  bare read+crc32fast of one          {}", ms(&t[0]));
    println!("  felix-storage inspect --json A      {}  peak RSS {} MiB", ms(&t[1]), peak_inspect / 1024);
    println!(
        "  felix-storage diff --json A B       {}  ratio {}  peak RSS {} MiB",
        ms(&t[2]),
        spread(&per_round(&t[1], &t[2])),
        peak_diff / 1024
    );
}

fn sequential_table(quick: bool) {
    let n = if quick { 3 } else { 7 };
    let mib = if quick { 64 } else { 256 };
    let tmp = tempfile::tempdir_in(".").unwrap();
    let dir = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    let records = write_segment(&dir, 0, 0, mib << 20, 4096 - 28);
    let log = dir.join("00000000000000000000.log");
    bare_read_crc(&log);
    let (shard, _) = Shard::open_read_only(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, Config::default()).unwrap();
    let max_bytes = 1 << 20;
    let mut base = || {
        time(|| {
            black_box(bare_read_crc(&log));
        })
    };
    let mut read = || {
        time(|| {
            let (mut at, mut got) = (0, 0u64);
            loop {
                let batch = shard.read(at, max_bytes).unwrap();
                let Some(last) = batch.last() else { break };
                at = last.offset + 1;
                got += batch.len() as u64;
            }
            assert_eq!(got, records);
        })
    };
    let mut ranges = || {
        time(|| {
            let (mut at, mut got) = (0, 0u64);
            loop {
                let batch = shard.read_ranges(at, max_bytes).unwrap();
                let Some(last) = batch.last() else { break };
                at = last.last_offset + 1;
                got += batch.iter().map(|r| r.records).sum::<u64>();
            }
            assert_eq!(got, records);
        })
    };
    let t = rounds(n, &mut [&mut base, &mut read, &mut ranges]);
    println!(
        "
sequential reads of a {mib} MiB shard of 4 KiB records, 1 MiB per call, vs a bare read()+crc32fast pass (ratio = bare / time; {n} rounds)"
    );
    println!("  bare read+crc32fast                 {}", ms(&t[0]));
    println!("  Shard::read (shared payloads)       {}  ratio {}", ms(&t[1]), spread(&per_round(&t[0], &t[1])));
    println!("  Shard::read_ranges (zero-copy)      {}  ratio {}", ms(&t[2]), spread(&per_round(&t[0], &t[2])));
}

/// `Shard::offset_for_time` on a 256 MiB shard of 256 B records (4 segments
/// of 64 MiB; a clock that steps back 5 ms every 100th record): p50/p99 of
/// 10,000 seeks against (a) a random `read` by offset and (b) a linear scan
/// of `read` for the same time; the open, and the first seek that builds
/// each segment's time index, timed apart.
fn time_table(quick: bool) {
    let (segments, mib) = if quick { (2u64, 16u64) } else { (4, 64) };
    let tmp = tempfile::tempdir_in(".").unwrap();
    let dir = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    let t0 = 1_790_000_000_000_000u64;
    let stamp = |offset: u64| t0 + offset * 10 - if offset % 100 == 99 { 5_000.min(offset * 10) } else { 0 };
    let mut base = 0;
    for id in 0..segments {
        base += write_timed_segment(&dir, id, base, mib << 20, 256, stamp);
    }
    let n = base;
    let t = Instant::now();
    let (shard, _) = Shard::open_read_only(Arc::new(OsIo::new()) as Arc<dyn Io>, &dir, Config::default()).unwrap();
    let open = t.elapsed();
    let t = Instant::now();
    let last = shard.offset_for_time(u64::MAX - 1).unwrap();
    let build = t.elapsed();
    assert_eq!(last, None);
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut seeks = Vec::new();
    let mut reads = Vec::new();
    for _ in 0..10_000 {
        let target = stamp(next() % n);
        let t = Instant::now();
        let at = shard.offset_for_time(target).unwrap().unwrap();
        seeks.push(t.elapsed());
        let t = Instant::now();
        black_box(shard.read(next() % n, 1).unwrap());
        reads.push(t.elapsed());
        black_box(at);
    }
    let linear_n = if quick { 20 } else { 50 };
    let mut linear = Vec::new();
    for _ in 0..linear_n {
        let target = stamp(next() % n);
        let t = Instant::now();
        let mut from = 0;
        let found = 'scan: loop {
            let batch = shard.read(from, 1 << 20).unwrap();
            for r in &batch {
                if r.timestamp_micros >= target {
                    break 'scan r.offset;
                }
            }
            from = batch.last().unwrap().offset + 1;
        };
        linear.push(t.elapsed());
        assert_eq!(Some(found), shard.offset_for_time(target).unwrap());
    }
    for v in [&mut seeks, &mut reads, &mut linear] {
        v.sort_unstable();
    }
    println!(
        "\noffset_for_time on a {} MiB shard of {n} records of 256 B ({segments} segments; the clock steps back every 100th record)",
        segments * mib
    );
    println!("  open (read-only) {open:.2?}; the first seek, building every segment's time index: {build:.2?}");
    println!("  offset_for_time      p50 {:.2?}  p99 {:.2?}  (10,000 random times)", percentile(&seeks, 0.5), percentile(&seeks, 0.99));
    println!("  (a) read by offset   p50 {:.2?}  p99 {:.2?}  (10,000 random offsets)", percentile(&reads, 0.5), percentile(&reads, 0.99));
    println!(
        "  (b) linear scan      p50 {:.2?}  p99 {:.2?}  ({linear_n} random times)",
        percentile(&linear, 0.5),
        percentile(&linear, 0.99)
    );
    println!("  p99 seek / p99 read {:.2}", percentile(&seeks, 0.99).as_secs_f64() / percentile(&reads, 0.99).as_secs_f64().max(1e-9));
}

fn main() {
    let quick = std::env::var_os("FELIX_BENCH_QUICK").is_some();
    if std::env::var("FELIX_BENCH_ONLY").as_deref() == Ok("inspect") {
        inspect_tables(quick);
        return;
    }
    if std::env::var("FELIX_BENCH_ONLY").as_deref() == Ok("sequential") {
        sequential_table(quick);
        return;
    }
    if std::env::var("FELIX_BENCH_ONLY").as_deref() == Ok("diff") {
        diff_table(quick);
        return;
    }
    if std::env::var("FELIX_BENCH_ONLY").as_deref() == Ok("recovery") {
        recovery_table(quick);
        return;
    }
    if std::env::var("FELIX_BENCH_ONLY").as_deref() == Ok("time") {
        time_table(quick);
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
    sequential_table(quick);
    inspect_tables(quick);
    diff_table(quick);
    time_table(quick);
}
