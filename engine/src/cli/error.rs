//! Why a `felix-storage` command failed: what went wrong and where, and the
//! exit code it ends with — 1 for the data's state (damage, a refusal, a
//! lock held), 2 for the tool's own trouble (arguments, an input it cannot
//! use, output, IO). `main` prints it on one line, escaped.

use std::fmt;

use std::path::Path;

use felix_engine::tools::ToolError;
use felix_engine::EngineError;

/// See the module doc.
#[derive(Debug)]
pub(crate) enum CliError {
    /// The engine refused or failed; its kind decides the exit code.
    Engine(EngineError),
    /// A tool could not run: a file it had to read could not be read, a path it was given is not what it needs.
    Tool(ToolError),
    /// The arguments ask for something that cannot be done as given.
    Usage(String),
    /// An input the command reads — `<stdin>`, a plan file, a folder it was
    /// given — cannot be used: which one, and why.
    Input { source: String, what: String },
    /// Writing to `target` (`<stdout>`, a man page) failed.
    Output { target: &'static str, what: String },
    /// A recovery stopped part way: what stopped it, what it had done, and
    /// the command that takes it on.
    Stopped(String),
    /// Refused to touch what is there (a sample root into a non-empty folder).
    Refused(String),
    /// The tool's own machinery failed (a runtime, a task, a serializer).
    Internal { what: &'static str, error: String },
}

impl CliError {
    /// The process's exit code for this failure.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Engine(e) => engine_exit_code(e),
            Self::Refused(_) => 1,
            Self::Tool(_) | Self::Usage(_) | Self::Input { .. } | Self::Output { .. } | Self::Stopped(_) | Self::Internal { .. } => 2,
        }
    }

    /// An input that cannot be used.
    pub(crate) fn input(source: impl fmt::Display, what: impl fmt::Display) -> Self {
        Self::Input { source: source.to_string(), what: what.to_string() }
    }

    /// The tool's own machinery failed.
    pub(crate) fn internal(what: &'static str, error: impl fmt::Display) -> Self {
        Self::Internal { what, error: error.to_string() }
    }
}

/// 1 for damage or refusal, 2 for IO and usage.
fn engine_exit_code(e: &EngineError) -> u8 {
    match e {
        EngineError::Corrupt { .. }
        | EngineError::TruncatedAway { .. }
        | EngineError::NotWrittenHere { .. }
        | EngineError::Trimmed { .. }
        | EngineError::Generation { .. }
        | EngineError::Locked { .. }
        | EngineError::NoShard { .. }
        | EngineError::NotRegular { .. }
        | EngineError::OffsetsExhausted { .. }
        | EngineError::SegmentIdsExhausted { .. }
        | EngineError::PlanChanged { .. } => 1,
        // A stopped shard stopped on an IO failure: an IO error, like the first one.
        EngineError::Io { .. }
        | EngineError::FailStopped { .. }
        | EngineError::TooLarge { .. }
        | EngineError::ReadOnly
        | EngineError::InvalidRange
        | EngineError::InvalidConfig(_)
        | EngineError::Closed { .. } => 2,
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Engine(e) => write!(f, "{e}"),
            Self::Tool(e) => write!(f, "{e}"),
            Self::Usage(what) | Self::Stopped(what) | Self::Refused(what) => f.write_str(what),
            Self::Input { source, what } => write!(f, "{source}: {what}"),
            Self::Output { target, what } => write!(f, "{target}: {what}"),
            Self::Internal { what, error } => write!(f, "{what}: {error}"),
        }
    }
}

impl From<EngineError> for CliError {
    fn from(e: EngineError) -> Self {
        Self::Engine(e)
    }
}

impl From<ToolError> for CliError {
    fn from(e: ToolError) -> Self {
        Self::Tool(e)
    }
}

/// An engine error as the CLI's (its exit code: 1 for damage or refusal, 2
/// for IO and usage).
pub(crate) fn fail(e: &EngineError) -> CliError {
    CliError::Engine(e.clone())
}

/// An engine error that stopped work on the shard in `dir`, in words an
/// operator acts on: for an IO failure, what failed (the file, the call) and
/// what to run once it is dealt with (`--repair-checksum-tail` kept when
/// this run had it); any other error as [`fail`] says it.
pub(crate) fn stopped_by(dir: &Path, e: &EngineError, repair_checksum_tail: bool) -> CliError {
    let cause = match e {
        EngineError::FailStopped { cause } => cause.clone(),
        EngineError::Io { .. } => e.to_string(),
        _ => return fail(e),
    };
    let full_disk = std::io::Error::from_raw_os_error(libc::ENOSPC).to_string();
    let first = if cause.contains(&full_disk) { "free space on its disk" } else { "deal with the cause" };
    CliError::Stopped(format!("{cause}; the shard stopped there: {first}, then {}", next_recover(dir, repair_checksum_tail)))
}

/// The `recover` an operator runs next on `dir`: a command to paste when
/// the path is one safe shell word (`report::shell_word`, the page's rule
/// too), else words pointing at the directory the message names (escaped) —
/// an escaped path pasted into a shell names another path.
fn next_recover(dir: &Path, repair_checksum_tail: bool) -> String {
    let flag = if repair_checksum_tail { " --repair-checksum-tail" } else { "" };
    match dir.to_str().and_then(felix_codec::doc::report::shell_word) {
        Some(word) => format!("run `felix-storage recover {word}{flag}`"),
        None => format!("run `felix-storage recover{flag}` on the shard directory named above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_says_where_and_ends_with_its_exit_code() {
        let cases = [
            (CliError::input("<stdin>", "line 3: not UTF-8"), "<stdin>: line 3: not UTF-8", 2),
            (CliError::Output { target: "<stdout>", what: "No space left".into() }, "<stdout>: No space left", 2),
            (CliError::Refused("/x: not empty".into()), "/x: not empty", 1),
            (CliError::internal("runtime", "no threads"), "runtime: no threads", 2),
            (CliError::Engine(EngineError::ReadOnly), &EngineError::ReadOnly.to_string(), 2),
            (CliError::Engine(EngineError::NoShard { dir: "/s".into() }), "/s: no such shard directory", 1),
        ];
        for (e, text, code) in cases {
            assert_eq!((e.to_string().as_str(), e.exit_code()), (text, code));
        }
    }
}
