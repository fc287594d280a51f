//! The scan worker's protocol, both directions, defined once: the page sends
//! a [`Job`] (its bytes under [`JOB_KEY`], the `File`s under [`FILES_KEY`]);
//! the worker answers with [`ToPage`] messages, each one byte buffer. Both
//! sides encode and decode with the functions here, so they cannot drift;
//! the round trip is tested natively.
//!
//! ```text
//! job     = 0x10, f64 started_ms, u32 n, n × (u32 id, str path, u64 size)
//! ready   = 0x01
//! progress= 0x02, u32 file, u64 done
//! live    = 0x03, u32 file, f64 ms, str findings (JSON)
//! group   = 0x04, f64 ms, u32 n, n × (u32 file, str report (JSON), bytes detail (wire::pack))
//! done    = 0x05, f64 ms
//! error   = 0x06, str message
//! str     = u32 length, UTF-8 bytes
//! ```

use felix_codec::report::FindingReport;

use super::group::Dropped;
use super::scan::Scanned;
use super::wire::{self, Reader, Writer};

/// Key of the job's bytes in the page's message to the worker.
pub const JOB_KEY: &str = "job";
/// Key of the `File` list in the page's message to the worker.
pub const FILES_KEY: &str = "files";

/// What the page asks the worker to scan (the `File`s travel beside it, in the same order).
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The files: the page's id, path and size of each.
    pub files: Vec<Dropped>,
    /// When the drop happened (ms on the shared wall clock).
    pub started_ms: f64,
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
}

const JOB: u8 = 0x10;
const READY: u8 = 0x01;
const PROGRESS: u8 = 0x02;
const LIVE: u8 = 0x03;
const GROUP: u8 = 0x04;
const DONE: u8 = 0x05;
const ERROR: u8 = 0x06;

/// The job's bytes.
#[must_use]
pub fn encode_job(job: &Job) -> Vec<u8> {
    let mut w = Writer::default();
    w.u8(JOB);
    w.f64(job.started_ms);
    w.u32(u32::try_from(job.files.len()).unwrap_or(u32::MAX));
    for f in &job.files {
        w.u32(f.id);
        w.str(&f.path);
        w.u64(f.size);
    }
    w.0
}

fn expect_end(r: &Reader<'_>) -> Result<(), String> {
    if r.is_done() {
        Ok(())
    } else {
        Err(format!("unexpected bytes after the message, from byte {}", r.at()))
    }
}

/// Reads a job.
///
/// # Errors
/// A message naming the byte where the bytes are not a job.
pub fn decode_job(bytes: &[u8]) -> Result<Job, String> {
    let mut r = Reader::new(bytes);
    let tag = r.u8()?;
    if tag != JOB {
        return Err(format!("byte 0 is {tag:#04x}, not a job ({JOB:#04x})"));
    }
    let started_ms = r.f64()?;
    let n = r.count(16)?;
    let files = (0..n).map(|_| Ok(Dropped { id: r.u32()?, path: r.str()?, size: r.u64()? })).collect::<Result<_, String>>()?;
    expect_end(&r)?;
    Ok(Job { files, started_ms })
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
    }
    w.0
}

/// Reads a worker message.
///
/// # Errors
/// A message naming the byte (or the JSON line and column) that is wrong.
pub fn decode(bytes: &[u8]) -> Result<ToPage, String> {
    let mut r = Reader::new(bytes);
    let msg = match r.u8()? {
        READY => ToPage::Ready,
        PROGRESS => ToPage::Progress { file: r.u32()?, done: r.u64()? },
        LIVE => {
            let (file, ms) = (r.u32()?, r.f64()?);
            let at = r.at();
            let findings = serde_json::from_str(&r.str()?).map_err(|e| format!("the findings at byte {at} are not JSON findings: {e}"))?;
            ToPage::Live { file, findings, ms }
        }
        GROUP => {
            let ms = r.f64()?;
            let n = r.count(12)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                let file = r.u32()?;
                let at = r.at();
                let report =
                    serde_json::from_str(&r.str()?).map_err(|e| format!("the report at byte {at} is not a JSON file report: {e}"))?;
                let at = r.at();
                let detail = wire::unpack(r.bytes()?).map_err(|e| format!("the records at byte {at}: {e}"))?;
                items.push(Scanned { file, report, detail });
            }
            ToPage::Group { items, ms }
        }
        DONE => ToPage::Done { ms: r.f64()? },
        ERROR => ToPage::Error { message: r.str()? },
        tag => return Err(format!("byte 0 is {tag:#04x}, which names no worker message")),
    };
    expect_end(&r)?;
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::{sample, scan::scan_all};

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
        ]
    }

    #[test]
    fn every_message_round_trips() {
        for m in every_message() {
            assert_eq!(decode(&encode(&m)).unwrap(), m);
        }
        let job = Job {
            files: vec![Dropped { id: 4, path: "shard/0.log".into(), size: 10 }, Dropped { id: 9, path: "ü `x`".into(), size: 0 }],
            started_ms: 5.5,
        };
        assert_eq!(decode_job(&encode_job(&job)).unwrap(), job);
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
            assert_eq!(decode(&longer).unwrap_err(), format!("unexpected bytes after the message, from byte {}", bytes.len()));
        }
        assert_eq!(decode(&[0x7F]).unwrap_err(), "byte 0 is 0x7f, which names no worker message");
        assert_eq!(decode_job(&encode(&ToPage::Ready)).unwrap_err(), "byte 0 is 0x01, not a job (0x10)");
    }
}
