//! `felix-storage`: the command line over the Felix storage format.
//!
//! Exit status: 0 nothing damaged, 1 damage found, 2 could not run.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use felix_engine::inspect::{self, NoProgress, Progress};

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
        Command::Inspect { json, paths } => run_inspect(json, &paths),
    };
    match result {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(e) => {
            eprintln!("felix-storage: {e}");
            ExitCode::from(2)
        }
    }
}
