//! The group commit under attack (a hostile review's cases): races between the flush
//! leader, truncation and the other writers of one shard.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use felix_engine::broker::{AppendOnlyLog, AppendRecord, DiskLog, FsyncMode, LogConfig};
use felix_engine::io::sim::SimIo;
use felix_engine::{EngineError, Io};

fn sim_dir() -> PathBuf {
    PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798")
}

fn rec(text: &str) -> AppendRecord {
    AppendRecord { payload: Bytes::copy_from_slice(text.as_bytes()), timestamp_micros: 1 }
}

/// A log with the default config on a simulated disk whose syncs can be
/// held after they ran ([`Gated::after_sync_gate`]).
fn parked_log() -> (Arc<Gated>, DiskLog) {
    let io = Arc::new(Gated::new(Arc::new(SimIo::new())));
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    (io, log)
}

#[path = "support/facade.rs"]
mod facade;
#[path = "support/gated.rs"]
mod gated;
use facade::{publish, read_all};
use gated::Gated;

/// A truncation while the leader's flush is in flight, then new records at
/// the offsets it freed: the flush that started before them must not make
/// them "durable" (and so acknowledgeable) — they were never synced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offsets_reused_after_a_truncation_during_a_flush_are_not_acknowledged_unsynced() {
    let sim = Arc::new(SimIo::new());
    let io = Arc::new(Gated::new(Arc::clone(&sim)));
    let config = LogConfig { fsync_mode: FsyncMode::OnCommit, ..LogConfig::default() };
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    for i in 0..10 {
        log.append(&[rec(&format!("old-{i}"))]).await.unwrap();
    }
    // The last append's flush leader gathers at most 2 ms, then lets go: the
    // next flush is one the commit below leads.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let doomed = log.append_pending(&[rec("doomed-10"), rec("doomed-11")]).await.unwrap();
    io.after_sync_gate.arm();
    let leader = {
        let log = log.clone();
        tokio::spawn(async move { log.commit(&doomed).await })
    };
    {
        let io = Arc::clone(&io);
        tokio::task::spawn_blocking(move || io.after_sync_gate.wait_parked()).await.unwrap();
    }
    // The leader's sync covered offsets 10 and 11 as first written; cut them.
    log.truncate(10).await.unwrap();
    let fresh = log.append_pending(&[rec("fresh-10"), rec("fresh-11")]).await.unwrap();
    assert_eq!(fresh.first_offset(), 10);
    io.after_sync_gate.release();
    assert!(matches!(leader.await.unwrap(), Err(EngineError::TruncatedAway { .. })));
    let acked = tokio::time::timeout(Duration::from_secs(30), log.commit(&fresh)).await.expect("stranded");
    acked.unwrap();
    // Acknowledged: it must survive a crash.
    let rebooted = DiskLog::open_with_io(Arc::new(sim.crash()) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    let got = read_all(&rebooted).await;
    assert_eq!(
        got.iter().skip(10).map(|(_, p)| p.as_str()).collect::<Vec<_>>(),
        ["fresh-10", "fresh-11"],
        "acknowledged records lost by a crash"
    );
}

/// A flush that fails while 64 publishers wait on it: every one gets an
/// error, none an acknowledgement, and none is stranded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_flush_answers_every_one_of_64_waiters_with_an_error() {
    let io = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    log.append(&[rec("first")]).await.unwrap();
    io.hold_syncs();
    let tasks: Vec<_> = (0..64)
        .map(|t| {
            let log = log.clone();
            tokio::spawn(async move { log.append(&[rec(&format!("p-{t}"))]).await })
        })
        .collect();
    {
        let io = Arc::clone(&io);
        tokio::task::spawn_blocking(move || io.wait_for_held_sync()).await.unwrap();
    }
    // Every publisher has written (inline) or will, and waits.
    tokio::time::sleep(Duration::from_millis(100)).await;
    io.fail_at(io.mutations() + 1);
    io.release_syncs();
    for t in tasks {
        let r = tokio::time::timeout(Duration::from_secs(30), t).await.expect("a waiter was stranded").unwrap();
        assert!(r.is_err(), "acknowledged after a failed flush: {r:?}");
    }
    assert!(log.append(&[rec("after")]).await.is_err(), "the failure latches");
}

/// Publishers appending through rolls (tiny segments), a blocking writer
/// committing on the same shard through the engine, and a shutdown in the
/// middle: nobody is stranded, offsets are unique, and every acknowledged
/// record survives a crash with its payload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolls_blocking_commits_and_a_shutdown_mid_stream_strand_no_one() {
    for mode in [FsyncMode::OnCommit, FsyncMode::Periodic { interval: Duration::from_millis(1) }, FsyncMode::None] {
        let io = Arc::new(SimIo::new());
        let config = LogConfig { segment_size_bytes: 300, index_spacing_bytes: 64, fsync_mode: mode, ..LogConfig::default() };
        let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
        let tasks: Vec<_> = (0..8)
            .map(|t| {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut acked = Vec::new();
                    for i in 0..200 {
                        let text = format!("t{t}-{i}");
                        match log.append(&[rec(&text), rec(&format!("{text}b"))]).await {
                            Ok(r) => acked.push((r.first_offset, text)),
                            Err(_) => break,
                        }
                    }
                    acked
                })
            })
            .collect();
        let blocking = {
            let log = log.clone();
            tokio::task::spawn_blocking(move || {
                let mut acked = Vec::new();
                for i in 0..100 {
                    let text = format!("blocking-{i}");
                    let payload = text.as_bytes();
                    let Ok(p) = log.shard().write(&[felix_engine::shard::Append { payload, timestamp_micros: Some(1) }]) else { break };
                    if log.shard().commit(&p).is_err() {
                        break;
                    }
                    acked.push((p.offsets.start, text));
                }
                acked
            })
        };
        while log.shard().next_offset() < 600 {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        let _ = log.shutdown().await;
        let mut acked = Vec::new();
        for t in tasks {
            acked.extend(tokio::time::timeout(Duration::from_secs(30), t).await.expect("stranded").unwrap());
        }
        acked.extend(tokio::time::timeout(Duration::from_secs(30), blocking).await.expect("stranded").unwrap());
        let mut offsets: Vec<u64> = acked.iter().map(|(o, _)| *o).collect();
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!(offsets.len(), acked.len(), "{mode:?}: an offset acknowledged twice");
        assert!(acked.len() < 8 * 200 + 100, "{mode:?}: the shutdown came after the stream ended");
        eprintln!("{mode:?}: {} acknowledged", acked.len());
        drop(log);
        let rebooted = DiskLog::open_with_io(Arc::new(io.crash()) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
        let got: std::collections::HashMap<u64, String> = read_all(&rebooted).await.into_iter().collect();
        let all: Vec<u64> = {
            let mut k: Vec<u64> = got.keys().copied().collect();
            k.sort_unstable();
            k
        };
        assert_eq!(all, (0..all.len() as u64).collect::<Vec<_>>(), "{mode:?}: offsets contiguous");
        if mode == FsyncMode::OnCommit {
            for (offset, text) in &acked {
                assert_eq!(got.get(offset), Some(text), "{mode:?}: acknowledged offset {offset} lost or changed");
            }
        }
    }
}

/// A log opened outside any runtime, then used from a current-thread
/// runtime (as `felix-storage produce` does), by many publishers at once.
#[test]
fn a_log_opened_outside_a_runtime_serves_a_current_thread_one() {
    let io = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        publish(&log, 32, 50).await;
    });
    assert_eq!(log.durable_offset(), 32 * 50);
}

/// A log opened in one runtime, that runtime dropped, then used from
/// another: the leader's wake-ups went to the dead runtime.
#[test]
fn a_log_outliving_the_runtime_it_was_opened_in_strands_no_one() {
    let io = Arc::new(SimIo::new());
    let first = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let log =
        first.block_on(async { DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap() });
    drop(first);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let started = std::time::Instant::now();
    rt.block_on(async {
        publish(&log, 16, 50).await;
    });
    assert_eq!(log.durable_offset(), 16 * 50);
    eprintln!("outliving: {:?}", started.elapsed());
}

/// Under `Periodic`, appenders queued on the shard's lock behind a roll
/// (whose syncs hold it) passed their lock check before they queued; the
/// directory is moved while they wait. Once the roll lets go — well past
/// `LOCK_CHECK_FRESH` after the move — none of them may be acknowledged on
/// its stale check ("stops within 100 µs plus one write": the rolling write
/// is that one write).
#[test]
fn appenders_queued_behind_a_roll_do_not_acknowledge_on_a_stale_lock_check() {
    let sim = Arc::new(SimIo::new());
    let io = Arc::new(Gated::new(Arc::clone(&sim)));
    let config = LogConfig {
        segment_size_bytes: 400,
        index_spacing_bytes: 64,
        fsync_mode: FsyncMode::Periodic { interval: Duration::from_secs(3600) },
        ..LogConfig::default()
    };
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    // Fill the first segment until the next record would roll.
    while log
        .shard()
        .write_unless_roll(&[felix_engine::shard::Append { payload: b"filler-filler-filler", timestamp_micros: Some(1) }])
        .unwrap()
        .is_some()
    {}
    io.after_sync_gate.arm();
    let roller = {
        let log = log.clone();
        std::thread::spawn(move || {
            log.shard().write(&[felix_engine::shard::Append { payload: b"rolls", timestamp_micros: Some(1) }]).is_ok()
        })
    };
    io.after_sync_gate.wait_parked(); // the roll's sync of the segment it leaves, under the shard's lock
    let queued: Vec<_> = (0..4)
        .map(|_| {
            let log = log.clone();
            std::thread::spawn(move || {
                log.shard().write(&[felix_engine::shard::Append { payload: b"queued", timestamp_micros: Some(1) }]).is_ok()
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50)); // each checked the lock, then queued
    io.moved.store(true, Ordering::SeqCst);
    std::thread::sleep(felix_engine::shard::LOCK_CHECK_FRESH * 20);
    io.after_sync_gate.release();
    let _ = roller.join().unwrap();
    let acked = queued.into_iter().map(|t| t.join().unwrap()).filter(|ok| *ok).count();
    assert_eq!(acked, 0, "appends acknowledged long after their directory was moved");
}

/// The interval flusher's sync overtaken by a truncation: the records
/// written at the freed offsets after it must still be made durable within
/// the interval (the flusher must not take them for synced and sleep).
#[test]
fn the_interval_flusher_does_not_take_records_rewritten_after_a_truncation_for_synced() {
    let sim = Arc::new(SimIo::new());
    let io = Arc::new(Gated::new(Arc::clone(&sim)));
    let config = LogConfig { fsync_mode: FsyncMode::Periodic { interval: Duration::from_millis(1) }, ..LogConfig::default() };
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(), "x", config).unwrap();
    let write = |text: &'static str| {
        log.shard().write(&[felix_engine::shard::Append { payload: text.as_bytes(), timestamp_micros: Some(1) }]).unwrap()
    };
    for _ in 0..10 {
        write("old");
    }
    while log.durable_offset() < 10 {
        std::thread::sleep(Duration::from_millis(1));
    }
    io.after_sync_gate.arm();
    write("doomed");
    io.after_sync_gate.wait_parked(); // the flusher synced "doomed", and is held
    log.shard().truncate_from(10).unwrap();
    write("fresh");
    io.after_sync_gate.release();
    std::thread::sleep(Duration::from_millis(200)); // 200 intervals
    let rebooted = DiskLog::open_with_io(Arc::new(sim.crash()) as Arc<dyn Io>, sim_dir(), "x", LogConfig::default()).unwrap();
    assert_eq!(rebooted.shard().next_offset(), 11, "a record written 200 intervals ago was never synced");
}

/// A flush whose sync panics (a bug in an `Io` implementation) strands no
/// publisher, and stops the log as a failed sync does: every publisher
/// waiting for that flush answers — `FailStopped`, never an acknowledgement
/// of a sync that may not have happened — and the engine's "a sync is in
/// flight" mark does not outlive the panic. One publisher or 8, on a
/// multi-threaded runtime or a current-thread one. (Until a panic stopped
/// the shard, the next flush was led afresh and acknowledged them.)
#[test]
fn a_flush_that_panics_strands_no_publisher_and_stops_the_log() {
    for (multi, publishers) in [(true, 1), (true, 8), (false, 1), (false, 8)] {
        let rt = if multi {
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
        } else {
            tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
        };
        let (io, log) = parked_log();
        rt.block_on(async {
            log.append(&[rec("first")]).await.unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await; // the first leader lets go
            io.panic_next.store(true, Ordering::SeqCst);
            let tasks: Vec<_> = (0..publishers)
                .map(|t| {
                    let log = log.clone();
                    tokio::spawn(async move { log.append(&[rec(&format!("p-{t}"))]).await })
                })
                .collect();
            for t in tasks {
                let r = tokio::time::timeout(Duration::from_secs(10), t).await.expect("a publisher was stranded by a panicking flush");
                let answer = r.unwrap();
                assert!(matches!(answer, Err(EngineError::FailStopped { .. })), "multi {multi}, {publishers} publishers: {answer:?}");
            }
        });
        assert!(!io.panic_next.load(Ordering::SeqCst), "the panicking sync never ran (multi {multi}, {publishers} publishers)");
        assert_eq!(log.durable_offset(), 1, "multi {multi}, {publishers} publishers");
        assert!(log.shard().failure().is_some_and(|cause| cause.contains("panic")), "multi {multi}, {publishers} publishers");
    }
}

/// The chain of wake-ups (each woken waiter wakes the next) under
/// cancellation: 64 publishers, many of whose appends are dropped while they
/// wait for their flush (a timeout of a few microseconds, and whole tasks
/// aborted mid-wait). A dropped waiter never breaks the chain: every append
/// that is awaited to its end is answered, and each one acknowledged is
/// durable when it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiters_dropped_mid_wait_never_break_the_chain_of_wake_ups() {
    let tmp = tempfile::tempdir().unwrap();
    let log = DiskLog::open(tmp.path().join("s"), "x", LogConfig::default()).unwrap();
    let tasks: Vec<_> = (0..64u64)
        .map(|t| {
            let log = log.clone();
            tokio::spawn(async move {
                let mut acked = 0u64;
                for i in 0..60u64 {
                    let append = log.append(&[rec(&format!("{t}-{i}"))]);
                    if (t + i) % 3 == 0 {
                        // Dropped while it waits (or answered first: both are fine).
                        let _ = tokio::time::timeout(Duration::from_micros(50 + (t * 7 + i) % 200), append).await;
                        continue;
                    }
                    let r = append.await.unwrap();
                    assert!(log.durable_offset() > r.last_offset, "acknowledged before it was durable");
                    acked += 1;
                }
                acked
            })
        })
        .collect();
    // Some whole publishers are aborted while they wait.
    tokio::time::sleep(Duration::from_millis(5)).await;
    for t in tasks.iter().step_by(9) {
        t.abort();
    }
    let mut answered = 0;
    for t in tasks {
        match tokio::time::timeout(Duration::from_secs(60), t).await.expect("a waiter was stranded") {
            Ok(acked) => answered += acked,
            Err(e) => assert!(e.is_cancelled(), "{e}"),
        }
    }
    assert!(answered > 0);
    // After all that, one more append from a fresh task is answered at once.
    tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("last")])).await.expect("the chain is stuck").unwrap();
}

/// Releases `io`'s parked sync from another thread after `after`.
fn release_after(io: &Arc<Gated>, after: Duration) -> std::thread::JoinHandle<()> {
    let io = Arc::clone(io);
    std::thread::spawn(move || {
        std::thread::sleep(after);
        io.after_sync_gate.release();
    })
}

/// A `LocalSet` on a multi-threaded runtime (`LocalSet::block_on`, a
/// broker's `!Send` handlers): an append there, alone on its log, neither
/// panics (tokio forbids `block_in_place` inside a `LocalSet`, whatever the
/// runtime's flavor) nor leaves the log's "a flush is in flight" mark set —
/// a publisher on the runtime's workers is answered after it.
#[test]
fn a_lone_append_in_a_local_set_neither_panics_nor_strands_the_log() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (_io, log) = parked_log();
    let local = tokio::task::LocalSet::new();
    let in_local = {
        let log = log.clone();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            local.block_on(&rt, async move {
                let direct = log.append(&[rec("in the local set's own future")]).await;
                let log2 = log.clone();
                let spawned = tokio::task::spawn_local(async move { log2.append(&[rec("in a spawn_local task")]).await }).await;
                (direct.is_ok(), spawned.map(|r| r.is_ok()))
            })
        }))
    };
    drop(local);
    let after = rt.block_on(async {
        let log = log.clone();
        let t = tokio::spawn(async move { log.append(&[rec("a worker's publisher, after")]).await });
        tokio::time::timeout(Duration::from_secs(10), t).await
    });
    assert!(matches!(after, Ok(Ok(Ok(_)))), "a publisher after the local set was stranded: {after:?}");
    let (direct, spawned) = in_local.expect("an append in a LocalSet panicked");
    assert!(direct, "the local set's own append failed");
    assert!(matches!(spawned, Ok(true)), "the spawn_local append failed: {spawned:?}");
    assert_eq!(log.durable_offset(), 3);
}

/// A multi-threaded runtime's handle entered inside a current-thread
/// runtime (to spawn onto it, or to open a log whose retention task runs
/// there): the flavor of `Handle::current()` says multi-threaded, but the
/// thread is the current-thread runtime's. An append there neither panics nor
/// strands the log.
#[test]
fn a_lone_append_under_an_entered_multi_thread_handle_neither_panics_nor_strands_the_log() {
    let mt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let ct = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (_io, log) = parked_log();
    let entered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ct.block_on(async {
            let _on_mt = mt.handle().enter();
            log.append(&[rec("entered")]).await.is_ok()
        })
    }));
    let after = mt.block_on(async {
        let log = log.clone();
        let t = tokio::spawn(async move { log.append(&[rec("after")]).await });
        tokio::time::timeout(Duration::from_secs(10), t).await
    });
    assert!(matches!(after, Ok(Ok(Ok(_)))), "a publisher after it was stranded: {after:?}");
    assert!(entered.expect("the append panicked"), "the append failed");
    assert_eq!(log.durable_offset(), 2);
}

/// A broker bounds a produce request's wait (`tokio::time::timeout`) and
/// answers the client when it runs out, acknowledging nothing: an append
/// whose flush hangs (a stalled disk) must let the timeout fire — alone on
/// its log too, where no one else's write is to be gathered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_append_under_a_timeout_answers_when_its_flush_hangs() {
    let (io, log) = parked_log();
    log.append(&[rec("creates the segment")]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await; // the first flush lets go
    io.after_sync_gate.arm();
    let releaser = release_after(&io, Duration::from_secs(3));
    let publisher = log.clone();
    let task = tokio::spawn(async move {
        let started = std::time::Instant::now();
        let r = tokio::time::timeout(Duration::from_millis(200), publisher.append(&[rec("its flush hangs")])).await;
        (r.is_err(), started.elapsed())
    });
    let (timed_out, waited) = task.await.unwrap();
    releaser.join().unwrap();
    assert!(
        timed_out && waited < Duration::from_secs(2),
        "a 200 ms timeout on an append answered after {waited:?} (timed out: {timed_out})"
    );
}

/// The blocking pool full (`max_blocking_threads` reached: reads, rolls and
/// flushes of other shards on a stalled disk) and one worker: an append whose
/// flush hangs must not stop the runtime — its timers fire, its other tasks
/// run — while the append waits.
#[test]
fn a_hung_flush_with_the_blocking_pool_full_does_not_stop_the_runtimes_timers() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).max_blocking_threads(1).enable_all().build().unwrap();
    let (io, log) = parked_log();
    rt.block_on(async {
        log.append(&[rec("creates the segment")]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await; // the first flush lets go
        let (free, occupied) = std::sync::mpsc::channel::<()>();
        let occupier = tokio::task::spawn_blocking(move || occupied.recv());
        io.after_sync_gate.arm();
        let releaser = release_after(&io, Duration::from_secs(3));
        let publisher = log.clone();
        let appender = tokio::spawn(async move { publisher.append(&[rec("its flush hangs")]).await });
        std::thread::sleep(Duration::from_millis(50)); // the worker takes the appender
        let started = std::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let waited = started.elapsed();
        free.send(()).unwrap();
        releaser.join().unwrap();
        appender.await.unwrap().unwrap();
        occupier.await.unwrap().unwrap();
        assert!(waited < Duration::from_millis(1500), "a 100 ms sleep took {waited:?} while a flush hung");
    });
    assert_eq!(log.durable_offset(), 2);
}

/// A lone publisher's waiter stays on its worker through its flush instead
/// of sleeping (two workers, one publisher, the last flush covering one
/// write): it is still acknowledged only once that flush has ended — not when
/// its spin runs out while the flush is held, and never before the records
/// are durable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_publisher_staying_awake_through_its_flush_is_acknowledged_only_when_it_ends() {
    let (io, log) = parked_log();
    for i in 0..200 {
        let r = log.append(&[rec(&format!("lone {i}"))]).await.unwrap();
        assert!(log.durable_offset() > r.last_offset, "append {i} acknowledged before its flush");
    }
    io.after_sync_gate.arm();
    let publisher = log.clone();
    let task = tokio::spawn(async move { publisher.append(&[rec("its flush is held")]).await });
    io.after_sync_gate.wait_parked();
    tokio::time::sleep(Duration::from_millis(100)).await; // far past the spin's 2 ms
    let (early, durable) = (task.is_finished(), log.durable_offset());
    io.after_sync_gate.release(); // before asserting: a held flush would hang the runtime's shutdown
    assert!(!early, "acknowledged while its flush was held");
    assert_eq!(durable, 200);
    let r = tokio::time::timeout(Duration::from_secs(10), task).await.expect("never acknowledged").unwrap().unwrap();
    assert_eq!((r.first_offset, log.durable_offset()), (200, 201));
}
