//! A shard folder read as a replica: the codec's inspection of its files in
//! their read order, chunk by chunk as the page reads them, keeping only the
//! intact records not yet consumed. On top of it, the two answers the CLI
//! gives from the same bytes through the same codec functions:
//! [`DiffRun`] (`felix-storage diff`: both replicas read in step, as the
//! codec's `DiffMachine` asks, so memory holds one chunk's records a side)
//! and [`plan`] (`felix-storage recover --dry-run`).
//!
//! The caller owns the reads: it asks [`DiffRun::next_read`] (or
//! [`ReplicaScan::next_read`]) which bytes it wants, slices them from the
//! file's `Blob` and feeds them back.

use std::collections::VecDeque;

use felix_codec::doc::report::{shell_word, FileReport};
use felix_codec::format::file_name::{parse_file_name, FileKind};
use felix_codec::read::scan::{Item, RecordStatus};
use felix_codec::shard::diff::{Diff, DiffMachine, Need, RecordSummary, Side, SideFacts};
use felix_codec::shard::inspect::{FileScan, InputFile, ShardInspection};
use felix_codec::shard::recovery::{plan_shard, Action, Plan, ShardFacts, ShardPlan};
use felix_codec::verdict::repair::RepairOptions;

use super::group::file_name;
use crate::ui::message::quote;

/// Bytes per read.
pub const CHUNK_BYTES: u64 = 1 << 20;

/// Bytes `start..end` of file `file` (an index into the replica's files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    /// Which file.
    pub file: usize,
    /// First byte.
    pub start: u64,
    /// Exclusive end.
    pub end: u64,
}

/// One replica (a shard folder) being read.
#[derive(Debug)]
pub struct ReplicaScan {
    path: String,
    inspection: ShardInspection,
    sizes: Vec<u64>,
    order: Vec<usize>,
    next: usize,
    current: Option<(usize, FileScan, u64)>,
    queue: VecDeque<RecordSummary>,
}

impl ReplicaScan {
    /// A replica whose folder is shown as `path`, holding `files` (`(path, size)`).
    #[must_use]
    pub fn new(path: &str, files: &[(String, u64)]) -> Self {
        let inputs: Vec<InputFile> =
            files.iter().map(|(p, size)| InputFile { path: p.clone(), name: file_name(p).into(), size: *size }).collect();
        let shard = file_name(path.trim_end_matches('/')).to_owned();
        let inspection = ShardInspection::new(Some(shard), inputs);
        let order = inspection.order();
        Self {
            path: path.into(),
            inspection,
            sizes: files.iter().map(|(_, s)| *s).collect(),
            order,
            next: 0,
            current: None,
            queue: VecDeque::new(),
        }
    }

    /// The next bytes to read, or `None` once every file was read.
    pub fn next_read(&mut self) -> Option<Read> {
        loop {
            if let Some((i, _, read)) = &self.current {
                let size = self.sizes.get(*i).copied().unwrap_or(0);
                if *read < size {
                    return Some(Read { file: *i, start: *read, end: size.min(read.saturating_add(CHUNK_BYTES)) });
                }
                self.end_current();
                continue;
            }
            let &i = self.order.get(self.next)?;
            self.next += 1;
            let scan = self.inspection.begin(i);
            self.current = Some((i, scan, 0));
        }
    }

    fn segment_id(&self, i: usize) -> Option<u64> {
        let name = self.inspection.files().get(i).map_or("", |f| f.name.as_str());
        match parse_file_name(name) {
            Some((id, FileKind::Segment)) => Some(id),
            _ => None,
        }
    }

    fn end_current(&mut self) {
        let Some((i, scan, _)) = self.current.take() else { return };
        let id = self.segment_id(i);
        let queue = &mut self.queue;
        self.inspection.end(i, scan, &mut |item: Item<'_>| take(queue, id, &item));
    }

    /// Feeds the bytes of the last [`Read`]. Fewer bytes than asked (the
    /// file shrank while read) end the file there.
    pub fn feed(&mut self, bytes: &[u8]) {
        let Some((i, _, _)) = &self.current else { return };
        let (i, size) = (*i, self.sizes.get(*i).copied().unwrap_or(0));
        let id = self.segment_id(i);
        let Some((_, scan, read)) = &mut self.current else { return };
        let queue = &mut self.queue;
        scan.feed(bytes, &mut |item: Item<'_>| take(queue, id, &item));
        let wanted = size.min(read.saturating_add(CHUNK_BYTES)) - *read;
        *read = if (bytes.len() as u64) < wanted { size } else { read.saturating_add(bytes.len() as u64) };
    }

    /// The next intact record read and not yet taken.
    pub fn pop(&mut self) -> Option<RecordSummary> {
        self.queue.pop_front()
    }

    /// The inspection's reports and recovery facts (call once [`ReplicaScan::next_read`] said `None`).
    #[must_use]
    pub fn finish(mut self) -> (Vec<FileReport>, ShardFacts) {
        self.end_current();
        self.inspection.finish_with_facts(self.path)
    }
}

fn take(queue: &mut VecDeque<RecordSummary>, segment_id: Option<u64>, item: &Item<'_>) {
    if let (Item::Record(r), Some(id)) = (item, segment_id) {
        if r.status == RecordStatus::Intact {
            queue.push_back(RecordSummary::of(id, r));
        }
    }
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

/// Which of a dropped folder's files (`(path, size)`, paths relative to what
/// was dropped) form one replica, as `felix-storage diff` reads a shard
/// directory: the files directly in it. Refuses, in a sentence, what the CLI
/// refuses: a root of shards (folders, no segment file of its own), a
/// folder where a Felix file belongs (the engine refuses such a shard), and
/// two folders dropped as one replica. Files in other folders below it are
/// left out, as the CLI leaves them.
///
/// # Errors
/// The sentence.
pub fn replica_files(files: &[(String, u64)]) -> Result<Vec<usize>, String> {
    use felix_codec::format::file_name::{classify, EntryName};
    let mut top = Vec::new();
    let mut folder: Option<&str> = None;
    let mut nested_dirs = false;
    for (i, (path, _)) in files.iter().enumerate() {
        let (dir, rest) = path.split_once('/').unwrap_or(("", path));
        if folder.is_some_and(|f| f != dir) {
            return Err("files from more than one folder: drop one shard folder as each replica".into());
        }
        folder = Some(dir);
        match rest.split_once('/') {
            None => top.push(i),
            Some((sub, _)) => {
                if classify(sub) != EntryName::Foreign {
                    return Err(format!(
                        "{}: a folder where a Felix file belongs: the engine refuses this shard until it is moved away; nothing to compare",
                        quote(&format!("{dir}/{sub}"))
                    ));
                }
                nested_dirs = true;
            }
        }
    }
    let felix = |i: &usize| files.get(*i).is_some_and(|(p, _)| classify(file_name(p)) != EntryName::Foreign);
    if nested_dirs && !top.iter().any(felix) {
        return Err(format!(
            "{}: holds folders, not segment files: a root of shards? drop one shard folder (the CLI's diff takes --shard)",
            quote(folder.unwrap_or_default())
        ));
    }
    Ok(top)
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
        self.a.queue.len() + self.b.queue.len()
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
        assert!(root.unwrap_err().contains("root of shards"));
        let claimed = replica_files(&listed(&[shard, "x/00000000000000000099.log/00000000000000000060.log"]));
        assert!(claimed.unwrap_err().contains("00000000000000000099.log"));
        assert!(replica_files(&listed(&[shard, "y/00000000000000000000.log"])).unwrap_err().contains("more than one folder"));
        // A foreign folder inside a shard is left out, as the CLI leaves it.
        assert_eq!(replica_files(&listed(&[shard, "x/backup/00000000000000000000.log"])), Ok(vec![0]));
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
