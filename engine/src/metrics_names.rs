//! Metric names, in one place, recorded through the `metrics` crate (any
//! recorder the embedding broker installs; none, and they cost nothing).
//! They are the broker's own names (upstream `metrics_names.rs`), so a
//! dashboard built for its log reads ours unchanged. Three questions each
//! answers: is durability the bottleneck (`append_duration_seconds` against
//! `sync_duration_seconds`), is group commit working (`sync_batch_appends`,
//! the appends one flush covers), and is the periodic policy within its
//! window (`unsynced_bytes`).
//!
//! Upstream names we do not record, and why: `index_write_failures_total`
//! (an index write failure stops our shard like any other write: it shows in
//! `sync_failures_total`'s neighbour, the fail-stop error, not as a counter);
//! `segment_roll_background_total`, `…_failed_total`, `…_discarded_total`
//! (we roll inline: upstream measured background rollover never better and
//! ships it disabled).

/// Records accepted into the log.
pub const APPEND_RECORDS_TOTAL: &str = "felix_storage_append_records_total";
/// Encoded bytes written, header included.
pub const APPEND_BYTES_TOTAL: &str = "felix_storage_append_bytes_total";
/// Records per append batch.
pub const APPEND_BATCH_RECORDS: &str = "felix_storage_append_batch_records";
/// End-to-end time for an append, including any durability wait.
pub const APPEND_DURATION_SECONDS: &str = "felix_storage_append_duration_seconds";
/// Device flushes performed.
pub const SYNC_TOTAL: &str = "felix_storage_sync_total";
/// Time spent inside a single flush.
pub const SYNC_DURATION_SECONDS: &str = "felix_storage_sync_duration_seconds";
/// Appends served by one flush: the group-commit fan-in.
pub const SYNC_BATCH_APPENDS: &str = "felix_storage_sync_batch_appends";
/// Flushes that failed (each one stops its shard).
pub const SYNC_FAILURES_TOTAL: &str = "felix_storage_sync_failures_total";
/// Bytes written but not yet flushed: the data a power cut would lose now.
pub const UNSYNCED_BYTES: &str = "felix_storage_unsynced_bytes";
/// Segment rollovers.
pub const SEGMENT_ROLL_TOTAL: &str = "felix_storage_segment_roll_total";
/// Segments on disk for the shard last changed.
pub const SEGMENT_COUNT: &str = "felix_storage_segment_count";
/// Sealed segments deleted by retention.
pub const RETENTION_SEGMENTS_DELETED_TOTAL: &str = "felix_storage_retention_segments_deleted_total";
/// Bytes reclaimed by retention (the deleted segments' lengths).
pub const RETENTION_BYTES_RECLAIMED_TOTAL: &str = "felix_storage_retention_bytes_reclaimed_total";
/// Oldest offset still readable, set by every retention pass: what `Trimmed`
/// reports as `oldest`.
pub const RETENTION_BASE_OFFSET: &str = "felix_storage_retention_base_offset";
/// Retention passes that failed. Not fatal when a segment could not be
/// unlinked (the next pass retries); a persistently non-zero value means the
/// log grows unbounded.
pub const RETENTION_FAILURES_TOTAL: &str = "felix_storage_retention_failures_total";
/// Records returned by range reads.
pub const READ_RECORDS_TOTAL: &str = "felix_storage_read_records_total";
/// Payload bytes returned by range reads.
pub const READ_BYTES_TOTAL: &str = "felix_storage_read_bytes_total";
/// Time to serve a range read.
pub const READ_DURATION_SECONDS: &str = "felix_storage_read_duration_seconds";
/// Time spent recovering a shard on open.
pub const RECOVERY_DURATION_SECONDS: &str = "felix_storage_recovery_duration_seconds";
/// Bytes cut from a torn tail during recovery (kept as evidence).
pub const RECOVERY_TRUNCATED_BYTES: &str = "felix_storage_recovery_truncated_bytes";
/// Unfinished newest segments removed at open (a roll that never completed).
pub const RECOVERY_ABANDONED_ROLLS_TOTAL: &str = "felix_storage_recovery_abandoned_rolls_total";
/// Indexes rebuilt because they were missing or stale.
pub const RECOVERY_INDEX_REBUILDS_TOTAL: &str = "felix_storage_recovery_index_rebuilds_total";
/// Ours, not upstream's: `OnCommit` waiters that stayed awake through a
/// flush (a worker's core spent for the flush's length, to be running when
/// it ends), labelled `waiter` = `lone` (a lone publisher's) or
/// `last_writer` (the write that completed the flush leader's gathering).
pub const FLUSH_SPINS_TOTAL: &str = "felix_storage_flush_spins_total";
