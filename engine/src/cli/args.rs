//! The command line's definitions (clap's derive: every subcommand, flag
//! and help text), the parsers of `--shard` and `--fsync`, and clap's own
//! errors shown escaped.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use felix_codec::format::shard_name::ShardKey;

use crate::cli::bench::BenchFlags;
use crate::cli::consume::Format;
use crate::cli::error::CliError;
use crate::cli::produce::MAX_BATCH;

#[derive(Parser, Debug)]
#[command(name = "felix-storage", version, about = "Inspect and repair Felix durable stream storage")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Verify segment, index and epochs files, shard directories or roots of shards.
    ///
    /// Prints one line per finding: file, kind, byte position, record offset,
    /// repair verdict and what it means. Exit 0: nothing damaged; 1: damage
    /// found; 2: could not run.
    Inspect {
        /// Print the report as JSON (see docs/report-format.md), with each file's BLAKE3 hash.
        #[arg(long)]
        json: bool,
        /// Also give each file's SHA-256 in the JSON report (the value `sha256sum` prints).
        #[arg(long, requires = "json")]
        sha256: bool,
        /// Worker threads (default: every core); the report is the same for any number.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
        /// Files, shard directories, or roots of shard directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Append each stdin line (without its newline, nor a CR right before it;
    /// a last line without one counts too, whole) as one record of up to 64
    /// MiB; print each acknowledged offset once its fsync has returned.
    Produce {
        /// The root directory holding shard directories (created if missing).
        root: PathBuf,
        /// TENANT/NAMESPACE/STREAM/N
        #[arg(long)]
        shard: String,
        /// Lines per durable commit (1 to 65536).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=MAX_BATCH as i64))]
        batch: u32,
        /// Wait for another writer to let go of the shard instead of failing at once.
        #[arg(long)]
        wait: bool,
        /// When an offset is printed: `on-commit` (after its fsync), `periodic:MS`
        /// (once written; fsynced within MS milliseconds), or `none` (once written).
        #[arg(long, default_value = "on-commit", value_parser = parse_fsync)]
        fsync: felix_engine::broker::FsyncMode,
    },
    /// Print records from an offset (reads only: creates and changes nothing).
    Consume {
        /// The root directory holding shard directories.
        root: PathBuf,
        /// TENANT/NAMESPACE/STREAM/N
        #[arg(long)]
        shard: String,
        /// First offset to print.
        #[arg(long, default_value_t = 0, conflicts_with = "from_time")]
        from: u64,
        /// Start at the first record, in offset order, whose timestamp is at or
        /// after TIME (Kafka's offsetsForTimes rule: a clock that went back never
        /// hides a later record). TIME: RFC 3339 (2026-12-01T14:03:00Z,
        /// 2026-12-01T16:03:00.25+02:00) or @MICROS since 1970.
        #[arg(long, value_name = "TIME")]
        from_time: Option<std::ffi::OsString>,
        /// Stop before the first record, in offset order, whose timestamp is at
        /// or after TIME (the offset --from-time TIME would start at); records
        /// before it are printed whatever their own timestamps.
        #[arg(long, value_name = "TIME")]
        until_time: Option<std::ffi::OsString>,
        /// Most records to print.
        #[arg(long)]
        max: Option<u64>,
        /// `text` (offset, time, payload) or `json` (one object per line).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Run recovery on shards: what was (or would be) cut, rebuilt, removed or refused, and why.
    Recover {
        /// The root directory holding shard directories (or a shard directory).
        root: PathBuf,
        /// Only this shard: TENANT/NAMESPACE/STREAM/N
        #[arg(long)]
        shard: Option<String>,
        /// Change nothing (and take no lock); print the plan.
        #[arg(long)]
        dry_run: bool,
        /// Also cut a damaged tail whose damage is rot rather than a torn write.
        #[arg(long)]
        repair_checksum_tail: bool,
        /// Print the plan (or what was done) as JSON (see docs/report-format.md).
        #[arg(long)]
        json: bool,
        /// Wait for another writer to let go of the shard instead of failing at once.
        #[arg(long)]
        wait: bool,
        /// Run only the plan you reviewed: a file `recover --dry-run --json` printed for the same
        /// shards. A shard whose plan, made again under its writer's lock, does other work
        /// is left unchanged (exit 1).
        #[arg(long, value_name = "PLAN.json", conflicts_with = "dry_run")]
        plan: Option<PathBuf>,
    },
    /// Print the records of one segment file from --from-offset (found by walking verified headers).
    Dump {
        /// A segment (*.log) file.
        file: PathBuf,
        /// First offset to print.
        #[arg(long, conflicts_with = "from_time")]
        from_offset: Option<u64>,
        /// Start at the first record, in offset order, whose timestamp is at or
        /// after TIME (Kafka's rule, as `consume --from-time`): RFC 3339 or @MICROS.
        #[arg(long, value_name = "TIME")]
        from_time: Option<std::ffi::OsString>,
        /// Stop once this many payload bytes were shown (a last line says where, and how to go on).
        #[arg(long, default_value_t = 1 << 20)]
        max_bytes: u64,
        /// One JSON object per line (JSON Lines): the segment, each record (no
        /// payload bytes), the damage it stopped at, where --max-bytes stopped it
        /// (docs/report-format.md; `felix-storage schema dump-line`).
        #[arg(long)]
        json: bool,
    },
    /// Write a realistic sample root (clean, torn, rotted, stale-index shards) into a new or empty directory.
    Demo {
        /// Where to write it (created; must be empty if it exists).
        dir: PathBuf,
    },
    /// Where two replicas of a shard diverge, by each record's verified checksum (never payload bytes).
    ///
    /// Prints each side's offsets and epochs, the common range, the first
    /// divergent offset, what one side has more, the damage that blocks the
    /// comparison, and where each side would truncate as a follower of the
    /// other. Exit 0: identical; 1: they differ or damage blocks the
    /// comparison; 2: could not run.
    Diff {
        /// Replica A: a shard directory (or a root of shards, with --shard).
        a: PathBuf,
        /// Replica B: a shard directory (or a root of shards, with --shard).
        b: PathBuf,
        /// A and B are roots; compare this shard of each: TENANT/NAMESPACE/STREAM/N
        #[arg(long)]
        shard: Option<String>,
        /// Print the diff as JSON (see docs/report-format.md).
        #[arg(long)]
        json: bool,
    },
    /// Measure appends through the broker facade: upstream's `felix-log-tool
    /// bench` loop, flags and JSON line (plus `fsyncs` and `appends_per_fsync`).
    ///
    /// Appends --records records of --payload-bytes bytes, --batch per append,
    /// from --concurrency tasks on a runtime with a worker per core, after
    /// --warmup-records from one task; prints one JSON line with records per
    /// second and each append's latency percentiles. Writes into --dir (a
    /// log directory: created, or recovered and appended to).
    Bench(BenchFlags),
    /// Print a shell completion script for felix-storage.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print felix-storage's man page (roff), generated from the same definitions as --help.
    Man {
        /// A subcommand's page (felix-storage-SUBCOMMAND(1)) instead of felix-storage(1).
        subcommand: Option<String>,
    },
    /// Print the JSON Schema of a document felix-storage prints.
    Schema {
        /// `report` (inspect --json), `diff` (diff --json), `plan` (recover --json) or
        /// `dump-line` (each line of dump --json).
        #[arg(value_enum)]
        document: felix_engine::tools::schema::Document,
    },
}

/// `TENANT/NAMESPACE/STREAM/N`.
pub(crate) fn parse_shard(text: &str) -> Result<(String, String, String, u32), CliError> {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [t, n, s, i] if !t.is_empty() && !n.is_empty() && !s.is_empty() => {
            let i = i.parse().map_err(|e: std::num::ParseIntError| match e.kind() {
                std::num::IntErrorKind::PosOverflow => {
                    CliError::Usage(format!("--shard \"{text}\": the shard number {i} is out of range: the maximum is {}", u32::MAX))
                }
                // A negative whole number: out of range too, below the minimum.
                _ if i.strip_prefix('-').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) => {
                    CliError::Usage(format!("--shard \"{text}\": the shard number {i} is out of range: the minimum is 0"))
                }
                _ => CliError::Usage(format!("--shard \"{text}\": the shard number \"{i}\" is not a whole number")),
            })?;
            Ok(((*t).into(), (*n).into(), (*s).into(), i))
        }
        _ => Err(CliError::Usage(format!("--shard \"{text}\": expected TENANT/NAMESPACE/STREAM/N"))),
    }
}

/// The value of `flag`, a time a person writes (RFC 3339 or `@MICROS`),
/// read by the codec's [`parse_time`](felix_codec::format::time::parse_time).
/// Read here rather than by clap, which would quote the value as escaped
/// for the terminal and count its characters there: the error names the
/// flag, the value (escaped when shown) and the character of the value as
/// given.
/// A value that is not UTF-8 is refused here too, naming the flag and the
/// first character that is not.
pub(crate) fn time_arg(flag: &str, value: Option<&std::ffi::OsStr>) -> Result<Option<u64>, CliError> {
    let Some(value) = value else { return Ok(None) };
    let bytes = value.as_encoded_bytes();
    let t = std::str::from_utf8(bytes).map_err(|e| {
        let valid = bytes.get(..e.valid_up_to()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or_default();
        let byte = bytes.get(e.valid_up_to()).copied().unwrap_or_default();
        CliError::Usage(format!(
            "{flag} \"{}\": character {} is not UTF-8 (byte {byte:#04X}): a time is RFC 3339, such as 2026-12-01T14:03:00Z, or @MICROS since 1970",
            value.to_string_lossy(),
            valid.chars().count() + 1
        ))
    })?;
    felix_codec::format::time::parse_time(t).map(Some).map_err(|e| CliError::Usage(format!("{flag} \"{t}\": {e}")))
}

/// `on-commit`, `none` or `periodic:MS`.
fn parse_fsync(text: &str) -> Result<felix_engine::broker::FsyncMode, String> {
    use felix_engine::broker::FsyncMode;
    match text {
        "on-commit" => Ok(FsyncMode::OnCommit),
        "none" => Ok(FsyncMode::None),
        _ => match text.strip_prefix("periodic:").map(str::parse::<u64>) {
            Some(Ok(ms)) if ms > 0 => Ok(FsyncMode::Periodic { interval: std::time::Duration::from_millis(ms) }),
            _ => Err(format!("\"{text}\": expected on-commit, none or periodic:MS (MS > 0)")),
        },
    }
}

/// The directory of `--shard` under `root`.
pub(crate) fn shard_dir(root: &Path, shard: &str) -> Result<PathBuf, CliError> {
    let (t, n, s, i) = parse_shard(shard)?;
    Ok(felix_engine::Shard::dir_of(root, &ShardKey { tenant: &t, namespace: &n, stream: &s, shard: i }))
}

/// clap's error for a terminal. clap quotes the arguments it complains
/// of as they are, so the arguments are escaped first (each through
/// [`felix_codec::doc::report::one_line`], the one escaper) and parsed again for
/// the error to show: a newline or an escape sequence in an argument is
/// shown escaped and cannot forge a line. Every line is then guarded
/// ([`felix_codec::doc::report::guard_line`]). Plain text: no colours.
pub(crate) fn clap_error_shown(e: &clap::Error) -> String {
    use felix_codec::doc::report::{guard_line, one_line};
    let escaped: Vec<String> = std::env::args_os().map(|a| one_line(&a.to_string_lossy()).into_owned()).collect();
    let shown = match Cli::try_parse_from(escaped) {
        Err(again) if again.use_stderr() => again.render().to_string(),
        _ => e.render().to_string(),
    };
    shown.lines().map(|line| format!("{}\n", guard_line(line))).collect()
}
