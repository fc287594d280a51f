//! A lone publisher's waiter staying awake through its flush
//! (`DiskLog::spin_while_alone`) under attack: a hostile review's cases.
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
use felix_engine::{EngineError, Io};

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

/// Warms `log` up as a lone publisher's (each flush covering one write), so
/// the next append's waiter spins through its flush.
async fn warm_up(log: &DiskLog, n: u64) {
    for i in 0..n {
        let r = log.append(&[rec(&format!("warm {i}"))]).await.unwrap();
        assert!(log.durable_offset() > r.last_offset, "warm-up append {i} acknowledged before its flush");
    }
}

/// A `LocalSet` on a multi-threaded runtime: its tasks share one thread
/// and none can be stolen. A lone publisher there must let its neighbours
/// run between its appends, not only when its loop ends: a neighbour
/// ticking every millisecond ticks every other append or so (500 appends
/// of about 400 µs each: 50–100 ticks), not never (2 before the fix).
#[test]
fn a_lone_publisher_in_a_local_set_lets_its_neighbours_run_between_appends() {
    let (_io, log) = slow_log(1, 300);
    let runs = ticks_in_a_local_set_beside(async move {
        for i in 0..500 {
            log.append(&[rec(&format!("local {i}"))]).await.unwrap();
        }
        assert_eq!(log.durable_offset(), 500);
    });
    assert!(runs >= 15, "the local set's other task ran {runs} times in 500 appends");
}

/// Runs `publishers` in a `LocalSet` on a two-worker runtime beside a
/// neighbour task ticking every millisecond; how often it ticked.
fn ticks_in_a_local_set_beside(publishers: impl Future<Output = ()>) -> u64 {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let stop = std::rc::Rc::new(std::cell::Cell::new(false));
        let neighbour = {
            let stop = std::rc::Rc::clone(&stop);
            tokio::task::spawn_local(async move {
                let mut runs = 0u64;
                while !stop.get() {
                    runs += 1;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                runs
            })
        };
        publishers.await;
        stop.set(true);
        neighbour.await.unwrap()
    })
}

/// Many shards with one publisher each, on two workers: one spinner at a
/// time in the process, the others sleep; none starves, and the runtime's
/// timers keep firing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lone_publishers_on_six_logs_starve_neither_each_other_nor_the_timers() {
    let logs: Vec<_> = (0..6).map(|n| slow_log(10 + n, 300)).collect();
    let tasks: Vec<_> = logs
        .iter()
        .map(|(_, log)| {
            let log = log.clone();
            tokio::spawn(async move {
                for i in 0..200 {
                    let r = log.append(&[rec(&format!("shard {i}"))]).await.unwrap();
                    assert!(log.durable_offset() > r.last_offset, "acknowledged before durable");
                }
            })
        })
        .collect();
    let started = std::time::Instant::now();
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let ticked = started.elapsed();
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t).await.expect("a shard's lone publisher starved").unwrap();
    }
    for (_, log) in &logs {
        assert_eq!(log.durable_offset(), 200);
    }
    assert!(ticked < Duration::from_secs(5), "20 sleeps of 10 ms took {ticked:?} beside six lone publishers");
}

/// A flush that fails while its lone waiter spins through it: the waiter
/// answers with the error (fail-stop), never an acknowledgement, and so
/// does every later append.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_failing_while_its_lone_waiter_spins_answers_it_with_the_error() {
    let (io, log) = slow_log(2, 500);
    warm_up(&log, 50).await;
    io.fail_next_sync.store(true, Ordering::SeqCst);
    let r = tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("its flush fails")])).await.expect("stranded");
    assert!(r.is_err(), "acknowledged an append whose flush failed: {r:?}");
    assert_eq!(log.durable_offset(), 50);
    let later = tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("after")])).await.expect("stranded");
    assert!(later.is_err(), "a fail-stopped log acknowledged: {later:?}");
}

/// A flush that panics while its lone waiter spins through it: the waiter
/// is not stranded (the leader lets go), and it hears the stop the panic
/// caused, as it would a failed flush's error — never an acknowledgement of
/// a sync that may not have happened; every later append too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_panicking_while_its_lone_waiter_spins_strands_no_one_and_stops_the_log() {
    let (io, log) = slow_log(3, 500);
    warm_up(&log, 50).await;
    io.panic_next.store(true, Ordering::SeqCst);
    let r = tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("its flush panics")])).await.expect("stranded by a panic");
    assert!(matches!(r, Err(EngineError::FailStopped { .. })), "{r:?}");
    assert!(!io.panic_next.load(Ordering::SeqCst));
    assert_eq!(log.durable_offset(), 50);
    let later = tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("after")])).await.expect("stranded");
    assert!(matches!(later, Err(EngineError::FailStopped { .. })), "a stopped log acknowledged: {later:?}");
}

/// A shutdown while a lone waiter spins through a held flush: both answer
/// once the flush is let go; nothing acknowledged is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_while_a_lone_waiter_spins_strands_no_one() {
    let (io, log) = slow_log(4, 500);
    warm_up(&log, 50).await;
    io.after_sync_gate.arm();
    let publisher = log.clone();
    let append = tokio::spawn(async move { publisher.append(&[rec("held")]).await });
    io.after_sync_gate.wait_parked();
    let closer = log.clone();
    let shutdown = tokio::spawn(async move { closer.shutdown().await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    io.after_sync_gate.release();
    let r = tokio::time::timeout(Duration::from_secs(10), append).await.expect("the spinner was stranded").unwrap();
    let s = tokio::time::timeout(Duration::from_secs(10), shutdown).await.expect("the shutdown hung").unwrap();
    s.unwrap();
    if r.is_ok() {
        assert_eq!(log.durable_offset(), 51, "acknowledged but not durable");
    }
    assert!(log.append(&[rec("after")]).await.is_err(), "a shut-down log took an append");
}

/// Cancellation storms on two logs at once, one with a lone publisher (its
/// waiter spinning, and dropped right after its spin by a timeout of a few
/// hundred microseconds) and one with 16: no waiter is stranded, every
/// acknowledgement is durable, and each log answers one more append at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellations_mixing_a_lone_publisher_and_many_strand_no_one() {
    let (_a_io, lone) = slow_log(5, 300);
    let (_b_io, busy) = slow_log(6, 300);
    let mut tasks = Vec::new();
    for (log, publishers) in [(&lone, 1u64), (&busy, 16)] {
        for t in 0..publishers {
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                let mut acked = 0u64;
                for i in 0..120u64 {
                    let append = log.append(&[rec(&format!("{t}-{i}"))]);
                    if (t + i) % 3 == 0 {
                        let _ = tokio::time::timeout(Duration::from_micros(100 + (t * 37 + i * 11) % 700), append).await;
                        continue;
                    }
                    let r = append.await.unwrap();
                    assert!(log.durable_offset() > r.last_offset, "acknowledged before it was durable");
                    acked += 1;
                }
                acked
            }));
        }
    }
    let mut answered = 0;
    for t in tasks {
        answered += tokio::time::timeout(Duration::from_secs(60), t).await.expect("a waiter was stranded").unwrap();
    }
    assert!(answered > 0);
    for log in [&lone, &busy] {
        tokio::time::timeout(Duration::from_secs(10), log.append(&[rec("last")])).await.expect("the chain is stuck").unwrap();
    }
}

/// Two workers, one of them blocked (a task stuck in a blocking call): a
/// lone publisher's loop on the other must still let the runtime's timers
/// fire — a `tokio::time::timeout` around the loop answers long before the
/// loop would end (5,000 appends of about 400 µs each; on 55af004 it ran
/// to its end, unanswered, in one run of two).
#[test]
fn a_timeout_around_a_lone_publishers_loop_fires_with_the_other_worker_blocked() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (_io, log) = slow_log(7, 300);
    let (unblock, blocked) = std::sync::mpsc::channel::<()>();
    let (started_tx, started) = std::sync::mpsc::channel::<()>();
    let blocker = rt.spawn(async move {
        started_tx.send(()).unwrap();
        blocked.recv().unwrap(); // holds its worker
    });
    started.recv().unwrap();
    let publisher = rt.spawn(async move {
        warm_up(&log, 20).await;
        let started = std::time::Instant::now();
        let mut done = 0u64;
        let r = tokio::time::timeout(Duration::from_millis(50), async {
            for i in 0..5_000 {
                log.append(&[rec(&format!("looping {i}"))]).await.unwrap();
                done += 1;
            }
        })
        .await;
        (r.is_err(), started.elapsed(), done)
    });
    let answered = rt.block_on(async { tokio::time::timeout(Duration::from_secs(60), publisher).await });
    unblock.send(()).unwrap();
    rt.block_on(blocker).unwrap();
    let (timed_out, took, done) = answered.expect("the publisher hung").unwrap();
    assert!(
        timed_out && took < Duration::from_secs(1),
        "a 50 ms timeout around the loop answered after {took:?}, {done} appends in (timed out: {timed_out})"
    );
}

/// A multi-threaded runtime's handle entered on a current-thread runtime's
/// thread: `Handle::current()` says multi-threaded with two workers, so a
/// lone publisher's waiter spins there, on the current-thread runtime's only
/// thread, and then yields to it. Neither panics nor hangs, and a future
/// joined beside the loop keeps running between its appends.
#[test]
fn a_lone_publisher_under_an_entered_multi_thread_handle_neither_panics_nor_starves_its_neighbour() {
    let mt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let ct = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (_io, log) = slow_log(8, 300);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ct.block_on(async {
            let _on_mt = mt.handle().enter();
            let stop = std::cell::Cell::new(false);
            let publisher = async {
                warm_up(&log, 500).await;
                stop.set(true);
            };
            let neighbour = async {
                let mut runs = 0u64;
                while !stop.get() {
                    runs += 1;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                runs
            };
            let ((), runs) = tokio::join!(publisher, neighbour);
            runs
        })
    }));
    let runs = outcome.expect("a lone publisher under an entered handle panicked");
    assert_eq!(log.durable_offset(), 500);
    assert!(runs >= 15, "the joined future ran {runs} times in 500 appends");
}

/// Eight publishers looping on one log, so every gathering is closed by
/// one of their writes and that write's waiter stays awake through the
/// flush: a flush held after its sync (the `fdatasync` done, the shard not
/// yet told) must acknowledge no one, the spinning closer included — each
/// acknowledgement is checked against the durable offset — and letting it
/// go strands no one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gathering_closers_waiter_is_acknowledged_only_after_its_held_flush() {
    let (io, log) = slow_log(20, 300);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acks = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let tasks: Vec<_> = (0..8)
        .map(|p| {
            let (log, stop, acks) = (log.clone(), Arc::clone(&stop), Arc::clone(&acks));
            tokio::spawn(async move {
                let mut i = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    let r = log.append(&[rec(&format!("{p}-{i}"))]).await.unwrap();
                    assert!(log.durable_offset() > r.last_offset, "publisher {p}'s append {i} acknowledged before its flush");
                    acks.fetch_add(1, Ordering::SeqCst);
                    i += 1;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    io.after_sync_gate.arm();
    {
        let io = Arc::clone(&io);
        tokio::task::spawn_blocking(move || io.after_sync_gate.wait_parked()).await.unwrap();
    }
    // Whatever the flushes before the held one covered is acknowledged
    // within a few milliseconds; after that nothing moves.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let held_at = acks.load(Ordering::SeqCst);
    let durable = log.durable_offset();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(acks.load(Ordering::SeqCst), held_at, "appends acknowledged while their flush was held");
    assert_eq!(log.durable_offset(), durable);
    stop.store(true, Ordering::SeqCst);
    io.after_sync_gate.release();
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(30), t).await.expect("a publisher was stranded").unwrap();
    }
    assert_eq!(log.durable_offset(), log.shard().next_offset());
}

/// Eight publishers in a `LocalSet` on a multi-threaded runtime: each
/// flush's gathering is closed by one of them, whose waiter stays awake
/// through the flush on the set's only thread. The set's other task, a
/// 1 ms ticker, must still run between flushes (400 appends of 8 at about
/// 400 µs a flush: 50 flushes, 20 ms or more).
#[test]
fn eight_publishers_in_a_local_set_let_their_neighbour_run() {
    let (_io, log) = slow_log(21, 300);
    let runs = ticks_in_a_local_set_beside(async move {
        let publishers: Vec<_> = (0..8)
            .map(|p| {
                let log = log.clone();
                tokio::task::spawn_local(async move {
                    for i in 0..50 {
                        let r = log.append(&[rec(&format!("{p}-{i}"))]).await.unwrap();
                        assert!(log.durable_offset() > r.last_offset, "acknowledged before its flush");
                    }
                })
            })
            .collect();
        for p in publishers {
            p.await.unwrap();
        }
        assert_eq!(log.durable_offset(), 400);
    });
    assert!(runs >= 5, "the local set's other task ran {runs} times beside 400 appends");
}
