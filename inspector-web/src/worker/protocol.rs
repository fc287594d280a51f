//! The workers' protocol, every direction, defined once. Three workers run
//! the same script: the reader, the scan worker and the hash worker. The
//! page sends each a [`Job`] (its bytes under [`JOB_KEY`], the `File`s under
//! [`FILES_KEY`], and ends of two `MessageChannel`s: [`READER_KEY`] joins
//! the reader to the scan, [`PORT_KEY`] the scan to the hash worker); the
//! scan and hash workers answer with [`ToPage`] messages, each one byte
//! buffer. Chunks travel reader → scan → hash as [`Feed`] messages, each
//! chunk's `ArrayBuffer` transferred beside it under [`CHUNK_KEY`] (never
//! copied), so every byte is read once, by a thread that does nothing else;
//! each receiver acknowledges what it is done with ([`Feed::Ack`]), which
//! bounds the bytes in flight. Both sides encode and decode with the
//! functions here, so they cannot drift; the round trip is tested natively.
//!
//! ```text
//! job     = 0x10, f64 started_ms, u8 task, u32 n, n × (u32 id, str path, u64 size)
//!           task: 0 scan, 1 scan then hash, 2 hash, 3 read, +4 with SHA-256
//! chunk   = 0x20, u32 file, u64 at          (the bytes beside it)
//! rest    = 0x21, u32 file, u64 at          (no more chunks of the file: the receiver reads it from `at` on, if at all)
//! ack     = 0x22, u64 bytes
//! failed  = 0x23, u32 file, str message     (the reader could not read the file)
//! ready   = 0x01
//! progress= 0x02, u32 file, u64 done
//! live    = 0x03, u32 file, f64 ms, str findings (JSON)
//! group   = 0x04, f64 ms, u32 n, n × (u32 file, str report (JSON), bytes detail (wire::pack))
//! done    = 0x05, f64 ms
//! error   = 0x06, str message
//! hashes  = 0x07, f64 ms, u32 n, n × (u32 file, u8 algorithm, str value, u8 has_sha256, [str sha256])
//! find    = 0x11, f64 started_ms, bytes needle, u32 n, n × (u32 id, str path, u64 size)   (a find job, page → a worker of its own)
//! found   = 0x08, u32 file, u64 total, u32 n, n × (u64 position, u8 has_record, [u64 record offset])
//! plan    = 0x12, folders                  (a folder job, page → a worker of its own: each shard's recovery plan)
//! diff    = 0x13, folders                  (a folder job: two replicas compared; the folders are A, then B)
//! folders = u32 n, n × (str name, u32 k, k × (str path, u64 size))   (the Files beside it: every folder's in turn)
//! planned = 0x09, u32 shard, (u8 1, str plan (JSON), u32 m, m × (str file, bytes first bytes) | u8 0, failure)
//! diffed  = 0x0a, (u8 1, str diff (JSON), u8 has_bytes, [bytes a, bytes b] | u8 0, failure)
//! failure = u8 0 (a file went missing) | u8 1, str path, str message (the browser could not read it) | u8 2, str message (the worker's)
//! str     = u32 length, UTF-8 bytes
//! ```

use bytes::Bytes;
use felix_codec::doc::report::{FileHash, FindingReport, HashAlgorithm};

use super::wire::{self, Json, Reader, WireError, WireErrorKind, Writer};
use crate::model::find::Found;
use crate::model::group::Dropped;
use crate::model::hash::Hashed;
use crate::model::replica::{Compared, Planned, ReadFailure};
use crate::model::scan::Scanned;

/// Key of the job's bytes in the page's message to the worker.
pub const JOB_KEY: &str = "job";
/// Key of the `File` list in the page's message to the worker.
pub const FILES_KEY: &str = "files";
/// Key of the `MessagePort` joining the scan worker to the hash worker.
pub const PORT_KEY: &str = "port";
/// Key of the `MessagePort` joining the reader to the scan worker.
pub const READER_KEY: &str = "reader";
/// Key of a [`Feed`] message's bytes on the port.
pub const FEED_KEY: &str = "feed";
/// Key of the chunk's `ArrayBuffer` beside a [`Feed::Chunk`].
pub const CHUNK_KEY: &str = "chunk";

/// What a worker is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Scan (what the reader sends, or what it reads itself), handing every chunk to the hash worker.
    Scan,
    /// Read every file, in the scan's order, and hand the chunks to the scan worker.
    Read,
    /// Scan, then hash each file by reading it again (no hash worker runs:
    /// the page's own fallback loop).
    ScanThenHash {
        /// SHA-256 too.
        sha256: bool,
    },
    /// Hash what the scan worker hands over on the port.
    Hash {
        /// SHA-256 too.
        sha256: bool,
    },
}

/// What the page asks a worker to do (the `File`s travel beside it, in the same order).
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The files: the page's id, path and size of each.
    pub files: Vec<Dropped>,
    /// When the drop happened (ms on the shared wall clock).
    pub started_ms: f64,
    /// What to do with them.
    pub task: Task,
}

/// Between the workers: reader → scan → hash, and acknowledgements back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Feed {
    /// The bytes of `file` from `at` (the chunk travels beside the message).
    Chunk {
        /// The file's id.
        file: u32,
        /// Where the chunk starts.
        at: u64,
    },
    /// No more chunks of `file` come: the hash worker reads it from `at` to its end itself
    /// (`at` = its size when every byte was handed over).
    Rest {
        /// The file's id.
        file: u32,
        /// Where its own reading starts.
        at: u64,
    },
    /// The receiver is done with `bytes` more bytes of chunks.
    Ack {
        /// Bytes.
        bytes: u64,
    },
    /// The reader could not read `file`.
    Failed {
        /// The file's id.
        file: u32,
        /// The browser's words.
        message: String,
    },
}

/// What the worker tells the page.
#[derive(Clone, Debug, PartialEq)]
pub enum ToPage {
    /// The worker runs and takes jobs.
    Ready,
    /// `done` bytes of `file` read.
    Progress {
        /// The file's id.
        file: u32,
        /// Bytes read.
        done: u64,
    },
    /// Findings met while reading (provisional verdicts).
    Live {
        /// The file's id.
        file: u32,
        /// The findings.
        findings: Vec<FindingReport>,
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// One group's final results.
    Group {
        /// Each scanned file.
        items: Vec<Scanned>,
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// Every file is scanned.
    Done {
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// The scan stopped.
    Error {
        /// What went wrong, for the banner.
        message: String,
    },
    /// Files hashed (batched like groups).
    Hashes {
        /// Each file's id and hashes.
        items: Vec<(u32, Hashed)>,
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// A find job's matches in one file (`model::find`): those listed, and the count of all.
    Found {
        /// The file's id.
        file: u32,
        /// Matches in the file, listed or not.
        total: u64,
        /// The listed ones, in position order.
        matches: Vec<Found>,
    },
}

impl ToPage {
    /// The message as a search hears it: `None` for one that is no find's.
    #[must_use]
    pub fn for_find(self) -> Option<crate::model::find::Heard> {
        use crate::model::find::Heard;
        Some(match self {
            Self::Found { file, total, matches } => Heard::Found { file, total, matches },
            Self::Done { .. } => Heard::Done,
            Self::Error { message } => Heard::Failed(message),
            _ => return None,
        })
    }
}

/// A find job: search the files (the `File`s travel beside it, in the same
/// order) for the needle, answering with [`ToPage::Progress`],
/// [`ToPage::Found`] for each file and [`ToPage::Done`].
#[derive(Clone, Debug, PartialEq)]
pub struct FindJob {
    /// The files: the page's id, path and size of each.
    pub files: Vec<Dropped>,
    /// The bytes to find (at most `find::MAX_NEEDLE_BYTES`).
    pub needle: Vec<u8>,
    /// When the search started (ms on the shared wall clock).
    pub started_ms: f64,
}

/// One folder of a [`FolderJob`]: its name as shown and its files' paths and sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folder {
    /// The folder's name (a shard's directory, a replica's folder).
    pub name: String,
    /// `(path, size)` of each file; the `File`s travel beside the job in this order.
    pub files: Vec<(String, u64)>,
}

/// A job for a worker of its own that reads shard folders through
/// `model::replica` (the recovery preview, the replica compare): the page
/// stays free however large the folders are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FolderJob {
    /// Each shard's recovery plan: one [`Answer::Planned`] a shard, in order, then [`Answer::Done`].
    Plan {
        /// The shard folders.
        shards: Vec<Folder>,
    },
    /// Two replicas compared: one [`Answer::Diffed`], then [`Answer::Done`].
    Diff {
        /// Replica A.
        a: Folder,
        /// Replica B.
        b: Folder,
    },
}

impl FolderJob {
    /// The folders, in the order their `File`s travel.
    #[must_use]
    pub fn folders(&self) -> Vec<&Folder> {
        match self {
            Self::Plan { shards } => shards.iter().collect(),
            Self::Diff { a, b } => vec![a, b],
        }
    }
}

/// Whether `bytes` are a [`FolderJob`].
#[must_use]
pub fn is_folder_job(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(&(PLAN_JOB | DIFF_JOB)))
}

/// A folder job's bytes.
#[must_use]
pub fn encode_folder_job(job: &FolderJob) -> Vec<u8> {
    let mut w = Writer::default();
    w.u8(if matches!(job, FolderJob::Plan { .. }) { PLAN_JOB } else { DIFF_JOB });
    let folders = job.folders();
    w.u32(u32::try_from(folders.len()).unwrap_or(u32::MAX));
    for f in folders {
        w.str(&f.name);
        w.u32(u32::try_from(f.files.len()).unwrap_or(u32::MAX));
        for (path, size) in &f.files {
            w.str(path);
            w.u64(*size);
        }
    }
    w.0
}

/// Reads a folder job.
///
/// # Errors
/// A message naming the byte where the bytes are not one (a diff names two folders).
pub fn decode_folder_job(bytes: &[u8]) -> Result<FolderJob, WireError> {
    let mut r = Reader::new(bytes);
    let tag = r.u8()?;
    let n = r.count(8)?;
    let mut folders = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let k = r.count(12)?;
        let mut files = Vec::with_capacity(k);
        for _ in 0..k {
            files.push((r.str()?, r.u64()?));
        }
        folders.push(Folder { name, files });
    }
    expect_end(&r)?;
    match tag {
        PLAN_JOB => Ok(FolderJob::Plan { shards: folders }),
        DIFF_JOB => match <[Folder; 2]>::try_from(folders) {
            Ok([a, b]) => Ok(FolderJob::Diff { a, b }),
            Err(folders) => Err(WireError::new(0, WireErrorKind::DiffFolders(folders.len()))),
        },
        tag => Err(names_no(0, tag, "folder job")),
    }
}

fn write_failure(w: &mut Writer, failure: &ReadFailure) {
    w.u8(0);
    match failure {
        ReadFailure::Missing => w.u8(0),
        ReadFailure::Read { path, message } => {
            w.u8(1);
            w.str(path);
            w.str(message);
        }
        ReadFailure::Worker(message) => {
            w.u8(2);
            w.str(message);
        }
    }
}

/// serde's words on JSON at byte `at` that does not read as `what`.
fn json_error(at: usize, what: Json, e: &serde_json::Error) -> WireError {
    WireError::new(at, WireErrorKind::Json { what, why: e.to_string() })
}

/// An answer (`u8 1`, then what `body` reads) or the read failure in its
/// place (`u8 0`, then the failure).
fn outcome<T>(r: &mut Reader<'_>, body: impl FnOnce(&mut Reader<'_>) -> Result<T, WireError>) -> Result<Result<T, ReadFailure>, WireError> {
    let at = r.at();
    match r.u8()? {
        1 => return Ok(Ok(body(r)?)),
        0 => {}
        b => return Err(WireError::new(at, WireErrorKind::NotAFlag(b))),
    }
    let at = r.at();
    Ok(Err(match r.u8()? {
        0 => ReadFailure::Missing,
        1 => ReadFailure::Read { path: r.str()?, message: r.str()? },
        2 => ReadFailure::Worker(r.str()?),
        b => return Err(names_no(at, b, "read failure")),
    }))
}

fn write_planned(w: &mut Writer, shard: u32, plan: &Result<Box<Planned>, ReadFailure>) {
    w.u8(PLANNED);
    w.u32(shard);
    match plan {
        Ok(p) => {
            w.u8(1);
            w.str(&serde_json::to_string(&p.plan).unwrap_or_default());
            w.u32(u32::try_from(p.cut_bytes.len()).unwrap_or(u32::MAX));
            for (file, bytes) in &p.cut_bytes {
                w.str(file);
                w.bytes(bytes);
            }
        }
        Err(e) => write_failure(w, e),
    }
}

fn write_diffed(w: &mut Writer, diffed: &Result<Box<Compared>, ReadFailure>) {
    w.u8(DIFFED);
    match diffed {
        Ok(c) => {
            w.u8(1);
            w.str(&serde_json::to_string(&c.diff).unwrap_or_default());
            w.u8(u8::from(c.bytes.is_some()));
            if let Some((a, b)) = &c.bytes {
                w.bytes(a);
                w.bytes(b);
            }
        }
        Err(e) => write_failure(w, e),
    }
}

/// What a worker answers a [`FolderJob`]. `Ready`, `Done` and `Failed` are
/// [`ToPage::Ready`], [`ToPage::Done`] and [`ToPage::Error`] byte for byte
/// (the worker says it is ready, or refuses a job, before it knows which kind it gets).
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The worker runs and takes jobs.
    Ready,
    /// A plan job's answer for shard `shard` (its index in the job), in order.
    Planned {
        /// The shard's index in the job.
        shard: u32,
        /// Its plan and cuts' first bytes, or why its bytes could not be read.
        plan: Result<Box<Planned>, ReadFailure>,
    },
    /// A diff job's answer: the diff and both sides' bytes at its first divergence.
    Diffed(Result<Box<Compared>, ReadFailure>),
    /// Every answer was sent.
    Done {
        /// Milliseconds the job took.
        ms: f64,
    },
    /// The worker could not take the job.
    Failed(String),
}

/// An answer's bytes.
#[must_use]
pub fn encode_answer(answer: &Answer) -> Vec<u8> {
    let mut w = Writer::default();
    match answer {
        Answer::Ready => return encode(&ToPage::Ready),
        Answer::Done { ms } => return encode(&ToPage::Done { ms: *ms }),
        Answer::Failed(message) => return encode(&ToPage::Error { message: message.clone() }),
        Answer::Planned { shard, plan } => write_planned(&mut w, *shard, plan),
        Answer::Diffed(diffed) => write_diffed(&mut w, diffed),
    }
    w.0
}

/// Reads an answer.
///
/// # Errors
/// A message naming the byte (or the JSON) that is wrong.
pub fn decode_answer(bytes: &[u8]) -> Result<Answer, WireError> {
    let mut r = Reader::new(bytes);
    let tag = r.u8()?;
    let answer = match tag {
        PLANNED => {
            let shard = r.u32()?;
            let plan = outcome(&mut r, |r| {
                let at = r.at();
                let plan = serde_json::from_str(&r.str()?).map_err(|e| json_error(at, Json::Plan, &e))?;
                let m = r.count(8)?;
                let mut cut_bytes = Vec::with_capacity(m);
                for _ in 0..m {
                    cut_bytes.push((r.str()?, r.bytes()?.to_vec()));
                }
                Ok(Box::new(Planned { plan, cut_bytes }))
            })?;
            Answer::Planned { shard, plan }
        }
        DIFFED => Answer::Diffed(outcome(&mut r, |r| {
            let at = r.at();
            let diff = serde_json::from_str(&r.str()?).map_err(|e| json_error(at, Json::Diff, &e))?;
            let at = r.at();
            let bytes = match r.u8()? {
                0 => None,
                1 => Some((r.bytes()?.to_vec(), r.bytes()?.to_vec())),
                b => return Err(WireError::new(at, WireErrorKind::NotAFlag(b))),
            };
            Ok(Box::new(Compared { diff, bytes }))
        })?),
        _ => {
            return match decode(bytes)? {
                ToPage::Ready => Ok(Answer::Ready),
                ToPage::Done { ms } => Ok(Answer::Done { ms }),
                ToPage::Error { message } => Ok(Answer::Failed(message)),
                _ => Err(names_no(0, tag, "folder job's answer")),
            }
        }
    };
    expect_end(&r)?;
    Ok(answer)
}

const JOB: u8 = 0x10;
const PLAN_JOB: u8 = 0x12;
const DIFF_JOB: u8 = 0x13;
const PLANNED: u8 = 0x09;
const DIFFED: u8 = 0x0a;
const READY: u8 = 0x01;
const PROGRESS: u8 = 0x02;
const LIVE: u8 = 0x03;
const GROUP: u8 = 0x04;
const DONE: u8 = 0x05;
const ERROR: u8 = 0x06;
const HASHES: u8 = 0x07;
const FOUND: u8 = 0x08;
const FIND_JOB: u8 = 0x11;
const CHUNK: u8 = 0x20;
const REST: u8 = 0x21;
const ACK: u8 = 0x22;
const FAILED: u8 = 0x23;
const WITH_SHA256: u8 = 4;

fn task_byte(task: Task) -> u8 {
    match task {
        Task::Scan => 0,
        Task::Read => 3,
        Task::ScanThenHash { sha256 } => 1 | if sha256 { WITH_SHA256 } else { 0 },
        Task::Hash { sha256 } => 2 | if sha256 { WITH_SHA256 } else { 0 },
    }
}

fn task_of(b: u8) -> Option<Task> {
    let sha256 = b & WITH_SHA256 != 0;
    match b & !WITH_SHA256 {
        0 if !sha256 => Some(Task::Scan),
        3 if !sha256 => Some(Task::Read),
        1 => Some(Task::ScanThenHash { sha256 }),
        2 => Some(Task::Hash { sha256 }),
        _ => None,
    }
}

fn algorithm_byte(a: HashAlgorithm) -> u8 {
    match a {
        HashAlgorithm::Blake3 => 1,
        HashAlgorithm::Sha256 => 2,
    }
}

/// The job's bytes.
#[must_use]
pub fn encode_job(job: &Job) -> Vec<u8> {
    let mut w = Writer::default();
    w.u8(JOB);
    w.f64(job.started_ms);
    w.u8(task_byte(job.task));
    write_files(&mut w, &job.files);
    w.0
}

/// A job's files: their count, then each one's id, path and size.
fn write_files(w: &mut Writer, files: &[Dropped]) {
    w.u32(u32::try_from(files.len()).unwrap_or(u32::MAX));
    for f in files {
        w.u32(f.id);
        w.str(&f.path);
        w.u64(f.size);
    }
}

/// A job's files, as [`write_files`] wrote them (the count checked against
/// the bytes left: at least 16 a file).
fn read_files(r: &mut Reader<'_>) -> Result<Vec<Dropped>, WireError> {
    let n = r.count(16)?;
    (0..n).map(|_| Ok(Dropped { id: r.u32()?, path: r.str()?, size: r.u64()? })).collect()
}

fn expect_end(r: &Reader<'_>) -> Result<(), WireError> {
    if r.is_done() {
        Ok(())
    } else {
        Err(r.error(WireErrorKind::Trailing))
    }
}

/// The message's tag, which must be `want` (`what` names it).
fn expect_tag(r: &mut Reader<'_>, want: u8, what: &'static str) -> Result<(), WireError> {
    let tag = r.u8()?;
    if tag == want {
        Ok(())
    } else {
        Err(WireError::new(0, WireErrorKind::NotA { tag, want, what }))
    }
}

/// A byte that names nothing of `what`, at `at`.
fn names_no(at: usize, byte: u8, what: &'static str) -> WireError {
    WireError::new(at, WireErrorKind::Names { byte, what })
}

/// An optional field: a flag byte (0 or 1), then the value when 1.
fn optional<'a, T>(r: &mut Reader<'a>, value: impl FnOnce(&mut Reader<'a>) -> Result<T, WireError>) -> Result<Option<T>, WireError> {
    let at = r.at();
    match r.u8()? {
        0 => Ok(None),
        1 => value(r).map(Some),
        b => Err(WireError::new(at, WireErrorKind::NotAFlag(b))),
    }
}

/// A JSON field holding `what`.
fn json<T: serde::de::DeserializeOwned>(r: &mut Reader<'_>, what: Json) -> Result<T, WireError> {
    let at = r.at();
    serde_json::from_str(&r.str()?).map_err(|e| WireError::new(at, WireErrorKind::Json { what, why: e.to_string() }))
}

/// Reads a job.
///
/// # Errors
/// The byte where the bytes are not a job, and why ([`WireError`]).
pub fn decode_job(bytes: &[u8]) -> Result<Job, WireError> {
    let mut r = Reader::new(bytes);
    expect_tag(&mut r, JOB, "job")?;
    let started_ms = r.f64()?;
    let at = r.at();
    let task = r.u8()?;
    let task = task_of(task).ok_or_else(|| names_no(at, task, "task"))?;
    let files = read_files(&mut r)?;
    expect_end(&r)?;
    Ok(Job { files, started_ms, task })
}

/// Whether `bytes` are a find job (not a scan job).
#[must_use]
pub fn is_find_job(bytes: &[u8]) -> bool {
    bytes.first() == Some(&FIND_JOB)
}

/// A find job's bytes.
#[must_use]
pub fn encode_find_job(job: &FindJob) -> Vec<u8> {
    let mut w = Writer::default();
    w.u8(FIND_JOB);
    w.f64(job.started_ms);
    w.bytes(&job.needle);
    write_files(&mut w, &job.files);
    w.0
}

/// Reads a find job.
///
/// # Errors
/// The byte where the bytes are not one, or a needle too long ([`WireError`]).
pub fn decode_find_job(bytes: &[u8]) -> Result<FindJob, WireError> {
    let mut r = Reader::new(bytes);
    expect_tag(&mut r, FIND_JOB, "find job")?;
    let started_ms = r.f64()?;
    let at = r.at();
    let needle = r.bytes()?.to_vec();
    if needle.is_empty() || needle.len() > crate::model::find::MAX_NEEDLE_BYTES {
        return Err(WireError::new(at, WireErrorKind::Needle { len: needle.len() }));
    }
    let files = read_files(&mut r)?;
    expect_end(&r)?;
    Ok(FindJob { files, needle, started_ms })
}

/// A [`Feed`] message's bytes.
#[must_use]
pub fn encode_feed(feed: &Feed) -> Vec<u8> {
    let mut w = Writer::default();
    match feed {
        Feed::Chunk { file, at } | Feed::Rest { file, at } => {
            w.u8(if matches!(feed, Feed::Chunk { .. }) { CHUNK } else { REST });
            w.u32(*file);
            w.u64(*at);
        }
        Feed::Ack { bytes } => {
            w.u8(ACK);
            w.u64(*bytes);
        }
        Feed::Failed { file, message } => {
            w.u8(FAILED);
            w.u32(*file);
            w.str(message);
        }
    }
    w.0
}

/// Reads a [`Feed`] message.
///
/// # Errors
/// The byte where the bytes are not one, and why ([`WireError`]).
pub fn decode_feed(bytes: &[u8]) -> Result<Feed, WireError> {
    let mut r = Reader::new(bytes);
    let feed = match r.u8()? {
        CHUNK => Feed::Chunk { file: r.u32()?, at: r.u64()? },
        REST => Feed::Rest { file: r.u32()?, at: r.u64()? },
        ACK => Feed::Ack { bytes: r.u64()? },
        FAILED => Feed::Failed { file: r.u32()?, message: r.str()? },
        tag => return Err(names_no(0, tag, "feed message")),
    };
    expect_end(&r)?;
    Ok(feed)
}

/// A worker message's bytes.
#[must_use]
pub fn encode(msg: &ToPage) -> Vec<u8> {
    let mut w = Writer::default();
    match msg {
        ToPage::Ready => w.u8(READY),
        ToPage::Progress { file, done } => {
            w.u8(PROGRESS);
            w.u32(*file);
            w.u64(*done);
        }
        ToPage::Live { file, findings, ms } => {
            w.u8(LIVE);
            w.u32(*file);
            w.f64(*ms);
            w.str(&serde_json::to_string(findings).unwrap_or_else(|_| "[]".into()));
        }
        ToPage::Group { items, ms } => {
            w.u8(GROUP);
            w.f64(*ms);
            w.u32(u32::try_from(items.len()).unwrap_or(u32::MAX));
            for s in items {
                w.u32(s.file);
                w.str(&serde_json::to_string(&s.report).unwrap_or_default());
                w.bytes(&wire::pack(&s.detail));
            }
        }
        ToPage::Done { ms } => {
            w.u8(DONE);
            w.f64(*ms);
        }
        ToPage::Error { message } => {
            w.u8(ERROR);
            w.str(message);
        }
        ToPage::Hashes { items, ms } => {
            w.u8(HASHES);
            w.f64(*ms);
            w.u32(u32::try_from(items.len()).unwrap_or(u32::MAX));
            for (file, h) in items {
                w.u32(*file);
                w.u8(algorithm_byte(h.hash.algorithm));
                w.str(&h.hash.value);
                w.u8(u8::from(h.sha256.is_some()));
                if let Some(s) = &h.sha256 {
                    w.str(s);
                }
            }
        }
        ToPage::Found { file, total, matches } => {
            w.u8(FOUND);
            w.u32(*file);
            w.u64(*total);
            w.u32(u32::try_from(matches.len()).unwrap_or(u32::MAX));
            for m in matches {
                w.u64(m.position);
                w.u8(u8::from(m.record.is_some()));
                if let Some(o) = m.record {
                    w.u64(o);
                }
            }
        }
    }
    w.0
}

/// Reads a worker message.
///
/// # Errors
/// The byte that is wrong, and why ([`WireError`]; a JSON field's error names its line and column).
pub fn decode(bytes: &[u8]) -> Result<ToPage, WireError> {
    decode_from(Reader::new(bytes))
}

/// Reads a worker message whose record rows stay in `bytes` (shared, not
/// copied: the page holds a million rows once).
///
/// # Errors
/// As [`decode`].
pub fn decode_shared(bytes: &Bytes) -> Result<ToPage, WireError> {
    decode_from(Reader::over(bytes))
}

fn decode_from(mut r: Reader<'_>) -> Result<ToPage, WireError> {
    let msg = match r.u8()? {
        READY => ToPage::Ready,
        PROGRESS => ToPage::Progress { file: r.u32()?, done: r.u64()? },
        LIVE => {
            let (file, ms) = (r.u32()?, r.f64()?);
            ToPage::Live { file, findings: json(&mut r, Json::Findings)?, ms }
        }
        GROUP => decode_group(&mut r)?,
        DONE => ToPage::Done { ms: r.f64()? },
        ERROR => ToPage::Error { message: r.str()? },
        HASHES => decode_hashes(&mut r)?,
        FOUND => {
            let (file, total) = (r.u32()?, r.u64()?);
            let n = r.count(9)?;
            let mut matches = Vec::with_capacity(n);
            for _ in 0..n {
                let position = r.u64()?;
                let record = optional(&mut r, Reader::u64)?;
                matches.push(Found { position, record });
            }
            ToPage::Found { file, total, matches }
        }
        tag => return Err(names_no(0, tag, "worker message")),
    };
    expect_end(&r)?;
    Ok(msg)
}

fn decode_group(r: &mut Reader<'_>) -> Result<ToPage, WireError> {
    let ms = r.f64()?;
    let n = r.count(12)?;
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let file = r.u32()?;
        let report = json(r, Json::Report)?;
        let at = r.at();
        let detail = wire::unpack_from(&mut r.nested()?).map_err(|e| WireError::new(at, WireErrorKind::Detail(Box::new(e))))?;
        items.push(Scanned { file, report, detail });
    }
    Ok(ToPage::Group { items, ms })
}

fn decode_hashes(r: &mut Reader<'_>) -> Result<ToPage, WireError> {
    let ms = r.f64()?;
    let n = r.count(11)?;
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let file = r.u32()?;
        let at = r.at();
        let algorithm = match r.u8()? {
            1 => HashAlgorithm::Blake3,
            2 => HashAlgorithm::Sha256,
            b => return Err(names_no(at, b, "hash algorithm")),
        };
        let hash = FileHash { algorithm, value: r.str()? };
        let sha256 = optional(r, Reader::str)?;
        items.push((file, Hashed { hash, sha256 }));
    }
    Ok(ToPage::Hashes { items, ms })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{sample, scan::scan_all};

    fn every_message() -> Vec<ToPage> {
        let scanned = scan_all(&sample::files());
        let findings: Vec<FindingReport> = scanned.iter().flat_map(|s| s.report.findings.clone()).collect();
        vec![
            ToPage::Ready,
            ToPage::Progress { file: 7, done: u64::MAX },
            ToPage::Live { file: 3, findings, ms: 12.5 },
            ToPage::Live { file: 0, findings: Vec::new(), ms: 0.0 },
            ToPage::Group { items: scanned, ms: 99.0 },
            ToPage::Group { items: Vec::new(), ms: 1.0 },
            ToPage::Done { ms: 1234.25 },
            ToPage::Error { message: "a/ü\n<b>: reading bytes 0..1: gone".into() },
            ToPage::Hashes {
                items: vec![(3, crate::model::hash::hash_bytes(b"abc", true)), (u32::MAX, crate::model::hash::hash_bytes(b"", false))],
                ms: 7.0,
            },
            ToPage::Hashes { items: Vec::new(), ms: 0.0 },
            ToPage::Found {
                file: 4,
                total: u64::MAX,
                matches: vec![Found { position: 0, record: None }, Found { position: u64::MAX, record: Some(7) }],
            },
            ToPage::Found { file: 0, total: 0, matches: Vec::new() },
        ]
    }

    /// A real plan (the sample's cut shard), with cut bytes.
    fn sample_planned() -> Planned {
        use crate::model::replica::{cut_reads, plan_in_memory};
        let files = sample::files();
        let dir = files.iter().find_map(|(p, _)| p.rsplit_once('/').map(|(d, _)| d.to_owned())).unwrap();
        let mine: Vec<(String, Vec<u8>)> = files.into_iter().filter(|(p, _)| p.starts_with(&format!("{dir}/"))).collect();
        let plan = plan_in_memory(&dir, &mine);
        let listed: Vec<(String, u64)> = mine.iter().map(|(p, b)| (p.clone(), b.len() as u64)).collect();
        let cut_bytes = cut_reads(&plan, &listed).into_iter().map(|(f, i, s, e)| (f, mine[i].1[s as usize..e as usize].to_vec())).collect();
        Planned { plan, cut_bytes }
    }

    /// A real diff (two of the sample's shards), with bytes at a divergence.
    fn sample_compared() -> Compared {
        use crate::model::replica::diff_in_memory;
        let files = sample::files();
        let mut dirs: Vec<String> = files.iter().filter_map(|(p, _)| p.rsplit_once('/').map(|(d, _)| d.to_owned())).collect();
        dirs.dedup();
        let side = |d: &str| files.iter().filter(|(p, _)| p.starts_with(&format!("{d}/"))).cloned().collect::<Vec<_>>();
        let (a, b) = (side(&dirs[0]), side(dirs.last().unwrap()));
        Compared { diff: diff_in_memory((&dirs[0], &a), (dirs.last().unwrap(), &b)), bytes: Some((vec![1, 2, 3], Vec::new())) }
    }

    #[test]
    fn every_answer_round_trips_and_cut_ones_are_refused() {
        for answer in [
            Answer::Ready,
            Answer::Planned { shard: 2, plan: Ok(Box::new(sample_planned())) },
            Answer::Planned { shard: 0, plan: Err(ReadFailure::Missing) },
            Answer::Diffed(Ok(Box::new(sample_compared()))),
            Answer::Diffed(Err(ReadFailure::Read { path: "a/ü\n.log".into(), message: "NotReadableError".into() })),
            Answer::Planned { shard: u32::MAX, plan: Err(ReadFailure::Worker("no worker".into())) },
            Answer::Done { ms: 12.5 },
            Answer::Failed("the page sent 1 files for a job of 2".into()),
        ] {
            let bytes = encode_answer(&answer);
            assert_eq!(decode_answer(&bytes).unwrap(), answer);
            for n in 0..bytes.len() {
                assert!(decode_answer(&bytes[..n]).is_err(), "{answer:?} cut to {n} bytes");
            }
        }
        assert!(sample_planned().cut_bytes.iter().any(|(_, b)| !b.is_empty()), "a plan with a cut's bytes");
        assert!(sample_compared().diff.first_divergent_offset.is_some() || !sample_compared().diff.identical);
        assert_eq!(
            decode_answer(&encode(&ToPage::Progress { file: 1, done: 2 })).unwrap_err().to_string(),
            "byte 0 is 0x02, which names no folder job's answer"
        );
    }

    #[test]
    fn folder_jobs_round_trip_and_cut_ones_are_refused() {
        let folder =
            |name: &str, n: u64| Folder { name: name.into(), files: (0..n).map(|i| (format!("{name}/ü{i}.log"), i << 40)).collect() };
        for job in [
            FolderJob::Plan { shards: vec![folder("s-1", 3), folder("", 0), folder("s\u{202e}", 1)] },
            FolderJob::Plan { shards: Vec::new() },
            FolderJob::Diff { a: folder("a", 2), b: folder("b", 0) },
        ] {
            let bytes = encode_folder_job(&job);
            assert!(is_folder_job(&bytes) && !is_find_job(&bytes));
            assert_eq!(decode_folder_job(&bytes).unwrap(), job);
            for n in 0..bytes.len() {
                assert!(decode_folder_job(&bytes[..n]).is_err(), "{job:?} cut to {n} bytes");
            }
        }
        let three = encode_folder_job(&FolderJob::Plan { shards: vec![folder("a", 1), folder("b", 1), folder("c", 1)] });
        let mut as_diff = three.clone();
        as_diff[0] = DIFF_JOB;
        assert_eq!(decode_folder_job(&as_diff).unwrap_err().to_string(), "a diff job names 3 folders, not 2");
        assert!(!is_folder_job(&encode_job(&Job { files: Vec::new(), started_ms: 0.0, task: Task::Scan })));
    }

    #[test]
    fn every_message_round_trips() {
        for m in every_message() {
            assert_eq!(decode(&encode(&m)).unwrap(), m);
        }
        for task in [
            Task::Scan,
            Task::Read,
            Task::ScanThenHash { sha256: false },
            Task::ScanThenHash { sha256: true },
            Task::Hash { sha256: false },
            Task::Hash { sha256: true },
        ] {
            let job = Job {
                files: vec![Dropped { id: 4, path: "shard/0.log".into(), size: 10 }, Dropped { id: 9, path: "ü `x`".into(), size: 0 }],
                started_ms: 5.5,
                task,
            };
            assert_eq!(decode_job(&encode_job(&job)).unwrap(), job);
        }
        for feed in [
            Feed::Chunk { file: 1, at: 4 << 20 },
            Feed::Rest { file: u32::MAX, at: u64::MAX },
            Feed::Ack { bytes: 65_536 },
            Feed::Failed { file: 2, message: "x.log: NotReadableError ü".into() },
        ] {
            let bytes = encode_feed(&feed);
            assert_eq!(decode_feed(&bytes).unwrap(), feed);
            for n in 0..bytes.len() {
                assert!(decode_feed(&bytes[..n]).is_err(), "{feed:?} cut to {n} bytes");
            }
        }
        assert_eq!(decode_feed(&[0x30]).unwrap_err().to_string(), "byte 0 is 0x30, which names no feed message");
        let find =
            FindJob { files: vec![Dropped { id: 4, path: "shard/0.log".into(), size: 10 }], needle: b"\xde\xad".to_vec(), started_ms: 5.5 };
        let bytes = encode_find_job(&find);
        assert!(is_find_job(&bytes) && !is_find_job(&encode_job(&Job { files: Vec::new(), started_ms: 0.0, task: Task::Scan })));
        assert_eq!(decode_find_job(&bytes).unwrap(), find);
        for n in 0..bytes.len() {
            assert!(decode_find_job(&bytes[..n]).is_err(), "cut to {n} bytes");
        }
        let empty = encode_find_job(&FindJob { needle: Vec::new(), ..find });
        assert_eq!(decode_find_job(&empty).unwrap_err(), WireError::new(9, WireErrorKind::Needle { len: 0 }));
        assert_eq!(decode_find_job(&empty).unwrap_err().to_string(), "the needle at byte 9 is 0 bytes; 1 to 256 are searched");
        let mut job = encode_job(&Job { files: Vec::new(), started_ms: 0.0, task: Task::Scan });
        job[9] = 7; // "read" with SHA-256: no such task
        assert_eq!(decode_job(&job).unwrap_err(), WireError::new(9, WireErrorKind::Names { byte: 7, what: "task" }));
        assert_eq!(decode_job(&job).unwrap_err().to_string(), "byte 9 is 0x07, which names no task");
    }

    /// The page's way in: every message reads the same as from a copy; a
    /// file's rows that are most of the message stay in it (a million rows
    /// are held once), and small ones are copied out (they never keep a
    /// large message alive).
    #[test]
    fn shared_decoding_reads_the_same_and_keeps_only_large_rows_in_the_message() {
        use crate::model::scan::{RecordRow, Rows};
        for m in every_message() {
            let bytes = Bytes::from(encode(&m));
            assert_eq!(decode_shared(&bytes).unwrap(), m);
            for n in 0..bytes.len() {
                assert_eq!(decode_shared(&bytes.slice(..n)).unwrap_err(), decode(&bytes[..n]).unwrap_err(), "{m:?} cut to {n} bytes");
            }
        }
        let mut scanned = scan_all(&sample::files());
        let seg = scanned.iter().position(|s| !s.detail.records.is_empty()).unwrap();
        let first = scanned[seg].detail.records.get(0).unwrap();
        let mut big = Rows::default();
        for i in 0..50_000u64 {
            big.push(RecordRow { offset: i, ..first });
        }
        scanned[seg].detail.records = big;
        let bytes = Bytes::from(encode(&ToPage::Group { items: scanned.clone(), ms: 1.0 }));
        let ToPage::Group { items, .. } = decode_shared(&bytes).unwrap() else { panic!("not a group") };
        assert_eq!(items, scanned);
        let message = bytes.as_ptr_range();
        let inside = |rows: &[u8]| message.contains(&rows.as_ptr());
        for (i, got) in items.iter().enumerate() {
            let rows = got.detail.records.as_bytes();
            if i == seg {
                assert!(rows.len() * 2 >= bytes.len() && inside(rows), "the large rows are a copy");
            } else if !rows.is_empty() {
                assert!(!inside(rows), "{}: {} bytes of rows keep the {}-byte message alive", got.report.path, rows.len(), bytes.len());
            }
        }
        // A row added to received rows goes to a list of its own; the message is untouched.
        let mut rows = items[seg].detail.records.clone();
        let before = bytes.to_vec();
        rows.push(first);
        assert_eq!((rows.len(), rows.get(rows.len() - 1)), (50_001, Some(first)));
        assert_eq!(bytes.to_vec(), before);
    }

    #[test]
    fn cut_or_extended_messages_are_refused_not_misread() {
        for m in every_message() {
            let bytes = encode(&m);
            for n in 0..bytes.len() {
                assert!(decode(&bytes[..n]).is_err(), "{m:?} cut to {n} bytes");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert_eq!(decode(&longer).unwrap_err(), WireError::new(bytes.len(), WireErrorKind::Trailing));
            assert_eq!(decode(&longer).unwrap_err().to_string(), format!("unexpected bytes after the message, from byte {}", bytes.len()));
        }
        assert_eq!(decode(&[0x7F]).unwrap_err().to_string(), "byte 0 is 0x7f, which names no worker message");
        assert_eq!(
            decode_job(&encode(&ToPage::Ready)).unwrap_err(),
            WireError::new(0, WireErrorKind::NotA { tag: 1, want: 0x10, what: "job" })
        );
        assert_eq!(decode_job(&encode(&ToPage::Ready)).unwrap_err().to_string(), "byte 0 is 0x01, not a job (0x10)");
        // A flag that is neither 0 nor 1, and a file's detail that is wrong inside a group, each named by its byte.
        let mut found = encode(&ToPage::Found { file: 1, total: 1, matches: vec![Found { position: 0, record: None }] });
        let flag = found.len() - 1;
        found[flag] = 2;
        assert_eq!(decode(&found).unwrap_err().to_string(), format!("byte {flag} is 0x02, neither 0 nor 1"));
        let items = scan_all(&sample::files())[..1].to_vec();
        assert!(items[0].detail.checkpoints.list().is_empty());
        let mut group = encode(&ToPage::Group { items, ms: 1.0 });
        let len = group.len();
        group[len - 1] = 0xFF; // the checkpoint count, the detail's last field: 255 of 24 bytes each
        assert!(matches!(decode(&group).unwrap_err().kind, WireErrorKind::Detail(_)), "{}", decode(&group).unwrap_err());
        assert!(decode(&group).unwrap_err().to_string().starts_with("the records at byte "));
    }
}
