//! `felix-storage demo`: the sample root, written only into a new or empty
//! directory.

use std::path::Path;
use std::sync::Arc;

use felix_engine::OsIo;

use crate::cli::error::{fail, CliError};
use crate::cli::output::say;
use crate::cli::Outcome;

pub(crate) fn demo(dir: &Path) -> Outcome {
    match felix_engine::Io::list(&OsIo::new(), dir) {
        Ok(entries) => {
            if !entries.is_empty() {
                return Err(CliError::Refused(format!(
                    "{}: not empty; the sample root is written only into a new or empty directory",
                    dir.display()
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(CliError::input(dir.display(), e)),
    }
    let shards = felix_engine::tools::demo::write_demo(&(Arc::new(OsIo::new()) as Arc<dyn felix_engine::Io>), dir).map_err(|e| fail(&e))?;
    say!("wrote a sample root at {}:", dir.display());
    for s in shards {
        say!("  {}", s.display());
    }
    say!("try: felix-storage inspect {}", dir.display());
    Ok(false)
}
