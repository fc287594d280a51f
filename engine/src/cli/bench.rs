//! `felix-storage bench`: upstream's `felix-log-tool bench` loop over this
//! engine's broker facade, with its flags and its JSON line, so the same grid
//! runs on both (`scripts/bench-broker`, `docs/broker.md`). Beyond upstream's
//! line: `fsyncs` (segment `fdatasync`s while measuring) and
//! `appends_per_fsync`, the group commit's fan-in.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use felix_engine::broker::{now_micros, AppendOnlyLog, AppendRecord, DiskLog, FsyncMode, LogConfig};

use crate::cli::error::{fail, CliError};
use crate::cli::produce::MAX_BATCH;

/// The most payload bytes `bench`'s publishers may hold at once.
const MAX_BENCH_IN_FLIGHT_BYTES: u64 = 1 << 30;

/// `bench`'s flags: upstream's `felix-log-tool bench` flags, with its defaults.
#[derive(clap::Args, Debug)]
pub(crate) struct BenchFlags {
    /// The log directory to append to.
    #[arg(long)]
    dir: PathBuf,
    /// Records to measure.
    #[arg(long, default_value_t = 20_000)]
    records: u64,
    /// Payload size in bytes.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(..=i64::from(felix_codec::MAX_PAYLOAD_BYTES)))]
    payload_bytes: u32,
    /// Records per append.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=MAX_BATCH as i64))]
    batch: u32,
    /// Concurrent publishers.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    concurrency: u32,
    /// Records appended (by one publisher) before measuring.
    #[arg(long, default_value_t = 2_000)]
    warmup_records: u64,
    /// A name for this run in the JSON line.
    #[arg(long, default_value = "run")]
    label: String,
    /// When an append is acknowledged: on_commit, periodic or none.
    #[arg(long, default_value = "on_commit", value_parser = ["on_commit", "periodic", "none"])]
    fsync: String,
    /// The flush interval of --fsync periodic, in milliseconds.
    #[arg(long, default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..))]
    fsync_interval_ms: u64,
    /// Roll to a new segment past this many bytes.
    #[arg(long, default_value_t = 64 << 20)]
    segment_bytes: u64,
    /// An index entry per this many bytes.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    index_spacing_bytes: u64,
    /// Do not reserve each segment's blocks when it is created.
    #[arg(long)]
    no_preallocate: bool,
    /// Upstream's background-rollover threshold (accepted; we roll inline).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u8).range(1..=100))]
    rollover_threshold_percent: u8,
    /// Upstream's overshoot bound (accepted; our segments never overshoot).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u8).range(1..))]
    max_overshoot_percent: u8,
}

impl BenchFlags {
    pub(crate) fn into_args(self) -> Result<BenchArgs, CliError> {
        use felix_engine::broker::{FsyncMode, LogConfig};
        let fsync_mode = match self.fsync.as_str() {
            "none" => FsyncMode::None,
            "periodic" => FsyncMode::Periodic { interval: std::time::Duration::from_millis(self.fsync_interval_ms) },
            _ => FsyncMode::OnCommit,
        };
        let config = LogConfig {
            segment_size_bytes: self.segment_bytes,
            index_spacing_bytes: self.index_spacing_bytes,
            fsync_mode,
            preallocate_segments: !self.no_preallocate,
            rollover_threshold_percent: self.rollover_threshold_percent,
            max_overshoot_percent: self.max_overshoot_percent,
            ..LogConfig::default()
        };
        config.validate().map_err(|e| fail(&e))?;
        // Every publisher builds its batch before appending it: refuse a load
        // that cannot be held in memory instead of aborting mid-run.
        let in_flight = u64::from(self.payload_bytes).max(1) * u64::from(self.batch) * u64::from(self.concurrency);
        if in_flight > MAX_BENCH_IN_FLIGHT_BYTES {
            return Err(CliError::Usage(format!(
                "--payload-bytes × --batch × --concurrency is {in_flight} bytes in flight; at most {MAX_BENCH_IN_FLIGHT_BYTES} (1 GiB)"
            )));
        }
        Ok(BenchArgs {
            dir: self.dir,
            config,
            records: self.records,
            payload_bytes: self.payload_bytes as usize,
            batch: self.batch as usize,
            concurrency: self.concurrency as usize,
            warmup_records: self.warmup_records,
            label: self.label,
        })
    }
}

/// One bench run: upstream's `BenchArgs`.
#[derive(Debug, Clone)]
pub struct BenchArgs {
    pub dir: PathBuf,
    pub config: LogConfig,
    pub records: u64,
    pub payload_bytes: usize,
    pub batch: usize,
    pub concurrency: usize,
    pub warmup_records: u64,
    pub label: String,
}

/// What the measured phase did.
struct Measured {
    latencies_us: Vec<u64>,
    elapsed: Duration,
    fsyncs: u64,
}

/// Runs the bench on a multi-threaded runtime with a worker per core (as
/// upstream's `#[tokio::main]`) and prints its JSON line.
pub fn run(args: &BenchArgs) -> Result<bool, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| CliError::internal("runtime", e))?;
    let line = runtime.block_on(measure(args))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).map_err(|e| CliError::Output { target: "<stdout>", what: e.to_string() })?;
    Ok(false)
}

async fn measure(args: &BenchArgs) -> Result<String, CliError> {
    let log = Arc::new(DiskLog::open(&args.dir, "bench", args.config.clone()).map_err(|e| fail(&e))?);
    // The first appends pay for segment creation and page-cache faults that
    // steady state does not (upstream's warmup: one publisher).
    if args.warmup_records > 0 {
        load(&log, args.warmup_records, args.payload_bytes, args.batch, 1).await?;
    }
    let syncs_before = log.shard().data_syncs();
    let started = Instant::now();
    let mut latencies_us = load(&log, args.records, args.payload_bytes, args.batch, args.concurrency).await?;
    let elapsed = started.elapsed();
    let fsyncs = log.shard().data_syncs() - syncs_before;
    // A policy that leaves data in the page cache has not finished its work
    // when the last append returns (upstream flushes before reporting too).
    log.sync().await.map_err(|e| fail(&e))?;
    log.shutdown().await.map_err(|e| fail(&e))?;
    latencies_us.sort_unstable();
    Ok(json_line(args, &Measured { latencies_us, elapsed, fsyncs }))
}

/// `records` appends of `batch` records across `concurrency` tasks; each
/// append's latency in microseconds.
async fn load(log: &Arc<DiskLog>, records: u64, payload_bytes: usize, batch: usize, concurrency: usize) -> Result<Vec<u64>, CliError> {
    let tasks: Vec<_> = (0..concurrency as u64)
        .map(|task| (task, share(records, concurrency as u64, task)))
        .filter(|&(_, per_task)| per_task > 0)
        .map(|(task, per_task)| {
            let log = Arc::clone(log);
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut written = 0u64;
                while written < per_task {
                    let n = (batch as u64).min(per_task - written);
                    let records: Vec<AppendRecord> = (0..n)
                        .map(|i| AppendRecord {
                            payload: payload(task << 32 | (written + i), payload_bytes),
                            timestamp_micros: now_micros(),
                        })
                        .collect();
                    let started = Instant::now();
                    log.append(&records).await?;
                    latencies.push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
                    written += n;
                }
                Ok::<_, felix_engine::EngineError>(latencies)
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.map_err(|e| CliError::internal("bench task", e))?.map_err(|e| fail(&e))?);
    }
    Ok(all)
}

/// Task `task`'s share of `records` among `tasks` publishers: the shares
/// differ by at most one and add up to `records` exactly (no task writes a
/// record the line does not count).
fn share(records: u64, tasks: u64, task: u64) -> u64 {
    let tasks = tasks.max(1);
    records / tasks + u64::from(task < records % tasks)
}

/// A payload of `len` bytes, distinct per seed (its bytes, repeated).
fn payload(seed: u64, len: usize) -> Bytes {
    let mut bytes = vec![0u8; len];
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(seed.to_le_bytes().get(..chunk.len()).unwrap_or_default());
    }
    bytes.into()
}

/// Nearest-rank percentile of a sorted sample (upstream's).
fn percentile(sorted: &[u64], quantile: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let rank = (quantile * sorted.len() as f64).ceil() as usize;
    #[allow(clippy::cast_precision_loss)]
    sorted.get(rank.clamp(1, sorted.len()) - 1).map_or(0.0, |v| *v as f64)
}

/// `on_commit`, `none` or `periodic:MSms` (upstream's wording).
fn describe(mode: FsyncMode) -> String {
    match mode {
        FsyncMode::None => "none".into(),
        FsyncMode::Periodic { interval } => format!("periodic:{}ms", interval.as_millis()),
        FsyncMode::OnCommit => "on_commit".into(),
    }
}

#[allow(clippy::cast_precision_loss)]
fn json_line(args: &BenchArgs, m: &Measured) -> String {
    let l = &m.latencies_us;
    let appends = l.len();
    let seconds = m.elapsed.as_secs_f64();
    let per_fsync =
        if m.fsyncs == 0 || appends == 0 { serde_json::Value::Null } else { serde_json::json!(appends as f64 / m.fsyncs as f64) };
    serde_json::json!({
        "event": "bench",
        "label": args.label,
        "engine": "felix-engine",
        "fsync": describe(args.config.fsync_mode),
        "records": args.records,
        "batch": args.batch,
        "payload_bytes": args.payload_bytes,
        "concurrency": args.concurrency,
        "seconds": seconds,
        "records_per_second": if args.records == 0 || seconds <= 0.0 { 0.0 } else { args.records as f64 / seconds },
        "appends": appends,
        "fsyncs": m.fsyncs,
        "appends_per_fsync": per_fsync,
        "latency_us": {
            "p50": percentile(l, 0.50),
            "p90": percentile(l, 0.90),
            "p99": percentile(l, 0.99),
            "p999": percentile(l, 0.999),
            "max": percentile(l, 1.0),
        },
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let sorted: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&sorted, 0.5), 50.0);
        assert_eq!(percentile(&sorted, 0.99), 99.0);
        assert_eq!(percentile(&sorted, 0.0), 1.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn shares_add_up_to_the_records_asked_for() {
        for (records, tasks) in [(0, 4), (10, 64), (20_000, 64), (7, 3), (5, 1), (64, 64)] {
            let shares: Vec<u64> = (0..tasks).map(|t| share(records, tasks, t)).collect();
            assert_eq!(shares.iter().sum::<u64>(), records, "{records} over {tasks}");
            assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn payloads_are_distinct_and_of_their_length() {
        assert_eq!(payload(1, 13).len(), 13);
        assert_ne!(payload(1, 16), payload(2, 16));
    }
}
