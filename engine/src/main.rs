//! `felix-storage`: the command line over the Felix storage format.
//!
//! Exit status: 0 nothing damaged, 1 damage found, 2 could not run.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use felix_codec::shard_name::ShardKey;
use felix_engine::inspect::{self, NoProgress, Progress};
use felix_engine::shard::{Config, Shard};
use felix_engine::{EngineError, OsIo};

mod commands;

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
        /// Print the report as JSON (see docs/report-format.md).
        #[arg(long)]
        json: bool,
        /// Files, shard directories, or roots of shard directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Append each stdin line (without its newline) as one record; print
    /// each acknowledged offset once its fsync has returned.
    Produce {
        /// The root directory holding shard directories.
        root: PathBuf,
        /// TENANT/NAMESPACE/STREAM/N
        #[arg(long)]
        shard: String,
        /// Lines per durable commit.
        #[arg(long, default_value_t = 1)]
        batch: usize,
    },
    /// Print records from an offset.
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
    /// Run recovery on shards: say what was (or would be) truncated or rebuilt.
    Recover {
        /// The root directory holding shard directories (or a shard directory).
        root: PathBuf,
        /// Only this shard: TENANT/NAMESPACE/STREAM/N
        #[arg(long)]
        shard: Option<String>,
        /// Change nothing; report what recovery would do.
        #[arg(long)]
        dry_run: bool,
        /// Also cut a damaged tail whose damage is rot rather than a torn write.
        #[arg(long)]
        repair_checksum_tail: bool,
    },
    /// Print the records of one segment file, using its index to start near --from-offset.
    Dump {
        /// A segment (*.log) file.
        file: PathBuf,
        /// First offset to print.
        #[arg(long)]
        from_offset: Option<u64>,
        /// Stop after about this many payload bytes.
        #[arg(long, default_value_t = 1 << 20)]
        max_bytes: u64,
    },
    /// Write a realistic sample root (clean, torn, rotted, stale-index shards).
    Demo {
        /// Where to write it (created; must not hold shards already).
        dir: PathBuf,
    },
}

/// Output format of `consume`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Tab-separated offset, time, payload.
    Text,
    /// One JSON object per line.
    Json,
}

/// A one-line progress bar on stderr, for scans of more than 64 MiB.
struct Bar {
    last_percent: Option<u64>,
}

impl Progress for Bar {
    fn update(&mut self, path: &Path, done: u64, total: u64) {
        if total < 64 << 20 {
            return;
        }
        let percent = done.saturating_mul(100) / total.max(1);
        if self.last_percent == Some(percent) {
            return;
        }
        self.last_percent = Some(percent);
        let filled = usize::try_from(percent / 4).unwrap_or(25);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        eprint!("\r[{:<25}] {percent:>3}% {} / {} MiB  {name:<28}", "#".repeat(filled), done >> 20, total >> 20);
        let _ = std::io::stderr().flush();
    }

    fn finish(&mut self) {
        if self.last_percent.is_some() {
            eprint!("\r{:<80}\r", "");
        }
    }
}

fn run_inspect(json: bool, paths: &[PathBuf]) -> Result<bool, inspect::InspectError> {
    let targets = inspect::resolve(paths)?;
    let report = if !json && std::io::stderr().is_terminal() {
        inspect::inspect(&targets, &mut Bar { last_percent: None })?
    } else {
        inspect::inspect(&targets, &mut NoProgress)?
    };
    let mut out = std::io::stdout().lock();
    let written = if json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(std::io::Error::other).and_then(|()| writeln!(out))
    } else {
        out.write_all(report.to_text().as_bytes())
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(inspect::InspectError { path: PathBuf::from("<stdout>"), what: e.to_string() });
        }
    }
    Ok(report.has_damage())
}

/// `TENANT/NAMESPACE/STREAM/N`.
fn parse_shard(text: &str) -> Result<(String, String, String, u32), (u8, String)> {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [t, n, s, i] if !t.is_empty() && !n.is_empty() && !s.is_empty() => {
            let i = i.parse().map_err(|_| (2, format!("--shard {text:?}: the shard number {i:?} is not a whole number")))?;
            Ok(((*t).into(), (*n).into(), (*s).into(), i))
        }
        _ => Err((2, format!("--shard {text:?}: expected TENANT/NAMESPACE/STREAM/N"))),
    }
}

/// Exit code for an engine error: 1 for damage or refusal, 2 for IO and usage.
pub(crate) fn fail(e: &EngineError) -> (u8, String) {
    let code = match e {
        EngineError::Corrupt { .. } | EngineError::FailStopped { .. } | EngineError::Trimmed { .. } | EngineError::Generation { .. } => 1,
        EngineError::Io { .. } | EngineError::TooLarge { .. } => 2,
    };
    (code, e.to_string())
}

fn open_with(root: &Path, shard: &str, dry_run: bool) -> Result<Shard, (u8, String)> {
    let (t, n, s, i) = parse_shard(shard)?;
    let key = ShardKey { tenant: &t, namespace: &n, stream: &s, shard: i };
    let dir = Shard::dir_of(root, &key);
    let (shard, report) = Shard::open_dir(std::sync::Arc::new(OsIo::new()), &dir, Config::default(), dry_run).map_err(|e| fail(&e))?;
    for w in &report.warnings {
        eprintln!("felix-storage: warning: {w}");
    }
    for (path, finding, sidecar) in &report.truncated {
        let verb = if dry_run { "would cut" } else { "cut" };
        eprintln!(
            "felix-storage: recovery {verb} {} at byte {} ({}); bytes kept in {}",
            path.display(),
            finding.position(),
            finding.kind.name(),
            sidecar.display()
        );
    }
    Ok(shard)
}

fn open(root: &Path, shard: &str) -> Result<Shard, (u8, String)> {
    open_with(root, shard, false)
}

/// Opens without changing anything on disk (recovery in dry-run).
fn open_read_only(root: &Path, shard: &str) -> Result<Shard, (u8, String)> {
    if !root.is_dir() {
        return Err((2, format!("{}: no such directory", root.display())));
    }
    open_with(root, shard, true)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Inspect { json, paths } => run_inspect(json, &paths).map_err(|e| (2, e.to_string())),
        Command::Produce { root, shard, batch } => open(&root, &shard).and_then(|s| commands::produce(&s, batch)),
        Command::Consume { root, shard, from, max, format } => {
            open_read_only(&root, &shard).and_then(|s| commands::consume(&s, from, max, format == Format::Json))
        }
        Command::Recover { root, shard, dry_run, repair_checksum_tail } => {
            let key = shard.as_deref().map(parse_shard).transpose();
            key.and_then(|k| {
                commands::recover(
                    &root,
                    k.as_ref().map(|(t, n, s, i)| ShardKey { tenant: t, namespace: n, stream: s, shard: *i }),
                    dry_run,
                    repair_checksum_tail,
                )
            })
        }
        Command::Dump { file, from_offset, max_bytes } => commands::dump(&file, from_offset, max_bytes),
        Command::Demo { dir } => commands::demo(&dir),
    };
    match result {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err((code, message)) => {
            eprintln!("felix-storage: {message}");
            ExitCode::from(code)
        }
    }
}
