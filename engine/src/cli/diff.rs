//! `felix-storage diff`: the two replicas' files, the diff (with a progress
//! bar on a terminal for a long one), its text or its JSON.

use std::io::Write;
use std::path::Path;

use felix_engine::OsIo;

use crate::cli::error::CliError;
use crate::cli::output::{lines_shown, out_err};
use crate::cli::{progress, Outcome};

pub(crate) fn diff(a: &Path, b: &Path, json: bool) -> Outcome {
    use std::io::IsTerminal;
    let io = OsIo::new();
    let files_a = felix_engine::tools::diff::replica_files(&io, a)?;
    let files_b = felix_engine::tools::diff::replica_files(&io, b)?;
    let total = felix_engine::tools::diff::total_bytes(&io, &[&files_a, &files_b]);
    let bar = (!json && std::io::stderr().is_terminal() && total >= progress::MIN_BYTES).then(|| progress::bar(total));
    let on_bytes = |n: u64| {
        if let Some(bar) = &bar {
            bar.inc(n);
        }
    };
    let diff = felix_engine::tools::diff::diff(&io, (a, &files_a), (b, &files_b), &on_bytes)?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let text = if json {
        let mut text = serde_json::to_string_pretty(&diff).map_err(|e| CliError::internal("diff JSON", e))?;
        text.push('\n');
        text
    } else {
        lines_shown(&diff.to_text())
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| out_err(&e))?;
    Ok(diff.differs())
}
