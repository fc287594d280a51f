//! What upstream's own `DiskLog` tests (`crates/felix-storage/src/disk_log/tests.rs`
//! of gabloe/felix) expect, one behaviour at a time, through our facade, with
//! exact values: offsets and reads, the error variants a broker matches on,
//! the fsync policies, shutdown (which releases the writer's lock while clones
//! live), sealing with upstream's checksum, the provider, retention with
//! `enforce_retention_now`, and a failed roll stopping the log (our own fault
//! injection: `SimIo`, where upstream drives a private hook).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use felix_codec::CorruptionKind;
use felix_engine::broker::{
    now_micros, AppendOnlyLog, AppendRecord, DiskLog, DiskLogProvider, FsyncMode, LogConfig, LogProvider, ReadRange, RetentionOutcome,
    ShardKey, StorageError, SEGMENT_HEADER_LEN,
};
use felix_engine::io::sim::SimIo;
use felix_engine::Io;

/// Every record here is `RECORD_HEADER_LEN` (28) + its payload.
fn rec(text: &str) -> AppendRecord {
    AppendRecord { payload: Bytes::copy_from_slice(text.as_bytes()), timestamp_micros: 1_700_000_000 }
}

fn aged(text: &str, timestamp_micros: u64) -> AppendRecord {
    AppendRecord { payload: Bytes::copy_from_slice(text.as_bytes()), timestamp_micros }
}

/// 152-byte segments: the header and 120 bytes of records (three of 37, four of 29).
fn small(mode: FsyncMode) -> LogConfig {
    LogConfig {
        segment_size_bytes: SEGMENT_HEADER_LEN + 120,
        index_spacing_bytes: 48,
        fsync_mode: mode,
        preallocate_segments: false,
        ..LogConfig::default()
    }
}

fn retaining(bytes: Option<u64>, age: Option<Duration>) -> LogConfig {
    LogConfig { retention_bytes: bytes, retention_age: age, retention_check_interval: Duration::from_secs(3600), ..small(FsyncMode::None) }
}

fn open(dir: &Path, config: LogConfig) -> DiskLog {
    DiskLog::open(dir, "t/ns/s/0", config).unwrap()
}

async fn append_each(log: &DiskLog, payloads: &[&str]) {
    for p in payloads {
        log.append(&[rec(p)]).await.unwrap();
    }
}

async fn read_from(log: &DiskLog, start: u64) -> Vec<(u64, String)> {
    let records = log.read_range(ReadRange { start, max_bytes: usize::MAX }).await.unwrap();
    records.into_iter().map(|r| (r.offset, String::from_utf8(r.payload.to_vec()).unwrap())).collect()
}

fn texts(records: &[(u64, String)]) -> Vec<&str> {
    records.iter().map(|(_, t)| t.as_str()).collect()
}

fn seg(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:020}.log"))
}

const EIGHT: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

// ------------------------------------------------------------ appends and reads

#[tokio::test]
async fn offsets_are_contiguous_and_reads_start_where_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::None));
    let first = log.append(&[rec("a"), rec("b")]).await.unwrap();
    let second = log.append(&[rec("c")]).await.unwrap();
    assert_eq!([(first.first_offset, first.last_offset), (second.first_offset, second.last_offset)], [(0, 1), (2, 2)]);
    assert_eq!(log.tail_offset().await.unwrap(), 3);
    assert_eq!(read_from(&log, 0).await, [(0, "a".into()), (1, "b".into()), (2, "c".into())]);
    assert_eq!(read_from(&log, 2).await, [(2, "c".to_string())]);
}

#[tokio::test]
async fn an_empty_append_is_invalid_range_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::OnCommit));
    assert_eq!(log.append(&[]).await.unwrap_err(), StorageError::InvalidRange);
    assert_eq!(log.append_pending(&[]).await.unwrap_err(), StorageError::InvalidRange);
    assert_eq!(log.tail_offset().await.unwrap(), 0);
    assert!(log.segments().is_empty(), "no segment was even created");
}

#[tokio::test]
async fn a_read_at_or_past_the_tail_is_empty_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::None));
    log.append(&[rec("only")]).await.unwrap();
    assert_eq!(read_from(&log, 1).await, []);
    assert_eq!(read_from(&log, 500).await, []);
}

#[tokio::test]
async fn truncating_to_zero_restarts_the_log_at_zero_and_nothing_is_trimmed() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::None));
    for i in 0..10 {
        log.append(&[rec(&format!("value-{i}"))]).await.unwrap();
    }
    log.truncate(0).await.unwrap();
    assert_eq!(log.append(&[rec("fresh")]).await.unwrap().first_offset, 0);
    assert_eq!(log.base_offset(), 0);
    assert_eq!(read_from(&log, 0).await, [(0, "fresh".to_string())]);
}

#[tokio::test]
async fn a_read_is_bounded_by_payload_bytes_and_by_max_records_per_read() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), LogConfig { max_records_per_read: 4, ..small(FsyncMode::None) });
    for i in 0..30 {
        log.append(&[rec(&format!("v{i:03}"))]).await.unwrap();
    }
    let capped = log.read_range(ReadRange { start: 0, max_bytes: usize::MAX }).await.unwrap();
    assert_eq!(capped.iter().map(|r| r.offset).collect::<Vec<_>>(), [0, 1, 2, 3], "the record cap, bytes unbounded");
    let by_bytes = log.read_range(ReadRange { start: 0, max_bytes: 8 }).await.unwrap();
    assert_eq!(by_bytes.iter().map(|r| r.offset).collect::<Vec<_>>(), [0, 1], "two 4-byte payloads fill 8 bytes");
    let one = log.read_range(ReadRange { start: 5, max_bytes: 1 }).await.unwrap();
    assert_eq!(one.iter().map(|r| r.offset).collect::<Vec<_>>(), [5], "at least one record");
    let mut seen = Vec::new();
    while seen.len() < 30 {
        let page = log.read_range(ReadRange { start: seen.len() as u64, max_bytes: usize::MAX }).await.unwrap();
        seen.extend(page.iter().map(|r| r.offset));
    }
    assert_eq!(seen, (0..30).collect::<Vec<u64>>(), "paging covers the log without a gap");
}

#[tokio::test]
async fn a_record_larger_than_a_segment_goes_alone_into_one_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::None));
    let big = "x".repeat(10_000);
    log.append(&[rec("before"), rec(&big), rec("after")]).await.unwrap();
    assert_eq!(texts(&read_from(&log, 0).await), ["before", big.as_str(), "after"]);
    let sizes: Vec<(u64, u64)> = log.segments().iter().map(|s| (s.base_offset, s.size_bytes)).collect();
    assert_eq!(sizes, [(0, 32 + 34), (1, 32 + 10_028), (2, 32 + 33)]);
}

// ------------------------------------------------------------ restarts, truncation

#[tokio::test]
async fn records_survive_shutdown_and_reopen_and_the_log_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let log = open(tmp.path(), small(FsyncMode::OnCommit));
        for i in 0..25 {
            log.append(&[rec(&format!("value-{i:03}"))]).await.unwrap();
        }
        assert_eq!(log.segments().len(), 9, "three 37-byte records a segment");
        log.shutdown().await.unwrap();
    }
    let log = open(tmp.path(), small(FsyncMode::OnCommit));
    assert_eq!(log.tail_offset().await.unwrap(), 25);
    let all = read_from(&log, 0).await;
    assert_eq!((all.len(), all[0].1.as_str(), all[24].1.as_str()), (25, "value-000", "value-024"));
    assert_eq!(log.append(&[rec("after")]).await.unwrap().first_offset, 25);
}

#[tokio::test]
async fn truncate_drops_the_suffix_durably() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let log = open(tmp.path(), small(FsyncMode::OnCommit));
        for i in 0..20 {
            log.append(&[rec(&format!("v{i:03}"))]).await.unwrap();
        }
        log.truncate(6).await.unwrap();
        assert_eq!(log.tail_offset().await.unwrap(), 6);
        log.shutdown().await.unwrap();
    }
    let log = open(tmp.path(), small(FsyncMode::OnCommit));
    assert_eq!(texts(&read_from(&log, 0).await), ["v000", "v001", "v002", "v003", "v004", "v005"]);
    assert_eq!(log.append(&[rec("resumed")]).await.unwrap().first_offset, 6);
}

#[tokio::test]
async fn offsets_reused_after_a_truncation_are_flushed_again_on_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::OnCommit));
    log.append(&[rec("zero"), rec("one"), rec("two")]).await.unwrap();
    assert_eq!(log.durable_offset(), 3);
    log.truncate(1).await.unwrap();
    assert_eq!(log.durable_offset(), 1);
    assert_eq!(log.append(&[rec("again")]).await.unwrap().first_offset, 1);
    assert_eq!((log.durable_offset(), log.unsynced_bytes()), (2, 0));
}

// ------------------------------------------------------------ fsync policies

#[tokio::test]
async fn on_commit_acknowledges_only_what_is_durable() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::OnCommit));
    for i in 0..5 {
        let r = log.append(&[rec(&format!("v{i}"))]).await.unwrap();
        assert_eq!((log.durable_offset(), log.unsynced_bytes()), (r.last_offset + 1, 0), "append {i}");
    }
}

#[tokio::test]
async fn none_acknowledges_unsynced_until_a_sync() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::None));
    log.append(&[rec("a"), rec("b")]).await.unwrap();
    assert_eq!((log.durable_offset(), log.unsynced_bytes()), (0, 58));
    log.sync().await.unwrap();
    assert_eq!((log.durable_offset(), log.unsynced_bytes()), (2, 0));
}

#[tokio::test]
async fn periodic_makes_an_append_durable_within_its_interval_without_a_call() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::Periodic { interval: Duration::from_millis(20) }));
    log.append(&[rec("a"), rec("b"), rec("c")]).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while log.durable_offset() < 3 {
        assert!(std::time::Instant::now() < deadline, "the flusher never synced");
        tokio::task::yield_now().await;
    }
    assert_eq!((log.durable_offset(), log.unsynced_bytes()), (3, 0));
    log.shutdown().await.unwrap();
}

#[tokio::test]
async fn shutdown_makes_durable_what_none_had_not() {
    let io = Arc::new(SimIo::new());
    let dir = PathBuf::from("/sim/t");
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, &dir, "t", small(FsyncMode::None)).unwrap();
    log.append(&[rec("a"), rec("b"), rec("c")]).await.unwrap();
    assert!(log.unsynced_bytes() > 0);
    log.shutdown().await.unwrap();
    let rebooted = DiskLog::open_with_io(Arc::new(io.crash()) as Arc<dyn Io>, &dir, "t", small(FsyncMode::None)).unwrap();
    assert_eq!(texts(&read_from(&rebooted, 0).await), ["a", "b", "c"], "a power cut after shutdown loses nothing");
}

// ------------------------------------------------------------ concurrency, rollover

#[tokio::test]
async fn concurrent_on_commit_appends_land_exactly_once_and_all_durable() {
    let tmp = tempfile::tempdir().unwrap();
    let log = Arc::new(open(tmp.path(), LogConfig { segment_size_bytes: 4096, ..small(FsyncMode::OnCommit) }));
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let log = Arc::clone(&log);
            tokio::spawn(async move { log.append(&[rec(&format!("task-{i:02}"))]).await.unwrap() })
        })
        .collect();
    let mut offsets = Vec::new();
    for t in tasks {
        let r = t.await.unwrap();
        assert_eq!(r.first_offset, r.last_offset);
        offsets.push(r.first_offset);
    }
    offsets.sort_unstable();
    assert_eq!(offsets, (0..32).collect::<Vec<u64>>());
    assert_eq!(log.durable_offset(), 32);
    let mut stored: Vec<String> = read_from(&log, 0).await.into_iter().map(|(_, t)| t).collect();
    stored.sort();
    assert_eq!(stored, (0..32).map(|i| format!("task-{i:02}")).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_releases_the_writer_lock_while_clones_live_and_they_answer_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let config = LogConfig { segment_size_bytes: SEGMENT_HEADER_LEN + 200, ..small(FsyncMode::None) };
    let log = Arc::new(open(tmp.path(), config.clone()));
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let log = Arc::clone(&log);
            tokio::spawn(async move { log.append(&[rec(&format!("value-{i:03}"))]).await.unwrap().first_offset })
        })
        .collect();
    let mut offsets = Vec::new();
    for t in tasks {
        offsets.push(t.await.unwrap());
    }
    offsets.sort_unstable();
    assert_eq!(offsets, (0..64).collect::<Vec<u64>>());
    assert_eq!(log.segments().len(), 13, "five 37-byte records a segment");
    let clone = log.as_ref().clone();
    log.shutdown().await.unwrap();
    let reopened = open(tmp.path(), config);
    assert_eq!(reopened.tail_offset().await.unwrap(), 64);
    let closed = StorageError::Closed { dir: tmp.path().to_path_buf() };
    assert_eq!(clone.append(&[rec("late")]).await.unwrap_err(), closed);
    assert_eq!(clone.read_range(ReadRange { start: 0, max_bytes: 1 }).await.unwrap_err(), closed);
    assert_eq!(clone.sync().await.unwrap_err(), closed);
    clone.shutdown().await.unwrap();
    assert_eq!(reopened.tail_offset().await.unwrap(), 64, "the late append went nowhere");
}

#[tokio::test]
async fn the_background_rollover_settings_are_accepted_and_no_segment_overshoots() {
    let tmp = tempfile::tempdir().unwrap();
    let config = LogConfig { rollover_threshold_percent: 60, max_overshoot_percent: 200, ..small(FsyncMode::OnCommit) };
    {
        let log = open(tmp.path(), config.clone());
        for i in 0..60 {
            log.append(&[rec(&format!("value-{i:03}"))]).await.unwrap();
        }
        let segments = log.segments();
        assert_eq!(segments.len(), 20);
        assert!(segments.iter().all(|s| s.size_bytes == 32 + 3 * 37), "{segments:?}");
        log.shutdown().await.unwrap();
    }
    let log = open(tmp.path(), config);
    let all = read_from(&log, 0).await;
    assert_eq!(all.iter().map(|(o, _)| *o).collect::<Vec<_>>(), (0..60).collect::<Vec<u64>>());
    assert_eq!((all[0].1.as_str(), all[59].1.as_str()), ("value-000", "value-059"));
}

/// Upstream's `a_failed_seal_stops_the_log_instead_of_acknowledging`, with
/// our fault injection: the `fdatasync` that seals the retired segment at a
/// roll fails; that append is not acknowledged and the log stops.
#[tokio::test]
async fn a_failed_seal_at_a_roll_stops_the_log_instead_of_acknowledging() {
    let dir = PathBuf::from("/sim/t");
    let start = |io: &Arc<SimIo>| DiskLog::open_with_io(Arc::clone(io) as Arc<dyn Io>, &dir, "t", small(FsyncMode::OnCommit)).unwrap();
    let probe = Arc::new(SimIo::new());
    let log = start(&probe);
    append_each(&log, &["value-000", "value-001", "value-002"]).await;
    let before_roll = probe.mutations();
    drop(log);

    let io = Arc::new(SimIo::new());
    let log = start(&io);
    append_each(&log, &["value-000", "value-001", "value-002"]).await;
    io.fail_at(before_roll + 1);
    let err = log.append(&[rec("value-003")]).await.unwrap_err();
    let message = format!("injected failure at mutating call {}", before_roll + 1);
    assert_eq!(err, StorageError::Io { path: seg(&dir, 0), op: "fdatasync", message });
    let stopped = StorageError::FailStopped { cause: err.to_string() };
    assert_eq!(log.append(&[rec("after")]).await.unwrap_err(), stopped);
    assert_eq!(log.sync().await.unwrap_err(), stopped);
    assert_eq!(log.shutdown().await.unwrap_err(), stopped);
    assert_eq!((log.tail_offset().await.unwrap(), log.durable_offset()), (3, 3), "the failed roll came before offset 3 was assigned");
    let rebooted = DiskLog::open_with_io(Arc::new(io.crash()) as Arc<dyn Io>, &dir, "t", small(FsyncMode::OnCommit)).unwrap();
    assert_eq!(texts(&read_from(&rebooted, 0).await)[..3], ["value-000", "value-001", "value-002"]);
}

// ------------------------------------------------------------ seal, config, provider

#[tokio::test]
async fn a_sealed_segment_carries_upstreams_checksum_crc32_of_the_whole_file() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::None));
    log.append(&[rec("a"), rec("b")]).await.unwrap();
    let sealed = log.seal().await.unwrap();
    let bytes = std::fs::read(seg(tmp.path(), 0)).unwrap();
    assert_eq!(bytes.len(), 32 + 2 * 29);
    assert_eq!(sealed.checksum, u64::from(crc32fast::hash(&bytes)));
    assert_eq!((sealed.descriptor.id, sealed.descriptor.base_offset, sealed.descriptor.last_offset), (0, 0, 1));
    assert_eq!(sealed.descriptor.size_bytes, 90);
    log.append(&[rec("c")]).await.unwrap();
    assert_eq!(log.segments().iter().map(|s| s.base_offset).collect::<Vec<_>>(), [0, 2], "appends go to a fresh segment");
    assert_eq!(std::fs::read(seg(tmp.path(), 0)).unwrap(), bytes, "the sealed segment does not change");
    assert_eq!(texts(&read_from(&log, 0).await), ["a", "b", "c"]);
}

#[tokio::test]
async fn configurations_that_cannot_work_are_invalid_config_at_open_saying_which() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            LogConfig { fsync_mode: FsyncMode::Periodic { interval: Duration::ZERO }, ..LogConfig::default() },
            "periodic fsync interval must be greater than zero",
        ),
        (LogConfig { segment_size_bytes: 8, ..LogConfig::default() }, "segment_size_bytes is too small to hold a single record"),
        (LogConfig { index_spacing_bytes: 0, ..LogConfig::default() }, "index_spacing_bytes must be greater than zero"),
        (LogConfig { max_records_per_read: 0, ..LogConfig::default() }, "max_records_per_read must be greater than zero"),
        (retaining(Some(0), None), "retention_bytes must be greater than zero; omit it to disable retention"),
        (retaining(None, Some(Duration::ZERO)), "retention_age must be greater than zero; omit it to disable retention"),
        (
            LogConfig { retention_check_interval: Duration::ZERO, ..retaining(Some(1), None) },
            "retention_check_interval must be greater than zero",
        ),
    ];
    for (config, what) in cases {
        assert_eq!(DiskLog::open(tmp.path(), "t", config).unwrap_err(), StorageError::InvalidConfig(what));
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "nothing created");
}

#[test]
fn retention_without_a_tokio_runtime_is_refused_rather_than_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let what = "retention needs a Tokio runtime; open the log from async code or leave retention_bytes and retention_age unset";
    assert_eq!(DiskLog::open(tmp.path(), "t", retaining(Some(1), None)).unwrap_err(), StorageError::InvalidConfig(what));
    assert_eq!(DiskLog::open(tmp.path(), "t", small(FsyncMode::OnCommit)).map(|_| ()), Ok(()), "without retention no runtime is needed");
}

fn key(shard: u32) -> ShardKey {
    ShardKey { tenant: "acme".into(), namespace: "default".into(), stream: "orders".into(), shard }
}

#[tokio::test]
async fn the_provider_hands_out_one_log_per_shard_and_logs_reopen_with_their_data() {
    let root = tempfile::tempdir().unwrap();
    {
        let provider = DiskLogProvider::new(root.path(), small(FsyncMode::OnCommit)).unwrap();
        let (first, again, other) =
            (provider.open(&key(0)).await.unwrap(), provider.open(&key(0)).await.unwrap(), provider.open(&key(1)).await.unwrap());
        first.append(&[rec("one")]).await.unwrap();
        again.append(&[rec("two")]).await.unwrap();
        other.append(&[rec("other")]).await.unwrap();
        assert_eq!(texts(&read_from(&again, 0).await), ["one", "two"]);
        assert_eq!(texts(&read_from(&other, 0).await), ["other"]);
        let mut open_now = provider.open_shards();
        open_now.sort_by_key(|k| k.shard);
        assert_eq!(open_now, [key(0), key(1)]);
        provider.shutdown().await.unwrap();
        assert_eq!(first.append(&[rec("late")]).await.unwrap_err(), StorageError::Closed { dir: first.shard().dir().to_path_buf() });
    }
    let provider = DiskLogProvider::new(root.path(), small(FsyncMode::OnCommit)).unwrap();
    assert_eq!(texts(&read_from(&provider.open(&key(0)).await.unwrap(), 0).await), ["one", "two"]);
}

#[tokio::test]
async fn verify_all_on_open_finds_damage_in_a_sealed_segment_that_a_plain_open_leaves_to_reads() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let log = open(tmp.path(), small(FsyncMode::OnCommit));
        append_each(&log, &["value-000", "value-001", "value-002", "value-003"]).await;
        log.shutdown().await.unwrap();
    }
    let path = seg(tmp.path(), 0);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[32 + 28] ^= 1; // the first record's first payload byte
    std::fs::write(&path, &bytes).unwrap();
    let err = DiskLog::open(tmp.path(), "t", LogConfig { verify_all_on_open: true, ..small(FsyncMode::OnCommit) }).unwrap_err();
    let StorageError::Corrupt { path: at, finding } = &err else { panic!("{err:?}") };
    assert_eq!((at, finding.site.segment_id, finding.site.position, finding.offset), (&path, Some(0), 32, Some(0)), "{err}");
    assert!(matches!(finding.kind, CorruptionKind::RecordChecksum { .. }), "{err}");
    let log = open(tmp.path(), small(FsyncMode::OnCommit));
    assert_eq!(log.read_range(ReadRange { start: 0, max_bytes: 1 }).await.unwrap_err(), err, "the read finds the same damage");
}

// ------------------------------------------------------------ retention

#[tokio::test]
async fn retention_is_off_by_default_and_a_pass_deletes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), small(FsyncMode::None));
    append_each(&log, &["a", "b", "c", "d", "e", "f"]).await;
    assert_eq!(log.enforce_retention_now().await.unwrap(), RetentionOutcome { segments_deleted: 0, bytes_reclaimed: 0, base_offset: 0 });
    assert_eq!(read_from(&log, 0).await.len(), 6);
}

#[tokio::test]
async fn size_retention_deletes_whole_oldest_segments_and_a_read_below_reports_trimmed() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), retaining(Some(SEGMENT_HEADER_LEN + 120), None));
    append_each(&log, &EIGHT).await;
    assert_eq!(log.base_offset(), 0, "nothing trimmed before a pass");
    // Two segments of four 29-byte records (148 bytes each): 296 > 152.
    assert_eq!(log.enforce_retention_now().await.unwrap(), RetentionOutcome { segments_deleted: 1, bytes_reclaimed: 148, base_offset: 4 });
    assert_eq!(log.base_offset(), 4);
    assert!(!seg(tmp.path(), 0).exists());
    assert_eq!(texts(&read_from(&log, 4).await), ["e", "f", "g", "h"]);
    let err = log.read_range(ReadRange { start: 0, max_bytes: usize::MAX }).await.unwrap_err();
    assert_eq!(err, StorageError::Trimmed { requested: 0, oldest: 4 });
    assert_eq!(err.to_string(), "offset 0 is no longer available (trimmed); the log starts at 4");
    assert_eq!(log.enforce_retention_now().await.unwrap(), RetentionOutcome { segments_deleted: 0, bytes_reclaimed: 0, base_offset: 4 });
}

#[tokio::test]
async fn retention_never_deletes_the_active_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), retaining(Some(1), None));
    append_each(&log, &["a", "b", "c", "d", "e", "f"]).await;
    assert_eq!(log.enforce_retention_now().await.unwrap(), RetentionOutcome { segments_deleted: 1, bytes_reclaimed: 148, base_offset: 4 });
    assert_eq!(texts(&read_from(&log, 4).await), ["e", "f"]);
    assert_eq!(log.enforce_retention_now().await.unwrap().segments_deleted, 0, "only the active one is left");
}

#[tokio::test]
async fn age_retention_deletes_a_segment_only_once_its_newest_record_expired() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), retaining(None, Some(Duration::from_secs(60))));
    let now = now_micros();
    let old = now - 3_600_000_000;
    // Three 33-byte records a segment: old00..old11 fill four, new00..new11 four more.
    for i in 0..12 {
        log.append(&[aged(&format!("old{i:02}"), old)]).await.unwrap();
    }
    for i in 0..12 {
        log.append(&[aged(&format!("new{i:02}"), now)]).await.unwrap();
    }
    assert_eq!(
        log.enforce_retention_now().await.unwrap(),
        RetentionOutcome { segments_deleted: 4, bytes_reclaimed: 4 * 131, base_offset: 12 }
    );
    let kept = read_from(&log, 12).await;
    assert_eq!(texts(&kept), (0..12).map(|i| format!("new{i:02}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn age_retention_keeps_a_segment_holding_one_fresh_record() {
    let tmp = tempfile::tempdir().unwrap();
    let log = open(tmp.path(), retaining(None, Some(Duration::from_secs(60))));
    let now = now_micros();
    for (text, ts) in [("old", now - 3_600_000_000), ("new", now), ("x", now), ("y", now), ("z", now)] {
        log.append(&[aged(text, ts)]).await.unwrap();
    }
    assert_eq!(log.segments().len(), 2, "old, new, x, y share the first");
    assert_eq!(log.enforce_retention_now().await.unwrap(), RetentionOutcome { segments_deleted: 0, bytes_reclaimed: 0, base_offset: 0 });
}

#[tokio::test]
async fn a_trimmed_log_reopens_at_its_surviving_base_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let config = retaining(Some(SEGMENT_HEADER_LEN + 120), None);
    {
        let log = open(tmp.path(), config.clone());
        append_each(&log, &EIGHT).await;
        assert_eq!(log.enforce_retention_now().await.unwrap().base_offset, 4);
        log.shutdown().await.unwrap();
    }
    let log = open(tmp.path(), config);
    assert_eq!(log.base_offset(), 4);
    assert_eq!(texts(&read_from(&log, 4).await), ["e", "f", "g", "h"]);
    let err = log.read_range(ReadRange { start: 3, max_bytes: 1 }).await.unwrap_err();
    assert_eq!(err, StorageError::Trimmed { requested: 3, oldest: 4 });
}

/// Upstream's failure rule: a failed pass is not fatal, the next retries —
/// for a segment that could not be unlinked. A failed directory fsync stops
/// the log (`docs/broker.md`: why).
#[tokio::test]
async fn a_pass_that_could_not_unlink_is_retried_and_a_failed_directory_fsync_stops_the_log() {
    let dir = PathBuf::from("/sim/t");
    let config = retaining(Some(SEGMENT_HEADER_LEN + 120), None);
    let io = Arc::new(SimIo::new());
    let log = DiskLog::open_with_io(Arc::clone(&io) as Arc<dyn Io>, &dir, "t", config.clone()).unwrap();
    append_each(&log, &EIGHT).await;
    let before = io.mutations();
    io.fail_at(before + 2); // the segment's unlink (its index's is first)
    let err = log.enforce_retention_now().await.unwrap_err();
    let message = format!("injected failure at mutating call {}", before + 2);
    assert_eq!(err, StorageError::Io { path: seg(&dir, 0), op: "remove", message });
    io.fail_at(u64::MAX); // the disk is well again
    assert_eq!(log.append(&[rec("i")]).await.unwrap().first_offset, 8, "the log goes on (i starts segment 2)");
    assert_eq!(log.enforce_retention_now().await.unwrap(), RetentionOutcome { segments_deleted: 2, bytes_reclaimed: 296, base_offset: 8 });

    append_each(&log, &["j", "k", "l", "m"]).await; // m starts segment 3
    let before = io.mutations();
    io.fail_at(before + 3); // index, segment, then the directory's fsync
    let err = log.enforce_retention_now().await.unwrap_err();
    let message = format!("injected failure at mutating call {}", before + 3);
    assert_eq!(err, StorageError::Io { path: dir.clone(), op: "fsync directory", message });
    let stopped = StorageError::FailStopped { cause: err.to_string() };
    assert_eq!(log.append(&[rec("n")]).await.unwrap_err(), stopped);
    assert_eq!(log.enforce_retention_now().await.unwrap_err(), stopped);
}

/// Upstream's recovery (`disk_log/recovery.rs`, `discard_abandoned_preparations`)
/// reopens the states a crash leaves across its rollover — which builds the
/// next segment before it swaps it in, and installs it before it flushes the
/// one it retires — and a broker that swaps its log for ours must too: the
/// next segment created and no more, or a prefix of its header; a header and
/// no record at a base below the log's end, or above it; two such, from two
/// crashes; each with the retired segment's last record torn or whole. The
/// segments that never took effect are moved to evidence and removed, the
/// torn record cut, every whole record read back, and appends go on from the
/// tail. A header and no record at the log's end is a finished roll: kept.
#[tokio::test]
async fn a_rollover_a_crash_left_unfinished_reopens_as_upstream_s_recovery_reopens_it() {
    use felix_codec::format::segment_header::SegmentHeader;
    let header = |base: u64| SegmentHeader::new(base, 1_700_000_000).encode().to_vec();
    let abandoned: [(&str, Vec<Vec<u8>>); 6] = [
        ("created, no header", vec![Vec::new()]),
        ("a prefix of a header", vec![header(5)[..20].to_vec()]),
        ("built below the end", vec![header(3)]),
        ("stranded above the end", vec![header(9)]),
        ("two crashes", vec![header(7), header(2)]),
        ("a finished roll", vec![header(5)]),
    ];
    for torn in [false, true] {
        for (what, planted) in &abandoned {
            let tmp = tempfile::tempdir().unwrap();
            let log = open(tmp.path(), small(FsyncMode::OnCommit));
            // Three records of 36 bytes a segment: 0..=2 in segment 0, 3..=4 in segment 1.
            append_each(&log, &["record-0", "record-1", "record-2", "record-3", "record-4"]).await;
            log.shutdown().await.unwrap();
            drop(log);
            let retired = tmp.path().join("00000000000000000001.log");
            if torn {
                let len = std::fs::metadata(&retired).unwrap().len();
                std::fs::OpenOptions::new().write(true).open(&retired).unwrap().set_len(len - 3).unwrap();
            }
            for (k, bytes) in planted.iter().enumerate() {
                std::fs::write(tmp.path().join(format!("{:020}.log", 2 + k)), bytes).unwrap();
            }
            let kept = *what == "a finished roll" && !torn;
            let log =
                DiskLog::open(tmp.path(), "t/ns/s/0", small(FsyncMode::OnCommit)).unwrap_or_else(|e| panic!("{what}, torn {torn}: {e}"));
            let end = if torn { 4 } else { 5 };
            assert_eq!(log.tail_offset().await.unwrap(), end, "{what}, torn {torn}");
            let read: Vec<u64> = read_from(&log, 0).await.into_iter().map(|(o, _)| o).collect();
            assert_eq!(read, (0..end).collect::<Vec<_>>(), "{what}, torn {torn}");
            let ids: Vec<u64> = log.segments().iter().map(|s| s.id).collect();
            assert_eq!(ids, if kept { vec![0, 1, 2] } else { vec![0, 1] }, "{what}, torn {torn}");
            for (k, bytes) in planted.iter().enumerate() {
                let name = format!("{:020}.log", 2 + k);
                let evidence = tmp.path().join(format!("{name}.cut-0"));
                if kept {
                    assert!(tmp.path().join(&name).exists());
                } else {
                    assert!(!tmp.path().join(&name).exists(), "{what}, torn {torn}: {name} removed");
                    assert_eq!(evidence.exists(), !bytes.is_empty(), "{what}, torn {torn}: {name}'s bytes kept as evidence");
                }
            }
            let next = log.append(&[rec("after")]).await.unwrap();
            assert_eq!(next.first_offset, end, "{what}, torn {torn}: appends go on from the tail");
            log.shutdown().await.unwrap();
        }
    }
}
