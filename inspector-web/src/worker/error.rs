//! Why a job stopped, on both sides of the worker boundary.
//!
//! A worker stops a job with a [`JobError`] and sends it to the page in words
//! ([`JobError::to_page`], the one place the words are made: the
//! protocol carries a message). The page's own troubles with its workers —
//! a message that does not decode, a job it could not hand over, a worker
//! that threw — and what a worker said are a [`ScanError`], which the runner
//! gives the reducer (`state::Action::ScanFailed`).

use std::fmt;

use super::protocol::{Task, ToPage};
use super::wire::WireError;
use crate::ui::message::quote;
use crate::web::BrowserError;

/// Why a read of a file's bytes failed in a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The browser refused it.
    Browser(BrowserError),
    /// `arrayBuffer()` answered something that is not bytes.
    NotBytes,
    /// The file ended after `end` of its `size` bytes (it changed since it was dropped).
    Ended {
        /// Bytes it held.
        end: u64,
        /// Its size when dropped.
        size: u64,
    },
    /// The reader worker could not read it (its words, from the channel: `Feed::Failed`).
    Reader(String),
    /// The reader sent a message that is not the next chunk of this file.
    OutOfTurn {
        /// The file.
        path: String,
        /// What it sent instead (the message, as Rust shows it).
        sent: String,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Browser(e) => write!(f, "{e}"),
            Self::NotBytes => write!(f, "not bytes"),
            Self::Ended { end, size } => write!(f, "the file ended after {end} of its {size} bytes (it changed since it was dropped)"),
            Self::Reader(words) => write!(f, "{words}"),
            Self::OutOfTurn { path, sent } => write!(f, "{}: the reader sent {sent} out of turn", quote(path)),
        }
    }
}

/// A message between two workers (`protocol::Feed`) that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeedError {
    /// The message holds no bytes under its key.
    NoBytes,
    /// Its bytes do not decode.
    Wire(WireError),
}

impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoBytes => write!(f, "a feed message without its bytes"),
            Self::Wire(e) => write!(f, "{e}"),
        }
    }
}

/// Why a worker stopped a job (scan, hash or find).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobError {
    /// The page's message held no job.
    NoJob,
    /// The job's bytes do not decode.
    Unreadable(WireError),
    /// The page sent another number of files than the job lists.
    FileCount {
        /// `File`s sent.
        sent: u32,
        /// Files the job lists.
        listed: usize,
        /// A find job's ("a search"), else a scan's ("a job").
        search: bool,
    },
    /// A task that needs a channel came without one.
    NoChannel(Task),
    /// The page cancelled the scan.
    Cancelled,
    /// A file's bytes could not be read from byte `at` (`hashing`: to hash them).
    Read {
        /// The file.
        path: String,
        /// Where the read began.
        at: u64,
        /// Why.
        error: ReadError,
        /// Read to hash it (after the scan).
        hashing: bool,
    },
    /// The scan handed the hash worker bytes from `at` where it had hashed up to `expected`.
    HashOutOfStep {
        /// Where the bytes handed over start.
        at: u64,
        /// Bytes hashed so far.
        expected: u64,
    },
    /// The scan said the hash worker reads `path` from `at`, where its hash stopped at `done`.
    HashStopped {
        /// The file.
        path: String,
        /// Bytes hashed.
        done: u64,
        /// Where the scan said its reading starts.
        at: u64,
    },
    /// A chunk came without its bytes.
    ChunkWithoutBytes,
    /// A message from the scan worker did not decode.
    UnreadableFeed(FeedError),
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoJob => write!(f, "the page sent no job"),
            Self::Unreadable(e) => write!(f, "{e}"),
            Self::FileCount { sent, listed, search } => {
                write!(f, "the page sent {sent} files for a {} of {listed}", if *search { "search" } else { "job" })
            }
            Self::NoChannel(task) => write!(f, "the page sent no channel for {task:?}"),
            Self::Cancelled => write!(f, "scan cancelled"),
            Self::Read { path, at, error, hashing: false } => write!(f, "{}: reading from byte {at}: {error}", quote(path)),
            Self::Read { path, at, error, hashing: true } => write!(f, "{}: reading from byte {at} to hash it: {error}", quote(path)),
            Self::HashOutOfStep { at, expected } => write!(f, "the hash worker was handed bytes from {at}, expecting {expected}"),
            Self::HashStopped { path, done, at } => write!(f, "{}: the hash stopped at byte {done}, not {at}", quote(path)),
            Self::ChunkWithoutBytes => write!(f, "the hash worker was handed a chunk without bytes"),
            Self::UnreadableFeed(e) => write!(f, "the hash worker got an unreadable message: {e}"),
        }
    }
}

impl std::error::Error for JobError {}

impl JobError {
    /// The message that tells the page: the one place a job's error becomes
    /// words for the protocol.
    #[must_use]
    pub fn to_page(&self) -> ToPage {
        ToPage::Error { message: self.to_string() }
    }
}

/// Which worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The reader.
    Read,
    /// The scan worker.
    Scan,
    /// The hash worker.
    Hash,
}

impl Role {
    /// Its name in a message.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "reader",
            Self::Scan => "scan",
            Self::Hash => "hash",
        }
    }
}

/// Why the scan stopped, as the page learns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanError {
    /// A worker stopped its job and said why (a [`JobError`] in words: the protocol carries words).
    Worker(String),
    /// A worker's message did not decode.
    Unreadable {
        /// The worker.
        role: Role,
        /// Where and why.
        error: WireError,
    },
    /// The page could not hand a worker its files.
    NotHanded(Role),
    /// A worker threw (the browser's words, when it gave some).
    Crashed {
        /// The worker.
        role: Role,
        /// The browser's words.
        why: Option<String>,
    },
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Worker(words) => write!(f, "{words}"),
            Self::Unreadable { role, error } => write!(f, "the {} worker sent an unreadable message: {error}", role.name()),
            Self::NotHanded(role) => write!(f, "could not hand the files to the {} worker", role.name()),
            Self::Crashed { role, why: Some(why) } => write!(f, "the {} worker failed to run: {}", role.name(), quote(why)),
            Self::Crashed { role, why: None } => write!(f, "the {} worker failed to run", role.name()),
        }
    }
}

impl std::error::Error for ScanError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::message::shown;
    use crate::web::Op;
    use crate::worker::wire::WireErrorKind;

    #[test]
    fn each_error_says_what_and_where_in_todays_words() {
        let gone = ReadError::Browser(BrowserError { op: Op::Read, js: Some("NotReadableError".into()) });
        let read = JobError::Read { path: "s/x\u{202e}.log".into(), at: 65_536, error: gone.clone(), hashing: false };
        assert_eq!(shown(&read.to_string()), "s/x\\u{202e}.log: reading from byte 65536: NotReadableError");
        let hashing = JobError::Read { path: "a.log".into(), at: 0, error: ReadError::Ended { end: 5, size: 9 }, hashing: true };
        assert_eq!(
            shown(&hashing.to_string()),
            "a.log: reading from byte 0 to hash it: the file ended after 5 of its 9 bytes (it changed since it was dropped)"
        );
        assert_eq!(JobError::Cancelled.to_string(), "scan cancelled");
        assert_eq!(JobError::FileCount { sent: 2, listed: 3, search: true }.to_string(), "the page sent 2 files for a search of 3");
        assert_eq!(JobError::FileCount { sent: 2, listed: 3, search: false }.to_string(), "the page sent 2 files for a job of 3");
        assert_eq!(JobError::NoChannel(Task::Read).to_string(), "the page sent no channel for Read");
        assert_eq!(
            JobError::UnreadableFeed(FeedError::Wire(WireError::new(0, WireErrorKind::Names { byte: 0x30, what: "feed message" })))
                .to_string(),
            "the hash worker got an unreadable message: byte 0 is 0x30, which names no feed message"
        );
        assert_eq!(
            ScanError::Unreadable { role: Role::Hash, error: WireError::new(0, WireErrorKind::Trailing) }.to_string(),
            "the hash worker sent an unreadable message: unexpected bytes after the message, from byte 0"
        );
        assert_eq!(ScanError::NotHanded(Role::Scan).to_string(), "could not hand the files to the scan worker");
        let crashed = ScanError::Crashed { role: Role::Read, why: Some("out of memory\n".into()) };
        assert_eq!(shown(&crashed.to_string()), "the reader worker failed to run: out of memory\\n");
        assert_eq!(ScanError::Crashed { role: Role::Read, why: None }.to_string(), "the reader worker failed to run");
        assert_eq!(ScanError::Worker(read.to_string()).to_string(), read.to_string());
    }
}
