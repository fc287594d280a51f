//! A lone publisher's waiter staying awake through its flush
//! (`DiskLog::spin_if_alone`) under attack: a hostile review's cases.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use felix_engine::broker::{AppendOnlyLog, AppendRecord, DiskLog, LogConfig};
use felix_engine::io::sim::SimIo;
use felix_engine::Io;

#[path = "support/gated.rs"]
mod gated;
use gated::Gated;

fn sim_dir(n: u32) -> PathBuf {
    PathBuf::from(format!("/sim/root/acme_default_orders_{n}-0d3aed4b998d2798"))
}

fn rec(text: &str) -> AppendRecord {
    AppendRecord { payload: Bytes::copy_from_slice(text.as_bytes()), timestamp_micros: 1 }
}

/// A log on a simulated disk whose every `sync_data` takes `sync_us`.
fn slow_log(n: u32, sync_us: u64) -> (Arc<Gated>, DiskLog) {
    let io = Arc::new(Gated::new(Arc::new(SimIo::new())));
    io.sync_delay_us.store(sync_us, Ordering::SeqCst);
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, sim_dir(n), "x", LogConfig::default()).unwrap();
    (io, log)
}

/// Counts how often the wrapped future returned `Pending`.
struct CountPending<F> {
    inner: Pin<Box<F>>,
    pending: u64,
}

impl<F: Future> Future for CountPending<F> {
    type Output = (F::Output, u64);
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.inner.as_mut().poll(cx) {
            Poll::Ready(v) => Poll::Ready((v, self.pending)),
            Poll::Pending => {
                self.pending += 1;
                Poll::Pending
            }
        }
    }
}

/// A publisher appending in a loop on its own log (a producer task, a
/// replication pump) waits for each append's flush by staying awake through
/// it. That must not turn the loop into one that never returns to the
/// runtime: a `tokio::select!` on a stop signal, a `tokio::time::timeout`
/// around the loop, the tasks in the worker's LIFO slot, a `LocalSet`'s or
/// `block_on`'s other futures only run when it does. Before the fix the
/// loop below returned `Pending` 3 times in 500 appends (each one's flush
/// ended during its spin, the flush's notification was ready when awaited,
/// and `tokio::sync::Notify` spends no coop budget): its thread was held for
/// the whole loop, not for one flush at most.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_publisher_appending_in_a_loop_returns_to_its_runtime_between_appends() {
    let (_io, log) = slow_log(0, 300);
    let publisher = log.clone();
    let task = tokio::spawn(async move {
        CountPending {
            inner: Box::pin(async move {
                for i in 0..500 {
                    publisher.append(&[rec(&format!("lone {i}"))]).await.unwrap();
                }
            }),
            pending: 0,
        }
        .await
    });
    let ((), pending) = tokio::time::timeout(Duration::from_secs(60), task).await.expect("the publisher hung").unwrap();
    assert_eq!(log.durable_offset(), 500);
    assert!(pending >= 250, "500 appends returned to the runtime only {pending} times");
}
