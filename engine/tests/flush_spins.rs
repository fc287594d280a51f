//! Which `OnCommit` waiters stay awake through a flush
//! (`DiskLog::spin_while_alone`), counted by
//! `felix_storage_flush_spins_total`: a lone publisher's, and the one whose
//! write completed the flush leader's gathering. Its own test binary: the
//! `metrics` recorder is the process's, and another test's spins would count.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use felix_engine::broker::{AppendOnlyLog, AppendRecord, DiskLog, LogConfig};
use felix_engine::io::sim::SimIo;
use felix_engine::metrics_names as names;
use felix_engine::Io;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

#[path = "support/gated.rs"]
mod gated;
use gated::Gated;

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

/// Appends `rounds` batches from `publishers` tasks at once, each checking
/// that its acknowledgement came after the flush that covers it.
async fn publish(log: &DiskLog, publishers: u64, rounds: u64) {
    let tasks: Vec<_> = (0..publishers)
        .map(|p| {
            let log = log.clone();
            tokio::spawn(async move {
                for i in 0..rounds {
                    let r = log.append(&[rec(&format!("publisher {p} append {i}"))]).await.unwrap();
                    assert!(log.durable_offset() > r.last_offset, "publisher {p}'s append {i} acknowledged before its flush");
                }
            })
        })
        .collect();
    for task in tasks {
        tokio::time::timeout(std::time::Duration::from_secs(60), task).await.expect("a publisher hung").unwrap();
    }
}

/// One publisher: its waiters spin as a lone publisher's. Eight: the last of
/// the eight writes the leader gathers has no one left to make way for, and
/// its waiter spins through the flush — still acknowledged only after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_that_completes_a_gathering_stays_awake_through_its_flush() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().unwrap();
    let io = Arc::new(Gated::new(Arc::new(SimIo::new())));
    io.sync_delay_us.store(300, Ordering::SeqCst);
    let dir = PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798");
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, dir, "x", LogConfig::default()).unwrap();

    publish(&log, 1, 100).await;
    let lone = spins(&snapshotter, "lone");
    assert!(lone >= 10, "a lone publisher's 100 appends spun {lone} times");
    assert_eq!(spins(&snapshotter, "last_writer"), 0, "a lone publisher's waiter counts as lone");

    publish(&log, 8, 100).await;
    assert_eq!(log.durable_offset(), 900);
    let last = spins(&snapshotter, "last_writer");
    assert!(last >= 10, "800 appends from 8 publishers: the gathering's last writer spun {last} times");
}
