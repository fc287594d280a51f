//! A shard folder read as a replica: the codec's inspection of its files in
//! their read order, chunk by chunk as the page reads them, through the
//! page's one shard driver (`model::scan::ShardDrive`, as the scan reads a
//! shard), keeping only the intact records not yet consumed. On top of it, the two answers the CLI
//! gives from the same bytes through the same codec functions:
//! [`DiffRun`] (`felix-storage diff`: both replicas read in step, as the
//! codec's `DiffMachine` asks, so memory holds one chunk's records a side)
//! and [`plan`] (`felix-storage recover --dry-run`).
//!
//! The caller owns the reads: it asks [`DiffRun::next_read`] (or
//! [`ReplicaScan::next_read`]) which bytes it wants, slices them from the
//! file's `Blob` and feeds them back.

use std::collections::VecDeque;
use std::fmt;

use felix_codec::doc::report::{shell_word, FileReport};
use felix_codec::format::file_name::{parse_file_name, FileKind};
use felix_codec::read::scan::{Item, RecordStatus};
use felix_codec::shard::diff::{Diff, DiffMachine, Need, RecordSummary, Side, SideFacts};
use felix_codec::shard::recovery::{plan_shard, Action, Plan, ShardFacts, ShardPlan};
use felix_codec::verdict::repair::RepairOptions;

use super::group::file_name;
pub use super::scan::Read;
use super::scan::{inputs, Keep, ShardDrive};
use crate::ui::message::quote;

/// Bytes per read.
pub const CHUNK_BYTES: u64 = 1 << 20;

/// What a replica keeps of its items: the intact records read and not yet
/// taken, each named by its segment (a file that is no segment gives none).
#[derive(Debug)]
pub struct Intact {
    segment_ids: Vec<Option<u64>>,
    queue: VecDeque<RecordSummary>,
}

impl Keep for Intact {
    fn item(&mut self, file: usize, item: &Item<'_>) {
        if let (Item::Record(r), Some(Some(id))) = (item, self.segment_ids.get(file)) {
            if r.status == RecordStatus::Intact {
                self.queue.push_back(RecordSummary::of(*id, r));
            }
        }
    }
}

/// One replica (a shard folder) being read: the shard's scan
/// ([`ShardDrive`], as the page's scan reads a shard), keeping its intact records.
#[derive(Debug)]
pub struct ReplicaScan {
    path: String,
    drive: ShardDrive<Intact>,
}

impl ReplicaScan {
    /// A replica whose folder is shown as `path`, holding `files` (`(path, size)`).
    #[must_use]
    pub fn new(path: &str, files: &[(String, u64)]) -> Self {
        let segment_ids = files
            .iter()
            .map(|(p, _)| match parse_file_name(file_name(p)) {
                Some((id, FileKind::Segment)) => Some(id),
                _ => None,
            })
            .collect();
        let shard = file_name(path.trim_end_matches('/'));
        let keep = Intact { segment_ids, queue: VecDeque::new() };
        Self { path: path.into(), drive: ShardDrive::new(shard, inputs(files), CHUNK_BYTES, keep) }
    }

    /// The next bytes to read, or `None` once every file was read.
    pub fn next_read(&mut self) -> Option<Read> {
        self.drive.next_read()
    }

    /// Feeds the bytes of the last [`Read`]. Fewer bytes than asked (the
    /// file shrank while read) end the file there.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.drive.feed(bytes);
    }

    /// The next intact record read and not yet taken.
    pub fn pop(&mut self) -> Option<RecordSummary> {
        self.drive.keep_mut().queue.pop_front()
    }

    /// The inspection's reports and recovery facts (call once [`ReplicaScan::next_read`] said `None`).
    #[must_use]
    pub fn finish(self) -> (Vec<FileReport>, ShardFacts) {
        let (_, reports, facts) = self.drive.finish(self.path);
        (reports, facts)
    }

    fn held(&self) -> usize {
        self.drive.keep().queue.len()
    }
}

/// Why a replica's bytes could not be read (the recovery preview shows it
/// in the shard's place; the compare, in its banner).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadFailure {
    /// A file the scan asked for was not handed over with the folder.
    Missing,
    /// The browser could not read file `path`.
    Read {
        /// The file, as dropped.
        path: String,
        /// The browser's words.
        message: String,
    },
    /// The worker reading the folders could not take the job (its words).
    Worker(String),
}

impl fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => f.write_str("a file went missing"),
            Self::Read { path, message } => write!(f, "{}: {message}", quote(path)),
            Self::Worker(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ReadFailure {}

/// Bytes of a cut the recovery preview shows (the hex view shows them all).
pub const SHOWN_CUT_BYTES: u64 = 64;

/// A shard's recovery preview: its plan, and the first bytes of each cut
/// (at most [`SHOWN_CUT_BYTES`], by file name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The codec's plan.
    pub plan: ShardPlan,
    /// Each cut's file and its first bytes.
    pub cut_bytes: Vec<(String, Vec<u8>)>,
}

/// A compare's answer: the diff, and both sides' bytes at its first
/// divergence (`model::side_by_side`), when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compared {
    /// The codec's diff.
    pub diff: Diff,
    /// Replica A's and replica B's bytes at the first divergence.
    pub bytes: Option<(Vec<u8>, Vec<u8>)>,
}

/// The bytes to show of each cut in `plan`: `(file name, index into
/// `files` (`(path, size)`), start, end)`, at most [`SHOWN_CUT_BYTES`] each.
#[must_use]
pub fn cut_reads(plan: &ShardPlan, files: &[(String, u64)]) -> Vec<(String, usize, u64, u64)> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::Cut { file, position, bytes, .. } => {
                let i = files.iter().position(|(p, _)| file_name(p) == file)?;
                Some((file.clone(), i, *position, position.saturating_add((*bytes).min(SHOWN_CUT_BYTES))))
            }
            _ => None,
        })
        .collect()
}

/// The recovery plan of a fully read replica: what `felix-storage recover
/// --dry-run --json` prints for the same folder (`path` as given here).
#[must_use]
pub fn plan(scan: ReplicaScan) -> ShardPlan {
    let (_, facts) = scan.finish();
    plan_shard(&facts, RepairOptions::default())
}

/// The command to run on the broker for `plan` of the shard folder named
/// `shard` (under a root the page cannot know, `<root>`): `felix-storage
/// recover '<root>/NAME'`, with `--repair-checksum-tail` when a refusal names
/// it. The path is one shell word by the CLI's rule (`report::shell_word`);
/// `None` when the name cannot be typed safely in a shell (a control,
/// bidirectional or zero-width character, a backslash: the escape the page
/// shows, pasted, would name another folder) — then the page says so and
/// prints no command.
#[must_use]
pub fn recover_command(shard: &str, plan: &ShardPlan) -> Option<String> {
    let word = shell_word(&format!("<root>/{shard}"))?;
    Some(format!("felix-storage recover {word}{}", recover_flag(plan)))
}

/// "3 findings would remain" — the listed ones and those past the list.
#[must_use]
pub fn remains(plan: &ShardPlan) -> Option<String> {
    let n = (plan.remaining_findings.len() as u64).saturating_add(plan.remaining_omitted);
    match n {
        0 => None,
        1 => Some("1 finding would remain".into()),
        n if plan.remaining_omitted > 0 => Some(format!("{n} findings would remain ({} not listed)", plan.remaining_omitted)),
        n => Some(format!("{n} findings would remain")),
    }
}

/// The flag `recover` needs for `plan` (`" --repair-checksum-tail"` when a
/// refusal names it), or nothing.
#[must_use]
pub fn recover_flag(plan: &ShardPlan) -> &'static str {
    let flag = plan.actions.iter().any(|a| matches!(a, Action::Refuse { allowed_by: Some(_), .. }));
    if flag {
        " --repair-checksum-tail"
    } else {
        ""
    }
}

/// Plans of several shards, as the CLI prints them.
#[must_use]
pub fn plans(shards: Vec<ShardPlan>) -> Plan {
    Plan::new(shards)
}

/// Why dropped files are not one replica (what `felix-storage diff` refuses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaError {
    /// Files from two folders dropped as one replica.
    MoreThanOneFolder,
    /// A folder `path` where a Felix file belongs: the engine refuses the shard.
    FolderWhereAFileBelongs {
        /// The folder, as dropped.
        path: String,
    },
    /// A root of shards (folders, no Felix file of its own) dropped as one replica.
    RootOfShards {
        /// The folder, as dropped.
        folder: String,
    },
}

impl fmt::Display for ReplicaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MoreThanOneFolder => f.write_str("files from more than one folder: drop one shard folder as each replica"),
            Self::FolderWhereAFileBelongs { path } => write!(
                f,
                "{}: a folder where a Felix file belongs: the engine refuses this shard until it is moved away; nothing to compare",
                quote(path)
            ),
            Self::RootOfShards { folder } => write!(
                f,
                "{}: holds folders, not segment files: a root of shards? drop one shard folder (the CLI's diff takes --shard)",
                quote(folder)
            ),
        }
    }
}

impl std::error::Error for ReplicaError {}

/// Which of a dropped folder's files (`(path, size)`, paths relative to what
/// was dropped) form one replica, as `felix-storage diff` reads a shard
/// directory: the files directly in it. Refuses what the CLI refuses
/// ([`ReplicaError`]): a root of shards (folders, no segment file of its
/// own), a folder where a Felix file belongs (the engine refuses such a
/// shard), and two folders dropped as one replica. Files in other folders
/// below it are left out, as the CLI leaves them.
///
/// # Errors
/// Why the files are not one replica.
pub fn replica_files(files: &[(String, u64)]) -> Result<Vec<usize>, ReplicaError> {
    use felix_codec::format::file_name::{classify, EntryName};
    let mut top = Vec::new();
    let mut folder: Option<&str> = None;
    let mut nested_dirs = false;
    for (i, (path, _)) in files.iter().enumerate() {
        let (dir, rest) = path.split_once('/').unwrap_or(("", path));
        if folder.is_some_and(|f| f != dir) {
            return Err(ReplicaError::MoreThanOneFolder);
        }
        folder = Some(dir);
        match rest.split_once('/') {
            None => top.push(i),
            Some((sub, _)) => {
                if classify(sub) != EntryName::Foreign {
                    return Err(ReplicaError::FolderWhereAFileBelongs { path: format!("{dir}/{sub}") });
                }
                nested_dirs = true;
            }
        }
    }
    let felix = |i: &usize| files.get(*i).is_some_and(|(p, _)| classify(file_name(p)) != EntryName::Foreign);
    if nested_dirs && !top.iter().any(felix) {
        return Err(ReplicaError::RootOfShards { folder: folder.unwrap_or_default().to_owned() });
    }
    Ok(top)
}

/// The two replicas dropped so far: each drop replaces its side, and one
/// that is no replica empties it; the compare runs once both are there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sides<T> {
    /// Replica A.
    pub a: Option<T>,
    /// Replica B.
    pub b: Option<T>,
}

impl<T> Default for Sides<T> {
    fn default() -> Self {
        Self { a: None, b: None }
    }
}

impl<T: Clone> Sides<T> {
    /// Side `side` is now `value`.
    pub fn set(&mut self, side: Side, value: Option<T>) {
        match side {
            Side::A => self.a = value,
            Side::B => self.b = value,
        }
    }

    /// Both replicas, once both were dropped.
    #[must_use]
    pub fn both(&self) -> Option<(T, T)> {
        Some((self.a.clone()?, self.b.clone()?))
    }
}

/// Two replicas diffed as they are read.
#[derive(Debug)]
pub struct DiffRun {
    a: ReplicaScan,
    b: ReplicaScan,
    machine: DiffMachine,
}

impl DiffRun {
    /// A diff of replica `a` against replica `b`.
    #[must_use]
    pub fn new(a: ReplicaScan, b: ReplicaScan) -> Self {
        Self { a, b, machine: DiffMachine::new() }
    }

    /// The next bytes the diff needs, and from which side; `None` when both
    /// replicas were read to the end.
    pub fn next_read(&mut self) -> Option<(Side, Read)> {
        loop {
            let Need::Record(side) = self.machine.need() else { return None };
            let scan = match side {
                Side::A => &mut self.a,
                Side::B => &mut self.b,
            };
            if let Some(r) = scan.pop() {
                self.machine.push(side, Some(r));
                continue;
            }
            match scan.next_read() {
                Some(read) => return Some((side, read)),
                None => self.machine.push(side, None),
            }
        }
    }

    /// Feeds the bytes of the last read of `side`.
    pub fn feed(&mut self, side: Side, bytes: &[u8]) {
        match side {
            Side::A => self.a.feed(bytes),
            Side::B => self.b.feed(bytes),
        }
    }

    /// Records read and not yet compared, on both sides (bounded by a chunk's records each).
    #[must_use]
    pub fn held(&self) -> usize {
        self.a.held() + self.b.held()
    }

    /// The diff, once [`DiffRun::next_read`] said `None`.
    #[must_use]
    pub fn finish(self) -> Diff {
        let side = |scan: ReplicaScan| {
            let path = scan.path.clone();
            let (reports, _) = scan.finish();
            SideFacts::from_reports(&path, &reports)
        };
        let (a, b) = (side(self.a), side(self.b));
        self.machine.finish(a, b)
    }
}

/// Runs a diff over in-memory folders (tests, and the native proof that the
/// page's diff is the CLI's): `(folder, [(path, bytes)])` each.
#[must_use]
pub fn diff_in_memory(a: (&str, &[(String, Vec<u8>)]), b: (&str, &[(String, Vec<u8>)])) -> Diff {
    let scan = |(path, files): (&str, &[(String, Vec<u8>)])| {
        let listed: Vec<(String, u64)> = files.iter().map(|(p, bytes)| (p.clone(), bytes.len() as u64)).collect();
        ReplicaScan::new(path, &listed)
    };
    let mut run = DiffRun::new(scan(a), scan(b));
    while let Some((side, read)) = run.next_read() {
        let files = match side {
            Side::A => a.1,
            Side::B => b.1,
        };
        let bytes = files.get(read.file).map_or(&[][..], |(_, f)| f.as_slice());
        let start = usize::try_from(read.start).unwrap_or(usize::MAX).min(bytes.len());
        let end = usize::try_from(read.end).unwrap_or(usize::MAX).min(bytes.len());
        run.feed(side, bytes.get(start..end).unwrap_or(&[]));
    }
    run.finish()
}

/// Plans a shard held in memory (tests).
#[must_use]
pub fn plan_in_memory(path: &str, files: &[(String, Vec<u8>)]) -> ShardPlan {
    let listed: Vec<(String, u64)> = files.iter().map(|(p, bytes)| (p.clone(), bytes.len() as u64)).collect();
    let mut scan = ReplicaScan::new(path, &listed);
    while let Some(read) = scan.next_read() {
        let bytes = files.get(read.file).map_or(&[][..], |(_, f)| f.as_slice());
        let start = usize::try_from(read.start).unwrap_or(usize::MAX).min(bytes.len());
        let end = usize::try_from(read.end).unwrap_or(usize::MAX).min(bytes.len());
        scan.feed(bytes.get(start..end).unwrap_or(&[]));
    }
    plan(scan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample;
    use felix_codec::format::index::build_index;
    use felix_codec::format::record::encode_record;
    use felix_codec::format::segment_header::SegmentHeader;

    #[test]
    fn what_would_remain_counts_the_findings_past_the_list_and_says_one_finding() {
        let mut plan = plan_in_memory("s", &[]);
        assert_eq!(remains(&plan), None);
        let f = felix_codec::doc::report::FindingReport {
            kind: "RecordChecksum".into(),
            position: 40,
            end: 80,
            offset: Some(1),
            repair: felix_codec::Repair::Never,
            message: String::new(),
            discontinuity: None,
        };
        plan.remaining_findings.push(felix_codec::shard::recovery::RemainingFinding { file: "f".into(), finding: f });
        assert_eq!(remains(&plan).as_deref(), Some("1 finding would remain"));
        plan.remaining_omitted = 20_000;
        assert_eq!(remains(&plan).as_deref(), Some("20001 findings would remain (20000 not listed)"));
    }

    #[test]
    fn the_suggested_command_is_pasted_as_shown_or_not_printed() {
        let files: Vec<(String, Vec<u8>)> = sample::files().into_iter().map(|(p, b)| (file_name(&p).to_string(), b)).collect();
        let planned = plan_in_memory("s", &files);
        let flag = recover_flag(&planned);
        assert_eq!(
            recover_command("acme_default_payments_0-1f", &planned).unwrap(),
            format!("felix-storage recover '<root>/acme_default_payments_0-1f'{flag}")
        );
        assert_eq!(recover_command("it's", &planned).unwrap(), format!("felix-storage recover '<root>/it'\\''s'{flag}"));
        // Issue 18: a name a shell cannot be given as the page shows it gets no command.
        for name in ["x\u{202e}txt.log", "a\nb", "\u{2066}q", "back\\slash", "zero\u{200b}width"] {
            assert_eq!(recover_command(name, &planned), None, "{name:?}");
        }
    }

    fn segment(base: u64, n: u64, salt: u8) -> (Vec<u8>, Vec<u8>) {
        let mut out = SegmentHeader::new(base, 1).encode().to_vec();
        let mut pos = Vec::new();
        for o in base..base + n {
            pos.push((o, out.len() as u64));
            let payload = if o < 50 { vec![7u8; 20] } else { vec![salt; 20] };
            encode_record(o, 1, &payload, &mut out).unwrap();
        }
        (out, build_index(base, pos, 4096))
    }

    fn folder(name: &str, n: u64, salt: u8) -> Vec<(String, Vec<u8>)> {
        let (log, index) = segment(0, n, salt);
        vec![(format!("{name}/00000000000000000000.index"), index), (format!("{name}/00000000000000000000.log"), log)]
    }

    #[test]
    fn the_page_diff_finds_the_first_divergent_offset() {
        let a = folder("a", 60, 1);
        let b = folder("b", 60, 2);
        let d = diff_in_memory(("a", &a), ("b", &b));
        assert_eq!((d.first_divergent_offset, d.divergent_records, d.identical), (Some(50), 10, false));
        let same = diff_in_memory(("a", &a), ("c", &a));
        assert!(same.identical);
        let empty = diff_in_memory(("a", &a), ("e", &[]));
        assert_eq!((empty.b.first_offset, empty.only_a.len()), (None, 1));
    }

    #[test]
    fn a_large_replica_is_read_in_step_holding_one_chunk_a_side() {
        let a = folder("a", 200_000, 1);
        let b = folder("b", 150_000, 1);
        let scan = |(path, files): (&str, &[(String, Vec<u8>)])| {
            let listed: Vec<(String, u64)> = files.iter().map(|(p, bytes)| (p.clone(), bytes.len() as u64)).collect();
            ReplicaScan::new(path, &listed)
        };
        let mut run = DiffRun::new(scan(("a", &a)), scan(("b", &b)));
        let mut most = 0;
        while let Some((side, read)) = run.next_read() {
            let files = if side == Side::A { &a } else { &b };
            let bytes = &files[read.file].1;
            run.feed(side, &bytes[read.start as usize..read.end as usize]);
            most = most.max(run.held());
        }
        let per_chunk = (CHUNK_BYTES / 48) as usize + 1;
        assert!(most <= 2 * per_chunk, "held {most} records at once");
        let d = run.finish();
        assert_eq!((d.compared_records, d.only_a.len(), d.first_divergent_offset), (150_000, 1, None));
    }

    #[test]
    fn the_sample_shards_plans_are_the_codecs() {
        let files = sample::files();
        let shards: std::collections::BTreeSet<&str> = files.iter().filter_map(|(p, _)| p.rsplit_once('/').map(|(d, _)| d)).collect();
        let mut kinds = Vec::new();
        for dir in shards {
            let mine: Vec<(String, Vec<u8>)> = files.iter().filter(|(p, _)| p.starts_with(&format!("{dir}/"))).cloned().collect();
            let plan = plan_in_memory(dir, &mine);
            kinds.extend(plan.actions.iter().map(|a| serde_json::to_value(a).unwrap()["action"].as_str().unwrap().to_owned()));
        }
        for k in ["cut", "rebuild-index"] {
            assert!(kinds.iter().any(|x| x == k), "{k} missing from {kinds:?}");
        }
    }

    #[test]
    fn a_dropped_root_or_a_folder_named_like_a_segment_is_not_one_replica() {
        let listed = |paths: &[&str]| paths.iter().map(|p| ((*p).to_owned(), 1u64)).collect::<Vec<_>>();
        let shard = "x/00000000000000000000.log";
        assert_eq!(replica_files(&listed(&[shard, "x/epochs"])), Ok(vec![0, 1]));
        assert_eq!(replica_files(&listed(&["00000000000000000000.log"])), Ok(vec![0]), "loose files");
        // A root of two shards: the CLI asks for --shard; merged, their records would interleave.
        let root = replica_files(&listed(&["root/s-1/00000000000000000000.log", "root/s-2/00000000000000000000.log"]));
        assert!(root.unwrap_err().to_string().contains("root of shards"));
        let claimed = replica_files(&listed(&[shard, "x/00000000000000000099.log/00000000000000000060.log"]));
        assert_eq!(claimed, Err(ReplicaError::FolderWhereAFileBelongs { path: "x/00000000000000000099.log".into() }));
        assert!(claimed.unwrap_err().to_string().contains("00000000000000000099.log"));
        let two = replica_files(&listed(&[shard, "y/00000000000000000000.log"]));
        assert_eq!(two, Err(ReplicaError::MoreThanOneFolder));
        assert!(two.unwrap_err().to_string().contains("more than one folder"));
        // A foreign folder inside a shard is left out, as the CLI leaves it.
        assert_eq!(replica_files(&listed(&[shard, "x/backup/00000000000000000000.log"])), Ok(vec![0]));
    }

    /// One driver: a replica read for the compare or the preview is judged
    /// exactly as the page's scan judges the same folder dropped.
    #[test]
    fn a_replicas_reports_are_the_group_scans() {
        let files = sample::files();
        let shards: std::collections::BTreeSet<&str> = files.iter().filter_map(|(p, _)| p.rsplit_once('/').map(|(d, _)| d)).collect();
        assert!(!shards.is_empty());
        for dir in shards {
            let mine: Vec<(String, Vec<u8>)> = files.iter().filter(|(p, _)| p.starts_with(&format!("{dir}/"))).cloned().collect();
            let listed: Vec<(String, u64)> = mine.iter().map(|(p, b)| (p.clone(), b.len() as u64)).collect();
            let mut scan = ReplicaScan::new(dir, &listed);
            let mut intact = 0;
            while let Some(read) = scan.next_read() {
                scan.feed(&mine[read.file].1[read.start as usize..read.end as usize]);
                while scan.pop().is_some() {
                    intact += 1;
                }
            }
            let (reports, _) = scan.finish();
            let mut scanned = crate::model::scan::scan_all(&mine);
            for s in &mut scanned {
                s.report.hash = None;
            }
            let group: Vec<FileReport> = scanned.into_iter().map(|s| s.report).collect();
            assert_eq!(reports, group, "{dir}");
            let records: u64 = reports.iter().filter(|r| r.kind == FileKind::Segment).map(|r| r.records).sum();
            assert_eq!(intact, records, "{dir}: every intact record queued once");
        }
    }

    #[test]
    fn each_drop_replaces_its_side_and_the_compare_waits_for_both() {
        let mut sides = Sides::default();
        assert_eq!(sides.both(), None);
        sides.set(Side::B, Some("b1"));
        assert_eq!(sides.both(), None, "B alone");
        sides.set(Side::A, Some("a1"));
        assert_eq!(sides.both(), Some(("a1", "b1")));
        sides.set(Side::A, Some("a2"));
        assert_eq!(sides.both(), Some(("a2", "b1")), "a new A replaces the old");
        sides.set(Side::B, None);
        assert_eq!((sides.both(), sides.a), (None, Some("a2")), "a drop that is no replica empties its side only");
        assert_eq!(ReadFailure::Missing.to_string(), "a file went missing");
        let read = ReadFailure::Read { path: "a/\u{202e}x.log".into(), message: "NotReadableError".into() };
        assert_eq!(read.to_string(), format!("{}: NotReadableError", quote("a/\u{202e}x.log")));
    }

    #[test]
    fn a_file_that_shrank_while_read_ends_there() {
        let a = folder("a", 100, 1);
        let listed: Vec<(String, u64)> = a.iter().map(|(p, b)| (p.clone(), b.len() as u64 + 5000)).collect();
        let mut scan = ReplicaScan::new("a", &listed);
        let mut reads = 0;
        while let Some(read) = scan.next_read() {
            reads += 1;
            assert!(reads < 10, "never loops");
            let bytes = &a[read.file].1;
            let end = (read.end as usize).min(bytes.len());
            scan.feed(&bytes[(read.start as usize).min(end)..end]);
        }
        let (reports, _) = scan.finish();
        assert_eq!(reports.len(), 2);
    }
}
