//! `felix-storage inspect`: resolve the paths, inspect them on `--jobs`
//! workers (a progress bar on a terminal), print the text or the JSON report.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use felix_engine::tools::inspect::{self, NoProgress};
use felix_engine::OsIo;

use crate::cli::error::CliError;
use crate::cli::output::lines_shown;
use crate::cli::progress::Bar;

pub(crate) fn run(json: bool, sha256: bool, jobs: Option<u16>, paths: &[PathBuf]) -> Result<bool, CliError> {
    let io = OsIo::new();
    let resolution = inspect::resolve(&io, paths)?;
    // The text report shows no hash: only the JSON one pays for it.
    let options = inspect::Options { hash: json, sha256, jobs: jobs.map_or_else(inspect::default_jobs, usize::from) };
    let report = if !json && std::io::stderr().is_terminal() {
        inspect::inspect_with(&io, &resolution, &options, &mut Bar { bar: None })?
    } else {
        inspect::inspect_with(&io, &resolution, &options, &mut NoProgress)?
    };
    let mut out = std::io::stdout().lock();
    let written = if json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(std::io::Error::other).and_then(|()| writeln!(out))
    } else {
        out.write_all(lines_shown(&report.to_text()).as_bytes())
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(CliError::Output { target: "<stdout>", what: e.to_string() });
        }
    }
    Ok(report.has_damage() || resolution.refuses_a_shard())
}
