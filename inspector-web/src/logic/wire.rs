//! What the scan worker sends the page: record rows, index entries and
//! epochs packed as fixed-width big-endian bytes (transferred, not copied
//! field by field), live findings and reports as JSON.
//!
//! ```text
//! detail  = u32 record count, u8 capped, records × 29 bytes,
//!           u32 entry count, entries × 16 bytes, u32 epoch count, epochs × 16 bytes
//! record  = position u64, offset u64, payload_len u32, timestamp_micros u64, status u8
//! ```

use felix_codec::epochs::Epoch;
use felix_codec::index::IndexEntry;
use felix_codec::scan::RecordStatus;

use super::scan::{Detail, RecordRow};

const RECORD_BYTES: usize = 29;

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

/// Packs a file's detail (live findings are sent separately).
#[must_use]
pub fn pack(d: &Detail) -> Vec<u8> {
    let mut out = Vec::with_capacity(13 + d.records.len() * RECORD_BYTES + (d.index_entries.len() + d.epochs.len()) * 16);
    out.extend_from_slice(&u32::try_from(d.records.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.push(u8::from(d.records_capped));
    for r in &d.records {
        out.extend_from_slice(&r.position.to_be_bytes());
        out.extend_from_slice(&r.offset.to_be_bytes());
        out.extend_from_slice(&r.payload_len.to_be_bytes());
        out.extend_from_slice(&r.timestamp_micros.to_be_bytes());
        out.push(status_byte(r.status));
    }
    out.extend_from_slice(&u32::try_from(d.index_entries.len()).unwrap_or(u32::MAX).to_be_bytes());
    for e in &d.index_entries {
        out.extend_from_slice(&e.encode());
    }
    out.extend_from_slice(&u32::try_from(d.epochs.len()).unwrap_or(u32::MAX).to_be_bytes());
    for e in &d.epochs {
        out.extend_from_slice(&e.generation.to_be_bytes());
        out.extend_from_slice(&e.start_offset.to_be_bytes());
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let s = self.bytes.get(self.at..self.at + n).ok_or_else(|| format!("packed detail ends at byte {}", self.at))?;
        self.at += n;
        Ok(s)
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().map_err(|_| "short u64")?))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().map_err(|_| "short u32")?))
    }
    fn count(&mut self, width: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(width) > self.bytes.len() - self.at {
            return Err(format!("packed detail claims {n} items past its end"));
        }
        Ok(n)
    }
}

/// Unpacks what [`pack`] wrote.
///
/// # Errors
/// A message naming where the bytes are short or wrong.
pub fn unpack(bytes: &[u8]) -> Result<Detail, String> {
    let mut r = Reader { bytes, at: 0 };
    let n = r.count(RECORD_BYTES)?;
    let capped = r.take(1)?.first().copied() == Some(1);
    let mut records = Vec::with_capacity(n);
    for _ in 0..n {
        let (position, offset, payload_len, timestamp_micros) = (r.u64()?, r.u64()?, r.u32()?, r.u64()?);
        let b = r.take(1)?.first().copied().unwrap_or(255);
        let status = status_of(b).ok_or_else(|| format!("unknown record status {b}"))?;
        records.push(RecordRow { position, offset, payload_len, timestamp_micros, status });
    }
    let n = r.count(16)?;
    let index_entries = (0..n).map(|_| Ok(IndexEntry { offset: r.u64()?, position: r.u64()? })).collect::<Result<_, String>>()?;
    let n = r.count(16)?;
    let epochs = (0..n).map(|_| Ok(Epoch { generation: r.u64()?, start_offset: r.u64()? })).collect::<Result<_, String>>()?;
    Ok(Detail { records, records_capped: capped, index_entries, epochs, live: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::{sample, scan::scan_all};

    #[test]
    fn every_sample_detail_survives_packing() {
        for s in scan_all(&sample::files()) {
            assert_eq!(unpack(&pack(&s.detail)).unwrap(), s.detail, "{}", s.report.path);
        }
    }

    #[test]
    fn short_or_lying_bytes_are_refused() {
        let s = &scan_all(&sample::files())[0];
        let packed = pack(&s.detail);
        assert!(unpack(&packed[..packed.len() - 1]).is_err());
        assert!(unpack(&[0xFF, 0xFF, 0xFF, 0xFF, 0]).unwrap_err().contains("past its end"));
    }
}
