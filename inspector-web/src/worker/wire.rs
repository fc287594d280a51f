//! Bytes between the scan worker and the page: a small writer and a strict
//! reader (every read checked, errors name the byte), and the packing of a
//! file's detail — record rows, index entries, epochs and the file map — as
//! fixed-width big-endian fields, so a million rows travel as one buffer.
//!
//! ```text
//! detail  = u32 record count, u8 capped, u64 records seen, records × 29 bytes,
//!           u32 entry count, entries × 16 bytes, u32 epoch count, epochs × 16 bytes,
//!           u64 map size, u32 map cells, cells × 4 × u64,
//!           u64 checkpoint spacing, u32 checkpoint count, checkpoints × 24 bytes
//! record  = position u64, offset u64, payload_len u32, timestamp_micros u64, status u8
//! checkpoint = row u64, position u64, previous offset u64
//! ```

use std::fmt;
use std::str::Utf8Error;

use bytes::Bytes;
use felix_codec::format::epochs::Epoch;
use felix_codec::format::index::{IndexEntry, INDEX_ENTRY_LEN};

use crate::model::filemap::{cell_count, MapCounts};
use crate::model::scan::{Detail, Rows};
use crate::model::window::{Checkpoint, Checkpoints, CheckpointsError, MAX_CHECKPOINTS};

const RECORD_BYTES: usize = Rows::ROW_BYTES;

/// Bytes between the workers that are not what the protocol says: where
/// (the byte, counted from the start of the message — or of the nested
/// field it is in, see [`WireErrorKind::Detail`]) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    /// The byte where the field at fault starts.
    pub at: usize,
    /// What is wrong there.
    pub kind: WireErrorKind,
}

/// What is wrong with the bytes at [`WireError::at`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireErrorKind {
    /// The bytes end (at `end`) where `wanted` more were expected.
    Ended {
        /// Where the bytes end.
        end: usize,
        /// Bytes the field needs.
        wanted: usize,
    },
    /// A count of items that cannot fit in the bytes left.
    CountPastEnd {
        /// The count read.
        count: usize,
    },
    /// Text that is not UTF-8.
    NotUtf8(Utf8Error),
    /// A record row's status byte names no status.
    RecordStatus(u8),
    /// The file map has another number of cells than its file's size makes.
    MapCells {
        /// Cells sent.
        cells: usize,
        /// The file's size.
        size: u64,
    },
    /// More checkpoints than a file keeps.
    TooManyCheckpoints(usize),
    /// Checkpoints refused by `Checkpoints::from_parts`.
    Checkpoints(CheckpointsError),
    /// The tag is not the message expected (`byte 0 is 0x01, not a job (0x10)`).
    NotA {
        /// The byte found.
        tag: u8,
        /// The byte expected.
        want: u8,
        /// What that byte starts ("job").
        what: &'static str,
    },
    /// A byte that names nothing of what it should name (`what`: "task", "worker message").
    Names {
        /// The byte found.
        byte: u8,
        /// What it should name.
        what: &'static str,
    },
    /// A flag that is neither 0 nor 1.
    NotAFlag(u8),
    /// Bytes after the end of the message.
    Trailing,
    /// A find job's needle of a length never searched.
    Needle {
        /// Its length, in bytes.
        len: usize,
    },
    /// JSON that does not read as `what` (serde's words, for a worker's bug: the worker wrote it).
    Json {
        /// What it should be: "findings", "report".
        what: Json,
        /// serde's message.
        why: String,
    },
    /// A file's packed detail (`unpack`), at its own position.
    Detail(Box<WireError>),
    /// A diff job that names another number of folders than two.
    DiffFolders(usize),
}

/// What a JSON field of a message holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Json {
    /// A file's live findings.
    Findings,
    /// A file's report.
    Report,
    /// A shard's recovery plan.
    Plan,
    /// A replica diff.
    Diff,
}

impl WireError {
    /// `kind` at byte `at`.
    #[must_use]
    pub fn new(at: usize, kind: WireErrorKind) -> Self {
        Self { at, kind }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.at;
        match &self.kind {
            WireErrorKind::Ended { end, wanted } => write!(f, "the bytes end at byte {end} where {wanted} more were expected"),
            WireErrorKind::CountPastEnd { count } => write!(f, "the count at byte {at} claims {count} items past the end of the bytes"),
            WireErrorKind::NotUtf8(e) => write!(f, "the text at byte {at} is not UTF-8 ({e})"),
            WireErrorKind::RecordStatus(b) => write!(f, "unknown record status {b} at byte {at}"),
            WireErrorKind::MapCells { cells, size } => {
                write!(f, "the map at byte {at} has {cells} cells where a {size}-byte file has {}", cell_count(*size))
            }
            WireErrorKind::TooManyCheckpoints(n) => {
                write!(f, "the checkpoints at byte {at} number {n}, more than the {MAX_CHECKPOINTS} a file keeps")
            }
            WireErrorKind::Checkpoints(e) => write!(f, "the checkpoints at byte {at}: {e}"),
            WireErrorKind::NotA { tag, want, what } => write!(f, "byte {at} is {tag:#04x}, not a {what} ({want:#04x})"),
            WireErrorKind::Names { byte, what } => write!(f, "byte {at} is {byte:#04x}, which names no {what}"),
            WireErrorKind::NotAFlag(b) => write!(f, "byte {at} is {b:#04x}, neither 0 nor 1"),
            WireErrorKind::Trailing => write!(f, "unexpected bytes after the message, from byte {at}"),
            WireErrorKind::Needle { len } => {
                write!(f, "the needle at byte {at} is {len} bytes; 1 to {} are searched", crate::model::find::MAX_NEEDLE_BYTES)
            }
            WireErrorKind::Json { what: Json::Findings, why } => write!(f, "the findings at byte {at} are not JSON findings: {why}"),
            WireErrorKind::Json { what: Json::Report, why } => write!(f, "the report at byte {at} is not a JSON file report: {why}"),
            WireErrorKind::Json { what: Json::Plan, why } => write!(f, "the plan at byte {at} is not a JSON shard plan: {why}"),
            WireErrorKind::Json { what: Json::Diff, why } => write!(f, "the diff at byte {at} is not a JSON diff: {why}"),
            WireErrorKind::Detail(e) => write!(f, "the records at byte {at}: {e}"),
            WireErrorKind::DiffFolders(n) => write!(f, "a diff job names {n} folders, not 2"),
        }
    }
}

impl std::error::Error for WireError {}

/// Appends big-endian fields to a buffer.
#[derive(Debug, Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    /// An `f64` (its bits).
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// A length (`u32`, saturating) then the bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.u32(u32::try_from(b.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(b);
    }
    /// A string as [`Writer::bytes`].
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// A bulk field this large, and at least half its message, stays in the
/// message instead of being copied out ([`Reader::bulk`]).
pub const SHARE_MIN_BYTES: usize = 1 << 20;

/// Reads what a [`Writer`] wrote; every read is checked.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The buffer `bytes` is a part of, and where in it they start: bulk
    /// fields read as shared slices of it ([`Reader::shared`]) instead of copies.
    owner: Option<(&'a Bytes, usize)>,
}

impl<'a> Reader<'a> {
    /// A reader at byte 0 of `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0, owner: None }
    }
    /// A reader at byte 0 of `owner`, whose bulk fields stay in it.
    #[must_use]
    pub fn over(owner: &'a Bytes) -> Self {
        Self { bytes: owner, at: 0, owner: Some((owner, 0)) }
    }
    /// The next `n` bytes of a bulk field: a slice of the owner's buffer
    /// (no copy) when they are at least [`SHARE_MIN_BYTES`] and at least half
    /// of it, else a copy — a small field never keeps a large message alive,
    /// and a large one is never held twice.
    ///
    /// # Errors
    /// When the bytes end.
    pub fn bulk(&mut self, n: usize) -> Result<Bytes, WireError> {
        let start = self.at;
        let s = self.take(n)?;
        Ok(match self.owner {
            Some((owner, base)) if s.len() >= SHARE_MIN_BYTES && s.len().saturating_mul(2) >= owner.len() => {
                owner.slice(base + start..base + start + s.len())
            }
            _ => Bytes::copy_from_slice(s),
        })
    }
    /// A reader over the next length-prefixed bytes (its positions count
    /// from their start), sharing this one's owner.
    ///
    /// # Errors
    /// When the length claims more than the bytes hold.
    pub fn nested(&mut self) -> Result<Reader<'a>, WireError> {
        let n = self.count(1)?;
        let start = self.at;
        let bytes = self.take(n)?;
        Ok(Reader { bytes, at: 0, owner: self.owner.map(|(o, base)| (o, base + start)) })
    }
    /// The position of the next read.
    #[must_use]
    pub fn at(&self) -> usize {
        self.at
    }
    /// Whether every byte was read.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let s = self
            .at
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.at..end))
            .ok_or_else(|| self.error(WireErrorKind::Ended { end: self.bytes.len(), wanted: n }))?;
        self.at += n;
        Ok(s)
    }
    /// `kind` at the position of the next read.
    #[must_use]
    pub fn error(&self, kind: WireErrorKind) -> WireError {
        WireError::new(self.at, kind)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let at = self.at;
        let end = self.bytes.len();
        self.take(N)?.try_into().map_err(|_| WireError::new(at, WireErrorKind::Ended { end, wanted: N }))
    }
    /// One byte.
    ///
    /// # Errors
    /// When the bytes end.
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.array::<1>()?[0])
    }
    /// A `u32`.
    ///
    /// # Errors
    /// When the bytes end.
    pub fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    /// A `u64`.
    ///
    /// # Errors
    /// When the bytes end.
    pub fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    /// An `f64`.
    ///
    /// # Errors
    /// When the bytes end.
    pub fn f64(&mut self) -> Result<f64, WireError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// A count of items `width` bytes each, checked against the bytes left.
    ///
    /// # Errors
    /// When the count claims more than the bytes hold.
    pub fn count(&mut self, width: usize) -> Result<usize, WireError> {
        let at = self.at;
        let n = self.u32()? as usize;
        if n.saturating_mul(width) > self.bytes.len() - self.at {
            return Err(WireError::new(at, WireErrorKind::CountPastEnd { count: n }));
        }
        Ok(n)
    }
    /// Length-prefixed bytes.
    ///
    /// # Errors
    /// When the length claims more than the bytes hold.
    pub fn bytes(&mut self) -> Result<&'a [u8], WireError> {
        let n = self.count(1)?;
        self.take(n)
    }
    /// A length-prefixed UTF-8 string.
    ///
    /// # Errors
    /// When the bytes end or are not UTF-8.
    pub fn str(&mut self) -> Result<String, WireError> {
        let at = self.at;
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|e| WireError::new(at, WireErrorKind::NotUtf8(e.utf8_error())))
    }
}

/// Packs a file's detail (live findings are sent separately).
#[must_use]
pub fn pack(d: &Detail) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(
        32 + d.records.len() * RECORD_BYTES + (d.index_entries.len() + d.epochs.len()) * 16 + d.map.cells.len() * 32,
    ));
    w.u32(u32::try_from(d.records.len()).unwrap_or(u32::MAX));
    w.u8(u8::from(d.records_capped));
    w.u64(d.records_seen);
    w.0.extend_from_slice(d.records.as_bytes().get(..(u32::MAX as usize).saturating_mul(RECORD_BYTES)).unwrap_or(d.records.as_bytes()));
    w.u32(u32::try_from(d.index_entries.len()).unwrap_or(u32::MAX));
    for e in d.index_entries.iter().take(u32::MAX as usize) {
        w.0.extend_from_slice(&e.encode());
    }
    w.u32(u32::try_from(d.epochs.len()).unwrap_or(u32::MAX));
    for e in d.epochs.iter().take(u32::MAX as usize) {
        w.u64(e.generation);
        w.u64(e.start_offset);
    }
    w.u64(d.map.size);
    w.u32(u32::try_from(d.map.cells.len()).unwrap_or(u32::MAX));
    for c in &d.map.cells {
        c.iter().for_each(|v| w.u64(*v));
    }
    w.u64(d.checkpoints.spacing_bytes());
    w.u32(u32::try_from(d.checkpoints.list().len()).unwrap_or(u32::MAX));
    for c in d.checkpoints.list() {
        w.u64(c.row);
        w.u64(c.position);
        w.u64(c.previous_offset);
    }
    w.0
}

/// Unpacks what [`pack`] wrote.
///
/// # Errors
/// Where the bytes are short or wrong, and how ([`WireError`]).
pub fn unpack(bytes: &[u8]) -> Result<Detail, WireError> {
    let mut r = Reader::new(bytes);
    unpack_from(&mut r)
}

/// Unpacks a detail at the reader's position.
///
/// # Errors
/// Where the bytes are short or wrong, and how ([`WireError`]).
pub fn unpack_from(r: &mut Reader<'_>) -> Result<Detail, WireError> {
    let n = r.count(RECORD_BYTES)?;
    let capped = r.u8()? == 1;
    let records_seen = r.u64()?;
    let base = r.at();
    let rows = r.bulk(n.saturating_mul(RECORD_BYTES))?;
    // Kept packed, where they arrived: only each status is checked here (the
    // page reads rows one at a time).
    let records = Rows::from_shared(rows)
        .map_err(|(i, b)| WireError::new(base + i * RECORD_BYTES + RECORD_BYTES - 1, WireErrorKind::RecordStatus(b)))?;
    let n = r.count(INDEX_ENTRY_LEN)?;
    let index_entries = (0..n).map(|_| Ok(IndexEntry { offset: r.u64()?, position: r.u64()? })).collect::<Result<_, WireError>>()?;
    let n = r.count(16)?;
    let epochs = (0..n).map(|_| Ok(Epoch { generation: r.u64()?, start_offset: r.u64()? })).collect::<Result<_, WireError>>()?;
    let size = r.u64()?;
    let at = r.at();
    let n = r.count(32)?;
    if n != cell_count(size) {
        return Err(WireError::new(at, WireErrorKind::MapCells { cells: n, size }));
    }
    let cells = (0..n).map(|_| Ok([r.u64()?, r.u64()?, r.u64()?, r.u64()?])).collect::<Result<_, WireError>>()?;
    let checkpoints = unpack_checkpoints(r)?;
    let map = MapCounts { size, cells };
    Ok(Detail { records, records_capped: capped, records_seen, index_entries, epochs, live: Vec::new(), map, checkpoints })
}

fn unpack_checkpoints(r: &mut Reader<'_>) -> Result<Checkpoints, WireError> {
    let spacing = r.u64()?;
    let at = r.at();
    let n = r.count(24)?;
    if n > MAX_CHECKPOINTS {
        return Err(WireError::new(at, WireErrorKind::TooManyCheckpoints(n)));
    }
    let list = (0..n)
        .map(|_| Ok(Checkpoint { row: r.u64()?, position: r.u64()?, previous_offset: r.u64()? }))
        .collect::<Result<_, WireError>>()?;
    Checkpoints::from_parts(spacing, list).map_err(|e| WireError::new(at, WireErrorKind::Checkpoints(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{sample, scan::scan_all};

    #[test]
    fn every_sample_detail_survives_packing() {
        for s in scan_all(&sample::files()) {
            assert_eq!(unpack(&pack(&s.detail)).unwrap(), s.detail, "{}", s.report.path);
        }
    }

    /// A file's checkpoints travel with its detail, and lying ones are refused by where they are.
    #[test]
    fn checkpoints_survive_packing_and_lying_ones_are_refused() {
        let mut d = scan_all(&sample::files()).remove(0).detail;
        for i in 1..=5u64 {
            d.checkpoints.after_record(i, i << 20, i);
        }
        assert_eq!(d.checkpoints.list().len(), 5);
        let packed = pack(&d);
        assert_eq!(unpack(&packed).unwrap(), d);
        let at = packed.len() - 5 * 24 - 4;
        let mut lying = packed.clone();
        lying[at + 4 + 24..at + 4 + 32].copy_from_slice(&0u64.to_be_bytes()); // the second checkpoint's row
        assert_eq!(unpack(&lying).unwrap_err(), WireError::new(at, WireErrorKind::Checkpoints(CheckpointsError::NotAscending(1))));
        assert_eq!(
            unpack(&lying).unwrap_err().to_string(),
            format!("the checkpoints at byte {at}: checkpoint 1 is not after the one before it")
        );
        let mut many = packed[..at].to_vec();
        many.extend_from_slice(&1025u32.to_be_bytes());
        many.extend((1..=1025u64).flat_map(|i| [i, i * 64, i].into_iter().flat_map(u64::to_be_bytes)));
        assert_eq!(unpack(&many).unwrap_err(), WireError::new(at, WireErrorKind::TooManyCheckpoints(1025)));
        assert_eq!(
            unpack(&many).unwrap_err().to_string(),
            format!("the checkpoints at byte {at} number 1025, more than the 1024 a file keeps")
        );
    }

    #[test]
    fn an_unknown_record_status_is_refused_naming_its_byte() {
        let s = scan_all(&sample::files()).into_iter().find(|s| s.detail.records.len() > 2).unwrap();
        let mut packed = pack(&s.detail);
        let at = 13 + 2 * RECORD_BYTES + RECORD_BYTES - 1; // the third record's status (after count, capped, seen)
        packed[at] = 9;
        assert_eq!(unpack(&packed).unwrap_err(), WireError::new(at, WireErrorKind::RecordStatus(9)));
        assert_eq!(unpack(&packed).unwrap_err().to_string(), format!("unknown record status 9 at byte {at}"));
    }

    #[test]
    fn short_or_lying_bytes_are_refused_at_every_length() {
        let s = &scan_all(&sample::files())[0];
        let packed = pack(&s.detail);
        for n in 0..packed.len() {
            assert!(unpack(&packed[..n]).is_err(), "{n} bytes");
        }
        assert_eq!(
            unpack(&[0xFF, 0xFF, 0xFF, 0xFF, 0]).unwrap_err(),
            WireError::new(0, WireErrorKind::CountPastEnd { count: 4_294_967_295 })
        );
        assert_eq!(
            unpack(&[0xFF, 0xFF, 0xFF, 0xFF, 0]).unwrap_err().to_string(),
            "the count at byte 0 claims 4294967295 items past the end of the bytes"
        );
        assert_eq!(unpack(&[0, 0]).unwrap_err().to_string(), "the bytes end at byte 2 where 4 more were expected");
        assert_eq!(unpack(&[0, 0]).unwrap_err(), WireError::new(0, WireErrorKind::Ended { end: 2, wanted: 4 }));
    }
}
