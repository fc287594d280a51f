//! A record as the table and the hex view show it ([`RecordRow`]), and the
//! rows kept packed as the worker sends them ([`Rows`]): the scan builds
//! them, the wire carries them, a window re-reads them from the file.

use bytes::Bytes;
use felix_codec::format::record::RECORD_HEADER_LEN;
use felix_codec::read::scan::RecordStatus;

/// A record as the table and the hex view show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRow {
    /// First byte.
    pub position: u64,
    /// Offset.
    pub offset: u64,
    /// Payload length.
    pub payload_len: u32,
    /// Publish time.
    pub timestamp_micros: u64,
    /// Whether it verified.
    pub status: RecordStatus,
}

impl RecordRow {
    /// Exclusive end.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.position + RECORD_HEADER_LEN as u64 + u64::from(self.payload_len)
    }

    /// The bytes selecting this record selects in a file of `size` bytes:
    /// its own, cut at the file's end (a torn record's claimed length runs
    /// past it), and never empty.
    #[must_use]
    pub fn selection(&self, size: u64) -> (u64, u64) {
        (self.position, self.end().min(size.max(self.position + 1)))
    }
}

/// Record rows kept packed, as the worker sends them: [`Rows::ROW_BYTES`]
/// each (position, offset, payload length, publish time, big-endian; then
/// the status), read one at a time. The page keeps the bytes it received
/// instead of decoding a million rows in one task, and holds 29 bytes a row
/// instead of 40. Rows the page received share the message's own buffer
/// ([`Rows::from_shared`]): a million rows are in the page's memory once,
/// not once as the message and again as the list.
#[derive(Clone, Debug, Default)]
pub struct Rows(Store);

/// Where the packed rows live.
#[derive(Clone, Debug)]
enum Store {
    /// Built here, a row at a time (the scan).
    Owned(Vec<u8>),
    /// A slice of a received message.
    Shared(Bytes),
}

impl Default for Store {
    fn default() -> Self {
        Self::Owned(Vec::new())
    }
}

impl PartialEq for Rows {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Rows {}

impl Rows {
    /// Bytes per row.
    pub const ROW_BYTES: usize = 29;

    /// Rows from their packed bytes, each status checked.
    ///
    /// # Errors
    /// `(row, status byte)` of the first row whose status is unknown, or of
    /// the last (partial) row when the bytes are not whole rows.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, (usize, u8)> {
        Self::check(&bytes)?;
        Ok(Self(Store::Owned(bytes)))
    }

    /// Rows that stay in the buffer they arrived in (no copy), each status checked.
    ///
    /// # Errors
    /// As [`Rows::from_bytes`].
    pub fn from_shared(bytes: Bytes) -> Result<Self, (usize, u8)> {
        Self::check(&bytes)?;
        Ok(Self(Store::Shared(bytes)))
    }

    fn check(bytes: &[u8]) -> Result<(), (usize, u8)> {
        let whole = bytes.len() / Self::ROW_BYTES;
        if !bytes.len().is_multiple_of(Self::ROW_BYTES) {
            return Err((whole, 0));
        }
        match bytes.iter().skip(Self::ROW_BYTES - 1).step_by(Self::ROW_BYTES).position(|&b| status_of(b).is_none()) {
            Some(i) => Err((i, bytes.get(i * Self::ROW_BYTES + Self::ROW_BYTES - 1).copied().unwrap_or(0))),
            None => Ok(()),
        }
    }

    /// The packed bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Store::Owned(v) => v,
            Store::Shared(b) => b,
        }
    }

    /// Adds a row at the end.
    /// (Rows shared with a received message are copied out first: the scan
    /// builds its own, and the page never adds to what it received.)
    pub fn push(&mut self, r: RecordRow) {
        let mut v = match std::mem::take(&mut self.0) {
            Store::Owned(v) => v,
            Store::Shared(b) => b.to_vec(),
        };
        v.extend_from_slice(&r.position.to_be_bytes());
        v.extend_from_slice(&r.offset.to_be_bytes());
        v.extend_from_slice(&r.payload_len.to_be_bytes());
        v.extend_from_slice(&r.timestamp_micros.to_be_bytes());
        v.push(status_byte(r.status));
        self.0 = Store::Owned(v);
    }

    /// How many rows.
    #[must_use]
    pub fn len(&self) -> usize {
        self.as_bytes().len() / Self::ROW_BYTES
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }

    /// Row `i`.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<RecordRow> {
        let row = self.as_bytes().get(i.checked_mul(Self::ROW_BYTES)?..)?.get(..Self::ROW_BYTES)?;
        let be = |b: &[u8]| b.iter().fold(0u64, |v, x| (v << 8) | u64::from(*x));
        Some(RecordRow {
            position: be(row.get(0..8)?),
            offset: be(row.get(8..16)?),
            payload_len: u32::try_from(be(row.get(16..20)?)).ok()?,
            timestamp_micros: be(row.get(20..28)?),
            status: status_of(*row.get(28)?)?,
        })
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = RecordRow> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The index of the first row for which `pred` is false, the rows being
    /// partitioned by it (true first), by binary search.
    #[must_use]
    pub fn partition_point(&self, pred: impl Fn(&RecordRow) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(|r| pred(&r)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl FromIterator<RecordRow> for Rows {
    fn from_iter<I: IntoIterator<Item = RecordRow>>(iter: I) -> Self {
        let mut rows = Self::default();
        for r in iter {
            rows.push(r);
        }
        rows
    }
}

fn status_byte(s: RecordStatus) -> u8 {
    match s {
        RecordStatus::Intact => 0,
        RecordStatus::OutOfOrder => 1,
        RecordStatus::ChecksumMismatch => 2,
        RecordStatus::Torn => 3,
    }
}

fn status_of(b: u8) -> Option<RecordStatus> {
    Some(match b {
        0 => RecordStatus::Intact,
        1 => RecordStatus::OutOfOrder,
        2 => RecordStatus::ChecksumMismatch,
        3 => RecordStatus::Torn,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_selects_its_bytes_cut_at_the_file_end_and_never_none() {
        let r = RecordRow { position: 32, offset: 0, payload_len: 10, timestamp_micros: 1, status: RecordStatus::Intact };
        assert_eq!(r.end(), 70);
        assert_eq!(r.selection(1000), (32, 70), "whole");
        assert_eq!(r.selection(50), (32, 50), "a torn record: up to the file's end");
        assert_eq!(r.selection(32), (32, 33), "past the end: one byte, never an empty range");
        assert_eq!(r.selection(0), (32, 33));
    }
}
