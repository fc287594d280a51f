//! Record rows by window, for files with more records than the page lists.
//!
//! The scan keeps a sparse list of [`Checkpoints`] per file: record
//! boundaries (the row number, the byte position, the offset of the record
//! that ends there), at least [`Checkpoints::spacing_bytes`] apart and at
//! most [`MAX_CHECKPOINTS`] of them — when the list is full, every second
//! one is dropped and the spacing doubles, so a file of any size keeps a
//! fixed number. A view that needs rows past the listed ones asks for a
//! [`Want`] (rows by number, the rows over a byte range, or the record with
//! an offset); a [`WindowScan`] starts at the nearest checkpoint before it,
//! is fed the file's bytes from there (the page reads them with
//! `Blob.slice`, [`WINDOW_READ_BYTES`] at a time) and keeps only the rows
//! asked for. The codec's own scanner decodes them
//! ([`SegmentScanner::resume_after`]), so they are the full scan's rows,
//! damage and all.

use felix_codec::read::scan::segment::SegmentScanner;
use felix_codec::read::scan::{Item, ScanContext};
use felix_codec::read::time::TimeSeek;

use super::rows::{RecordRow, Rows};

/// Checkpoints kept per file, at most (24 bytes each).
pub const MAX_CHECKPOINTS: usize = 1024;
/// The spacing a file's checkpoints start with.
pub const FIRST_SPACING_BYTES: u64 = 64 << 10;
/// Bytes the page reads per step of a window scan (one short task each).
pub const WINDOW_READ_BYTES: u64 = 256 << 10;
/// Rows one window holds, at most.
pub const MAX_WINDOW_ROWS: usize = 4096;

/// A record boundary an earlier scan met: a window scan can resume there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Record rows before it (the number of the first row after it).
    pub row: u64,
    /// Its byte position (the end of the record before it).
    pub position: u64,
    /// The offset of the record that ends here.
    pub previous_offset: u64,
}

/// A file's checkpoints, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    spacing_bytes: u64,
    list: Vec<Checkpoint>,
}

impl Default for Checkpoints {
    fn default() -> Self {
        Self::with_spacing(FIRST_SPACING_BYTES)
    }
}

/// Why received checkpoints were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointsError {
    /// More than [`MAX_CHECKPOINTS`].
    TooMany(usize),
    /// A spacing of 0 bytes.
    NoSpacing,
    /// Checkpoint `n` is not after the one before it (row and position both ascend).
    NotAscending(usize),
}

impl core::fmt::Display for CheckpointsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooMany(n) => write!(f, "{n} checkpoints where a file keeps at most {MAX_CHECKPOINTS}"),
            Self::NoSpacing => write!(f, "checkpoints 0 bytes apart"),
            Self::NotAscending(n) => write!(f, "checkpoint {n} is not after the one before it"),
        }
    }
}

impl Checkpoints {
    /// None yet, the first ones `spacing_bytes` apart (tests use a small spacing).
    #[must_use]
    pub fn with_spacing(spacing_bytes: u64) -> Self {
        Self { spacing_bytes: spacing_bytes.max(1), list: Vec::new() }
    }

    /// Checkpoints as received, checked.
    ///
    /// # Errors
    /// When there are too many, the spacing is 0, or they do not ascend.
    pub fn from_parts(spacing_bytes: u64, list: Vec<Checkpoint>) -> Result<Self, CheckpointsError> {
        if list.len() > MAX_CHECKPOINTS {
            return Err(CheckpointsError::TooMany(list.len()));
        }
        if spacing_bytes == 0 {
            return Err(CheckpointsError::NoSpacing);
        }
        if let Some(n) = list.windows(2).position(|w| matches!(w, [a, b] if b.row <= a.row || b.position <= a.position)) {
            return Err(CheckpointsError::NotAscending(n + 1));
        }
        Ok(Self { spacing_bytes, list })
    }

    /// The least distance between two checkpoints now.
    #[must_use]
    pub fn spacing_bytes(&self) -> u64 {
        self.spacing_bytes
    }

    /// The checkpoints, in file order.
    #[must_use]
    pub fn list(&self) -> &[Checkpoint] {
        &self.list
    }

    /// Notes the boundary after a record the scan met: `rows` rows so far
    /// (this one counted), ending at `end`, carrying `offset`. Kept when it
    /// is far enough from the last one kept.
    pub fn after_record(&mut self, rows: u64, end: u64, offset: u64) {
        let last = self.list.last().map_or(0, |c| c.position);
        if end < last.saturating_add(self.spacing_bytes) {
            return;
        }
        self.list.push(Checkpoint { row: rows, position: end, previous_offset: offset });
        if self.list.len() > MAX_CHECKPOINTS {
            let mut i = 0;
            self.list.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            self.spacing_bytes = self.spacing_bytes.saturating_mul(2);
        }
    }

    /// Where a scan for `want` starts: the last checkpoint before it, or the
    /// start of the file (`None`). For an offset, the checkpoints are
    /// searched as if offsets ascend through the file (they do, but for damage).
    #[must_use]
    pub fn start_for(&self, want: Want) -> Option<Checkpoint> {
        let n = match want {
            Want::Rows { first, .. } => self.list.partition_point(|c| c.row <= first),
            Want::Bytes { start, .. } => self.list.partition_point(|c| c.position <= start),
            Want::Offset(o) => self.list.partition_point(|c| c.previous_offset < o),
            Want::Time { from_row, .. } => self.list.partition_point(|c| c.row <= from_row),
        };
        n.checked_sub(1).and_then(|i| self.list.get(i)).copied()
    }
}

/// Damaged rows straight above a row that [`RowSource::clock_back_at`]
/// looks past for the intact row it compares with (past them it says
/// nothing: a table row's mark never costs more than this many rows read).
pub const CLOCK_BACK_REACH: u64 = 4096;

/// Which rows a view asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// `count` rows from row number `first`.
    Rows {
        /// The first row's number.
        first: u64,
        /// How many ([`MAX_WINDOW_ROWS`] at most).
        count: usize,
    },
    /// The rows holding any byte of `start..end`.
    Bytes {
        /// First byte.
        start: u64,
        /// Exclusive end.
        end: u64,
    },
    /// The first record carrying this offset after the checkpoint the search starts at.
    Offset(u64),
    /// The first record at or after a time, by Kafka's rule (the first
    /// intact record, in file order, whose timestamp is ≥ `at`: the codec's
    /// [`TimeSeek`]), known to lie past row `from_row` (every row before it
    /// is below `at`): the scan starts at the last checkpoint before that
    /// row and reads on until it meets one, or the file ends.
    Time {
        /// The time, in microseconds since the Unix epoch.
        at: u64,
        /// Rows before this one are known to be below `at` (the held rows).
        from_row: u64,
    },
}

/// The rows a window scan found: contiguous rows from row number `first_row`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// The number of the first row.
    pub first_row: u64,
    /// The rows.
    pub rows: Rows,
}

impl Window {
    /// Row number `n`, when the window holds it.
    #[must_use]
    pub fn row(&self, n: u64) -> Option<RecordRow> {
        self.rows.get(usize::try_from(n.checked_sub(self.first_row)?).ok()?)
    }
}

/// A file's record rows as the views see them: the listed rows (the first
/// ones, held since the scan), then whatever window was read from the file.
#[derive(Clone, Copy, Debug)]
pub struct RowSource<'a> {
    /// The listed rows.
    pub listed: &'a Rows,
    /// Whether the file has rows past them.
    pub capped: bool,
    /// Every row the scan met.
    pub seen: u64,
    /// Rows read from the file, if any.
    pub window: Option<&'a Window>,
}

impl<'a> RowSource<'a> {
    /// Every row of the file, listed or not.
    #[must_use]
    pub fn len(&self) -> u64 {
        let listed = self.listed.len() as u64;
        if self.capped {
            self.seen.max(listed)
        } else {
            listed
        }
    }

    /// Whether the file has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row number `n`, when it is listed or in the window.
    #[must_use]
    pub fn get(&self, n: u64) -> Option<RecordRow> {
        usize::try_from(n).ok().and_then(|i| self.listed.get(i)).or_else(|| self.window.and_then(|w| w.row(n)))
    }

    /// Whether row `n` was written before the intact row above it: both
    /// intact, its timestamp below that row's (the producer's clock went back
    /// there; the table marks it). Damaged rows between are passed over, up
    /// to [`CLOCK_BACK_REACH`] of them: their timestamps are not believed.
    /// Rows neither listed nor read say nothing.
    #[must_use]
    pub fn clock_back_at(&self, n: u64) -> bool {
        let intact = |r: &RecordRow| r.status == felix_codec::read::scan::RecordStatus::Intact;
        let Some(r) = self.get(n).filter(intact) else { return false };
        for m in (n.saturating_sub(CLOCK_BACK_REACH.saturating_add(1))..n).rev() {
            match self.get(m) {
                Some(before) if intact(&before) => return r.timestamp_micros < before.timestamp_micros,
                Some(_) => {}
                None => return false,
            }
        }
        false
    }

    /// The number of the row whose bytes hold `pos`, when it is listed or in the window.
    #[must_use]
    pub fn holding(&self, pos: u64) -> Option<u64> {
        let within = |rows: &Rows| {
            let i = rows.partition_point(|r| r.position <= pos).checked_sub(1)?;
            rows.get(i).filter(|r| pos < r.end()).map(|_| i as u64)
        };
        within(self.listed).or_else(|| self.window.and_then(|w| Some(w.first_row + within(&w.rows)?)))
    }

    /// The window to read for rows `first..first + visible`, when some of
    /// them are past the list and not in the window: those rows and a
    /// screen either side (so a step of the keyboard finds its row).
    #[must_use]
    pub fn want_for(&self, first: u64, visible: u64) -> Option<Want> {
        let listed = self.listed.len() as u64;
        let (from, to) = (first.max(listed), first.saturating_add(visible).min(self.len()));
        if !self.capped || from >= to || (from..to).all(|n| self.get(n).is_some()) {
            return None;
        }
        let start = first.saturating_sub(visible).max(listed);
        let count = usize::try_from(visible.saturating_mul(3)).unwrap_or(MAX_WINDOW_ROWS);
        Some(Want::Rows { first: start, count })
    }

    /// Whether bytes before `end` lie past the listed rows' last byte, in a
    /// file that has rows past them: the hex view then reads their rows.
    #[must_use]
    pub fn past_list(&self, end: u64) -> bool {
        let listed_end = self.listed.len().checked_sub(1).and_then(|i| self.listed.get(i)).map_or(0, |r| r.end());
        self.capped && listed_end < end
    }

    /// The rows the hex view names bytes up to `end` with: the listed rows
    /// while they reach `end`, else the window read for the bytes in view
    /// ([`Want::Bytes`]) once it is here.
    #[must_use]
    pub fn for_bytes(&self, end: u64) -> &'a Rows {
        match self.window {
            Some(w) if self.past_list(end) => &w.rows,
            _ => self.listed,
        }
    }
}

/// What the scan keeps of the rows it meets.
#[derive(Debug)]
struct Collect {
    want: Want,
    /// The next row's number.
    row: u64,
    /// A search for an offset ends at this byte (the next checkpoint past it).
    stop_at: Option<u64>,
    window: Option<Window>,
    done: bool,
}

impl Collect {
    fn take(&mut self, r: RecordRow) {
        let n = self.row;
        self.row += 1;
        if self.done {
            return;
        }
        let keep = match self.want {
            Want::Rows { first, count } => {
                self.done = n.saturating_add(1) >= first.saturating_add(count as u64);
                n >= first
            }
            Want::Bytes { start, end } => {
                self.done = r.position >= end;
                !self.done && r.end() > start
            }
            Want::Offset(o) => {
                self.done = r.offset == o || self.stop_at.is_some_and(|s| r.position >= s);
                r.offset == o
            }
            Want::Time { at, from_row } => {
                let intact = n >= from_row && r.status == felix_codec::read::scan::RecordStatus::Intact;
                self.done = intact && TimeSeek::new(at).record(r.offset, r.timestamp_micros).is_some();
                self.done
            }
        };
        if keep {
            let w = self.window.get_or_insert_with(|| Window { first_row: n, rows: Rows::default() });
            w.rows.push(r);
            self.done |= w.rows.len() >= MAX_WINDOW_ROWS;
        }
    }
}

/// One window scan: fed the file's bytes from [`WindowScan::read_from`] on,
/// until [`WindowScan::is_done`] or the file ends.
#[derive(Debug)]
pub struct WindowScan {
    scanner: SegmentScanner,
    collect: Collect,
    next: u64,
}

impl WindowScan {
    /// A scan for `want`, from the nearest checkpoint before it.
    #[must_use]
    pub fn new(checkpoints: &Checkpoints, want: Want) -> Self {
        let want = match want {
            Want::Rows { first, count } => Want::Rows { first, count: count.min(MAX_WINDOW_ROWS) },
            w => w,
        };
        let start = checkpoints.start_for(want);
        let ctx = ScanContext::default();
        let (scanner, row, next) = match start {
            Some(c) => (SegmentScanner::resume_after(ctx, c.position, c.previous_offset), c.row, c.position),
            None => (SegmentScanner::new(ctx), 0, 0),
        };
        let stop_at = match want {
            Want::Offset(o) => checkpoints.list().iter().find(|c| c.position > next && c.previous_offset >= o).map(|c| c.position),
            _ => None,
        };
        let empty = matches!(want, Want::Rows { count: 0, .. }) || matches!(want, Want::Bytes { start, end } if start >= end);
        Self { scanner, collect: Collect { want, row, stop_at, window: None, done: empty }, next }
    }

    /// Where the next bytes to feed start.
    #[must_use]
    pub fn read_from(&self) -> u64 {
        self.next
    }

    /// Whether the rows asked for are found (or cannot be).
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.collect.done
    }

    /// Feeds the file's bytes from [`WindowScan::read_from`].
    pub fn feed(&mut self, chunk: &[u8]) {
        self.next = self.next.saturating_add(chunk.len() as u64);
        let collect = &mut self.collect;
        self.scanner.feed(chunk, &mut |item: Item<'_>| {
            if let Item::Record(r) = item {
                collect.take(row_of(&r));
            }
        });
    }

    /// The rows found. `at_end`: every byte of the file was fed (a record
    /// the file ends inside is then a row too, as in the full scan).
    #[must_use]
    pub fn finish(mut self, at_end: bool) -> Window {
        if at_end && !self.collect.done {
            let collect = &mut self.collect;
            let _ = self.scanner.finish(&mut |item: Item<'_>| {
                if let Item::Record(r) = item {
                    collect.take(row_of(&r));
                }
            });
        }
        self.collect.window.unwrap_or(Window { first_row: self.collect.row, rows: Rows::default() })
    }
}

fn row_of(r: &felix_codec::read::scan::segment::RecordItem) -> RecordRow {
    RecordRow {
        position: r.position,
        offset: r.header.offset,
        payload_len: r.header.payload_len,
        timestamp_micros: r.header.timestamp_micros,
        status: r.status,
    }
}

/// Runs a window scan over `file` held in memory, `read` bytes at a time (tests, and the model of the page's loop).
#[must_use]
pub fn scan_window(file: &[u8], checkpoints: &Checkpoints, want: Want, read: usize) -> Window {
    let mut scan = WindowScan::new(checkpoints, want);
    loop {
        let from = usize::try_from(scan.read_from()).unwrap_or(usize::MAX);
        if scan.is_done() || from >= file.len() {
            let at_end = from >= file.len();
            return scan.finish(at_end);
        }
        let to = from.saturating_add(read.max(1)).min(file.len());
        scan.feed(file.get(from..to).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scan::scan_all;
    use felix_codec::format::record::encode_record;
    use felix_codec::format::segment_header::SegmentHeader;
    use felix_codec::read::scan::RecordStatus;
    use proptest::prelude::*;

    /// A segment of `lens.len()` records (offsets from 100, some skipped by
    /// `gaps`), then `flips` (position, xor) applied and the file cut to `keep` bytes.
    fn segment(lens: &[usize], gaps: &[bool], flips: &[(usize, u8)], keep: usize) -> Vec<u8> {
        let mut out = SegmentHeader::new(100, 1).encode().to_vec();
        let mut offset = 100;
        for (i, len) in lens.iter().enumerate() {
            offset += u64::from(gaps.get(i).copied().unwrap_or(false));
            encode_record(offset, 1000 + i as u64, &vec![i as u8; *len], &mut out).unwrap();
            offset += 1;
        }
        let n = out.len();
        for (at, x) in flips {
            out[at % n] ^= x | 1;
        }
        out.truncate(keep.min(out.len()));
        out
    }

    /// Every row of the file and its checkpoints `spacing` apart, as the page's scan keeps them.
    fn full(file: &[u8], spacing: u64) -> (Vec<RecordRow>, Checkpoints) {
        let s = scan_all(&[("00000000000000000100.log".into(), file.to_vec())]).remove(0);
        let rows: Vec<RecordRow> = s.detail.records.iter().collect();
        assert_eq!(rows.len() as u64, s.detail.records_seen);
        let mut c = Checkpoints::with_spacing(spacing);
        for (i, r) in rows.iter().enumerate() {
            if r.status != RecordStatus::Torn {
                c.after_record(i as u64 + 1, r.end(), r.offset);
            }
        }
        (rows, c)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// A window is the full scan's rows, from any checkpoint spacing, read
        /// in any step, over files with rot, lost bytes and gaps in offsets.
        #[test]
        fn window_rows_are_the_full_scans_rows(
            lens in prop::collection::vec(0usize..90, 1..120),
            gaps in prop::collection::vec(prop::bool::weighted(0.05), 0..120),
            flips in prop::collection::vec((32usize..20_000, any::<u8>()), 0..6),
            keep in 0usize..20_000,
            spacing in 1u64..3000,
            read in 1usize..700,
            first in 0u64..130,
            count in 0usize..20,
            span in (0u64..20_000, 1u64..400),
        ) {
            let file = segment(&lens, &gaps, &flips, keep);
            let (rows, cps) = full(&file, spacing);
            let w = scan_window(&file, &cps, Want::Rows { first, count }, read);
            let want: Vec<RecordRow> = rows.iter().copied().skip(first as usize).take(count).collect();
            prop_assert_eq!(w.rows.iter().collect::<Vec<_>>(), want.clone());
            if !want.is_empty() {
                prop_assert_eq!(w.first_row, first);
            }
            let (start, end) = (span.0, span.0 + span.1);
            let w = scan_window(&file, &cps, Want::Bytes { start, end }, read);
            let over: Vec<(usize, RecordRow)> = rows.iter().copied().enumerate().filter(|(_, r)| r.end() > start && r.position < end).collect();
            prop_assert_eq!(w.rows.iter().collect::<Vec<_>>(), over.iter().map(|(_, r)| *r).collect::<Vec<_>>());
            if let Some((i, _)) = over.first() {
                prop_assert_eq!(w.first_row, *i as u64);
            }
            let ascending = rows.windows(2).all(|p| p[0].offset < p[1].offset);
            for (i, r) in rows.iter().enumerate() {
                let w = scan_window(&file, &cps, Want::Offset(r.offset), read);
                let got = w.rows.get(0);
                // Whatever it finds is a row of the full scan, at its number.
                if let Some(g) = got {
                    prop_assert_eq!(Some(g), rows.get(w.first_row as usize).copied());
                    prop_assert_eq!(g.offset, r.offset);
                }
                if ascending {
                    prop_assert_eq!((w.first_row, got), (i as u64, Some(*r)));
                }
            }
            let past = rows.iter().map(|r| r.offset).max().unwrap_or(0) + 1;
            prop_assert!(scan_window(&file, &cps, Want::Offset(past), read).rows.is_empty());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// A jump to a time past the held rows finds what Kafka's rule finds
        /// over the full scan's rows: the first intact row from `from_row` on
        /// whose timestamp is ≥ the time — on clocks that step back, with
        /// damaged records between, from any checkpoint spacing and read size.
        #[test]
        fn a_time_past_the_held_rows_is_the_first_intact_row_at_or_after_it(
            steps in prop::collection::vec(-300i64..400, 1..120),
            flips in prop::collection::vec((32usize..12_000, any::<u8>()), 0..4),
            spacing in 1u64..3000,
            read in 1usize..700,
            from in 0u64..130,
            at in 0u64..20_000,
        ) {
            let mut file = SegmentHeader::new(100, 1).encode().to_vec();
            let mut ts = 5_000i64;
            for (i, step) in steps.iter().enumerate() {
                ts = (ts + step).max(0);
                encode_record(100 + i as u64, ts as u64, &[i as u8; 20], &mut file).unwrap();
            }
            let n = file.len();
            for (p, x) in flips {
                file[p % n] ^= x | 1;
            }
            let (rows, cps) = full(&file, spacing);
            let from_row = from.min(rows.len() as u64);
            let want = rows.iter().enumerate().skip(from_row as usize).find(|(_, r)| r.status == RecordStatus::Intact && r.timestamp_micros >= at);
            let w = scan_window(&file, &cps, Want::Time { at, from_row }, read);
            match want {
                Some((i, r)) => prop_assert_eq!((w.first_row, w.rows.iter().collect::<Vec<_>>()), (i as u64, vec![*r])),
                None => prop_assert!(w.rows.is_empty()),
            }
        }
    }

    /// The rows where the clock went back: an intact row below the nearest
    /// intact row above it, listed or read — across damaged rows between,
    /// whose timestamps are not believed either way.
    #[test]
    fn a_row_written_before_the_one_above_is_marked() {
        let row = |offset: u64, ts, status| RecordRow { position: 32 + offset * 40, offset, payload_len: 12, timestamp_micros: ts, status };
        let all = [
            row(0, 500, RecordStatus::Intact),
            row(1, 100, RecordStatus::Intact),
            row(2, 9_999, RecordStatus::ChecksumMismatch),
            row(3, 200, RecordStatus::Intact),
            row(4, 50, RecordStatus::ChecksumMismatch),
            row(5, 60, RecordStatus::Intact),
            row(6, 60, RecordStatus::Intact),
            row(7, 30, RecordStatus::Intact),
        ];
        let listed: Rows = all[..3].iter().copied().collect();
        let w = Window { first_row: 3, rows: all[3..].iter().copied().collect() };
        let src = RowSource { listed: &listed, capped: true, seen: 8, window: Some(&w) };
        let marked: Vec<u64> = (0..9).filter(|&n| src.clock_back_at(n)).collect();
        assert_eq!(marked, [1, 5, 7], "5 is below 3 across the damaged 4; 3 is not below the damaged 2; not at an equal time");
        let unread = RowSource { window: None, ..src };
        assert!(!unread.clock_back_at(5), "a row not read says nothing");
        let from_4 = Window { first_row: 4, rows: all[4..].iter().copied().collect() };
        let gap = RowSource { window: Some(&from_4), ..src };
        assert!(!gap.clock_back_at(5), "the intact row above not read: nothing said");
        // Damaged rows straight above: looked past up to CLOCK_BACK_REACH of them.
        let reach = usize::try_from(CLOCK_BACK_REACH).unwrap();
        for (damaged, marked) in [(reach, true), (reach + 1, false)] {
            let mut rows = vec![row(0, 500, RecordStatus::Intact)];
            rows.extend((1..=damaged as u64).map(|o| row(o, 1, RecordStatus::ChecksumMismatch)));
            rows.push(row(damaged as u64 + 1, 100, RecordStatus::Intact));
            let listed: Rows = rows.iter().copied().collect();
            let src = RowSource { listed: &listed, capped: false, seen: rows.len() as u64, window: None };
            assert_eq!(src.clock_back_at(damaged as u64 + 1), marked, "{damaged} damaged rows between");
        }
    }

    /// The scan's own checkpoints: a fixed number at most, whatever the file
    /// holds, each a record boundary that resumes to the same rows.
    #[test]
    fn the_scan_keeps_a_bounded_list_of_checkpoints_that_resume_exactly() {
        let file = segment(&vec![40; 30_000], &[], &[(700_000, 0x40)], usize::MAX);
        let s = scan_all(&[("00000000000000000100.log".into(), file.clone())]).remove(0);
        let cps = &s.detail.checkpoints;
        assert!(cps.list().len() > 20, "{} checkpoints", cps.list().len());
        assert_eq!(cps.spacing_bytes(), FIRST_SPACING_BYTES);
        let rows: Vec<RecordRow> = s.detail.records.iter().collect();
        for c in cps.list() {
            let i = usize::try_from(c.row).unwrap();
            assert_eq!((rows[i - 1].end(), rows[i - 1].offset), (c.position, c.previous_offset));
            let w = scan_window(&file, cps, Want::Rows { first: c.row, count: 3 }, 4096);
            assert_eq!(w.rows.iter().collect::<Vec<_>>(), rows[i..i + 3].to_vec());
        }
        let last = rows.len() as u64 - 1;
        let w = scan_window(&file, cps, Want::Offset(rows[rows.len() - 1].offset), usize::try_from(WINDOW_READ_BYTES).unwrap());
        assert_eq!((w.first_row, w.rows.get(0)), (last, rows.last().copied()));

        let mut many = Checkpoints::with_spacing(10);
        for i in 1..=100_000u64 {
            many.after_record(i, 32 + i * 10, i);
        }
        assert!(many.list().len() <= MAX_CHECKPOINTS && many.list().len() > MAX_CHECKPOINTS / 4, "{}", many.list().len());
        assert!(many.spacing_bytes() >= 10 * 64, "the spacing widened: {}", many.spacing_bytes());
        assert!(many.list().windows(2).all(|w| w[1].position - w[0].position >= 10));
    }

    /// The views' rows: listed ones, then the window's; what to read, and when not.
    #[test]
    fn the_views_see_listed_rows_then_the_window() {
        let file = segment(&[10; 40], &[], &[], usize::MAX);
        let (rows, cps) = full(&file, 200);
        let listed: Rows = rows.iter().copied().take(10).collect();
        let mut src = RowSource { listed: &listed, capped: true, seen: 40, window: None };
        assert_eq!((src.len(), src.get(9), src.get(10)), (40, Some(rows[9]), None));
        assert_eq!(src.want_for(0, 8), None, "all listed");
        assert_eq!(src.want_for(5, 8), Some(Want::Rows { first: 10, count: 24 }));
        assert_eq!(src.want_for(30, 8), Some(Want::Rows { first: 22, count: 24 }));
        let w = scan_window(&file, &cps, Want::Rows { first: 22, count: 24 }, 64);
        src.window = Some(&w);
        assert_eq!(src.want_for(30, 8), None, "the window holds them");
        assert_eq!((src.get(39), src.get(21), src.get(40)), (Some(rows[39]), None, None));
        assert_eq!(src.holding(rows[35].position + 5), Some(35));
        assert_eq!(src.holding(rows[3].position), Some(3));
        assert_eq!(src.holding(rows[15].position), None, "neither listed nor read");
        assert_eq!(src.for_bytes(rows[35].end()).len(), w.rows.len(), "past the list: the window's rows");
        assert_eq!(src.for_bytes(rows[2].end()).len(), 10, "within the list: the listed rows");
        assert!(src.past_list(rows[10].position + 1) && !src.past_list(rows[9].end()));
        assert!((0..45).all(|n| !src.clock_back_at(n)), "this clock never goes back");
        let whole = RowSource { listed: &listed, capped: false, seen: 10, window: None };
        assert_eq!((whole.len(), whole.want_for(5, 8)), (10, None));
    }

    #[test]
    fn received_checkpoints_are_checked() {
        let c = |row, position| Checkpoint { row, position, previous_offset: 0 };
        assert_eq!(Checkpoints::from_parts(0, vec![]), Err(CheckpointsError::NoSpacing));
        assert_eq!(Checkpoints::from_parts(8, vec![c(1, 40), c(1, 80)]), Err(CheckpointsError::NotAscending(1)));
        assert_eq!(Checkpoints::from_parts(8, vec![c(1, 40), c(2, 40)]), Err(CheckpointsError::NotAscending(1)));
        let too_many: Vec<Checkpoint> = (1..=MAX_CHECKPOINTS as u64 + 1).map(|i| c(i, i * 40)).collect();
        assert_eq!(Checkpoints::from_parts(8, too_many), Err(CheckpointsError::TooMany(MAX_CHECKPOINTS + 1)));
        assert_eq!(CheckpointsError::NotAscending(3).to_string(), "checkpoint 3 is not after the one before it");
    }
}
