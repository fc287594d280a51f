//! Engine errors: every one names the file, and damage names its full site.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use felix_codec::Finding;

/// What went wrong in the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// An IO call failed. After a failed write or sync the shard is fail-stopped.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operation (`"write"`, `"sync_data"`, …).
        op: &'static str,
        /// The OS's message.
        message: String,
    },
    /// Damage recovery may not repair (or, in reads, damage in acknowledged data).
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What and where.
        finding: Box<Finding>,
    },
    /// An earlier write or sync failed; the shard refuses all appends.
    FailStopped {
        /// The first failure.
        cause: String,
    },
    /// A read below the oldest retained record: those offsets existed and
    /// are gone (retention or truncation), unlike a read at the tail, which
    /// is an empty answer. Read from `oldest` on.
    Trimmed {
        /// The offset asked for.
        requested: u64,
        /// The oldest offset still stored.
        oldest: u64,
    },
    /// An append of no records (upstream's `InvalidRange`): an empty batch
    /// has no offsets to return; nothing was written.
    InvalidRange,
    /// A configuration that cannot work, refused when the log is opened
    /// (never on an append): says which setting and why.
    InvalidConfig(&'static str),
    /// The shard was closed (`DiskLog::shutdown`, `Shard::close`): its
    /// writer's lock is released, so nothing more is read or written through
    /// this handle. Open the shard again.
    Closed {
        /// The shard directory.
        dir: PathBuf,
    },
    /// A payload over `MAX_PAYLOAD_BYTES`.
    TooLarge {
        /// Its length.
        len: usize,
    },
    /// A generation that does not follow the last one.
    Generation {
        /// The generation asked for.
        requested: u64,
        /// The latest generation recorded.
        latest: u64,
    },
    /// Another writer holds the shard (one writer per shard).
    Locked {
        /// The shard directory.
        dir: PathBuf,
        /// The holder's pid, when known.
        pid: Option<u32>,
    },
    /// There is no shard directory here (reads never create one).
    NoShard {
        /// The directory looked for.
        dir: PathBuf,
    },
    /// A Felix file name is not a regular file (a symbolic link, a directory…):
    /// the engine neither follows nor replaces it.
    NotRegular {
        /// The entry.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// No offset is left: the next would be past `u64::MAX - 1` (the last
    /// offset the engine assigns; `u64::MAX` itself has no successor).
    OffsetsExhausted {
        /// The next offset the shard would assign.
        next: u64,
        /// Records in the refused batch.
        records: u64,
    },
    /// A new segment is needed but the newest one already holds id
    /// `u64::MAX`: no segment id is left, and a segment is never replaced.
    /// Nothing of the refused batch was written.
    SegmentIdsExhausted {
        /// The shard directory.
        dir: PathBuf,
    },
    /// The shard was opened for reading only.
    ReadOnly,
    /// `recover --plan`: the plan made under the writer's lock is not the
    /// plan the operator reviewed (the shard changed since the dry run);
    /// nothing was changed.
    PlanChanged {
        /// The shard directory.
        dir: PathBuf,
        /// The first difference, in words.
        what: String,
    },
    /// A batch written but not yet committed was cut away by a truncation
    /// before it became durable: it is not acknowledged.
    TruncatedAway {
        /// The batch's offsets.
        offsets: std::ops::Range<u64>,
        /// Where the truncation cut (records from here on are gone).
        cut_at: u64,
    },
    /// A batch given to another shard's commit than the opening of the
    /// shard that wrote it (another shard's, or this one's before it was
    /// closed and opened again): its durability is no fact this shard
    /// knows, so it is not acknowledged here.
    NotWrittenHere {
        /// The shard directory asked.
        dir: PathBuf,
        /// The batch's offsets.
        offsets: std::ops::Range<u64>,
    },
}

impl EngineError {
    pub(crate) fn io(path: &Path, op: &'static str, e: &io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), op, message: e.to_string() }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, op, message } => write!(f, "{}: {op} failed: {message}", path.display()),
            Self::Corrupt { path, finding } => write!(f, "{}: {finding}", path.display()),
            Self::FailStopped { cause } => write!(f, "shard is stopped after an earlier IO failure ({cause}); reopen it to recover"),
            Self::Trimmed { requested, oldest } => {
                write!(f, "offset {requested} is no longer available (trimmed); the log starts at {oldest}")
            }
            Self::InvalidRange => f.write_str("invalid range: an append needs at least one record; nothing was written"),
            Self::InvalidConfig(what) => write!(f, "invalid configuration: {what}"),
            Self::Closed { dir } => write!(f, "{}: the shard was closed (shutdown) and its writer's lock released; open it again", dir.display()),
            Self::TooLarge { len } => {
                write!(f, "payload of {len} bytes is over the limit of {} bytes", felix_codec::MAX_PAYLOAD_BYTES)
            }
            Self::Generation { requested, latest } => {
                write!(f, "generation {requested} does not follow the latest recorded generation {latest}")
            }
            Self::Locked { dir, pid: Some(pid) } => {
                write!(f, "{}: shard is open for writing by another process (pid {pid}); one writer per shard", dir.display())
            }
            Self::Locked { dir, pid: None } => {
                write!(f, "{}: shard is open for writing by another process; one writer per shard", dir.display())
            }
            Self::NoShard { dir } => write!(f, "{}: no such shard directory", dir.display()),
            Self::NotRegular { path, what } => write!(
                f,
                "{}: {what} where a Felix file or shard directory belongs; the engine neither follows nor replaces it: move it away, or give the file or directory itself",
                path.display()
            ),
            Self::OffsetsExhausted { next, records } => write!(
                f,
                "no offsets left: {records} record(s) from offset {next} would pass {}, the last offset a shard assigns",
                u64::MAX - 1
            ),
            Self::SegmentIdsExhausted { dir } => write!(
                f,
                "{}: no segment id is left: the newest segment is {} (id {}), so no new segment can be created and none is ever replaced; nothing of this batch was written. Move the shard's records to a new shard (or give its segments lower ids while no writer runs)",
                dir.display(),
                felix_codec::format::file_name::segment_file_name(u64::MAX),
                u64::MAX
            ),
            Self::ReadOnly => f.write_str("the shard was opened for reading only"),
            Self::PlanChanged { dir, what } => write!(
                f,
                "{}: the shard changed since the reviewed plan ({what}); nothing was changed: review the new plan (recover --dry-run --json) and run again",
                dir.display()
            ),
            Self::TruncatedAway { offsets, cut_at } => write!(
                f,
                "{} were truncated away (from offset {cut_at}) before they became durable: not acknowledged",
                felix_codec::shard::diff::OffsetRange { from: offsets.start, to: offsets.end }.words()
            ),
            Self::NotWrittenHere { dir, offsets } => write!(
                f,
                "{}: {} were not written by this opening of the shard (a batch from another shard, or from before it was opened again): not acknowledged here",
                dir.display(),
                felix_codec::shard::diff::OffsetRange { from: offsets.start, to: offsets.end }.words()
            ),
        }
    }
}

impl std::error::Error for EngineError {}
