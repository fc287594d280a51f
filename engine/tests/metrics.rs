//! The engine records the broker's metrics, under the broker's names
//! (`felix_storage_…`), through whatever `metrics` recorder is installed.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use felix_engine::metrics_names as names;
use felix_engine::shard::{Config, Shard};
use felix_engine::OsIo;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

#[test]
fn appends_syncs_rolls_reads_and_recovery_are_measured_under_the_brokers_names() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    let config = Config { segment_size_bytes: 300, ..Config::default() };
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()), &dir, config.clone()).unwrap();
    for i in 0..20 {
        shard.append(&[format!("record {i}").as_bytes(), b"second"]).unwrap();
    }
    assert_eq!(shard.read(0, 1 << 20).unwrap().len(), 40);
    drop(shard);
    // A torn tail and a missing index for recovery to repair.
    let logs: Vec<_> = {
        let mut v: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "log")).collect();
        v.sort();
        v
    };
    let newest = logs.last().unwrap();
    let bytes = std::fs::read(newest).unwrap();
    std::fs::write(newest, &bytes[..bytes.len() - 3]).unwrap();
    std::fs::remove_file(logs[0].with_extension("index")).unwrap();
    drop(Shard::open_dir(Arc::new(OsIo::new()), &dir, config).unwrap());

    let mut seen: BTreeMap<String, DebugValue> = BTreeMap::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        seen.insert(key.key().name().to_string(), value);
    }
    let counter = |name: &str| match seen.get(name) {
        Some(DebugValue::Counter(n)) => *n,
        other => panic!("{name}: {other:?} in {:?}", seen.keys().collect::<Vec<_>>()),
    };
    let histogram = |name: &str| match seen.get(name) {
        Some(DebugValue::Histogram(v)) => v.iter().map(|x| x.into_inner()).collect::<Vec<f64>>(),
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(counter(names::APPEND_RECORDS_TOTAL), 40);
    assert!(counter(names::APPEND_BYTES_TOTAL) > 40 * 28);
    assert_eq!(histogram(names::APPEND_BATCH_RECORDS), vec![2.0; 20]);
    assert_eq!(histogram(names::APPEND_DURATION_SECONDS).len(), 20);
    assert!(counter(names::SYNC_TOTAL) >= 20, "one flush per batch at least");
    assert!(histogram(names::SYNC_BATCH_APPENDS).iter().all(|n| *n <= 1.0), "no concurrency here: fan-in of one");
    assert!(!histogram(names::SYNC_DURATION_SECONDS).is_empty());
    assert!(counter(names::SEGMENT_ROLL_TOTAL) >= 3);
    assert!(seen.contains_key(names::SEGMENT_COUNT) && seen.contains_key(names::UNSYNCED_BYTES));
    assert_eq!(counter(names::READ_RECORDS_TOTAL), 40);
    assert!(counter(names::READ_BYTES_TOTAL) > 0 && !histogram(names::READ_DURATION_SECONDS).is_empty());
    assert_eq!(counter(names::RECOVERY_TRUNCATED_BYTES), 28 + 6 - 3, "the torn record's remaining bytes");
    assert!(counter(names::RECOVERY_INDEX_REBUILDS_TOTAL) >= 1);
    assert!(histogram(names::RECOVERY_DURATION_SECONDS).len() >= 2);
    for name in seen.keys() {
        assert!(name.starts_with("felix_storage_"), "{name}");
    }
    retention_is_measured_under_the_brokers_names(&snapshotter);
}

/// Retention through the broker's facade: a pass that deletes one segment,
/// then a pass that fails (an unlink; the log goes on).
fn retention_is_measured_under_the_brokers_names(snapshotter: &metrics_util::debugging::Snapshotter) {
    use felix_engine::broker::{AppendOnlyLog as _, AppendRecord, DiskLog, FsyncMode, LogConfig, SEGMENT_HEADER_LEN};
    let io = Arc::new(felix_engine::io::sim::SimIo::new());
    let config = LogConfig {
        segment_size_bytes: SEGMENT_HEADER_LEN + 120,
        retention_bytes: Some(SEGMENT_HEADER_LEN + 120),
        fsync_mode: FsyncMode::None,
        ..LogConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn felix_engine::Io>, "/sim/r", "r", config).unwrap();
        for p in ["a", "b", "c", "d", "e", "f", "g", "h"] {
            log.append(&[AppendRecord { payload: bytes::Bytes::from_static(p.as_bytes()), timestamp_micros: 1 }]).await.unwrap();
        }
        assert_eq!(log.enforce_retention_now().await.unwrap().segments_deleted, 1);
        log.append(&[AppendRecord { payload: bytes::Bytes::from_static(b"i"), timestamp_micros: 1 }]).await.unwrap();
        io.fail_at(io.mutations() + 1);
        log.enforce_retention_now().await.unwrap_err();
    });
    let seen: BTreeMap<String, DebugValue> =
        snapshotter.snapshot().into_vec().into_iter().map(|(k, _, _, v)| (k.key().name().to_string(), v)).collect();
    let value = |name: &str| match seen.get(name) {
        Some(DebugValue::Counter(n)) => *n as f64,
        Some(DebugValue::Gauge(g)) => g.into_inner(),
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(value(names::RETENTION_SEGMENTS_DELETED_TOTAL), 1.0);
    assert_eq!(value(names::RETENTION_BYTES_RECLAIMED_TOTAL), 148.0, "four 29-byte records and the header");
    assert_eq!(value(names::RETENTION_BASE_OFFSET), 4.0);
    assert_eq!(value(names::RETENTION_FAILURES_TOTAL), 1.0);
}
