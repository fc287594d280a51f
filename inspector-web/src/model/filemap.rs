//! The file map: the whole file drawn to scale in a strip of at most
//! [`MAP_BUCKETS`] cells, each cell a slice of the file's bytes coloured by
//! the worst thing in it — damaged (a finding covers it), torn tail, resync
//! gap (bytes no structure accounts for), verified records or entries, the
//! header — plus a tick where an index entry points.
//!
//! It is built from the scan's own items while the file is read (no second
//! pass): [`MapCounts::add`] costs one step per cell a structure touches, so
//! 10⁷ records cost 10⁷ steps and the map stays [`MAP_BUCKETS`] cells
//! whatever the file holds. Findings are laid over it from the final report.

use felix_codec::doc::report::FindingReport;
use felix_codec::doc::text::span_words;
use felix_codec::format::epochs::EPOCHS_HEADER_LEN;
use felix_codec::format::file_name::FileKind;
use felix_codec::format::index::INDEX_HEADER_LEN;
use felix_codec::read::scan::RecordStatus;
use felix_codec::read::time::TimeSpan;

use super::rows::Rows;

/// Cells in a map (the strip is this many CSS pixels tall at most).
pub const MAP_BUCKETS: usize = 480;

/// What a structure the scan met is, for the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// A file header that decoded.
    Header,
    /// A record or entry that verified.
    Verified,
    /// A record whose header verified but whose payload or offset did not.
    Damaged,
    /// The record the file ends inside.
    Torn,
}

/// Bytes of each part per cell, accumulated during the scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapCounts {
    /// The file's size.
    pub size: u64,
    /// Per cell: header, verified, damaged and torn bytes.
    pub cells: Vec<[u64; 4]>,
}

/// How many cells a file of `size` bytes gets (every cell holds at least one byte).
#[must_use]
pub fn cell_count(size: u64) -> usize {
    usize::try_from(size).map_or(MAP_BUCKETS, |s| s.min(MAP_BUCKETS))
}

/// First byte of cell `cell` of `n` over `size` bytes.
#[must_use]
pub fn cell_start(cell: usize, n: usize, size: u64) -> u64 {
    let (cell, n) = (cell as u64, n.max(1) as u64);
    // u64 arithmetic while it cannot overflow (files under 38 PB): u128 division is slow in wasm.
    match size.checked_mul(cell) {
        Some(p) => p / n,
        None => u64::try_from(u128::from(size) * u128::from(cell) / u128::from(n)).unwrap_or(size),
    }
}

/// The cell holding byte `pos`.
#[must_use]
pub fn cell_of(pos: u64, n: usize, size: u64) -> usize {
    if size == 0 || n == 0 {
        return 0;
    }
    // The largest cell whose start is at or below `pos`.
    let pos_in = pos.min(size - 1);
    let guess = match pos_in.checked_mul(n as u64) {
        Some(p) => p / size,
        None => u64::try_from(u128::from(pos_in) * n as u128 / u128::from(size)).unwrap_or(u64::MAX),
    };
    let mut c = usize::try_from(guess).unwrap_or(n - 1).min(n - 1);
    while c + 1 < n && cell_start(c + 1, n, size) <= pos {
        c += 1;
    }
    while c > 0 && cell_start(c, n, size) > pos {
        c -= 1;
    }
    c
}

impl MapCounts {
    /// An empty map for a file of `size` bytes.
    #[must_use]
    pub fn new(size: u64) -> Self {
        Self { size, cells: vec![[0; 4]; cell_count(size)] }
    }

    /// Adds the bytes `start..end` as `part` (clamped to the file).
    pub fn add(&mut self, start: u64, end: u64, part: Part) {
        let n = self.cells.len();
        let end = end.min(self.size);
        if start >= end || n == 0 {
            return;
        }
        let slot = part as usize;
        let mut c = cell_of(start, n, self.size);
        while c < n {
            let (a, b) = (cell_start(c, n, self.size), cell_start(c + 1, n, self.size));
            if a >= end {
                break;
            }
            let overlap = end.min(b).saturating_sub(start.max(a));
            if let Some(cell) = self.cells.get_mut(c).and_then(|cell| cell.get_mut(slot)) {
                *cell = cell.saturating_add(overlap);
            }
            c += 1;
        }
    }
}

/// What a cell shows, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MapClass {
    /// A finding covers some of its bytes.
    Damaged,
    /// The torn record at the end of the file.
    Torn,
    /// Bytes no recognised structure accounts for (skipped by a resync).
    Gap,
    /// Verified records or entries.
    Verified,
    /// The file header.
    Header,
}

impl MapClass {
    /// The word shown for it (colour is never the only carrier).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Damaged => "damaged",
            Self::Torn => "torn tail",
            Self::Gap => "gap",
            Self::Verified => "verified",
            Self::Header => "header",
        }
    }
}

/// A run of neighbouring cells of one class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapRun {
    /// First cell.
    pub first_cell: usize,
    /// Cells in the run.
    pub cells: usize,
    /// First byte.
    pub start: u64,
    /// Exclusive end byte.
    pub end: u64,
    /// What it shows.
    pub class: MapClass,
    /// Whether an index entry points into it.
    pub indexed: bool,
    /// When the intact records that start in it were written (of the rows
    /// the page holds: [`FileMap::timed`]).
    pub time: Option<TimeSpan>,
}

/// The map drawn: runs of cells, at most [`MAP_BUCKETS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileMap {
    /// Cells in the strip.
    pub cells: usize,
    /// The runs, top to bottom.
    pub runs: Vec<MapRun>,
    /// When the file's intact records were written (its report's `time`).
    pub time: Option<TimeSpan>,
}

impl MapRun {
    /// The run in words (its title on hover): its bytes, what they are, and
    /// whether index entries point there.
    #[must_use]
    pub fn label(&self) -> String {
        let indexed = if self.indexed { ", index entries point here" } else { "" };
        let time = self.time.map_or_else(String::new, |t| format!("; records {}", span_words(t)));
        format!("bytes {}..{}: {}{indexed}{time}", self.start, self.end, self.class.as_str())
    }
}

impl FileMap {
    /// The map in words for a screen reader, of a file of `size` bytes: how
    /// many runs of each notable class, how many cells index entries point
    /// into, and how the keys move.
    #[must_use]
    pub fn summary(&self, size: u64) -> String {
        let count = |c: MapClass| self.runs.iter().filter(|r| r.class == c).count();
        let time = self.time.map_or_else(String::new, |t| format!("; records {}, top to bottom", span_words(t)));
        format!(
            "File map, {size} bytes in {} cells: {} damaged, {} gap, {} torn-tail range(s); {} cells with index entries{time}. Arrow keys step between them, Enter jumps.",
            self.cells,
            count(MapClass::Damaged),
            count(MapClass::Gap),
            count(MapClass::Torn),
            self.runs.iter().filter(|r| r.indexed).map(|r| r.cells).sum::<usize>()
        )
    }

    /// The map with its time axis: the file's span (`file`, its report's)
    /// and each run's, from the intact records among `rows` (the rows the
    /// page holds, in file order) that start in it — one pass over them.
    /// When the file has rows past them (`capped`), a run reaching past the
    /// end of the held rows has no time: its records were not all read.
    #[must_use]
    pub fn timed(mut self, rows: &Rows, capped: bool, file: Option<TimeSpan>) -> Self {
        self.time = file;
        let held_end = if capped { rows.get(rows.len().saturating_sub(1)).map_or(0, |r| r.end()) } else { u64::MAX };
        let mut runs = self.runs.iter_mut().peekable();
        for r in rows.iter().filter(|r| r.status == RecordStatus::Intact) {
            while runs.peek().is_some_and(|run| run.end <= r.position) {
                runs.next();
            }
            match runs.peek_mut() {
                Some(run) if run.start <= r.position && run.end <= held_end => TimeSpan::extend(&mut run.time, r.timestamp_micros),
                Some(_) => {}
                None => break,
            }
        }
        self
    }
}

fn header_len(kind: FileKind) -> u64 {
    match kind {
        FileKind::Segment => 0, // a segment's header comes as a scanned item
        FileKind::Index => INDEX_HEADER_LEN as u64,
        FileKind::Epochs => EPOCHS_HEADER_LEN as u64,
        FileKind::Unknown => 0,
    }
}

/// The map of a scanned file: `counts` from the scan, `findings` from its
/// report, and `pointed` — byte positions in this file that index entries
/// point at (a segment's companion index), for ticks.
#[must_use]
pub fn build(counts: &MapCounts, kind: FileKind, findings: &[FindingReport], pointed: &[u64]) -> FileMap {
    let size = counts.size;
    let n = counts.cells.len();
    let mut damaged = vec![false; n];
    for f in findings {
        let end = f.end.max(f.position.saturating_add(1)).min(size);
        if f.position >= end {
            continue;
        }
        let mut c = cell_of(f.position, n, size);
        while c < n && cell_start(c, n, size) < end {
            if let Some(d) = damaged.get_mut(c) {
                *d = true;
            }
            c += 1;
        }
    }
    let mut ticks = vec![false; n];
    for p in pointed {
        if *p < size {
            if let Some(t) = ticks.get_mut(cell_of(*p, n, size)) {
                *t = true;
            }
        }
    }
    let header = header_len(kind).min(size);
    let mut runs: Vec<MapRun> = Vec::new();
    for (c, counted) in counts.cells.iter().enumerate() {
        let (a, b) = (cell_start(c, n, size), cell_start(c + 1, n, size));
        let [mut head, verified, bad, torn] = *counted;
        head = head.saturating_add(header.min(b).saturating_sub(a.min(header)));
        let covered = head.saturating_add(verified).saturating_add(bad).saturating_add(torn);
        let class = if damaged.get(c).copied().unwrap_or(false) || bad > 0 {
            MapClass::Damaged
        } else if torn > 0 {
            MapClass::Torn
        } else if covered < b - a {
            MapClass::Gap
        } else if verified > 0 {
            MapClass::Verified
        } else {
            MapClass::Header
        };
        let indexed = ticks.get(c).copied().unwrap_or(false);
        match runs.last_mut() {
            Some(r) if r.class == class && r.indexed == indexed => {
                r.cells += 1;
                r.end = b;
            }
            _ => runs.push(MapRun { first_cell: c, cells: 1, start: a, end: b, class, indexed, time: None }),
        }
    }
    FileMap { cells: n, runs, time: None }
}

/// The run under the cell at `cell`.
#[must_use]
pub fn run_at(map: &FileMap, cell: usize) -> Option<usize> {
    map.runs.iter().position(|r| cell >= r.first_cell && cell < r.first_cell + r.cells)
}

/// The next (or previous) run worth a look — damaged, torn or a gap — from
/// run `from`, for keyboard stepping; wraps around.
#[must_use]
pub fn step_notable(map: &FileMap, from: Option<usize>, forward: bool) -> Option<usize> {
    let n = map.runs.len();
    let notable = |i: usize| map.runs.get(i).is_some_and(|r| r.class <= MapClass::Gap);
    (1..=n)
        .map(|k| match (from, forward) {
            (None, true) => k - 1,
            (None, false) => n - k,
            (Some(f), true) => (f + k) % n,
            (Some(f), false) => (f + n * 2 - k) % n,
        })
        .find(|i| notable(*i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scan::Scanned;
    use crate::model::{sample, scan::scan_all};

    #[test]
    fn the_map_says_itself_in_words() {
        let run = |first_cell, cells, start, end, class, indexed| MapRun { first_cell, cells, start, end, class, indexed, time: None };
        let map = FileMap {
            cells: 10,
            runs: vec![
                run(0, 1, 0, 32, MapClass::Header, false),
                run(1, 3, 32, 128, MapClass::Verified, true),
                run(4, 1, 128, 160, MapClass::Damaged, false),
                run(5, 2, 160, 224, MapClass::Gap, true),
                run(7, 1, 224, 256, MapClass::Damaged, false),
                run(8, 2, 256, 320, MapClass::Torn, false),
            ],
            time: None,
        };
        assert_eq!(
            map.summary(320),
            "File map, 320 bytes in 10 cells: 2 damaged, 1 gap, 1 torn-tail range(s); 5 cells with index entries. \
             Arrow keys step between them, Enter jumps."
        );
        assert_eq!(map.runs[1].label(), "bytes 32..128: verified, index entries point here");
        assert_eq!(map.runs[4].label(), "bytes 224..256: damaged");
    }
    use std::rc::Rc;

    #[test]
    fn cells_partition_the_file() {
        for size in [1u64, 2, 15, 479, 480, 481, 1_000, 1 << 30, u64::MAX] {
            let n = cell_count(size);
            assert!((1..=MAP_BUCKETS).contains(&n));
            assert_eq!(cell_start(0, n, size), 0);
            assert_eq!(cell_start(n, n, size), size);
            for c in [0, n / 2, n - 1] {
                assert!(cell_start(c, n, size) < cell_start(c + 1, n, size), "size {size} cell {c}");
                assert_eq!(cell_of(cell_start(c, n, size), n, size), c);
                assert_eq!(cell_of(cell_start(c + 1, n, size) - 1, n, size), c);
            }
        }
    }

    #[test]
    fn the_sample_shows_its_rot_its_torn_tail_and_the_index_ticks() {
        let scanned = scan_all(&sample::files());
        let seg1 = scanned.iter().find(|s| s.report.path.ends_with("00000000000000000001.log")).unwrap();
        let map = build(&seg1.detail.map, seg1.report.kind, &seg1.report.findings, &[]);
        let rot = &seg1.report.findings[0];
        let run = &map.runs[run_at(&map, cell_of(rot.position, map.cells, seg1.report.size)).unwrap()];
        assert_eq!(run.class, MapClass::Damaged);
        assert!(map.runs.iter().any(|r| r.class == MapClass::Verified));
        assert_eq!(map.runs[0].class, MapClass::Header);
        let seg2 = scanned.iter().find(|s| s.report.path.ends_with("00000000000000000002.log")).unwrap();
        let idx2 = scanned.iter().find(|s| s.report.path.ends_with("00000000000000000002.index")).unwrap();
        let all: Vec<Rc<Scanned>> = scanned.iter().cloned().map(Rc::new).collect();
        let pointed = crate::model::scan::pointed(crate::model::scan::companion_index(seg2, &all).unwrap());
        assert!(crate::model::scan::companion_index(idx2, &all).is_none(), "an index has no companion index");
        assert_eq!(pointed.len(), idx2.detail.index_entries.len());
        let map = build(&seg2.detail.map, seg2.report.kind, &seg2.report.findings, &pointed);
        let last = map.runs.last().unwrap();
        assert!(matches!(last.class, MapClass::Damaged | MapClass::Torn), "{last:?}");
        assert!(map.runs.iter().any(|r| r.indexed));
        assert_eq!(map.runs.iter().map(|r| r.cells).sum::<usize>(), map.cells);
    }

    #[test]
    fn a_resync_gap_is_drawn_as_a_gap() {
        // Header, one record, 300 bytes of zeros, one record.
        let mut seg = felix_codec::format::segment_header::SegmentHeader::new(0, 1).encode().to_vec();
        felix_codec::format::record::encode_record(0, 1, &[7; 100], &mut seg).unwrap();
        seg.extend_from_slice(&[0xEE; 300]);
        felix_codec::format::record::encode_record(1, 1, &[7; 100], &mut seg).unwrap();
        let s = &scan_all(&[("00000000000000000000.log".into(), seg)])[0];
        let map = build(&s.detail.map, s.report.kind, &[], &[]);
        assert!(map.runs.iter().any(|r| r.class == MapClass::Gap), "{map:?}");
        let map = build(&s.detail.map, s.report.kind, &s.report.findings, &[]);
        assert!(map.runs.iter().any(|r| r.class == MapClass::Damaged), "the finding over the gap wins");
    }

    #[test]
    fn ten_million_records_cost_a_fixed_size_map() {
        let size = 10_000_000 * 128 + 32;
        let mut counts = MapCounts::new(size);
        counts.add(0, 32, Part::Header);
        for r in 0..10_000_000u64 {
            counts.add(32 + r * 128, 32 + (r + 1) * 128, if r == 5_000_000 { Part::Damaged } else { Part::Verified });
        }
        assert_eq!(counts.cells.len(), MAP_BUCKETS);
        let total: u64 = counts.cells.iter().flatten().sum();
        assert_eq!(total, size, "every byte is counted once");
        let map = build(&counts, FileKind::Segment, &[], &[]);
        assert!(map.runs.len() <= 4, "{:?}", map.runs);
        let bad = map.runs.iter().find(|r| r.class == MapClass::Damaged).unwrap();
        assert!(bad.start <= 32 + 5_000_000 * 128 && bad.end > 32 + 5_000_000 * 128);
    }

    #[test]
    fn stepping_visits_only_notable_runs_and_wraps() {
        let run = |first_cell, class| MapRun { first_cell, cells: 1, start: 0, end: 1, class, indexed: false, time: None };
        let map = FileMap {
            cells: 4,
            runs: vec![run(0, MapClass::Header), run(1, MapClass::Damaged), run(2, MapClass::Verified), run(3, MapClass::Gap)],
            time: None,
        };
        assert_eq!(step_notable(&map, None, true), Some(1));
        assert_eq!(step_notable(&map, Some(1), true), Some(3));
        assert_eq!(step_notable(&map, Some(3), true), Some(1));
        assert_eq!(step_notable(&map, Some(1), false), Some(3));
        assert_eq!(step_notable(&FileMap::default(), None, true), None);
    }

    #[test]
    fn each_run_says_when_its_intact_records_were_written_and_the_map_the_file_s_span() {
        use crate::model::rows::RecordRow;
        let run = |start, end, class| MapRun { first_cell: 0, cells: 1, start, end, class, indexed: false, time: None };
        let map = FileMap {
            cells: 4,
            runs: vec![
                run(0, 32, MapClass::Header),
                run(32, 132, MapClass::Verified),
                run(132, 200, MapClass::Damaged),
                run(200, 300, MapClass::Verified),
            ],
            time: None,
        };
        let row = |position, ts, status| RecordRow { position, offset: 0, payload_len: 10, timestamp_micros: ts, status };
        // The clock goes back at 70; a damaged record between (its timestamp not believed); nothing held past 250.
        let rows: Rows = [
            row(32, 3_000_000, RecordStatus::Intact),
            row(70, 1_000_000, RecordStatus::Intact),
            row(110, 2_000_000, RecordStatus::Intact),
            row(140, 9_000_000, RecordStatus::ChecksumMismatch),
            row(200, 4_000_000, RecordStatus::Intact),
        ]
        .into_iter()
        .collect();
        let file = TimeSpan { first: 3_000_000, last: 4_000_000, min: 1_000_000, max: 4_000_000 };
        let capped = map.clone().timed(&rows, true, Some(file));
        let map = map.timed(&rows, false, Some(file));
        assert_eq!(map.runs[0].time, None, "the header holds no record");
        assert_eq!(map.runs[1].time, Some(TimeSpan { first: 3_000_000, last: 2_000_000, min: 1_000_000, max: 3_000_000 }));
        assert_eq!(map.runs[2].time, None, "a damaged record's timestamp is not believed");
        assert_eq!(map.runs[3].time, Some(TimeSpan::of(4_000_000)));
        assert_eq!(
            map.runs[1].label(),
            "bytes 32..132: verified; records written 1970-01-01T00:00:03.000000Z to 1970-01-01T00:00:02.000000Z \
             (timestamps go back: earliest 1970-01-01T00:00:01.000000Z, latest 1970-01-01T00:00:03.000000Z)"
        );
        assert_eq!(map.runs[2].label(), "bytes 132..200: damaged");
        // The held rows cut at 238 (the file has more): the run past them is not all read, so it says no time;
        // the runs the held rows cover still do, and the map the file's span (its report's).
        assert_eq!(capped.runs[3].time, None, "a run reaching past the held rows");
        assert_eq!(capped.runs[1].time, map.runs[1].time);
        assert_eq!(capped.time, Some(file));
        assert!(
            map.summary(300).contains(
                "; records written 1970-01-01T00:00:03.000000Z to 1970-01-01T00:00:04.000000Z (timestamps go back: \
                 earliest 1970-01-01T00:00:01.000000Z, latest 1970-01-01T00:00:04.000000Z), top to bottom. Arrow keys"
            ),
            "{}",
            map.summary(300)
        );
        // The sample: every verified run of a segment carries a time, within the file's.
        let s = &scan_all(&sample::files())[0];
        let map =
            build(&s.detail.map, s.report.kind, &s.report.findings, &[]).timed(&s.detail.records, s.detail.records_capped, s.report.time);
        let file = s.report.time.unwrap();
        for r in map.runs.iter().filter(|r| r.class == MapClass::Verified) {
            let t = r.time.unwrap_or_else(|| panic!("{r:?}"));
            assert!(file.min <= t.min && t.max <= file.max, "{r:?}");
        }
    }
}
