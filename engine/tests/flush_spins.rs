//! Which `OnCommit` waiters stay awake through a flush
//! (`DiskLog::spin_while_alone`), counted by
//! `felix_storage_flush_spins_total`: a lone publisher's, and the one whose
//! write completed the flush leader's gathering. Its own test binary: the
//! `metrics` recorder is the process's, and another test's spins would count.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use felix_engine::broker::{AppendOnlyLog, AppendRecord, DiskLog, LogConfig};
use felix_engine::io::sim::SimIo;
use felix_engine::metrics_names as names;
use felix_engine::Io;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

#[path = "support/facade.rs"]
mod facade;
#[path = "support/gated.rs"]
mod gated;
use facade::publish;
use gated::Gated;

/// The process's recorder, installed once; the tests take turns
/// (`TURNS`), each counting only the spins of its own turn.
fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder.install().unwrap();
        snapshotter
    })
}

static TURNS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn rec(text: &str) -> AppendRecord {
    AppendRecord { payload: Bytes::copy_from_slice(text.as_bytes()), timestamp_micros: 1 }
}

/// Spins counted so far with `waiter` = `label`.
fn spins(snapshotter: &Snapshotter, label: &str) -> u64 {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(key, _, _, _)| {
            key.key().name() == names::FLUSH_SPINS_TOTAL && key.key().labels().any(|l| l.key() == "waiter" && l.value() == label)
        })
        .map(|(_, _, _, value)| match value {
            DebugValue::Counter(n) => n,
            other => panic!("{other:?}"),
        })
        .sum()
}

/// One publisher: its waiters spin as a lone publisher's. Eight: the last of
/// the eight writes the leader gathers has no one left to make way for, and
/// its waiter spins through the flush — still acknowledged only after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_that_completes_a_gathering_stays_awake_through_its_flush() {
    let _turn = TURNS.lock().await;
    let snapshotter = snapshotter();
    let (lone_before, last_before) = (spins(snapshotter, "lone"), spins(snapshotter, "last_writer"));
    let io = Arc::new(Gated::new(Arc::new(SimIo::new())));
    io.sync_delay_us.store(300, Ordering::SeqCst);
    let dir = PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798");
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, dir, "x", LogConfig::default()).unwrap();

    publish(&log, 1, 100).await;
    let lone = spins(snapshotter, "lone") - lone_before;
    assert!(lone >= 10, "a lone publisher's 100 appends spun {lone} times");
    assert_eq!(spins(snapshotter, "last_writer"), last_before, "a lone publisher's waiter counts as lone");

    publish(&log, 8, 100).await;
    assert_eq!(log.durable_offset(), 900);
    let last = spins(snapshotter, "last_writer") - last_before;
    assert!(last >= 10, "800 appends from 8 publishers: the gathering's last writer spun {last} times");
}

/// A truncation while the flush after a gathering is in flight, then a new
/// write ending at the offset the gathering's closer ended at: that write
/// completed no gathering, and the flush in flight started before it was
/// written, so its waiter has nothing to stay awake for. When the mark was
/// the closer's end offset (reset only when a flush ended), it matched the
/// rewritten offset and its waiter spun through a flush that could not
/// cover it — up to 2 ms of a core; the mark is now the closer's write
/// number, which never repeats. Each attempt first
/// checks that the gathering was closed at that offset (the real closer's
/// waiter spins); an attempt whose gathering timed out proves nothing and
/// is retried on a fresh log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_ending_where_a_truncated_gathering_closed_does_not_spin() {
    let _turn = TURNS.lock().await;
    let snapshotter = snapshotter();
    for attempt in 0..20u32 {
        let io = Arc::new(Gated::new(Arc::new(SimIo::new())));
        io.sync_delay_us.store(2_000, Ordering::SeqCst);
        let dir = PathBuf::from(format!("/sim/root/acme_default_orders_{attempt}-0d3aed4b998d2798"));
        let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, dir, "x", LogConfig::default()).unwrap();
        // One flush covering two writes: the leader then gathers two more
        // (for at most 2 ms, the flush's length).
        log.append_pending(&[rec("a")]).await.unwrap();
        let second = log.append_pending(&[rec("b")]).await.unwrap();
        log.commit(&second).await.unwrap();
        io.after_sync_gate.arm();
        log.append_pending(&[rec("c")]).await.unwrap();
        let closer = log.append_pending(&[rec("d")]).await.unwrap();
        assert_eq!(closer.last_offset(), 3);
        // The next flush (covering c and d) is held after its sync.
        {
            let io = Arc::clone(&io);
            tokio::task::spawn_blocking(move || io.after_sync_gate.wait_parked()).await.unwrap();
        }
        // Did d close the gathering? Its waiter spins (then waits; dropped).
        let before = spins(snapshotter, "last_writer");
        let _ = tokio::time::timeout(Duration::from_millis(20), log.commit(&closer)).await;
        if spins(snapshotter, "last_writer") == before {
            io.after_sync_gate.release();
            continue; // the gathering timed out first: nothing to test
        }
        log.truncate(2).await.unwrap();
        log.append_pending(&[rec("c again")]).await.unwrap();
        let again = log.append_pending(&[rec("d again")]).await.unwrap();
        assert_eq!(again.last_offset(), 3);
        let before = spins(snapshotter, "last_writer");
        let _ = tokio::time::timeout(Duration::from_millis(20), log.commit(&again)).await;
        let spurious = spins(snapshotter, "last_writer") - before;
        io.after_sync_gate.release();
        let acked = tokio::time::timeout(Duration::from_secs(30), log.commit(&again)).await.expect("stranded");
        acked.unwrap();
        assert!(log.durable_offset() >= 4);
        assert_eq!(spurious, 0, "a write at offsets freed by a truncation spun as the closer of a gathering it never saw");
        return;
    }
    panic!("in 20 attempts no gathering closed before its 2 ms deadline");
}
