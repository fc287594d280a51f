//! The broker facade (`felix_engine::broker`), tested like the engine under
//! it: the upstream surface and its semantics, the three fsync policies, a
//! fault at every IO call and a crash at every sync through the async path,
//! and one writer per shard across providers.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use felix_engine::broker::{AppendOnlyLog, AppendRecord, DiskLog, DiskLogProvider, FsyncMode, LogConfig, LogProvider, ReadRange, ShardKey};
use felix_engine::io::sim::SimIo;
use felix_engine::{EngineError, Io};

fn key(n: u32) -> ShardKey {
    ShardKey { tenant: "acme".into(), namespace: "default".into(), stream: "orders".into(), shard: n }
}

fn rec(text: &str, ts: u64) -> AppendRecord {
    AppendRecord { payload: Bytes::copy_from_slice(text.as_bytes()), timestamp_micros: ts }
}

fn small(mode: FsyncMode) -> LogConfig {
    LogConfig { segment_size_bytes: 200, index_spacing_bytes: 64, fsync_mode: mode, ..LogConfig::default() }
}

#[path = "support/facade.rs"]
mod facade;
use facade::read_all;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_surface_with_its_semantics() {
    let tmp = tempfile::tempdir().unwrap();
    let provider = DiskLogProvider::new(tmp.path(), small(FsyncMode::OnCommit)).unwrap();
    let log = provider.open(&key(0)).await.unwrap();
    assert_eq!(log.label(), "acme/default/orders/0");
    assert!(tmp.path().join("acme_default_orders_0-0d3aed4b998d2798").is_dir(), "the broker's directory name");
    let r = log.append(&[rec("a", 11), rec("b", 12)]).await.unwrap();
    assert_eq!((r.first_offset, r.last_offset), (0, 1));
    // Two-phase: offsets are assigned at write time, durability at commit.
    let pending = log.append_pending(&[rec("c", 13)]).await.unwrap();
    assert_eq!(pending.first_offset(), 2);
    log.commit(&pending).await.unwrap();
    assert_eq!(log.durable_offset(), 3);
    assert_eq!(log.tail_offset().await.unwrap(), 3);
    let got = log.read_range(ReadRange { start: 1, max_bytes: 1 }).await.unwrap();
    assert_eq!((got.len(), got[0].offset, got[0].timestamp_micros), (1, 1, 12), "at least one record, the caller's timestamp");
    assert_ne!(got[0].checksum, 0);
    // Generations.
    assert!(log.record_generation(1, 0).unwrap());
    assert!(!log.record_generation(1, 0).unwrap(), "a generation already held is ignored");
    assert!(log.record_generation(3, 2).unwrap());
    assert_eq!(log.generations().iter().map(|e| (e.generation, e.start_offset)).collect::<Vec<_>>(), [(1, 0), (3, 2)]);
    assert_eq!(log.generation_end(1, 3), Some(2));
    assert_eq!(log.generation_end(2, 3), None, "not in the history: refuse rather than guess");
    assert_eq!(log.generation_end(3, 1), Some(2), "a tail read before generation 3 began: its start, never below");
    // Seal: durable, checksummed, and a fresh segment follows.
    let sealed = log.seal().await.unwrap();
    let again = log.segments();
    assert_eq!((sealed.descriptor.base_offset, sealed.descriptor.last_offset), (0, 2));
    assert_eq!(again.last().unwrap().base_offset, 3, "appends go to a new segment");
    // Truncate drops every record at or after the offset…
    log.append(&[rec("d", 14), rec("e", 15)]).await.unwrap();
    log.truncate(4).await.unwrap();
    assert_eq!(read_all(&log).await.iter().map(|(_, p)| p.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "d"]);
    log.truncate(99).await.unwrap();
    assert_eq!(log.tail_offset().await.unwrap(), 4, "past the tail: nothing");
    // …and below the oldest record empties the log, which restarts there.
    log.truncate(0).await.unwrap();
    assert!(read_all(&log).await.is_empty());
    assert_eq!(log.append(&[rec("fresh", 16)]).await.unwrap().first_offset, 0);
    // The provider hands out one log per shard.
    let same = provider.open_shard(&key(0)).unwrap();
    assert_eq!(same.tail_offset().await.unwrap(), 1);
    assert_eq!(provider.open_shards(), [key(0)]);
    // Another provider on the same root is another writer: refused.
    let other = DiskLogProvider::new(tmp.path(), small(FsyncMode::OnCommit)).unwrap();
    let err = other.open_shard(&key(0)).unwrap_err();
    assert!(matches!(err, EngineError::Locked { .. }), "{err}");
    provider.shutdown().await.unwrap();
    // An empty batch is refused, as upstream's is.
    assert!(log.append(&[]).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configurations_that_cannot_work_are_refused_at_open() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in [
        LogConfig { segment_size_bytes: 40, ..LogConfig::default() },
        LogConfig { index_spacing_bytes: 0, ..LogConfig::default() },
        LogConfig { fsync_mode: FsyncMode::Periodic { interval: Duration::ZERO }, ..LogConfig::default() },
        LogConfig { retention_bytes: Some(0), ..LogConfig::default() },
    ] {
        assert!(DiskLog::open(tmp.path().join("x"), "x", bad.clone()).is_err(), "{bad:?}");
    }
    assert_eq!(LogConfig { fsync_mode: FsyncMode::None, ..LogConfig::default() }.durability_window(), None);
    assert_eq!(LogConfig::default().durability_window(), Some(Duration::ZERO));
}

fn sim_dir() -> PathBuf {
    PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798")
}

fn payload(i: u64) -> String {
    format!("record-{i}-{}", "y".repeat((i % 17) as usize))
}

/// Appends 30 records in batches of 1–3 through the facade until an error;
/// returns what was acknowledged.
async fn workload(log: &DiskLog) -> Vec<(u64, String)> {
    let mut acked = Vec::new();
    let mut i = 0;
    while i < 30 {
        let batch: Vec<AppendRecord> = (i..(i + 1 + i % 3).min(30)).map(|j| rec(&payload(j), j)).collect();
        match log.append(&batch).await {
            Ok(r) => {
                for (o, b) in (r.first_offset..=r.last_offset).zip(&batch) {
                    acked.push((o, String::from_utf8(b.payload.to_vec()).unwrap()));
                }
                i += batch.len() as u64;
            }
            Err(_) => {
                let later = log.append(&[rec("later", 0)]).await.unwrap_err();
                assert!(matches!(later, EngineError::FailStopped { .. }), "{later}");
                break;
            }
        }
    }
    acked
}

async fn check(io: &SimIo, acked: &[(u64, String)], label: &str) {
    let rebooted = Arc::new(io.crash());
    let log = DiskLog::open_with_io(rebooted as Arc<dyn Io>, sim_dir(), "x", small(FsyncMode::OnCommit))
        .unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
    let got = read_all(&log).await;
    assert!(got.len() >= acked.len(), "{label}: lost acknowledged records");
    assert_eq!(&got[..acked.len()], acked, "{label}");
    for (o, p) in &got[acked.len()..] {
        assert_eq!(*p, payload(*o), "{label}: unexpected record");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_at_every_io_call_and_a_crash_at_every_sync_through_the_facade() {
    let probe = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&probe) as Arc<dyn Io>, sim_dir(), "x", small(FsyncMode::OnCommit)).unwrap();
    workload(&log).await;
    let (calls, syncs) = (probe.mutations(), probe.syncs());
    drop(log);
    for n in 1..=calls + 1 {
        let io = Arc::new(SimIo::new());
        io.fail_at(n);
        let acked = match DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", small(FsyncMode::OnCommit)) {
            Ok(log) => workload(&log).await,
            Err(_) => Vec::new(),
        };
        check(&io, &acked, &format!("failure at IO call {n} of {calls}")).await;
    }
    for k in 1..=syncs {
        let io = Arc::new(SimIo::new());
        io.crash_after_sync(k);
        let acked = match DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", small(FsyncMode::OnCommit)) {
            Ok(log) => workload(&log).await,
            Err(_) => Vec::new(),
        };
        check(&io, &acked, &format!("crash after sync {k} of {syncs}")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn periodic_and_none_acknowledge_once_written_and_are_durable_after_shutdown() {
    for mode in [FsyncMode::Periodic { interval: Duration::from_millis(5) }, FsyncMode::None] {
        let io = Arc::new(SimIo::new());
        let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", small(mode)).unwrap();
        log.append(&[rec("first", 1)]).await.unwrap();
        log.sync().await.unwrap();
        let before = io.syncs();
        let r = log.append(&[rec("written", 2)]).await.unwrap();
        assert_eq!(io.syncs(), before, "{mode:?}: acknowledged without a sync");
        assert_eq!(read_all(&log).await[1], (r.first_offset, "written".into()), "{mode:?}: readable at once");
        if let FsyncMode::Periodic { .. } = mode {
            // The flusher alone makes it durable, with no later append.
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while io.syncs() == before {
                assert!(std::time::Instant::now() < deadline, "the periodic flusher never synced");
                tokio::task::yield_now().await;
            }
        } else {
            assert!(log.unsynced_bytes() > 0, "none: nothing syncs it until shutdown");
            log.shutdown().await.unwrap();
        }
        let rebooted = DiskLog::open_with_io(Arc::new(io.crash()) as Arc<dyn Io>, sim_dir(), "x", small(FsyncMode::OnCommit)).unwrap();
        assert_eq!(read_all(&rebooted).await.len(), 2, "{mode:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appenders_share_flushes_and_get_unique_offsets() {
    let tmp = tempfile::tempdir().unwrap();
    let provider = Arc::new(DiskLogProvider::new(tmp.path(), LogConfig::default()).unwrap());
    let log = provider.open_shard(&key(1)).unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let log = log.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                for i in 0..25 {
                    got.push(log.append(&[rec(&format!("t{t}-{i}"), 0)]).await.unwrap().first_offset);
                }
                got
            })
        })
        .collect();
    let mut offsets = Vec::new();
    for t in tasks {
        offsets.extend(t.await.unwrap());
    }
    offsets.sort_unstable();
    assert_eq!(offsets, (0..200).collect::<Vec<u64>>());
    assert_eq!(read_all(&log).await.len(), 200);
}

/// Group commit through the facade: while the flush is held at the disk's
/// door no publisher is acknowledged; every append written while it was held
/// is covered by the next one; and each acknowledged record survives a crash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_publishers_are_acknowledged_only_by_a_flush_that_covers_them() {
    let io = Arc::new(SimIo::new());
    let config = LogConfig { fsync_mode: FsyncMode::OnCommit, ..LogConfig::default() };
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    log.append(&[rec("first", 1)]).await.unwrap();
    io.hold_syncs();
    let acked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks: Vec<_> = (0..16u64)
        .map(|t| {
            let (log, acked) = (log.clone(), Arc::clone(&acked));
            tokio::spawn(async move {
                let r = log.append(&[rec(&payload(t), 2)]).await.unwrap();
                acked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                r.first_offset
            })
        })
        .collect();
    let held = Arc::clone(&io);
    tokio::task::spawn_blocking(move || held.wait_for_held_sync()).await.unwrap();
    let syncs = io.syncs();
    // Every publisher has written by now or will be covered by a later flush.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(acked.load(std::sync::atomic::Ordering::SeqCst), 0, "acknowledged while its flush was held");
    io.release_syncs();
    let mut offsets = Vec::new();
    for t in tasks {
        offsets.push(t.await.unwrap());
    }
    offsets.sort_unstable();
    assert_eq!(offsets, (1..=16).collect::<Vec<u64>>());
    // The flush held, then at most one more for those written while it was held.
    assert!(io.syncs() - syncs <= 2, "{} flushes for 16 publishers", io.syncs() - syncs);
    let rebooted = DiskLog::open_with_io(Arc::new(io.crash()) as Arc<dyn Io>, sim_dir(), "x", small(FsyncMode::OnCommit)).unwrap();
    assert_eq!(read_all(&rebooted).await.len(), 17, "every acknowledged record survives a crash");
}

/// A publisher whose append is dropped mid-wait (a cancelled request) strands
/// no one: the flush it started is not its own, and the others are
/// acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_append_strands_no_other_publisher() {
    let io = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    io.hold_syncs();
    let first = {
        let log = log.clone();
        tokio::spawn(async move { log.append(&[rec("cancelled", 1)]).await })
    };
    {
        let io = Arc::clone(&io);
        tokio::task::spawn_blocking(move || io.wait_for_held_sync()).await.unwrap();
    }
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    let others: Vec<_> = (0..4u64)
        .map(|t| {
            let log = log.clone();
            tokio::spawn(async move { log.append(&[rec(&payload(t), 2)]).await.unwrap() })
        })
        .collect();
    io.release_syncs();
    for t in others {
        tokio::time::timeout(Duration::from_secs(30), t).await.expect("a publisher was stranded").unwrap();
    }
    // The cancelled record was written (its offset held) and is durable too.
    assert_eq!(log.durable_offset(), 5);
}

/// `Periodic` acknowledges an append once written, without a sync of its
/// own: many appends, no flush until the interval passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn periodic_appends_return_without_waiting_for_any_flush() {
    let io = Arc::new(SimIo::new());
    let config = LogConfig { fsync_mode: FsyncMode::Periodic { interval: Duration::from_secs(3600) }, ..LogConfig::default() };
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    // The first append creates the first segment (a durable file), then a
    // held flush would block any append that waited for one.
    log.append(&[rec(&payload(0), 0)]).await.unwrap();
    io.hold_syncs();
    let before = io.syncs();
    for i in 1..1000u64 {
        tokio::time::timeout(Duration::from_secs(30), log.append(&[rec(&payload(i), i)])).await.expect("waited for a flush").unwrap();
    }
    assert_eq!(io.syncs(), before, "no append synced");
    assert_eq!(log.durable_offset(), 0);
    assert_eq!(read_all(&log).await.len(), 1000, "readable once acknowledged");
    io.release_syncs();
    log.shutdown().await.unwrap();
    assert_eq!(log.durable_offset(), 1000);
}

/// Issue 20: the facade's `offset_for_time` (ours, beyond upstream's log):
/// Kafka's rule across segments, a producer clock that went backwards, and
/// `Closed` after shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offset_for_a_time_follows_offset_order_across_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let provider = DiskLogProvider::new(tmp.path(), small(FsyncMode::OnCommit)).unwrap();
    let log = provider.open(&key(7)).await.unwrap();
    // Offsets 0..=5; the clock steps back at offset 3; 200-byte segments roll.
    let stamps = [100, 200, 300, 150, 400, 400];
    for (i, ts) in stamps.iter().enumerate() {
        log.append(&[rec(&format!("record {i} {}", "x".repeat(60)), *ts)]).await.unwrap();
    }
    assert!(log.segments().len() > 2, "the records span segments");
    for (t, want) in [(0, Some(0)), (100, Some(0)), (101, Some(1)), (150, Some(1)), (301, Some(4)), (400, Some(4)), (401, None)] {
        assert_eq!(log.offset_for_time(t).await.unwrap(), want, "time {t}");
    }
    log.shutdown().await.unwrap();
    assert!(matches!(log.offset_for_time(0).await, Err(EngineError::Closed { .. })), "closed after shutdown");
}
