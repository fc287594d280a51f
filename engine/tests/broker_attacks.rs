//! A hostile review (the 33rd) of the broker facade and its group-commit / unwritten-tail
//! write path, attacked by an operator and an attacker. Each test is named for
//! the behaviour it expects.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use felix_engine::broker::{AppendOnlyLog, AppendRecord, BoxFuture, DiskLog, LogConfig, ReadRange};
use felix_engine::io::sim::SimIo;
use felix_engine::{EngineError, Io};

#[path = "support/facade.rs"]
mod facade;
#[path = "support/gated.rs"]
mod gated;
use facade::read_all;
use gated::Gated;

fn sim_dir() -> PathBuf {
    PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798")
}

fn rec(text: &str) -> AppendRecord {
    AppendRecord { payload: Bytes::copy_from_slice(text.as_bytes()), timestamp_micros: 1 }
}

fn sized(tag: u64, len: usize) -> AppendRecord {
    let mut p = format!("{tag:08}-").into_bytes();
    p.resize(len.max(9), b'a' + (tag % 26) as u8);
    AppendRecord { payload: Bytes::from(p), timestamp_micros: 1 }
}

/// Every record of `log` by offset (its payload), read from its base offset.
async fn payloads(log: &DiskLog) -> std::collections::HashMap<u64, Bytes> {
    let mut got = std::collections::HashMap::new();
    let mut at = log.base_offset();
    loop {
        let batch = log.read_range(ReadRange { start: at, max_bytes: 1 << 20 }).await.unwrap();
        let Some(last) = batch.last() else { return got };
        at = last.offset + 1;
        got.extend(batch.into_iter().map(|r| (r.offset, r.payload)));
    }
}

async fn reopen_crashed(sim: &SimIo, config: LogConfig) -> (SimIo, Vec<(u64, String)>) {
    let crashed = sim.crash();
    let copy = Arc::new(crashed.crash());
    let log = DiskLog::open_with_io(Arc::clone(&copy) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    let all = read_all(&log).await;
    log.shutdown().await.unwrap();
    (crashed, all)
}

/// A read of `log` from `start`, spawned and parked in its first segment
/// read (after it took its snapshot) until `io.read_gate` is released.
async fn parked_read(
    log: &DiskLog,
    io: &Arc<Gated>,
    start: u64,
) -> tokio::task::JoinHandle<felix_engine::broker::Result<Vec<felix_engine::broker::LogRecord>>> {
    io.arm_read();
    let reader = {
        let log = log.clone();
        tokio::spawn(async move { log.read_range(ReadRange { start, max_bytes: 1 << 20 }).await })
    };
    let io = Arc::clone(io);
    in_blocking(move || io.read_gate.wait_parked()).await;
    reader
}

async fn in_blocking(f: impl FnOnce() + Send + 'static) {
    tokio::task::spawn_blocking(f).await.unwrap();
}

/// A reader takes its snapshot of the log (which segments, how far), then a
/// truncation cuts the records it was about to read and new records are
/// written at the same offsets — into the file, by the flush leader, whose
/// fdatasync has not returned. Under `OnCommit` a reader must only ever see
/// durable records: the new ones are not, and a power cut now loses them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_racing_a_truncation_and_a_rewrite_never_returns_records_not_yet_durable() {
    let sim = Arc::new(SimIo::new());
    let io = Arc::new(Gated::new(Arc::clone(&sim)));
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    for i in 0..10 {
        log.append(&[rec(&format!("old-{i:02}"))]).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(50)).await; // the leader lets go
    let reader = parked_read(&log, &io, 0).await;
    // The reader holds its snapshot (offsets 0..10). Cut at 5, write 5..10 anew.
    log.truncate(5).await.unwrap();
    sim.hold_syncs();
    let writer = {
        let log = log.clone();
        tokio::spawn(async move {
            let batch: Vec<AppendRecord> = (5..10).map(|i| rec(&format!("new-{i:02}"))).collect();
            log.append(&batch).await
        })
    };
    {
        let sim = Arc::clone(&sim);
        in_blocking(move || sim.wait_for_held_sync()).await;
    }
    // The leader wrote the tail and waits in its fdatasync: nothing new is durable.
    let durable = log.durable_offset();
    io.read_gate.release();
    let seen = reader.await.unwrap().unwrap();
    let (_, after_cut) = reopen_crashed(&sim, LogConfig::default()).await;
    sim.release_syncs();
    writer.await.unwrap().unwrap();
    let not_durable: Vec<(u64, String)> =
        seen.iter().map(|r| (r.offset, String::from_utf8(r.payload.to_vec()).unwrap())).filter(|r| r.1.starts_with("new-")).collect();
    assert!(
        not_durable.is_empty(),
        "a reader saw {not_durable:?}, written after a truncation and not yet durable (durable offset {durable}); \
         a power cut then leaves {after_cut:?}"
    );
}

/// `append_pending` without a commit, dropped: its records wait in the
/// unwritten tail; a power cut loses them (never acknowledged), and every
/// record acknowledged before and after survives, in order, unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_pending_append_then_a_power_cut_loses_nothing_acknowledged() {
    let sim = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    let mut acked = Vec::new();
    for i in 0..5 {
        let r = log.append(&[rec(&format!("a-{i}"))]).await.unwrap();
        acked.push((r.first_offset, format!("a-{i}")));
    }
    let _dropped = log.append_pending(&[rec("dropped-1"), rec("dropped-2")]).await.unwrap(); // never committed
    let (_, crashed) = reopen_crashed(&sim, LogConfig::default()).await;
    assert_eq!(crashed, acked, "before the next commit");
    let r = log.append(&[rec("b-0")]).await.unwrap();
    assert_eq!(r.first_offset, 7, "the dropped batch holds its offsets");
    acked.push((7, "b-0".into()));
    let (_, crashed) = reopen_crashed(&sim, LogConfig::default()).await;
    let got: Vec<(u64, String)> = crashed.into_iter().filter(|(_, p)| !p.starts_with("dropped")).collect();
    assert_eq!(got, acked);
}

/// A minimal executor that is not tokio's (`futures::executor::block_on`'s kind).
fn block_on_without_tokio<F: std::future::Future>(fut: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(Duration::from_millis(10));
    }
}

/// An append driven outside any Tokio runtime (another executor, or a
/// plain `block_on`) can only fail — but a panic there must not wedge the
/// log: the same log, appended to from a Tokio runtime afterwards, must
/// still acknowledge (the flush-in-flight mark must not stay set).
#[test]
fn an_append_polled_outside_a_runtime_does_not_wedge_the_log_for_later_callers() {
    let sim = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // The first segment is made from a runtime: the next append writes inline.
    rt.block_on(log.append(&[rec("first")])).unwrap();
    std::thread::sleep(Duration::from_millis(100)); // its flush leader lets go
    let outside = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| block_on_without_tokio(log.append(&[rec("outside")]))));
    // Whatever it answered (an error, or a panic), the log must go on.
    let _ = outside;
    let later = rt.block_on(async { tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("inside")])).await });
    let acked = later.expect("an append from a Tokio runtime hung: the panicked append left the log wedged");
    acked.unwrap();
}

/// Appends at the unwritten tail's bounds — batches of exactly 32 KiB
/// encoded (deferred) and 32 KiB + 1 (written inline), a tail filled to
/// exactly 256 KiB and one byte past — across rolls of small segments, all
/// written before any commit: every one acknowledged, then readable in
/// order and unchanged after a power cut; segments never overshoot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_at_the_tails_bounds_across_rolls_survive_a_power_cut() {
    const REC: usize = 28;
    for segment in [100 << 10, 300 << 10, 1 << 20] {
        let sim = Arc::new(SimIo::new());
        let config = LogConfig { segment_size_bytes: segment, index_spacing_bytes: 4096, ..LogConfig::default() };
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config.clone()).unwrap();
        // Encoded sizes: header + payload.
        let shapes: Vec<Vec<usize>> = vec![
            vec![(32 << 10) - REC],
            vec![(32 << 10) - REC + 1],
            vec![(16 << 10) - REC, (16 << 10) - REC],
            vec![(16 << 10) - REC, (16 << 10) - REC + 1],
            vec![100, 200, 300],
            vec![(256 << 10) - REC],
            vec![1],
        ];
        let mut expect = Vec::new();
        let mut pendings = Vec::new();
        let mut tag = 0u64;
        for round in 0..3 {
            for (k, shape) in shapes.iter().enumerate() {
                // Eight exact 32 KiB batches fill the tail to exactly 256 KiB.
                let repeat = if k == 0 { 8 } else { 1 };
                for _ in 0..repeat {
                    let batch: Vec<AppendRecord> = shape
                        .iter()
                        .map(|len| {
                            tag += 1;
                            sized(tag, *len)
                        })
                        .collect();
                    let p = log.append_pending(&batch).await.unwrap();
                    for (i, r) in batch.iter().enumerate() {
                        expect.push((p.first_offset() + i as u64, r.payload.clone()));
                    }
                    pendings.push(p);
                }
            }
            let _ = round;
        }
        for p in &pendings {
            log.commit(p).await.unwrap();
        }
        for s in log.segments() {
            assert!(s.size_bytes <= segment || s.last_offset == s.base_offset, "segment overshoots: {s:?} (segment {segment})");
        }
        let crashed = Arc::new(sim.crash());
        let reopened = DiskLog::open_with_io(Arc::clone(&crashed) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
        let mut got = Vec::new();
        let mut at = 0;
        loop {
            let batch = reopened.read_range(ReadRange { start: at, max_bytes: 1 << 20 }).await.unwrap();
            let Some(last) = batch.last() else { break };
            at = last.offset + 1;
            got.extend(batch.into_iter().map(|r| (r.offset, r.payload)));
        }
        assert_eq!(got.len(), expect.len(), "segment {segment}");
        assert!(got == expect, "segment {segment}: acknowledged records differ after a power cut");
    }
}

/// A seal while batches wait in the unwritten tail: the sealed segment's
/// checksum covers them (its file holds every byte it reports), their
/// commit succeeds, and they survive a power cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seal_with_a_tail_pending_writes_it_and_checksums_what_it_reports() {
    let sim = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    log.append(&[rec("first")]).await.unwrap();
    let p = log.append_pending(&[rec("tail-1"), rec("tail-2")]).await.unwrap();
    let sealed = log.seal().await.unwrap();
    assert_eq!(sealed.descriptor.last_offset, 2);
    let path = sim_dir().join(format!("{:020}.log", sealed.descriptor.id));
    let bytes = sim.contents(&path).unwrap();
    assert_eq!(bytes.len() as u64, sealed.descriptor.size_bytes);
    assert_eq!(u64::from(crc32(&bytes)), sealed.checksum);
    log.commit(&p).await.unwrap();
    let (_, got) = reopen_crashed(&sim, LogConfig::default()).await;
    assert_eq!(got.iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), ["first", "tail-1", "tail-2"]);
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for b in bytes {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// The tail's write fails (an injected EIO on the flush leader's write):
/// every waiter gets an error, nothing is acknowledged after it, every later
/// call — reads included — answers `FailStopped`, `shutdown` says so and lets
/// go of the lock, and a reopen after a power cut holds every record
/// acknowledged before, and none of the failed batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_of_the_tail_stops_the_log_and_acknowledges_nothing() {
    let sim = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    for i in 0..3 {
        log.append(&[rec(&format!("ok-{i}"))]).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let pendings: Vec<_> = {
        let mut v = Vec::new();
        for i in 0..16 {
            v.push(log.append_pending(&[rec(&format!("doomed-{i}"))]).await.unwrap());
        }
        v
    };
    sim.fail_at(sim.mutations() + 1); // the tail's write
    let waiters: Vec<_> = pendings
        .into_iter()
        .map(|p| {
            let log = log.clone();
            tokio::spawn(async move { tokio::time::timeout(Duration::from_secs(10), log.commit(&p)).await })
        })
        .collect();
    let mut first = None;
    for w in waiters {
        let r = w.await.unwrap().expect("a waiter hung after a failed tail write");
        let e = r.expect_err("acknowledged after a failed write");
        first.get_or_insert(e);
    }
    let first = first.unwrap();
    assert!(matches!(&first, EngineError::Io { op: "write", .. } | EngineError::FailStopped { .. }), "the first failure: {first:?}");
    assert!(matches!(log.append(&[rec("after")]).await, Err(EngineError::FailStopped { .. })));
    assert!(matches!(log.read_range(ReadRange { start: 0, max_bytes: 100 }).await, Err(EngineError::FailStopped { .. })));
    assert!(matches!(log.sync().await, Err(EngineError::FailStopped { .. })));
    assert!(matches!(log.shutdown().await, Err(EngineError::FailStopped { .. })));
    sim.clear_faults();
    let (_, got) = reopen_crashed(&sim, LogConfig::default()).await;
    assert_eq!(got.iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), ["ok-0", "ok-1", "ok-2"]);
    // And the live directory reopens at once (the lock was let go).
    let again = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    let live = read_all(&again).await;
    assert!(live.iter().take(3).map(|(_, p)| p.as_str()).eq(["ok-0", "ok-1", "ok-2"]), "{live:?}");
    again.append(&[rec("reopened")]).await.unwrap();
}

/// While a seal's roll waits in its fdatasync (on the blocking pool, under
/// the shard's lock), a publisher on a current-thread runtime must not stall
/// the runtime: an append under a 100 ms timeout answers `Elapsed` in about
/// 100 ms, not once the fsync returns ("no reactor thread ever waits for an
/// fsync", docs/broker.md).
#[test]
fn an_append_during_a_rolls_fsync_does_not_stall_a_current_thread_runtime() {
    during_a_held_roll("an append", |log| Box::pin(async move { log.append(&[rec("second")]).await.map(drop) }));
}

/// The same for `tail_offset`, the trait's other method that runs inline.
#[test]
fn a_tail_offset_during_a_rolls_fsync_does_not_stall_a_current_thread_runtime() {
    during_a_held_roll("tail_offset", |log| Box::pin(async move { log.tail_offset().await.map(drop) }));
}

/// And for the synchronous offsets a broker reads on its runtime's threads:
/// they never wait for the shard's lock.
#[test]
fn the_offset_accessors_during_a_rolls_fsync_do_not_stall_a_current_thread_runtime() {
    during_a_held_roll("durable_offset and base_offset", |log| {
        Box::pin(async move {
            assert_eq!((log.durable_offset(), log.base_offset()), (1, 0));
            Ok(())
        })
    });
}

/// And for the segment list, the unsynced bytes and the generation history
/// (a broker's admin and replication paths ask for them on its runtime's
/// threads): they never wait for the shard's lock either.
#[test]
fn the_segment_list_unsynced_bytes_and_generations_during_a_rolls_fsync_do_not_stall_a_current_thread_runtime() {
    during_a_held_roll("segments, unsynced_bytes and generations", |log| {
        Box::pin(async move {
            let segments = log.segments();
            assert_eq!(segments.iter().map(|s| (s.base_offset, s.last_offset)).collect::<Vec<_>>(), [(0, 0)]);
            assert_eq!(log.unsynced_bytes(), 0);
            assert_eq!(AppendOnlyLog::generations(&log), []);
            assert_eq!(AppendOnlyLog::generation_end(&log, 1, 1), None);
            Ok(())
        })
    });
}

/// Runs `call` under a 100 ms timeout on a current-thread runtime while a
/// seal's roll holds the shard's lock through a held fsync (released after
/// 3 s); fails when the runtime's only thread was held past a second.
fn during_a_held_roll(what: &str, call: impl FnOnce(DiskLog) -> BoxFuture<'static, Result<(), EngineError>>) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let sim = Arc::new(SimIo::new());
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
        log.append(&[rec("first")]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        sim.hold_syncs();
        let seal = {
            let log = log.clone();
            tokio::spawn(async move { log.seal().await })
        };
        {
            let sim = Arc::clone(&sim);
            in_blocking(move || sim.wait_for_held_sync()).await;
        }
        let releaser = {
            let sim = Arc::clone(&sim);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(3));
                sim.release_syncs();
            })
        };
        let started = std::time::Instant::now();
        let r = tokio::time::timeout(Duration::from_millis(100), call(log.clone())).await;
        let took = started.elapsed();
        releaser.join().unwrap();
        seal.await.unwrap().unwrap();
        // The hold is 3 s: 2 s leaves a 100 ms call room on a busy machine.
        assert!(
            took < Duration::from_secs(2),
            "the runtime's only thread was held {took:?} (an fsync of another task's roll) by {what} under a 100 ms timeout: {r:?}"
        );
    });
}

/// `LogProvider::open` is async: with `wait_for_lock` and the shard's lock
/// held by another writer it must wait as a task — a timeout around it ends
/// it — not block the runtime's thread until the other writer lets go.
#[test]
fn a_provider_open_waiting_for_the_writers_lock_does_not_stall_a_current_thread_runtime() {
    use felix_engine::broker::{DiskLogProvider, LogProvider, ShardKey};
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let sim = Arc::new(SimIo::new());
        let key = ShardKey { tenant: "acme".into(), namespace: "default".into(), stream: "orders".into(), shard: 0 };
        let config = LogConfig { wait_for_lock: true, ..LogConfig::default() };
        let first = DiskLogProvider::with_io(Arc::clone(&sim) as Arc<dyn Io>, "/sim/root", config.clone()).unwrap();
        let holder = first.open(&key).await.unwrap();
        let second = DiskLogProvider::with_io(Arc::clone(&sim) as Arc<dyn Io>, "/sim/root", config).unwrap();
        // Lets go after 3 s (from another thread: the runtime's may be stuck).
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(3));
            drop(holder);
            drop(first);
        });
        let started = std::time::Instant::now();
        let r = tokio::time::timeout(Duration::from_millis(100), second.open(&key)).await;
        let took = started.elapsed();
        releaser.join().unwrap();
        assert!(r.is_err() && took < Duration::from_secs(2), "open answered {:?} after {took:?}", r.map(|l| l.map(|_| ())));
    });
}

/// A hundred publishers on a current-thread runtime, each under a 1 ms
/// timeout, while the flush is slow (held): they time out; nothing strands
/// the log — the next append is acknowledged — and every acknowledged
/// record survives a power cut.
#[test]
fn a_hundred_appends_timing_out_on_a_current_thread_runtime_strand_nothing() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let sim = Arc::new(SimIo::new());
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
        // The first append creates the first segment (a roll, on the blocking
        // pool): made before any sync is held, so no append below rolls.
        let first = log.append(&[rec("first")]).await.unwrap();
        let mut acked = vec![(first.first_offset, "first".to_string())];
        for round in 0..5 {
            if round % 2 == 0 {
                sim.hold_syncs();
            }
            let tasks: Vec<_> = (0..100)
                .map(|t| {
                    let log = log.clone();
                    tokio::spawn(async move {
                        let text = format!("r{round}-t{t}");
                        match tokio::time::timeout(Duration::from_millis(1), log.append(&[rec(&text)])).await {
                            Ok(Ok(r)) => Some((r.first_offset, text)),
                            Ok(Err(e)) => panic!("{e}"),
                            Err(_) => None,
                        }
                    })
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(20)).await;
            sim.release_syncs();
            for t in tasks {
                acked.extend(t.await.unwrap());
            }
            let r = tokio::time::timeout(Duration::from_secs(10), log.append(&[rec(&format!("after-{round}"))]))
                .await
                .expect("the log was stranded by cancelled appends")
                .unwrap();
            acked.push((r.first_offset, format!("after-{round}")));
        }
        let (_, got) = reopen_crashed(&sim, LogConfig::default()).await;
        let got: std::collections::HashMap<u64, String> = got.into_iter().collect();
        for (offset, text) in &acked {
            assert_eq!(got.get(offset), Some(text), "acknowledged record lost at {offset}");
        }
        assert_eq!(got.len(), 5 * 101 + 1, "every written record is there once (offsets contiguous)");
    });
}

/// `shutdown` while 64 publishers append (some through rolls): nobody hangs,
/// every later call on any clone answers `Closed`, the directory reopens at
/// once, and every acknowledged record is there, in order, unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_among_64_publishers_strands_none_and_loses_nothing_acknowledged() {
    for seed in 0..4u64 {
        let sim = Arc::new(SimIo::new());
        let config = LogConfig { segment_size_bytes: 4096 << seed, ..LogConfig::default() };
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config.clone()).unwrap();
        let tasks: Vec<_> = (0..64u64)
            .map(|t| {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut acked = Vec::new();
                    for i in 0..1000u64 {
                        let rec = sized(t * 10_000 + i, 20 + ((t * 7 + i * 13) % 300) as usize);
                        match log.append(std::slice::from_ref(&rec)).await {
                            Ok(r) => acked.push((r.first_offset, rec.payload)),
                            Err(EngineError::Closed { .. }) => break,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    acked
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(5 + seed * 7)).await;
        log.shutdown().await.unwrap();
        let again = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config.clone()).unwrap();
        let mut acked = Vec::new();
        for t in tasks {
            acked.extend(tokio::time::timeout(Duration::from_secs(30), t).await.expect("a publisher hung").unwrap());
        }
        assert!(matches!(log.append(&[rec("late")]).await, Err(EngineError::Closed { .. })));
        assert!(matches!(log.read_range(ReadRange { start: 0, max_bytes: 10 }).await, Err(EngineError::Closed { .. })));
        let got = payloads(&again).await;
        for (offset, payload) in &acked {
            assert_eq!(got.get(offset), Some(payload), "seed {seed}: acknowledged record lost at {offset}");
        }
        again.shutdown().await.unwrap();
        let (_, crashed) = reopen_crashed(&sim, config).await;
        assert_eq!(crashed.len(), got.len(), "seed {seed}: a clean shutdown left everything durable");
    }
}

/// Readers racing publishers under `OnCommit` never see a record that is
/// not yet durable: every record a read returns is below the durable
/// offset sampled after the read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reads_only_ever_return_durable_records() {
    let sim = Arc::new(SimIo::new());
    let config = LogConfig { segment_size_bytes: 64 << 10, ..LogConfig::default() };
    let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..16u64)
        .map(|t| {
            let log = log.clone();
            tokio::spawn(async move {
                for i in 0..300u64 {
                    let n = 1 + (i % 3) as usize;
                    let batch: Vec<AppendRecord> =
                        (0..n).map(|k| sized(t * 100_000 + i * 10 + k as u64, 50 + (i as usize * 97) % 2000)).collect();
                    log.append(&batch).await.unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let log = log.clone();
        let stop = Arc::clone(&stop);
        tokio::spawn(async move {
            let mut reads = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let from = log.durable_offset().saturating_sub(5);
                let got = log.read_range(ReadRange { start: from, max_bytes: 1 << 20 }).await.unwrap();
                let durable = log.durable_offset();
                if let Some(last) = got.last() {
                    assert!(last.offset < durable, "read offset {} while durable offset is {durable}", last.offset);
                }
                reads += 1;
                tokio::task::yield_now().await;
            }
            reads
        })
    };
    for w in writers {
        w.await.unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    assert!(reader.await.unwrap() > 0);
}

/// A truncation to an offset inside the unwritten tail while the flush
/// leader's fdatasync is in flight: the batches below the cut are
/// acknowledged and survive a power cut, those at or past it answer
/// `TruncatedAway`, nobody hangs, and the log goes on at the cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncation_inside_the_tail_during_a_flush_acknowledges_only_what_it_kept() {
    let sim = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    for i in 0..10 {
        log.append(&[rec(&format!("a-{i:02}"))]).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    sim.hold_syncs();
    let in_flight = log.append_pending(&[rec("b-10"), rec("b-11")]).await.unwrap();
    let leader = {
        let log = log.clone();
        tokio::spawn(async move { log.commit(&in_flight).await })
    };
    {
        let sim = Arc::clone(&sim);
        in_blocking(move || sim.wait_for_held_sync()).await;
    }
    // Into the tail while the leader's fdatasync is held: 12..20.
    let mut waiters = Vec::new();
    for i in 12..20 {
        let p = log.append_pending(&[rec(&format!("c-{i:02}"))]).await.unwrap();
        let log = log.clone();
        waiters.push((i, tokio::spawn(async move { tokio::time::timeout(Duration::from_secs(20), log.commit(&p)).await })));
    }
    let truncate = {
        let log = log.clone();
        tokio::spawn(async move { log.truncate(15).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    sim.release_syncs();
    truncate.await.unwrap().unwrap();
    leader.await.unwrap().unwrap();
    for (i, w) in waiters {
        let r = w.await.unwrap().expect("a waiter hung");
        if i < 15 {
            r.unwrap_or_else(|e| panic!("offset {i} kept by the cut: {e}"));
        } else {
            assert!(matches!(r, Err(EngineError::TruncatedAway { .. })), "offset {i}: {r:?}");
        }
    }
    let r = log.append(&[rec("d-15")]).await.unwrap();
    assert_eq!(r.first_offset, 15);
    let (_, got) = reopen_crashed(&sim, LogConfig::default()).await;
    let texts: Vec<&str> = got.iter().map(|(_, p)| p.as_str()).collect();
    let mut want: Vec<String> = (0..10).map(|i| format!("a-{i:02}")).collect();
    want.extend(["b-10".into(), "b-11".into()]);
    want.extend((12..15).map(|i| format!("c-{i:02}")));
    want.push("d-15".into());
    assert_eq!(texts, want);
}

/// A reader holding its snapshot while a retention pass deletes the oldest
/// segment it was about to read: it answers with the records (it began
/// before the pass) or `Trimmed` — never an IO error naming a file a
/// healthy log removed on purpose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_racing_retention_answers_records_or_trimmed_never_an_io_error() {
    let sim = Arc::new(SimIo::new());
    let io = Arc::new(Gated::new(Arc::clone(&sim)));
    let config = LogConfig { segment_size_bytes: 200, index_spacing_bytes: 64, retention_bytes: Some(400), ..LogConfig::default() };
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    for i in 0..20 {
        log.append(&[rec(&format!("r-{i:02}"))]).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let reader = parked_read(&log, &io, 0).await;
    let pass = log.enforce_retention_now().await.unwrap();
    assert!(pass.segments_deleted > 0 && pass.base_offset > 0, "{pass:?}");
    io.read_gate.release();
    match reader.await.unwrap() {
        Ok(records) => assert_eq!(records.first().map(|r| r.offset), Some(0)),
        Err(EngineError::Trimmed { requested: 0, .. }) => {}
        Err(e) => panic!("a read racing a retention pass on a healthy log answered: {e}"),
    }
}

/// Everything at once on one log, seeded: publishers (inline, through rolls
/// of small segments, some under short timeouts), a truncator, a sealer, a
/// retention pass and readers. The log never stops (no `FailStopped`, no
/// IO error), nobody hangs, and the log reads back with contiguous offsets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_truncations_seals_retention_and_reads_at_once_never_stop_the_log() {
    for seed in 0..3u64 {
        let sim = Arc::new(SimIo::new());
        let config =
            LogConfig { segment_size_bytes: 8 << 10, index_spacing_bytes: 512, retention_bytes: Some(64 << 10), ..LogConfig::default() };
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config.clone()).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for t in 0..12u64 {
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                let mut x = seed * 1000 + t + 1;
                for i in 0..400u64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let n = 1 + (x % 4) as usize;
                    let batch: Vec<AppendRecord> =
                        (0..n).map(|k| sized(t * 1_000_000 + i * 10 + k as u64, (x >> 8) as usize % 3000)).collect();
                    let r = if x % 5 == 0 {
                        match tokio::time::timeout(Duration::from_micros(200), log.append(&batch)).await {
                            Ok(r) => r,
                            Err(_) => continue,
                        }
                    } else {
                        log.append(&batch).await
                    };
                    match r {
                        Ok(_) | Err(EngineError::TruncatedAway { .. }) => {}
                        Err(e) => return Err(format!("publisher {t}: {e}")),
                    }
                }
                Ok(())
            }));
        }
        let side = |what: u64| {
            let log = log.clone();
            let stop = Arc::clone(&stop);
            tokio::spawn(async move {
                let mut k = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    k += 1;
                    let r = match what {
                        0 => {
                            let tail = log.tail_offset().await.unwrap();
                            log.truncate(tail.saturating_sub(1 + k % 7)).await
                        }
                        1 => log.seal().await.map(drop),
                        2 => log.enforce_retention_now().await.map(drop),
                        _ => {
                            let from = log.base_offset();
                            match log.read_range(ReadRange { start: from, max_bytes: 64 << 10 }).await {
                                // Racing a cut or a retention pass, a read runs again
                                // (`Shard::consistently`): records, or `Trimmed` when
                                // retention took `from` meanwhile — never an IO error.
                                Ok(_) | Err(EngineError::Trimmed { .. }) => Ok(()),
                                Err(e) => Err(e),
                            }
                        }
                    };
                    if let Err(e) = r {
                        if matches!(e, EngineError::Trimmed { .. }) && what == 0 {
                            continue;
                        }
                        return Err(format!("side task {what}: {e}"));
                    }
                    tokio::time::sleep(Duration::from_micros(300 + what * 100)).await;
                }
                Ok(())
            })
        };
        let sides: Vec<_> = (0..4).map(side).collect();
        let mut failures = Vec::new();
        for t in tasks {
            if let Err(e) = tokio::time::timeout(Duration::from_secs(60), t).await.expect("a publisher hung").unwrap() {
                failures.push(e);
            }
        }
        stop.store(true, Ordering::SeqCst);
        for s in sides {
            if let Err(e) = tokio::time::timeout(Duration::from_secs(60), s).await.expect("a side task hung").unwrap() {
                failures.push(e);
            }
        }
        assert!(failures.is_empty(), "seed {seed}: {failures:?}");
        // An append cancelled by its timeout after its write leaves records
        // written and not yet synced (readers see only durable records)
        // until the next flush: the last one may have had none after it.
        log.sync().await.unwrap();
        let mut at = log.base_offset();
        let tail = log.tail_offset().await.unwrap();
        while at < tail {
            let got = log.read_range(ReadRange { start: at, max_bytes: 1 << 20 }).await.unwrap();
            for r in &got {
                assert_eq!(r.offset, at, "seed {seed}: offsets not contiguous");
                at += 1;
            }
            assert!(!got.is_empty(), "seed {seed}: nothing readable at {at} below the tail {tail}");
        }
        log.shutdown().await.unwrap();
    }
}

/// A log the provider handed out is shut down on its own (a broker closing
/// one shard, say on a reassignment): opening that shard again through the
/// same provider must give a working log, not the closed one answering
/// `Closed` for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_reopens_a_shard_whose_log_was_shut_down() {
    use felix_engine::broker::{DiskLogProvider, LogProvider, ShardKey};
    let sim = Arc::new(SimIo::new());
    let key = ShardKey { tenant: "acme".into(), namespace: "default".into(), stream: "orders".into(), shard: 0 };
    let provider = DiskLogProvider::with_io(Arc::clone(&sim) as Arc<dyn Io>, "/sim/root", LogConfig::default()).unwrap();
    let log = provider.open(&key).await.unwrap();
    log.append(&[rec("before")]).await.unwrap();
    log.shutdown().await.unwrap();
    let again = provider.open(&key).await.unwrap();
    let r = again.append(&[rec("after")]).await;
    assert!(r.is_ok(), "the provider handed out the closed log again: {r:?}");
}

/// Inside a `LocalSet` on a current-thread runtime: 64 local publishers,
/// every third under a 1 ms timeout, through rolls; nobody hangs, the log
/// goes on, and every acknowledged record survives a power cut.
#[test]
fn local_publishers_under_timeouts_in_a_local_set_strand_nothing() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let sim = Arc::new(SimIo::new());
        let config = LogConfig { segment_size_bytes: 16 << 10, ..LogConfig::default() };
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config.clone()).unwrap();
        let tasks: Vec<_> = (0..64u64)
            .map(|t| {
                let log = log.clone();
                tokio::task::spawn_local(async move {
                    let mut acked = Vec::new();
                    for i in 0..50u64 {
                        let r = sized(t * 1000 + i, 100 + (t as usize * 31 + i as usize * 7) % 900);
                        let got = if t % 3 == 0 {
                            match tokio::time::timeout(Duration::from_millis(1), log.append(std::slice::from_ref(&r))).await {
                                Ok(x) => x,
                                Err(_) => continue,
                            }
                        } else {
                            log.append(std::slice::from_ref(&r)).await
                        };
                        acked.push((got.unwrap().first_offset, r.payload));
                    }
                    acked
                })
            })
            .collect();
        let mut acked = Vec::new();
        for t in tasks {
            acked.extend(tokio::time::timeout(Duration::from_secs(30), t).await.expect("a local publisher hung").unwrap());
        }
        tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("last")])).await.expect("stranded").unwrap();
        assert_survive_a_crash(&sim, config, &acked, "local publishers").await;
    });
}

/// A reader whose snapshot reaches records a truncation then cuts (nothing
/// written after): it answers the records it began to read, or nothing —
/// never an IO or corruption error on a healthy log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_racing_a_truncation_answers_records_or_nothing_never_an_error() {
    let sim = Arc::new(SimIo::new());
    let io = Arc::new(Gated::new(Arc::clone(&sim)));
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    for i in 0..10 {
        log.append(&[rec(&format!("old-{i:02}"))]).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let reader = parked_read(&log, &io, 5).await;
    log.truncate(5).await.unwrap();
    io.read_gate.release();
    match reader.await.unwrap() {
        Ok(records) => assert!(records.iter().all(|r| r.payload.starts_with(b"old-")), "{records:?}"),
        Err(e) => panic!("a read racing a truncation on a healthy log answered: {e}"),
    }
}

/// Settings at their extremes and inputs at the edges get answers, never a
/// panic: huge segment size, spacing, read limit, intervals and ages; reads
/// of any size from anywhere; truncation at the ends; empty and oversized
/// batches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extreme_settings_and_edge_inputs_answer_without_panicking() {
    let configs = [
        LogConfig { segment_size_bytes: u64::MAX, ..LogConfig::default() },
        LogConfig { segment_size_bytes: 60, ..LogConfig::default() },
        LogConfig { index_spacing_bytes: u64::MAX, max_records_per_read: usize::MAX, ..LogConfig::default() },
        LogConfig {
            retention_bytes: Some(u64::MAX),
            retention_age: Some(Duration::MAX),
            retention_check_interval: Duration::MAX,
            ..LogConfig::default()
        },
        LogConfig { fsync_mode: felix_engine::broker::FsyncMode::Periodic { interval: Duration::MAX }, ..LogConfig::default() },
        LogConfig { retention_bytes: Some(1), retention_check_interval: Duration::from_nanos(1), ..LogConfig::default() },
    ];
    for (n, config) in configs.into_iter().enumerate() {
        let sim = Arc::new(SimIo::new());
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
        for i in 0..5 {
            log.append(&[rec(&format!("x-{i}")), sized(i, 100)]).await.unwrap_or_else(|e| panic!("config {n}: {e}"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        let base = log.base_offset();
        for (start, max_bytes) in [(base, 0), (base, usize::MAX), (u64::MAX, 1), (base + 3, 1)] {
            let _ = log.read_range(ReadRange { start, max_bytes }).await;
        }
        assert!(matches!(log.append(&[]).await, Err(EngineError::InvalidRange)));
        let huge = AppendRecord { payload: Bytes::from(vec![0u8; 64 * 1024 * 1024 + 1]), timestamp_micros: 1 };
        assert!(matches!(log.append(&[huge]).await, Err(EngineError::TooLarge { .. })), "config {n}");
        log.truncate(u64::MAX).await.unwrap();
        let _ = log.offset_for_time(u64::MAX).await;
        let _ = log.offset_for_time(0).await;
        log.seal().await.unwrap();
        log.seal().await.unwrap();
        let _ = log.record_generation(u64::MAX, u64::MAX);
        let _ = log.generation_end(u64::MAX, u64::MAX);
        log.truncate(0).await.unwrap();
        log.append(&[rec("after")]).await.unwrap_or_else(|e| panic!("config {n}: {e}"));
        log.shutdown().await.unwrap();
    }
}

/// The workload of the sweep below: batches waiting together in the
/// unwritten tail and committed at once, a seal with a tail pending, a
/// batch over 32 KiB written inline behind a tail, rolls of small segments,
/// a truncation into the tail. Returns what was acknowledged (a truncation
/// that returned takes the records it cut out; one that failed takes every
/// record at or past its cut, which it may or may not have removed).
async fn tail_workload(log: &DiskLog) -> Vec<(u64, Bytes)> {
    let mut acked: Vec<(u64, Bytes)> = Vec::new();
    let mut tag = 0u64;
    let mut next = |len: usize| {
        tag += 1;
        sized(tag, len)
    };
    for step in 0..4u64 {
        let mut pendings = Vec::new();
        for k in 0..5u64 {
            let batch: Vec<AppendRecord> =
                (0..1 + (k + step) % 3).map(|j| next(40 + ((k * 7 + j * 13 + step) % 5) as usize * 300)).collect();
            match log.append_pending(&batch).await {
                Ok(p) => pendings.push((p, batch)),
                Err(_) => return acked,
            }
        }
        if step == 1 && log.seal().await.is_err() {
            return acked;
        }
        if step == 2 {
            let big = vec![next(40 << 10), next(100)];
            match log.append_pending(&big).await {
                Ok(p) => pendings.push((p, big)),
                Err(_) => return acked,
            }
        }
        let commits = futures_join(log, &pendings).await;
        for ((p, batch), ok) in pendings.iter().zip(commits) {
            if ok {
                acked.extend(batch.iter().enumerate().map(|(i, r)| (p.first_offset() + i as u64, r.payload.clone())));
            }
        }
        if step == 3 {
            let p = match log.append_pending(&[next(10), next(20), next(30)]).await {
                Ok(p) => p,
                Err(_) => return acked,
            };
            let cut = p.first_offset() + 1;
            let r = log.truncate(cut).await;
            acked.retain(|(o, _)| *o < cut);
            if r.is_err() {
                return acked;
            }
            let _ = log.commit(&p).await;
            let last = next(5);
            match log.append(std::slice::from_ref(&last)).await {
                Ok(r) => acked.push((r.first_offset, last.payload)),
                Err(_) => return acked,
            }
        }
    }
    acked
}

/// Commits every pending batch at once (each in its own task); whether each was acknowledged.
async fn futures_join(log: &DiskLog, pendings: &[(felix_engine::broker::PendingAppend, Vec<AppendRecord>)]) -> Vec<bool> {
    let tasks: Vec<_> = pendings
        .iter()
        .map(|(p, _)| {
            let (log, p) = (log.clone(), p.clone());
            tokio::spawn(async move { tokio::time::timeout(Duration::from_secs(20), log.commit(&p)).await.expect("a commit hung").is_ok() })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// After a power cut of `sim`, the log reopened with `config` holds every
/// acknowledged record, unchanged.
async fn assert_survive_a_crash(sim: &SimIo, config: LogConfig, acked: &[(u64, Bytes)], label: &str) {
    let crashed = Arc::new(sim.crash());
    let reopened = DiskLog::open_with_io(crashed as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    let got = payloads(&reopened).await;
    for (offset, payload) in acked {
        assert_eq!(got.get(offset), Some(payload), "{label}: acknowledged record lost at {offset}");
    }
}

async fn check_tail(io: &SimIo, config: &LogConfig, acked: &[(u64, Bytes)], label: &str) {
    let rebooted = Arc::new(io.crash());
    let log = DiskLog::open_with_io(rebooted as Arc<dyn Io>, sim_dir(), "x", config.clone())
        .unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
    let got = payloads(&log).await;
    for (o, p) in acked {
        let have = got.get(o).unwrap_or_else(|| panic!("{label}: acknowledged record {o} lost"));
        assert!(have.starts_with(&p[..9]) && (p.len() == 9 || have == p), "{label}: record {o} changed");
    }
}

/// A fault at every IO call, and a crash after every sync, of a workload
/// that keeps the unwritten tail busy (see `tail_workload`): every
/// acknowledged record survives, unchanged, and no commit hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_every_io_call_of_a_busy_tail_loses_nothing_acknowledged() {
    let config = LogConfig { segment_size_bytes: 6 << 10, index_spacing_bytes: 256, ..LogConfig::default() };
    let probe = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&probe) as Arc<dyn Io>, sim_dir(), "x", config.clone()).unwrap();
    let full = tail_workload(&log).await;
    assert!(full.len() > 40, "{}", full.len());
    let (calls, syncs) = (probe.mutations(), probe.syncs());
    assert!(calls > 100 && syncs > 20, "{calls} calls, {syncs} syncs");
    drop(log);
    for n in 1..=calls + 1 {
        let io = Arc::new(SimIo::new());
        io.fail_at(n);
        let acked = match DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config.clone()) {
            Ok(log) => tail_workload(&log).await,
            Err(_) => Vec::new(),
        };
        io.clear_faults();
        check_tail(&io, &config, &acked, &format!("failure at IO call {n} of {calls}")).await;
    }
    for k in 1..=syncs {
        let io = Arc::new(SimIo::new());
        io.crash_after_sync(k);
        let acked = match DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config.clone()) {
            Ok(log) => tail_workload(&log).await,
            Err(_) => Vec::new(),
        };
        check_tail(&io, &config, &acked, &format!("crash after sync {k} of {syncs}")).await;
    }
}

/// 64 publishers on a multi-thread runtime, each append under a timeout
/// drawn from 0–300 µs or aborted outright, while another thread stalls
/// and releases the disk's syncs at random: no append is stranded (the
/// last one of each publisher, with no timeout, is acknowledged), offsets
/// are never handed out twice, and every acknowledged record survives a
/// power cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_cancelled_at_random_points_strand_no_one_and_lose_nothing() {
    for seed in 1..=3u64 {
        let sim = Arc::new(SimIo::new());
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
        log.append(&[rec("first")]).await.unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let staller = {
            let (sim, stop) = (Arc::clone(&sim), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut x = seed;
                while !stop.load(Ordering::SeqCst) {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    sim.hold_syncs();
                    std::thread::sleep(Duration::from_micros(x >> 54));
                    sim.release_syncs();
                    std::thread::sleep(Duration::from_micros((x >> 20) % 500));
                }
                sim.release_syncs();
            })
        };
        let tasks: Vec<_> = (0..64u64)
            .map(|t| {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut x = seed * 7919 + t;
                    let mut acked = Vec::new();
                    for i in 0..60u64 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let r = sized(t * 1000 + i, 50);
                        if x % 4 == 0 {
                            let inner = {
                                let log = log.clone();
                                let r = r.clone();
                                tokio::spawn(async move { log.append(&[r]).await })
                            };
                            tokio::time::sleep(Duration::from_micros(x % 200)).await;
                            inner.abort();
                            if let Ok(Ok(res)) = inner.await {
                                acked.push((res.first_offset, r.payload));
                            }
                            continue;
                        }
                        if let Ok(res) = tokio::time::timeout(Duration::from_micros(x % 300), log.append(std::slice::from_ref(&r))).await {
                            acked.push((res.unwrap().first_offset, r.payload));
                        }
                    }
                    let last = sized(t * 1000 + 999, 50);
                    let res = tokio::time::timeout(Duration::from_secs(20), log.append(std::slice::from_ref(&last)))
                        .await
                        .expect("an append was stranded after cancelled ones")
                        .unwrap();
                    acked.push((res.first_offset, last.payload));
                    acked
                })
            })
            .collect();
        let mut acked = Vec::new();
        for t in tasks {
            acked.extend(tokio::time::timeout(Duration::from_secs(60), t).await.expect("a publisher hung").unwrap());
        }
        stop.store(true, Ordering::SeqCst);
        staller.join().unwrap();
        let mut offsets: Vec<u64> = acked.iter().map(|(o, _)| *o).collect();
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!(offsets.len(), acked.len(), "seed {seed}: an offset acknowledged twice");
        assert_survive_a_crash(&sim, LogConfig::default(), &acked, &format!("seed {seed}")).await;
    }
}

/// A batch written with `append_pending` and committed later, after more
/// than 64 truncations that each cut only records written after it: the
/// batch was never cut (it is durable and readable), so its commit must
/// succeed — not answer `TruncatedAway` with a cut past its own offsets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_after_many_truncations_above_it_is_not_reported_truncated() {
    let sim = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    for i in 0..10 {
        log.append(&[rec(&format!("a-{i}"))]).await.unwrap();
    }
    let kept = log.append_pending(&[rec("kept-10")]).await.unwrap();
    for i in 0..65 {
        let r = log.append(&[rec(&format!("cut-{i}"))]).await.unwrap();
        assert_eq!(r.first_offset, 11);
        log.truncate(11).await.unwrap();
    }
    let all = read_all(&log).await;
    assert_eq!(all.last(), Some(&(10, "kept-10".to_string())), "the batch is there, never cut");
    let r = log.commit(&kept).await;
    assert!(r.is_ok(), "commit of a batch no truncation touched answered {r:?}");
}

/// A task that ends a log with `shutdown` (the documented way: the last
/// flush and the lock's release run on the blocking pool) and then drops it
/// does not hold the runtime's thread while the disk is slow: a timer due in
/// 100 ms fires in about 100 ms. (A bare drop of the last clone flushes on
/// the dropping thread, as `Shard`'s drop does — `docs/broker.md`,
/// "Shutting down"; a drop handed to another thread would release the
/// shard's lock after the drop returns, and a reopen right after it would
/// find the lock taken.)
#[test]
fn a_task_that_shuts_a_log_down_then_drops_it_does_not_fsync_on_the_runtimes_thread() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let sim = Arc::new(SimIo::new());
        let config = LogConfig {
            fsync_mode: felix_engine::broker::FsyncMode::Periodic { interval: Duration::from_secs(3600) },
            ..LogConfig::default()
        };
        let log = DiskLog::open_with_io(Arc::clone(&sim) as Arc<dyn Io>, sim_dir(), "x", config.clone()).unwrap();
        log.append(&[rec("first")]).await.unwrap();
        log.sync().await.unwrap();
        log.append(&[rec("unsynced")]).await.unwrap();
        sim.hold_syncs();
        let releaser = {
            let sim = Arc::clone(&sim);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(3));
                sim.release_syncs();
            })
        };
        let started = std::time::Instant::now();
        let timer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            started.elapsed()
        });
        let closer = tokio::spawn(async move {
            let closed = log.shutdown().await;
            drop(log);
            closed
        });
        let fired = timer.await.unwrap();
        closer.await.unwrap().unwrap();
        releaser.join().unwrap();
        assert!(fired < Duration::from_secs(2), "a 100 ms timer fired after {fired:?}: the shutdown's fsync held the runtime's thread");
        // The last flush covered the unsynced record: a power cut keeps it.
        let (_, all) = reopen_crashed(&sim, config).await;
        assert_eq!(all.iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), ["first", "unsynced"]);
    });
}
