//! Panics that escape the fail-stop latch (a hostile review, the 40th, of
//! the change that latches a panic inside a mutating operation or IO call):
//! mutating work done outside `CheckedIo::mutation` — the interval
//! flusher's sync, `Shard::close` — attacked with a panic from the
//! simulated disk (`SimIo::panic_at`) or from a broker's own `metrics`
//! recorder. Each test is named for the behaviour it expects.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use felix_engine::io::sim::SimIo;
use felix_engine::metrics_names as names;
use felix_engine::shard::Append;
use felix_engine::{Config, Durability, EngineError, Io, Shard};
use metrics::{Counter, CounterFn, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};

fn sim_dir(name: &str) -> PathBuf {
    PathBuf::from("/sim/panic-escapes").join(name)
}

fn one(shard: &Shard) -> u64 {
    shard.write(&[Append { payload: b"record", timestamp_micros: Some(1) }]).unwrap().offsets.start
}

/// Armed: the next `felix_storage_sync_total` increment made on the
/// interval flusher's thread panics (a broker's recorder with a bug).
static SYNC_COUNT_PANICS: AtomicBool = AtomicBool::new(false);

/// A broker's `metrics` recorder: everything a no-op, except the sync
/// counter on the flusher's thread while [`SYNC_COUNT_PANICS`] is armed.
struct BrokersRecorder;

struct SyncCount;

impl CounterFn for SyncCount {
    fn increment(&self, _: u64) {
        if std::thread::current().name() == Some("felix-flusher") && SYNC_COUNT_PANICS.swap(false, Ordering::SeqCst) {
            panic!("a bug in the broker's metrics recorder");
        }
    }
    fn absolute(&self, _: u64) {}
}

impl Recorder for BrokersRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        if key.name() == names::SYNC_TOTAL {
            Counter::from_arc(Arc::new(SyncCount))
        } else {
            Counter::noop()
        }
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

/// The interval flusher is a mutating operation the shard runs on its own
/// thread: a panic in it (here a broker's metrics recorder panicking on the
/// sync counter, after the `fdatasync`) must stop the shard as a panic in
/// any other mutating operation does — or the flusher must go on. Before,
/// the panic killed the flusher thread and nothing else: the shard went on
/// acknowledging `Interval` appends that nothing would ever sync (no
/// `failure()`, `durable_offset` frozen), a power cut's loss unbounded
/// while the log reported itself healthy.
#[test]
fn a_panic_in_the_interval_flusher_stops_the_shard_or_the_flusher_goes_on() {
    metrics::set_global_recorder(BrokersRecorder).unwrap();
    let sim = Arc::new(SimIo::new());
    let config = Config { durability: Durability::Interval { micros: 2_000 }, ..Config::default() };
    let (shard, _) = Shard::open_dir(Arc::clone(&sim) as Arc<dyn Io>, &sim_dir("flusher"), config).unwrap();
    SYNC_COUNT_PANICS.store(true, Ordering::SeqCst);
    one(&shard);
    let deadline = Instant::now() + Duration::from_secs(10);
    while SYNC_COUNT_PANICS.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the flusher never synced");
        std::thread::sleep(Duration::from_millis(1));
    }
    // The recorder's bug struck once; from here every sync counts quietly.
    let acknowledged = match shard.write(&[Append { payload: b"after", timestamp_micros: Some(2) }]) {
        Ok(pending) => pending.offsets.end,
        Err(EngineError::FailStopped { .. }) => return, // stopped: nothing more acknowledged
        Err(e) => panic!("{e}"),
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    while shard.durable_offset() < acknowledged && shard.failure().is_none() {
        assert!(
            Instant::now() < deadline,
            "2 s after an append under a 2 ms interval: durable {} of {acknowledged}, the shard running ({:?})",
            shard.durable_offset(),
            shard.failure()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `Shard::close` (the broker's `shutdown`) releases the writer's lock
/// "all the same" when its last sync fails, so the directory opens again at
/// once while other holders of the shard live. A panic in that sync (here
/// the simulated disk's, inside the latched sync) must too: before, the
/// panic unwound out of `close` past the release, and the directory stayed
/// locked by our own process (`Locked`) until the last handle was dropped.
#[test]
fn a_panic_in_the_last_sync_of_close_still_releases_the_writers_lock() {
    let sim = Arc::new(SimIo::new());
    let config = Config { durability: Durability::NoSync, ..Config::default() };
    let open = || Shard::open_dir(Arc::clone(&sim) as Arc<dyn Io>, &sim_dir("close"), config.clone());
    let (shard, _) = open().unwrap();
    one(&shard);
    one(&shard);
    sim.panic_at(Some(sim.mutations() + 1));
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shard.close()));
    assert!(unwound.is_err(), "the injected panic goes on: {unwound:?}");
    assert!(shard.write(&[Append { payload: b"late", timestamp_micros: Some(3) }]).is_err(), "the shard is stopped");
    let reopened = open();
    assert!(reopened.is_ok(), "the directory is still locked while the panicked shard lives: {:?}", reopened.err());
    let (reopened, _) = reopened.unwrap();
    one(&reopened);
    drop(shard);
}
