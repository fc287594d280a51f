//! Scanners that never fail.
//!
//! Each scanner is fed a file in chunks of any size, in order, and keeps only
//! a bounded amount of state (a partial header, a CRC in progress), so a
//! 10 GiB file is scanned in constant memory. As it goes it hands every
//! structure and every finding to a sink ([`Item`]); at the end it returns a
//! summary with the final verdicts.
//!
//! **Architecture invariant:** scanning the same bytes in any chunking gives
//! the same items and the same summary (property-tested).
//!
//! # Example
//!
//! ```
//! use felix_codec::format::epochs::{encode, Epoch};
//! use felix_codec::read::scan::{EpochsScanner, Item, ScanContext};
//! let bytes = encode(&[Epoch { generation: 1, start_offset: 0 }]).unwrap();
//! let mut scanner = EpochsScanner::new(ScanContext::default());
//! let mut seen = 0;
//! let mut sink = |item: Item<'_>| if let Item::Epoch { .. } = item { seen += 1 };
//! for chunk in bytes.chunks(3) {
//!     scanner.feed(chunk, &mut sink);
//! }
//! let summary = scanner.finish(&mut sink);
//! assert_eq!((seen, summary.findings.findings.len()), (1, 0));
//! ```

use alloc::string::String;
use alloc::vec::Vec;

pub mod epochs;
pub mod fields;
pub mod index;
pub mod segment;

pub use epochs::{EpochsScanner, EpochsSummary};
pub use index::{IndexCheck, IndexScanner, IndexSummary};
pub use segment::{RecordItem, RecordStatus, SegmentScanner, SegmentSummary};

use crate::format::epochs::Epoch;
use crate::format::index::IndexEntry;
use crate::format::segment_header::SegmentHeader;
use crate::verdict::corruption::{CorruptionKind, CorruptionSite, Finding, Repair};

/// Most findings kept per file; past it they are counted, not stored.
pub const MAX_FINDINGS_PER_FILE: usize = 10_000;
/// Most notes kept per file.
pub const MAX_NOTES_PER_FILE: usize = 64;

/// What the scanners know about the file they scan, for sites and verdicts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanContext {
    /// The shard directory name, when known.
    pub shard: Option<String>,
    /// The segment id from the file name, when known.
    pub segment_id: Option<u64>,
    /// Whether this segment is the newest of its shard: only there can a
    /// record have been mid-write, so only there is tail damage repairable.
    /// A lone file given without its shard is judged as if it were newest.
    pub newest_segment: bool,
    /// Whether a writer holds the shard open right now (known to the CLI from
    /// the writer's lock; never known in the browser). Then a file that ends
    /// inside the newest segment's last record is a record in flight, not
    /// damage: it is reported as a note.
    pub writer_live: bool,
}

impl ScanContext {
    /// A site at `position` in this file.
    #[must_use]
    pub fn site(&self, position: u64) -> CorruptionSite {
        CorruptionSite { shard: self.shard.clone(), segment_id: self.segment_id, position }
    }
}

/// One thing a scanner found, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A segment header that decoded.
    SegmentHeader(SegmentHeader),
    /// A record whose header verified (its payload checksum may not have).
    Record(RecordItem),
    /// An index entry, numbered from 0.
    IndexEntry {
        /// Entry number.
        n: u64,
        /// The entry.
        entry: IndexEntry,
    },
    /// An epochs entry, numbered from 0.
    Epoch {
        /// Entry number.
        n: u16,
        /// The entry.
        epoch: Epoch,
    },
    /// A finding, with a *provisional* repair verdict: whether intact
    /// records follow is only known at the end; the summary is final.
    Finding(&'a Finding),
}

/// Where a scanner sends items. Any `FnMut(Item)` is a sink; `()` ignores items.
pub trait Sink {
    /// Receives one item.
    fn item(&mut self, item: Item<'_>);
}

impl Sink for () {
    fn item(&mut self, _: Item<'_>) {}
}

impl<F: FnMut(Item<'_>)> Sink for F {
    fn item(&mut self, item: Item<'_>) {
        self(item);
    }
}

/// Findings and notes of one file, bounded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// Findings in file order.
    pub findings: Vec<Finding>,
    /// Findings past [`MAX_FINDINGS_PER_FILE`], counted only.
    pub omitted: u64,
    /// Tolerated conditions (a torn final index entry, a missing index, …).
    pub notes: Vec<String>,
}

impl Findings {
    /// Records a finding and shows it to the sink.
    pub fn push(&mut self, finding: Finding, sink: &mut (impl Sink + ?Sized)) {
        sink.item(Item::Finding(&finding));
        if self.findings.len() < MAX_FINDINGS_PER_FILE {
            self.findings.push(finding);
        } else {
            self.omitted = self.omitted.saturating_add(1);
        }
    }

    /// Records a finding built from its parts.
    pub fn add(
        &mut self,
        ctx: &ScanContext,
        kind: CorruptionKind,
        range: (u64, u64),
        offset: Option<u64>,
        repair: Repair,
        sink: &mut (impl Sink + ?Sized),
    ) {
        let (start, end) = range;
        self.push(Finding { kind, site: ctx.site(start), end, offset, repair }, sink);
    }

    /// Records a note.
    pub fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES_PER_FILE {
            self.notes.push(note);
        }
    }
}
