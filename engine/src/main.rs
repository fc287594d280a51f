//! `felix-storage`: the command line over the Felix storage format.
//!
//! Exit status: 0 success, 1 damage found or refused, 2 usage or IO error.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use felix_codec::format::shard_name::ShardKey;
use felix_engine::tools::inspect::{self, NoProgress, Progress};
use felix_engine::EngineError;

use crate::cli_error::CliError;

mod bench;
mod cli_error;
mod commands;
mod progress;

/// Most lines per durable commit `produce` accepts.
pub const MAX_BATCH: usize = 65_536;

#[derive(Parser, Debug)]
#[command(name = "felix-storage", version, about = "Inspect and repair Felix durable stream storage")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
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
        #[arg(long, default_value_t = 0)]
        from: u64,
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
        #[arg(long)]
        from_offset: Option<u64>,
        /// Stop once this many payload bytes were shown (a last line says where, and how to go on).
        #[arg(long, default_value_t = 1 << 20)]
        max_bytes: u64,
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
        /// `report` (inspect --json), `diff` (diff --json) or `plan` (recover --json).
        #[arg(value_enum)]
        document: felix_engine::tools::schema::Document,
    },
}

/// The most payload bytes `bench`'s publishers may hold at once.
const MAX_BENCH_IN_FLIGHT_BYTES: u64 = 1 << 30;

/// `bench`'s flags: upstream's `felix-log-tool bench` flags, with its defaults.
#[derive(clap::Args, Debug)]
struct BenchFlags {
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
    fn into_args(self) -> Result<bench::BenchArgs, CliError> {
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
        Ok(bench::BenchArgs {
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

/// Output format of `consume`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Tab-separated offset, time, payload.
    Text,
    /// One JSON object per line.
    Json,
}

/// The progress bar (`indicatif`: rate, ETA) for scans of more than 64
/// MiB, on stderr only when it is a terminal.
struct Bar {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress for Bar {
    fn update(&mut self, path: &Path, done: u64, total: u64) {
        if total < 64 << 20 {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| progress::bar(total));
        bar.set_position(done);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        progress::show_file(bar, &name);
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

fn run_inspect(json: bool, sha256: bool, jobs: Option<u16>, paths: &[PathBuf]) -> Result<bool, CliError> {
    let resolution = inspect::resolve(paths)?;
    // The text report shows no hash: only the JSON one pays for it.
    let options = inspect::Options { hash: json, sha256, jobs: jobs.map_or_else(inspect::default_jobs, usize::from) };
    let report = if !json && std::io::stderr().is_terminal() {
        inspect::inspect_with(&resolution, &options, &mut Bar { bar: None })?
    } else {
        inspect::inspect_with(&resolution, &options, &mut NoProgress)?
    };
    let mut out = std::io::stdout().lock();
    let written = if json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(std::io::Error::other).and_then(|()| writeln!(out))
    } else {
        out.write_all(commands::lines_shown(&report.to_text()).as_bytes())
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(CliError::Output { target: "<stdout>", what: e.to_string() });
        }
    }
    Ok(report.has_damage() || resolution.refuses_a_shard())
}

/// `TENANT/NAMESPACE/STREAM/N`.
fn parse_shard(text: &str) -> Result<(String, String, String, u32), CliError> {
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
fn shard_dir(root: &Path, shard: &str) -> Result<PathBuf, CliError> {
    let (t, n, s, i) = parse_shard(shard)?;
    Ok(felix_engine::Shard::dir_of(root, &ShardKey { tenant: &t, namespace: &n, stream: &s, shard: i }))
}

/// An engine error as the CLI's (its exit code: 1 for damage or refusal, 2
/// for IO and usage).
pub(crate) fn fail(e: &EngineError) -> CliError {
    CliError::Engine(e.clone())
}

/// clap's error for a terminal. clap quotes the arguments it complains
/// of as they are, so the arguments are escaped first (each through
/// [`felix_codec::doc::report::one_line`], the one escaper) and parsed again for
/// the error to show: a newline or an escape sequence in an argument is
/// shown escaped and cannot forge a line. Every line is then guarded
/// ([`felix_codec::doc::report::guard_line`]). Plain text: no colours.
fn clap_error_shown(e: &clap::Error) -> String {
    use felix_codec::doc::report::{guard_line, one_line};
    let escaped: Vec<String> = std::env::args_os().map(|a| one_line(&a.to_string_lossy()).into_owned()).collect();
    let shown = match Cli::try_parse_from(escaped) {
        Err(again) if again.use_stderr() => again.render().to_string(),
        _ => e.render().to_string(),
    };
    shown.lines().map(|line| format!("{}\n", guard_line(line))).collect()
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprint!("{}", clap_error_shown(&e));
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help, --version: clap's own text on stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let result = match cli.command {
        Command::Inspect { json, sha256, jobs, paths } => run_inspect(json, sha256, jobs, &paths),
        Command::Produce { root, shard, batch, wait, fsync } => parse_shard(&shard).and_then(|(tenant, namespace, stream, n)| {
            let key = felix_engine::broker::ShardKey { tenant, namespace, stream, shard: n };
            commands::produce(&root, &key, usize::try_from(batch).unwrap_or(1), wait, fsync)
        }),
        Command::Consume { root, shard, from, max, format } => {
            shard_dir(&root, &shard).and_then(|dir| commands::consume(&dir, from, max, format == Format::Json))
        }
        Command::Recover { root, shard, dry_run, repair_checksum_tail, json, wait, plan } => {
            let dirs = match shard {
                Some(s) => shard_dir(&root, &s).map(|d| vec![d]),
                None => commands::shard_dirs(&root),
            };
            let reviewed = plan.map(|p| commands::read_plan(&p)).transpose();
            dirs.and_then(|dirs| {
                let options = commands::RecoverOptions { dry_run, repair_checksum_tail, json, wait, reviewed: reviewed? };
                commands::recover(&dirs, &options)
            })
        }
        Command::Dump { file, from_offset, max_bytes } => commands::dump(&file, from_offset, max_bytes),
        Command::Demo { dir } => commands::demo(&dir),
        Command::Diff { a, b, shard, json } => {
            let dirs = match &shard {
                Some(s) => shard_dir(&a, s).and_then(|da| Ok((da, shard_dir(&b, s)?))),
                None => Ok((a, b)),
            };
            dirs.and_then(|(a, b)| commands::diff(&a, &b, json))
        }
        Command::Bench(flags) => flags.into_args().and_then(|args| bench::run(&args)),
        Command::Completions { shell } => commands::completions(shell, &mut Cli::command()),
        Command::Man { subcommand } => commands::man(Cli::command(), subcommand.as_deref()),
        Command::Schema { document } => commands::schema(document),
    };
    match result {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(e) => {
            eprintln!("felix-storage: {}", felix_codec::doc::report::one_line(&e.to_string()));
            ExitCode::from(e.exit_code())
        }
    }
}
