//! The tools over the library: what `felix-storage inspect`, `diff`,
//! `recover`, `demo` and `schema` do, as functions a test (or another
//! program) calls without the binary. They read files only through
//! [`crate::io::Io`] and never change a shard except through `recover`,
//! which executes the codec's plan with the shard's own executor.

use std::fmt;
use std::path::{Path, PathBuf};

pub mod demo;
pub mod diff;
pub mod inspect;
pub mod read;
pub mod recover;
#[cfg(feature = "cli")]
pub mod schema;

/// Why a tool could not run (as opposed to damage it found): the path
/// involved and what went wrong there.
#[derive(Debug)]
pub struct ToolError {
    /// The path involved.
    pub path: PathBuf,
    /// What went wrong.
    pub what: String,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.what)
    }
}

impl std::error::Error for ToolError {}

/// An IO error at `path`, as a tool's.
pub(crate) fn io_error(path: &Path, e: &std::io::Error) -> ToolError {
    ToolError { path: path.to_path_buf(), what: e.to_string() }
}

/// The last component of `path`, lossily as text (empty for `/` or `..`).
pub(crate) fn name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
