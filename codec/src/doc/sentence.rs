//! A shard's verdict in one sentence — what is wrong and the next step —
//! from its files' findings and each finding's repair verdict (the codec's
//! own), so `felix-storage inspect` and the browser inspector say the same
//! words: one judge, one wording.
//!
//! ```
//! use felix_codec::format::file_name::FileKind;
//! use felix_codec::doc::report::FileReport;
//! use felix_codec::doc::sentence::sentence;
//! let file = FileReport::new("s/00000000000000000000.log".into(), FileKind::Segment, 32);
//! assert_eq!(sentence(&[&file]), "clean: nothing to do");
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::doc::report::{FileReport, FindingReport};
use crate::format::file_name::FileKind;
use crate::format::segment_header::SEGMENT_HEADER_LEN;
use crate::shard::tail::{abandoned_tail, unheld_words, TailShape};
use crate::Repair;

/// Offsets a sentence names before "and N more".
pub const OFFSETS_NAMED: usize = 3;

/// What a finding is about, for the sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Topic {
    /// A record's bytes (its payload, its header).
    Record,
    /// An intact record whose offset is not the one expected (records
    /// before it missing or misplaced): it is not lost, and the sentence
    /// says so rather than "lost to rot".
    OutOfOrder,
    /// The file ends inside a structure.
    TornTail,
    /// An index that does not match its segment.
    Index,
    /// The epochs file.
    Epochs,
    /// A segment's own header.
    Header,
    /// Offsets missing (or held twice) between two segments.
    Gap,
    /// The epochs file names a generation past the log's end.
    LogEnd,
}

fn topic(file: FileKind, f: &FindingReport) -> Topic {
    match (file, f.kind.as_str()) {
        (FileKind::Index, _) => Topic::Index,
        (FileKind::Epochs, _) if f.kind == "EpochsBeyondLog" => Topic::LogEnd,
        (FileKind::Epochs, _) => Topic::Epochs,
        (_, "Truncated") => Topic::TornTail,
        (_, "SegmentMagic" | "SegmentVersion" | "SegmentFlags" | "SegmentHeaderChecksum") => Topic::Header,
        (_, "SegmentDiscontinuity") => Topic::Gap,
        (_, "OffsetOutOfOrder") => Topic::OutOfOrder,
        _ => Topic::Record,
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// "at offset 60", "at offsets 1, 2, 3 and 4 more".
pub(crate) fn at_offsets(offsets: &[u64]) -> String {
    let named: Vec<String> = offsets.iter().take(OFFSETS_NAMED).map(|o| format!("{o}")).collect();
    let word = if offsets.len() == 1 { "offset" } else { "offsets" };
    let more = offsets.len().saturating_sub(OFFSETS_NAMED);
    let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("at {word} {}{tail}", named.join(", "))
}

/// The damage of one repair verdict, in words ("1 record lost to rot at offset 60").
fn describe(found: &[(Topic, &FindingReport)], lost: &str) -> Vec<String> {
    let mut out = Vec::new();
    let records: Vec<u64> = found.iter().filter(|(t, _)| *t == Topic::Record).filter_map(|(_, f)| f.offset).collect();
    let unplaced = found.iter().filter(|(t, f)| *t == Topic::Record && f.offset.is_none()).count();
    if !records.is_empty() {
        out.push(format!("{} {lost} {}", plural(records.len(), "record", "records"), at_offsets(&records)));
    }
    if unplaced > 0 {
        out.push(plural(unplaced, "damaged record header", "damaged record headers"));
    }
    let misplaced: Vec<u64> = found.iter().filter(|(t, _)| *t == Topic::OutOfOrder).filter_map(|(_, f)| f.offset).collect();
    if !misplaced.is_empty() {
        out.push(format!(
            "{} {} (records before {} missing or misplaced)",
            plural(misplaced.len(), "intact record out of order", "intact records out of order"),
            at_offsets(&misplaced),
            if misplaced.len() == 1 { "it" } else { "them" }
        ));
    }
    // A gap names its offsets (a report without them: in words only).
    for (_, f) in found.iter().filter(|(t, _)| *t == Topic::Gap) {
        out.push(f.discontinuity.map_or_else(|| "offsets missing or held twice between two segments".into(), |d| d.words()));
    }
    let count = |t: Topic| found.iter().filter(|(x, _)| *x == t).count();
    // The epochs naming a generation past the log's end (once, however many): the log's newest segments may be gone.
    if count(Topic::LogEnd) > 0 {
        out.push("the log's newest segments, which may be lost: the epochs file names a generation past its end".into());
    }
    let words = [
        (Topic::TornTail, "a torn tail", "torn tails"),
        (Topic::Index, "a stale index", "index findings"),
        (Topic::Epochs, "a damaged epochs file", "epochs findings"),
        (Topic::Header, "a damaged segment header", "damaged segment headers"),
    ];
    for (t, one, many) in words {
        match count(t) {
            0 => {}
            1 => out.push(one.into()),
            n => out.push(format!("{n} {many}")),
        }
    }
    out
}

/// The repair a finding gets in the shard's plan: a segment's damage that
/// is not in the shard's newest segment is refused whatever its own
/// verdict (recovery cuts only the newest segment's tail), so the sentence
/// calls it what the plan does.
fn in_plan(file: &FileReport, newest: Option<u64>, f: &FindingReport) -> Repair {
    let older_segment = file.kind == FileKind::Segment && file.segment_id.is_some() && file.segment_id != newest;
    if older_segment {
        Repair::Never
    } else {
        f.repair
    }
}

/// The log's newest segment, as recovery leaves it, and how many newer
/// segments it removes as never having taken effect
/// ([`crate::shard::tail::abandoned_tail`], from the reports).
fn log_tail(files: &[&FileReport]) -> (Option<u64>, usize, Vec<String>) {
    let mut segments: Vec<&FileReport> = files.iter().copied().filter(|f| f.kind == FileKind::Segment && f.segment_id.is_some()).collect();
    segments.sort_by_key(|f| f.segment_id);
    let shapes: Vec<TailShape> = segments
        .iter()
        .map(|f| {
            let empty = f.records == 0 && f.findings.is_empty() && f.findings_omitted == 0;
            TailShape {
                unfinished: empty && f.base_offset.is_none() && f.size < SEGMENT_HEADER_LEN as u64,
                empty_at: f.base_offset.filter(|_| empty && f.size == SEGMENT_HEADER_LEN as u64),
                // Records scanned behind a rejected header (no base) tell no end.
                next_offset: f.base_offset.and(f.last_offset.map_or(f.base_offset, |l| l.checked_add(1))),
            }
        })
        .collect();
    let gone = abandoned_tail(&shapes);
    let newest = segments.len().checked_sub(gone + 1).and_then(|k| segments.get(k)).or(segments.last()).and_then(|f| f.segment_id);
    // Offsets below the highest of them that the newest left holds not, past a clean end (a
    // damaged tail says itself why its last records are missing).
    let tail = shapes.len().checked_sub(gone + 1).filter(|_| gone > 0).and_then(|k| Some((shapes.get(k)?, segments.get(k)?)));
    let ahead = shapes.iter().rev().take(gone).filter_map(|s| s.empty_at).max();
    let unheld = match (tail, ahead) {
        (Some((t, report)), Some(base)) if report.findings.is_empty() => t.next_offset.and_then(|end| unheld_words(end, base)),
        _ => None,
    };
    (newest, gone, unheld.into_iter().collect())
}

/// "a, b and c".
pub(crate) fn and_list(parts: &[String]) -> String {
    match parts.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The shard's verdict and next step in one sentence, from its files'
/// reports: what recovery refuses (fetch it from a replica), what it fixes
/// only with `--repair-checksum-tail`, and what `recover` would fix, in that
/// order; findings past a file's listed ones are counted.
///
/// # Example
/// "1 record lost to rot at offset 60 (not repairable: fetch it from a
/// replica); a torn tail and a stale index that `recover` would fix".
#[must_use]
pub fn sentence(files: &[&FileReport]) -> String {
    let (newest, unfinished, unheld) = log_tail(files);
    let of = |r: Repair| -> Vec<(Topic, &FindingReport)> {
        files
            .iter()
            .flat_map(|f| f.findings.iter().filter(move |x| in_plan(f, newest, x) == r).map(move |x| (topic(f.kind, x), x)))
            .collect()
    };
    let (never, opt_in, always) = (of(Repair::Never), of(Repair::OptIn), of(Repair::Always));
    let mut parts = Vec::new();
    let mut lost = describe(&never, "lost to rot");
    // An index newer than every segment: the newest segment it indexed is gone.
    let newest_index = files.iter().filter(|f| f.kind == FileKind::Index).filter_map(|f| f.segment_id).max();
    let gone = match (newest_index, newest) {
        (Some(ix), Some(seg)) => ix > seg,
        _ => false,
    };
    if gone {
        lost.push("the newest segment, whose index is here without it".into());
    }
    let never_count = never.len() + usize::from(gone);
    if !lost.is_empty() {
        let wide_gap = |f: &FindingReport| f.discontinuity.is_none_or(|d| d.found.abs_diff(d.expected) > 1);
        let many = never_count > 1 || never.iter().any(|(t, f)| *t == Topic::Gap && wide_gap(f));
        let them = if many { "them" } else { "it" };
        parts.push(format!("{} (not repairable: fetch {them} from a replica)", and_list(&lost)));
    }
    let tail = describe(&opt_in, "damaged");
    if !tail.is_empty() {
        parts.push(format!("{} at a segment's tail that `recover --repair-checksum-tail` would cut", and_list(&tail)));
    }
    let mut fixed = describe(&always, "damaged");
    if unfinished > 0 {
        fixed.push(plural(unfinished, "unfinished segment", "unfinished segments"));
    }
    if !fixed.is_empty() {
        parts.push(format!("{} that `recover` would fix", and_list(&fixed)));
    }
    parts.extend(unheld);
    let omitted: u64 = files.iter().map(|f| f.findings_omitted).sum();
    if omitted > 0 {
        parts.push(format!("and {omitted} more findings not listed"));
    }
    if parts.is_empty() {
        return if files.iter().all(|f| f.kind == FileKind::Unknown) {
            "not judged: no Felix file".into()
        } else {
            "clean: nothing to do".into()
        };
    }
    parts.join("; ")
}

/// The verdict of one shard, or of a file judged alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardVerdict {
    /// The shard directory's name, or `None` for a file judged alone.
    pub shard: Option<String>,
    /// Its files, as indexes into the report's list.
    pub files: core::ops::Range<usize>,
    /// [`sentence`] over them.
    pub sentence: String,
}

impl ShardVerdict {
    /// What the verdict is of: the shard's directory as its files' paths
    /// name it (else its name), or the lone file's path — so the line names
    /// the same place as the lines before it.
    #[must_use]
    pub fn label<'a>(&'a self, files: &[&'a FileReport]) -> &'a str {
        let first = files.get(self.files.start).map(|f| f.path.as_str());
        match &self.shard {
            Some(s) => first.and_then(|p| p.rsplit_once('/')).map_or(s.as_str(), |(dir, _)| dir),
            None => first.unwrap_or(""),
        }
    }
}

/// The directory a file's path names (`None`: a bare name).
fn dir_of(path: &str) -> Option<&str> {
    path.rsplit_once('/').map(|(dir, _)| dir)
}

/// The report's files as they were judged — consecutive files of one shard
/// together, a file judged alone by itself — each with its [`sentence`]:
/// what `felix-storage inspect` ends each shard's text with, and what the
/// page shows above everything.
#[must_use]
pub fn by_shard(files: &[&FileReport]) -> Vec<ShardVerdict> {
    // A shard is its directory: two roots' folders of one name (`a/x`,
    // `b/x`) are two shards, each with its own sentence, as `recover` plans them.
    let mut out: Vec<ShardVerdict> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let same_dir = |v: &ShardVerdict| files.get(v.files.start).is_some_and(|first| dir_of(&first.path) == dir_of(&f.path));
        match out.last_mut() {
            Some(v) if f.shard.is_some() && v.shard == f.shard && v.files.end == i && same_dir(v) => v.files.end = i + 1,
            _ => out.push(ShardVerdict { shard: f.shard.clone(), files: i..i + 1, sentence: String::new() }),
        }
    }
    for v in &mut out {
        v.sentence = sentence(files.get(v.files.clone()).unwrap_or_default());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: &str, offset: Option<u64>, repair: Repair) -> FindingReport {
        FindingReport { kind: kind.into(), position: 0, end: 1, offset, repair, message: String::new(), discontinuity: None }
    }

    fn file(kind: FileKind, findings: Vec<FindingReport>) -> FileReport {
        let mut f = FileReport::new("x".into(), kind, 100);
        f.findings = findings;
        f
    }

    #[test]
    fn the_issues_example_reads_as_written() {
        let seg = file(FileKind::Segment, alloc::vec![finding("RecordChecksum", Some(60), Repair::Never)]);
        let torn = file(FileKind::Segment, alloc::vec![finding("Truncated", Some(104), Repair::Always)]);
        let index = file(FileKind::Index, alloc::vec![finding("IndexEntryMismatch", Some(39), Repair::Always)]);
        assert_eq!(
            sentence(&[&seg, &torn, &index]),
            "1 record lost to rot at offset 60 (not repairable: fetch it from a replica); a torn tail and a stale index that `recover` would fix"
        );
    }

    #[test]
    fn many_records_clean_files_and_strays() {
        let rot: Vec<FindingReport> = (0..5).map(|o| finding("RecordChecksum", Some(o * 2 + 1), Repair::Never)).collect();
        let mut seg = file(FileKind::Segment, rot);
        seg.findings_omitted = 7;
        assert_eq!(
            sentence(&[&seg]),
            "5 records lost to rot at offsets 1, 3, 5 and 2 more (not repairable: fetch them from a replica); and 7 more findings not listed"
        );
        let tail = file(FileKind::Segment, alloc::vec![finding("RecordChecksum", Some(9), Repair::OptIn)]);
        assert_eq!(sentence(&[&tail]), "1 record damaged at offset 9 at a segment's tail that `recover --repair-checksum-tail` would cut");
        assert_eq!(sentence(&[&file(FileKind::Segment, Vec::new())]), "clean: nothing to do");
        assert_eq!(sentence(&[&file(FileKind::Unknown, Vec::new())]), "not judged: no Felix file");
    }

    #[test]
    fn a_gap_names_its_offsets_and_an_older_segments_tail_is_not_the_flags() {
        use crate::doc::report::Discontinuity;
        let gap = |expected, found| FindingReport {
            discontinuity: Some(Discontinuity { expected, found }),
            ..finding("SegmentDiscontinuity", None, Repair::Never)
        };
        assert_eq!(
            sentence(&[&file(FileKind::Segment, alloc::vec![gap(190, 237)])]),
            "offsets 190..=236 are missing between two segments (not repairable: fetch them from a replica)"
        );
        assert_eq!(
            sentence(&[&file(FileKind::Segment, alloc::vec![gap(237, 200)])]),
            "offsets 200..=236 are held by two segments (not repairable: fetch them from a replica)"
        );
        assert_eq!(
            sentence(&[&file(FileKind::Segment, alloc::vec![gap(5, 6)])]).split(" (").next(),
            Some("offset 5 is missing between two segments")
        );
        // A rotten last record of an older segment: recovery refuses it, the flag never cuts it.
        let mut older = file(FileKind::Segment, alloc::vec![finding("RecordChecksum", Some(9), Repair::OptIn)]);
        older.segment_id = Some(1);
        let mut newest = file(FileKind::Segment, Vec::new());
        newest.segment_id = Some(2);
        assert_eq!(sentence(&[&older, &newest]), "1 record lost to rot at offset 9 (not repairable: fetch it from a replica)");
        older.segment_id = Some(3);
        assert!(sentence(&[&older, &newest]).contains("`recover --repair-checksum-tail` would cut"));
    }

    #[test]
    fn lost_newest_segments_are_named_not_called_a_damaged_epochs_file_or_clean() {
        let mut epochs = file(FileKind::Epochs, alloc::vec![finding("EpochsBeyondLog", None, Repair::Never)]);
        epochs.shard = Some("s".into());
        assert_eq!(
            sentence(&[&epochs]),
            "the log's newest segments, which may be lost: the epochs file names a generation past its end (not repairable: fetch it from a replica)"
        );
        let mut seg = file(FileKind::Segment, Vec::new());
        seg.segment_id = Some(3);
        let mut index = file(FileKind::Index, Vec::new());
        index.segment_id = Some(4);
        assert_eq!(
            sentence(&[&seg, &index]),
            "the newest segment, whose index is here without it (not repairable: fetch it from a replica)"
        );
        index.segment_id = Some(2);
        assert_eq!(sentence(&[&seg, &index]), "clean: nothing to do", "an older orphan loses nothing the log needs");
    }

    #[test]
    fn files_are_judged_by_the_shard_they_were_in() {
        let mut a = file(FileKind::Segment, alloc::vec![finding("Truncated", Some(4), Repair::Always)]);
        a.shard = Some("s-1".into());
        let b = FileReport { path: "y".into(), ..a.clone() };
        let alone = file(FileKind::Segment, Vec::new());
        let (c, d) = (alone.clone(), alone);
        let files = [&a, &b, &c, &d];
        let v = by_shard(&files);
        assert_eq!(v.iter().map(|v| v.files.clone()).collect::<Vec<_>>(), [0..2, 2..3, 3..4]);
        assert_eq!((v[0].label(&files), v[0].sentence.as_str()), ("s-1", "2 torn tails that `recover` would fix"));
        assert_eq!((v[1].label(&files), v[1].sentence.as_str()), ("x", "clean: nothing to do"));
        let in_dir = FileReport { path: "/r/s-1/00000000000000000000.log".into(), ..a.clone() };
        assert_eq!(by_shard(&[&in_dir])[0].label(&[&in_dir]), "/r/s-1", "the shard's directory, as the file lines name it");
    }

    #[test]
    fn one_shard_name_under_two_roots_is_two_verdicts() {
        // `inspect a/x b/x`: every file's shard is "x"; b/x's torn tail is its
        // own newest segment's (recover cuts it), not a's older segment's.
        let discontinuity = Some(crate::doc::report::Discontinuity { expected: 332, found: 379 });
        let mut gap =
            file(FileKind::Segment, alloc::vec![FindingReport { discontinuity, ..finding("SegmentDiscontinuity", None, Repair::Never) }]);
        gap.shard = Some("x".into());
        gap.path = "a/x/00000000000000000008.log".into();
        gap.segment_id = Some(8);
        let mut torn = file(FileKind::Segment, alloc::vec![finding("Truncated", Some(59), Repair::Always)]);
        torn.shard = Some("x".into());
        torn.path = "b/x/00000000000000000001.log".into();
        torn.segment_id = Some(1);
        let files = [&gap, &torn];
        let v = by_shard(&files);
        assert_eq!(v.iter().map(|v| v.files.clone()).collect::<Vec<_>>(), [0..1, 1..2]);
        assert_eq!(
            (v[0].label(&files), v[0].sentence.as_str()),
            ("a/x", "offsets 332..=378 are missing between two segments (not repairable: fetch them from a replica)")
        );
        assert_eq!((v[1].label(&files), v[1].sentence.as_str()), ("b/x", "a torn tail that `recover` would fix"));
    }
}
