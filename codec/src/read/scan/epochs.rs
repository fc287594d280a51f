//! The epochs scanner. The file is small and bounded, so it is buffered (up
//! to [`crate::format::epochs::MAX_EPOCHS_FILE_LEN`] bytes) and
//! decoded once at the end; a longer file is reported by its true length.

use alloc::vec::Vec;

use super::{Findings, Item, ScanContext, Sink};
use crate::format::epochs::{self, Epoch, EPOCHS_HEADER_LEN, EPOCH_ENTRY_LEN, MAX_EPOCHS_FILE_LEN};
use crate::verdict::corruption::{CorruptionKind, Repair};

/// What an epochs scan found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EpochsSummary {
    /// Bytes scanned.
    pub size: u64,
    /// The history; empty when the file is damaged (the spec's reading).
    pub entries: Vec<Epoch>,
    /// Findings and notes.
    pub findings: Findings,
}

/// Scans one epochs file fed in chunks.
#[derive(Debug)]
pub struct EpochsScanner {
    ctx: ScanContext,
    buf: Vec<u8>,
    total: u64,
}

impl EpochsScanner {
    /// A scanner for one epochs file.
    #[must_use]
    pub fn new(ctx: ScanContext) -> Self {
        Self { ctx, buf: Vec::new(), total: 0 }
    }

    /// Feeds the next chunk of the file.
    pub fn feed(&mut self, chunk: &[u8], _sink: &mut impl Sink) {
        self.total = self.total.saturating_add(chunk.len() as u64);
        let room = (MAX_EPOCHS_FILE_LEN + 1).saturating_sub(self.buf.len());
        self.buf.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or(&[]));
    }

    /// Whether more bytes can change the verdict (past the largest valid
    /// file, only the length counts).
    #[must_use]
    pub fn needs_bytes(&self) -> bool {
        self.buf.len() <= MAX_EPOCHS_FILE_LEN
    }

    /// Counts `n` more bytes of the file without looking at them (a file
    /// longer than any valid one need not be read past its limit).
    pub fn skip(&mut self, n: u64) {
        self.total = self.total.saturating_add(n);
    }

    /// Ends the scan and decodes the file.
    #[must_use]
    pub fn finish(self, sink: &mut impl Sink) -> EpochsSummary {
        let mut findings = Findings::default();
        let decoded = epochs::decode(&self.buf).map_err(|mut defect| {
            // A file longer than any valid one was not buffered whole: name its true length.
            if let CorruptionKind::EpochsLength { actual, .. } = &mut defect.kind {
                *actual = self.total;
                defect.end = self.total;
            }
            defect
        });
        let entries = match decoded {
            Ok(entries) => {
                for (n, epoch) in entries.iter().enumerate() {
                    sink.item(Item::Epoch { n: u16::try_from(n).unwrap_or(u16::MAX), epoch: *epoch });
                }
                entries
            }
            Err(defect) => {
                findings.add(&self.ctx, defect.kind, (defect.start, defect.end), None, Repair::Never, sink);
                findings.note("the epochs file reads as empty: divergence cannot be repaired automatically until it is rewritten".into());
                Vec::new()
            }
        };
        EpochsSummary { size: self.total, entries, findings }
    }
}

/// Byte position of epochs entry `n`.
#[must_use]
pub fn entry_position(n: usize) -> u64 {
    (EPOCHS_HEADER_LEN + n * EPOCH_ENTRY_LEN) as u64
}
