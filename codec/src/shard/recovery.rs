//! Recovery as a plan: pure logic over what the scans found, so the engine,
//! `felix-storage recover` and the browser compute the same plan from the
//! same bytes. The engine then executes exactly the plan (or, with
//! `--dry-run`, only prints it).
//!
//! The rules, one per kind of fact:
//!
//! | fact                                                        | action |
//! |-------------------------------------------------------------|--------|
//! | a temporary of the engine's own (`<format name>.tmp`)       | `remove-temporary` |
//! | the newest segment is an unfinished creation (< 32 bytes), or a rollover that never took effect (a header, no record, and a base offset that is not where the segment before it ends), repeatedly ([`crate::shard::tail::abandoned_tail`]) | `remove-unfinished` (its bytes, if any, move to evidence first); the segment before it is then the newest, and judged as such |
//! | every finding of the newest segment is repairable (`always`, or `opt-in` with `--repair-checksum-tail`) | `cut` at the end of its clean prefix (the cut bytes move to evidence first), then `rebuild-index` |
//! | a segment finding that is not repairable                    | `refuse` (naming the flag only where it would turn the refusal into the cut: the newest segment, every finding `opt-in` or `always`) |
//! | an index with a finding, a torn entry, entries missing, or no index at all | `rebuild-index` |
//! | an index with no segment of its id, or beside an unfinished newest segment (an orphan: it indexes nothing) | `remove-orphan-index` (its bytes move to evidence `NNN.index.cut-0` first) |
//! | an epochs finding                                           | nothing: the file reads as empty; the finding remains |
//! | a cut, an unfinished segment's or an orphaned index's bytes whose evidence name and all its numbered variants (or their notes) are taken | `refuse` of kind [`EVIDENCE_NAMES_EXHAUSTED`] in place of that action, at the byte the evidence would start from (0 for a whole file); its file's findings remain. Also beside a refusal that names the flag, when the flag's cut would have no free name: the flag alone would only refuse again |
//!
//! A shard with any `refuse` is not changed at all: the plan still lists
//! every other action, but the executor runs none of them. The engine checks
//! each evidence name again as it keeps the bytes: a name taken since the
//! plan was made stops the run there, with an error naming the evidence.
//!
//! # Example
//!
//! ```
//! use felix_codec::shard::recovery::{plan_shard, Action, SegmentFacts, ShardFacts};
//! use felix_codec::verdict::repair::RepairOptions;
//! use felix_codec::{CorruptionKind, CorruptionSite, Finding, Repair};
//! let torn = Finding {
//!     kind: CorruptionKind::Truncated { needed: 40, available: 9 },
//!     site: CorruptionSite { shard: None, segment_id: Some(0), position: 100 },
//!     end: 109, offset: Some(3), repair: Repair::Always,
//! };
//! let seg = SegmentFacts { file: "00000000000000000000.log".into(), id: 0, size: 109, newest: true, findings: vec![torn], clean_prefix_end: 100, unfinished: false };
//! let plan = plan_shard(&ShardFacts { segments: vec![seg], ..ShardFacts::default() }, RepairOptions::default());
//! assert!(matches!(plan.actions[0], Action::Cut { position: 100, bytes: 9, .. }));
//! assert!(!plan.refused() && plan.remaining_findings.is_empty());
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::doc::report::{offsets_words, FindingReport};
use crate::doc::sentence::{and_list, at_offsets};
use crate::format::file_name::{evidence_name, first_free_evidence_name, index_evidence_name, index_file_name, MAX_EVIDENCE_ATTEMPTS};
use crate::verdict::corruption::{CorruptionKind, Finding, Repair};
use crate::verdict::repair::{RepairOptions, OPT_IN_FLAG};

/// Version of the plan's JSON shape.
pub const PLAN_VERSION: u32 = 1;

/// The `kind` of a [`Action::Refuse`] that is not about damage: bytes an
/// action would move to evidence (a cut's tail, an unfinished segment, an
/// orphaned index) have no free name — the name and each of its
/// [`MAX_EVIDENCE_ATTEMPTS`]` - 1` numbered variants, or its note, is
/// already in the shard's folder — and evidence is never replaced. Moving
/// evidence out of the folder lifts it; no replica copy is needed.
pub const EVIDENCE_NAMES_EXHAUSTED: &str = "evidence-names-exhausted";

/// What is known about one segment file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFacts {
    /// Its file name (`NNN.log`).
    pub file: String,
    /// Its id.
    pub id: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it is the newest segment of its shard.
    pub newest: bool,
    /// Its findings, with settled verdicts (cross-file ones included).
    pub findings: Vec<Finding>,
    /// Where its clean prefix ends: what a cut keeps.
    pub clean_prefix_end: u64,
    /// A newest segment that never took effect, which recovery removes
    /// ([`crate::shard::tail::abandoned_tail`]): shorter than a header and holding a prefix of
    /// one (an unfinished creation), or a header and no record at a base
    /// offset that is not where the segment before it ends.
    pub unfinished: bool,
}

impl SegmentFacts {
    /// Whether its header was rejected (a finding inside the header's bytes
    /// other than a discontinuity, which a verified header's base makes):
    /// no record of it can be read, so no index can be built from it.
    #[must_use]
    pub fn header_rejected(&self) -> bool {
        let header_len = crate::format::segment_header::SEGMENT_HEADER_LEN as u64;
        self.findings.iter().any(|f| f.position() < header_len && !matches!(f.kind, CorruptionKind::SegmentDiscontinuity { .. }))
    }
}

pub use crate::format::index::IndexProblem;

/// What is known about one segment's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexFacts {
    /// The segment's id.
    pub segment_id: u64,
    /// `None` when the index is sound.
    pub problem: Option<IndexProblem>,
}

/// An index file present in the shard directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexFile {
    /// Its file name (`NNN.index`).
    pub file: String,
    /// Its id.
    pub id: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// Everything recovery decides from, for one shard.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardFacts {
    /// The shard directory as shown.
    pub path: String,
    /// Its segments, in id order.
    pub segments: Vec<SegmentFacts>,
    /// Their indexes (one per segment whose index matters).
    pub indexes: Vec<IndexFacts>,
    /// The engine's own temporaries present (file names).
    pub temporaries: Vec<String>,
    /// Findings recovery has no action for (the epochs file): `(file, finding)`.
    pub other_findings: Vec<(String, Finding)>,
    /// Every index file present, whether or not a segment has its id.
    pub index_files: Vec<IndexFile>,
    /// Every finding of each index file (an orphan's too), as the full
    /// inspection reports it: `(file, finding)`. A refused plan leaves them all (a
    /// rebuild would clear them). Empty from the engine's quick check on
    /// open, where an index's [`IndexProblem`] names its first.
    pub index_findings: Vec<(String, Finding)>,
    /// Per file, its findings past the per-file limit, counted only (as
    /// the report's `findings_omitted`): `(file, count)`, files with none left out.
    pub findings_omitted: Vec<(String, u64)>,
    /// The evidence files (and their notes) already in the directory: a
    /// plan names the first evidence name none of them takes, as the run
    /// picks it ([`first_free_evidence_name`]).
    pub evidence_present: Vec<String>,
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(tag = "action", rename_all = "kebab-case"))]
pub enum Action {
    /// Remove a temporary the engine wrote and never finished.
    RemoveTemporary {
        /// File name.
        file: String,
        /// Why.
        reason: String,
    },
    /// Move an unfinished newest segment's bytes to evidence and remove it.
    RemoveUnfinished {
        /// File name.
        file: String,
        /// Its size (what moves to evidence; nothing when 0).
        bytes: u64,
        /// Why.
        reason: String,
        /// Where its bytes go (the name may take a `-N` suffix when taken).
        #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none", default))]
        evidence: Option<String>,
    },
    /// Cut the newest segment at `position` after copying the cut bytes to evidence.
    Cut {
        /// File name.
        file: String,
        /// Where the cut falls (the end of the clean prefix).
        position: u64,
        /// How many bytes are cut.
        bytes: u64,
        /// The finding that allows it.
        kind: String,
        /// Why, in words.
        reason: String,
        /// Where the cut bytes go (the name may take a `-N` suffix when taken).
        evidence: String,
    },
    /// Move an orphaned index's bytes to evidence and remove it: no segment
    /// has its id (or its segment is an unfinished creation, removed too).
    RemoveOrphanIndex {
        /// File name.
        file: String,
        /// Its size (what moves to evidence; nothing when 0).
        bytes: u64,
        /// Why.
        reason: String,
        /// Where its bytes go (the name may take a `-N` suffix when taken).
        #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none", default))]
        evidence: Option<String>,
    },
    /// Rewrite an index from its segment.
    RebuildIndex {
        /// File name.
        file: String,
        /// Why.
        reason: String,
    },
    /// Refuse: the damage is not repairable by recovery, or (kind
    /// `evidence-names-exhausted`) bytes an action would move to evidence
    /// have no free name. Either way nothing in the shard is changed.
    Refuse {
        /// File name: the damaged segment, or the file whose bytes have no evidence name.
        file: String,
        /// Where the damage starts; for `evidence-names-exhausted`, where the
        /// evidence would start (the cut's position, 0 for a whole file).
        position: u64,
        /// The finding's kind, or `evidence-names-exhausted`.
        kind: String,
        /// Why, in words.
        reason: String,
        /// The flag that would allow a repair (`--repair-checksum-tail`), for `opt-in` damage.
        #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none", default))]
        allowed_by: Option<String>,
    },
}

impl Action {
    /// What the action does, in one line without its reason or evidence name
    /// (what [`ShardPlan::differs_from`] compares).
    #[must_use]
    pub fn summary(&self) -> String {
        match self {
            Self::RemoveTemporary { file, .. } => format!("remove-temporary {file}"),
            Self::RemoveUnfinished { file, bytes, .. } => format!("remove-unfinished {file} ({bytes} bytes)"),
            Self::Cut { file, position, bytes, kind, .. } => format!("cut {file} at byte {position} ({bytes} bytes, {kind})"),
            Self::RemoveOrphanIndex { file, bytes, .. } => format!("remove-orphan-index {file} ({bytes} bytes)"),
            Self::RebuildIndex { file, .. } => format!("rebuild-index {file}"),
            Self::Refuse { file, position, kind, .. } => format!("refuse {file} at byte {position} ({kind})"),
        }
    }

    /// Whether this is a refusal for want of a free evidence name
    /// ([`EVIDENCE_NAMES_EXHAUSTED`]), not for damage.
    #[must_use]
    pub fn is_names_exhausted(&self) -> bool {
        matches!(self, Self::Refuse { kind, .. } if kind == EVIDENCE_NAMES_EXHAUSTED)
    }

    /// The file the action is about.
    #[must_use]
    pub fn file(&self) -> &str {
        match self {
            Self::RemoveTemporary { file, .. }
            | Self::RemoveUnfinished { file, .. }
            | Self::Cut { file, .. }
            | Self::RemoveOrphanIndex { file, .. }
            | Self::RebuildIndex { file, .. }
            | Self::Refuse { file, .. } => file,
        }
    }
}

/// A finding left after the plan, and its file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemainingFinding {
    /// File name.
    pub file: String,
    /// The finding.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub finding: FindingReport,
}

/// The plan for one shard.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardPlan {
    /// The shard directory as shown.
    pub path: String,
    /// The actions, in the order they run.
    pub actions: Vec<Action>,
    /// What `inspect` will still report once the actions ran (everything,
    /// when the shard is refused).
    pub remaining_findings: Vec<RemainingFinding>,
    /// Findings that remain too but are not listed: those past the
    /// per-file limit (10,000) of each file with findings in
    /// `remaining_findings` (`inspect`'s `findings_omitted`). Absent when 0.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_zero"))]
    pub remaining_omitted: u64,
}

#[cfg(feature = "serde")]
#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference (the lint fires on 64-bit targets only)"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ShardPlan {
    /// Where this plan does other work than `reviewed` (one made earlier, as
    /// `recover --dry-run --json` printed it): the first action that differs,
    /// in words, or `None` when both run the same actions on the same files at
    /// the same positions and sizes. Evidence names are not compared (a name
    /// taken since then gets a `-N` suffix when the cut runs), nor the path,
    /// nor what would remain.
    #[must_use]
    pub fn differs_from(&self, reviewed: &ShardPlan) -> Option<String> {
        let now: Vec<String> = self.actions.iter().map(Action::summary).collect();
        let then: Vec<String> = reviewed.actions.iter().map(Action::summary).collect();
        if now == then {
            return None;
        }
        let i = now.iter().zip(&then).take_while(|(a, b)| a == b).count();
        let said = |list: &[String]| list.get(i).map_or_else(|| "nothing more".into(), Clone::clone);
        Some(format!("action {}: the reviewed plan says {}; the shard now needs {}", i + 1, said(&then), said(&now)))
    }

    /// Whether recovery refuses this shard (and so runs none of its actions).
    #[must_use]
    pub fn refused(&self) -> bool {
        self.actions.iter().any(|a| matches!(a, Action::Refuse { .. }))
    }

    /// Whether there is nothing to do and nothing remains.
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.actions.is_empty() && self.remaining_findings.is_empty() && self.remaining_omitted == 0
    }

    /// What would make recovery succeed on a shard it refuses, in words —
    /// the same in `recover` and on the page: for damage no flag allows it
    /// to cut, re-replicate each such file from a healthy replica, naming
    /// the damaged records' offsets; for evidence with no free name, move
    /// evidence out of the shard's folder. `None` when the plan is not
    /// refused so, or when `--repair-checksum-tail` alone would let it run
    /// (the command then carries the flag).
    #[must_use]
    pub fn to_succeed(&self) -> Option<String> {
        match (self.to_replace(), self.to_make_room()) {
            (Some(copy), Some(room)) => Some(format!("{copy}; it also refuses until {room}")),
            (None, Some(room)) => {
                let flag = self.actions.iter().any(|a| matches!(a, Action::Refuse { allowed_by: Some(_), .. }));
                let with = if flag { format!(" with {OPT_IN_FLAG}") } else { String::new() };
                Some(format!("recover refuses until {room}; then run recover again{with}"))
            }
            (copy, None) => copy,
        }
    }

    /// The words for a refusal for want of evidence names (which files'
    /// evidence has none free); `None` when there is no such refusal.
    fn to_make_room(&self) -> Option<String> {
        let files: Vec<String> = self.refused_files(true).into_iter().map(String::from).collect();
        (!files.is_empty()).then(|| {
            format!(
                "some evidence (`*.cut-*` files and their `.json` notes) is moved out of the shard's folder: every name the \
                 evidence of {} could be kept under is taken, and recovery never replaces evidence",
                and_list(&files)
            )
        })
    }

    /// The files refused with no flag to lift it — for want of evidence
    /// names (`names_exhausted`), or for damage — each once, in the plan's
    /// order (one refusal per finding, so a file may be refused many times).
    fn refused_files(&self, names_exhausted: bool) -> Vec<&str> {
        let mut files: Vec<&str> = Vec::new();
        for a in self.actions.iter().filter(|a| a.is_names_exhausted() == names_exhausted) {
            if let Action::Refuse { file, allowed_by: None, .. } = a {
                if !files.contains(&file.as_str()) {
                    files.push(file);
                }
            }
        }
        files
    }

    /// [`Self::to_succeed`]'s words for damage no flag allows it to cut.
    fn to_replace(&self) -> Option<String> {
        let files = self.refused_files(false);
        if files.is_empty() {
            return None;
        }
        // A file to replace, for damage in its own bytes; a segment to
        // restore, for offsets missing before a file (its own bytes are whole).
        let replaced: Vec<String> = files.iter().filter_map(|file| self.damaged_in(file)).collect();
        let gaps: Vec<(String, u64)> = files.iter().flat_map(|file| self.missing_before(file)).collect();
        let one_offset = matches!(gaps.as_slice(), [(_, 1)]);
        let restored: Vec<String> = gaps.into_iter().map(|(words, _)| words).collect();
        let (is, those, copies) = if replaced.len() == 1 { ("is", "that file", "copy") } else { ("are", "those files", "copies") };
        let until = match (replaced.is_empty(), restored.is_empty()) {
            (false, true) => format!("{} {is} replaced", and_list(&replaced)),
            (true, _) => format!("{} {} restored", and_list(&restored), if restored.len() == 1 { "is" } else { "are" }),
            (false, false) => format!("{} {is} replaced and {} restored", and_list(&replaced), and_list(&restored)),
        };
        let what = match (replaced.is_empty(), restored.is_empty()) {
            (false, true) => those,
            (true, _) if one_offset => "the segment holding it",
            (true, _) => {
                if restored.len() == 1 {
                    "the segment holding them"
                } else {
                    "the segments holding them"
                }
            }
            (false, false) => "them",
        };
        let evidence = if replaced.is_empty() {
            String::new()
        } else {
            format!(", after moving this replica's {copies} out of the shard's folder as evidence")
        };
        // A rotten tail the flag may cut is refused too: the run after the
        // copy needs the flag (or that file copied as well).
        let flag = self.actions.iter().find_map(|a| match a {
            Action::Refuse { file, allowed_by: Some(flag), .. } => Some((file.as_str(), flag.as_str())),
            _ => None,
        });
        let then = flag.map_or_else(
            || "then run recover again".into(),
            |(file, flag)| format!("then run recover again with {flag} (or copy {file} from the replica too)"),
        );
        let unlisted = match self.remaining_omitted {
            0 => String::new(),
            n => format!(" ({n} more findings are not listed: `felix-storage inspect` names every damaged file)"),
        };
        Some(format!(
            "recover refuses until {until}: copy {what} from a healthy replica of this shard \
             (`felix-storage diff` against it shows which offsets this copy lost and whether that replica holds them){evidence}; {then}{unlisted}"
        ))
    }

    /// What to do about a damaged epochs file, which no recovery rewrites
    /// (it reads as empty: no record is lost, but a divergence can no longer
    /// be repaired automatically); `None` when the epochs file is sound.
    #[must_use]
    pub fn epochs_advice(&self) -> Option<String> {
        let name = crate::format::file_name::EPOCHS_FILE_NAME;
        let findings = || self.remaining_findings.iter().filter(|f| f.file == name);
        if findings().any(|f| f.finding.kind == "EpochsBeyondLog") {
            return Some(format!(
                "{name} names a generation that starts past the log's end: the log may have lost its newest segments, and \
                 recovery changes neither; `felix-storage diff` against a healthy replica shows whether it holds offsets this \
                 copy lacks — if it does, copy the segments holding them from it; then run recover again"
            ));
        }
        findings().next().map(|_| {
            format!(
                "{name} reads as empty and recovery leaves it as it is: copy it from a healthy replica of this shard, after \
                 moving this replica's copy out of the shard's folder as evidence, or let the broker's next generation rewrite \
                 it (the engine keeps the damaged copy as {name}.damaged)"
            )
        })
    }

    /// The findings that remain in a refused `file`.
    fn findings_in<'a>(&'a self, file: &'a str) -> impl Iterator<Item = &'a FindingReport> + 'a {
        self.remaining_findings.iter().filter(move |f| f.file == file).map(|f| &f.finding)
    }

    /// "00000000000000000001.log (the damaged record at offset 60)": a
    /// refused file and what in it no recovery may cut; `None` when its
    /// only such finding is a gap before it.
    fn damaged_in(&self, file: &str) -> Option<String> {
        let own = || self.findings_in(file).filter(|f| f.discontinuity.is_none());
        let overlap = self.findings_in(file).filter_map(|f| f.discontinuity).find(|d| d.found < d.expected);
        let offsets: Vec<u64> = own().filter_map(|f| f.offset).collect();
        let first_byte = own().map(|f| f.position).min();
        let what = match (offsets.len(), first_byte, overlap) {
            (0, None, Some(d)) => format!("its first offsets, from {}, repeat the segment before it", d.found),
            (0, None, None) if !self.missing_before(file).is_empty() => return None,
            (0, None, None) => "damaged".into(),
            (0, Some(byte), _) => format!("damaged from byte {byte}"),
            (1, _, _) => format!("the damaged record {}", at_offsets(&offsets)),
            _ => format!("the damaged records {}", at_offsets(&offsets)),
        };
        Some(format!("{file} ({what})"))
    }

    /// "the segment with offsets 190..=236 (missing before
    /// 00000000000000000005.log)": each gap of offsets before `file`.
    fn missing_before(&self, file: &str) -> Vec<(String, u64)> {
        self.findings_in(file)
            .filter_map(|f| f.discontinuity?.missing())
            .map(|missing| {
                let (first, last) = (*missing.start(), *missing.end());
                (format!("the segment with {} (missing before {file})", offsets_words(first, last)), last - first + 1)
            })
            .collect()
    }
}

/// Plans for several shards: what `recover --dry-run --json` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Plan {
    /// [`PLAN_VERSION`].
    pub plan_version: u32,
    /// One per shard whose plan was made (and, in a real run, ran to its end).
    pub shards: Vec<ShardPlan>,
    /// Where the run stopped on a failure (a full disk, an IO error), and
    /// what it had done there; absent when it did not stop.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub stopped: Option<Stopped>,
    /// The directories the run looked at and left as they were, each with
    /// why: a folder no segment or index names a shard (recovery never takes
    /// a lock in, creates or removes anything in one), a shard a live writer
    /// holds, a shard whose plan changed since it was reviewed. Absent when none.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub skipped: Vec<Skipped>,
}

impl Plan {
    /// A plan over `shards`.
    #[must_use]
    pub fn new(shards: Vec<ShardPlan>) -> Self {
        Self { plan_version: PLAN_VERSION, shards, stopped: None, skipped: Vec::new() }
    }
}

/// A directory a run left as it was, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Skipped {
    /// The directory as shown.
    pub path: String,
    /// Why it was left as it was (one line).
    pub reason: String,
}

/// The shard a run stopped in: the actions of its plan that ran before the
/// failure (each as `shards` would list it), those that did not, and the
/// failure. The shards in `shards` before it are done; none after it was
/// looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stopped {
    /// The shard directory as shown.
    pub path: String,
    /// The failure, naming the file (one line).
    pub error: String,
    /// Its plan's actions that ran to their end, in order.
    pub done: Vec<Action>,
    /// Its plan's actions that did not run (the first may have begun:
    /// evidence it wrote is kept); empty when no plan was made.
    pub not_done: Vec<Action>,
}

impl Stopped {
    /// A stop in `plan` (the shard's plan, or `None` when the failure came
    /// before one was made) after its first `done` actions ran.
    #[must_use]
    pub fn new(path: String, error: String, plan: Option<&ShardPlan>, done: usize) -> Self {
        let actions = plan.map_or(&[][..], |p| p.actions.as_slice());
        let (ran, rest) = actions.split_at(done.min(actions.len()));
        Self { path, error, done: ran.to_vec(), not_done: rest.to_vec() }
    }
}

fn remaining(file: &str, f: &Finding) -> RemainingFinding {
    RemainingFinding { file: file.into(), finding: FindingReport::from(f) }
}

fn reason(f: &Finding) -> String {
    format!("{} at byte {}: {}; {}", f.kind.name(), f.position(), f.kind, f.kind.meaning())
}

/// Whether recovery may cut `f` under `options`.
fn cuttable(f: &Finding, options: RepairOptions) -> bool {
    match f.repair {
        Repair::Always => true,
        Repair::OptIn => options.repair_checksum_tail,
        Repair::Never => false,
    }
}

/// The plan for one shard: see the module doc for the rules.
#[must_use]
pub fn plan_shard(facts: &ShardFacts, options: RepairOptions) -> ShardPlan {
    // The names already taken, gathered once for every evidence name the plan gives.
    let taken: alloc::collections::BTreeSet<&str> = facts.evidence_present.iter().map(String::as_str).collect();
    let mut draft = Draft { actions: Vec::new(), refusals: Vec::new(), left: Vec::new(), cut_segments: Vec::new(), taken: &taken };
    for file in &facts.temporaries {
        draft.actions.push(Action::RemoveTemporary { file: file.clone(), reason: "an unfinished temporary file of the engine's".into() });
    }
    for seg in &facts.segments {
        draft.segment(seg, options);
    }
    let (orphans, exhausted) = orphan_indexes(facts, &taken);
    draft.actions.extend(orphans);
    draft.refusals.extend(exhausted);
    draft.index_rebuilds(facts);
    for (file, f) in &facts.other_findings {
        draft.left.push(remaining(file, f));
    }
    let refused = !draft.refusals.is_empty();
    let Draft { mut actions, refusals, mut left, cut_segments, .. } = draft;
    actions.extend(refusals);
    if refused {
        left.extend(kept_by_refusal(facts, &actions, &cut_segments));
    }
    left.sort_by(|a, b| (&a.file, a.finding.position).cmp(&(&b.file, b.finding.position)));
    // A file with findings left out keeps those past the limit too.
    let remaining_omitted = facts
        .findings_omitted
        .iter()
        .filter(|(file, _)| left.iter().any(|f| f.file == *file))
        .fold(0u64, |sum, (_, n)| sum.saturating_add(*n));
    ShardPlan { path: facts.path.clone(), actions, remaining_findings: left, remaining_omitted }
}

/// A plan while it is drawn: the actions, the refusals (appended last), the
/// findings left, and the segments cut.
struct Draft<'a> {
    actions: Vec<Action>,
    refusals: Vec<Action>,
    left: Vec<RemainingFinding>,
    cut_segments: Vec<u64>,
    /// The evidence names already taken in the directory.
    taken: &'a alloc::collections::BTreeSet<&'a str>,
}

impl Draft<'_> {
    /// One segment's share of the plan: remove an unfinished newest segment,
    /// cut a newest segment's repairable tail, or refuse what may not be cut.
    fn segment(&mut self, seg: &SegmentFacts, options: RepairOptions) {
        if seg.unfinished && seg.newest {
            let reason = if seg.size < crate::format::segment_header::SEGMENT_HEADER_LEN as u64 {
                format!(
                    "the newest segment holds {} of its header's 32 bytes and no record: an unfinished creation \
                     (a header is fsynced before any record may claim to live in a segment)",
                    seg.size
                )
            } else {
                "the newest segment holds a header and no record, at a base offset that is not where the segment before it \
                 ends: a rollover that never took effect"
                    .into()
            };
            let Ok(evidence) = whole_file_evidence(seg.size, |k| evidence_name(seg.id, 0, k), self.taken) else {
                return self.names_exhausted(seg, 0);
            };
            self.actions.push(Action::RemoveUnfinished { file: seg.file.clone(), bytes: seg.size, reason, evidence });
            return;
        }
        let Some(first) = seg.findings.first() else { return };
        let segment_kinds = seg.findings.iter().all(|f| !f.kind.name().starts_with("Index"));
        if seg.newest && segment_kinds && seg.findings.iter().all(|f| cuttable(f, options)) {
            let Some(evidence) = first_free_evidence_name(|k| evidence_name(seg.id, seg.clean_prefix_end, k), self.taken) else {
                return self.names_exhausted(seg, seg.clean_prefix_end);
            };
            self.actions.push(Action::Cut {
                file: seg.file.clone(),
                position: seg.clean_prefix_end,
                bytes: seg.size.saturating_sub(seg.clean_prefix_end),
                kind: first.kind.name().into(),
                reason: reason(first),
                evidence,
            });
            self.cut_segments.push(seg.id);
            return;
        }
        // The flag is named only where it would turn this refusal into the
        // cut above: the newest segment, every finding of it cuttable with it
        // (it never cuts an older segment, nor past damage it may not cut).
        let with_flag = RepairOptions { repair_checksum_tail: true };
        let flag_lifts =
            !options.repair_checksum_tail && seg.newest && segment_kinds && seg.findings.iter().all(|f| cuttable(f, with_flag));
        for f in &seg.findings {
            self.left.push(remaining(&seg.file, f));
            if cuttable(f, options) && seg.newest {
                continue; // repairable, but the segment as a whole is refused
            }
            let allowed_by = (f.repair == Repair::OptIn && flag_lifts).then(|| OPT_IN_FLAG.into());
            self.refusals.push(Action::Refuse {
                file: seg.file.clone(),
                position: f.position(),
                kind: f.kind.name().into(),
                reason: reason(f),
                allowed_by,
            });
        }
        // The flag's cut would need a free evidence name too: without one,
        // the flag alone would only refuse again, so the plan says so.
        let position = seg.clean_prefix_end;
        if flag_lifts && first_free_evidence_name(|k| evidence_name(seg.id, position, k), self.taken).is_none() {
            self.refusals.push(names_exhausted(&seg.file, position, &evidence_name(seg.id, position, 1)));
        }
    }

    /// In place of removing or cutting `seg` from `position`: a refusal, as
    /// no name is free for its evidence; its findings remain.
    fn names_exhausted(&mut self, seg: &SegmentFacts, position: u64) {
        self.left.extend(seg.findings.iter().map(|f| remaining(&seg.file, f)));
        self.refusals.push(names_exhausted(&seg.file, position, &evidence_name(seg.id, position, 1)));
    }

    /// `rebuild-index` for every index with a problem and every cut segment's
    /// index (an unfinished newest segment's index is removed instead).
    fn index_rebuilds(&mut self, facts: &ShardFacts) {
        const CUT: &str = "the segment is cut: entries past the cut would point at nothing";
        for ix in &facts.indexes {
            // Nothing to build from: a segment recovery removes, or one whose header is rejected.
            let nothing = facts.segments.iter().any(|s| s.id == ix.segment_id && ((s.unfinished && s.newest) || s.header_rejected()));
            if nothing {
                continue;
            }
            let why = match (&ix.problem, self.cut_segments.contains(&ix.segment_id)) {
                (Some(p), _) => p.describe(),
                (None, true) => CUT.into(),
                (None, false) => continue,
            };
            self.actions.push(Action::RebuildIndex { file: index_file_name(ix.segment_id), reason: why });
        }
        for id in &self.cut_segments {
            if !facts.indexes.iter().any(|ix| ix.segment_id == *id) {
                self.actions.push(Action::RebuildIndex { file: index_file_name(*id), reason: CUT.into() });
            }
        }
    }
}

/// When the plan refuses, nothing runs: every finding remains, each of every
/// index's included, and those of the segments that would have been cut and
/// of the indexes that would have been removed.
fn kept_by_refusal(facts: &ShardFacts, actions: &[Action], cut_segments: &[u64]) -> Vec<RemainingFinding> {
    let mut left = Vec::new();
    for ix in &facts.indexes {
        let file = index_file_name(ix.segment_id);
        let every: Vec<&Finding> = facts.index_findings.iter().filter(|(f, _)| *f == file).map(|(_, x)| x).collect();
        match &ix.problem {
            _ if !every.is_empty() => left.extend(every.into_iter().map(|f| remaining(&file, f))),
            Some(IndexProblem::Finding(f)) => left.push(remaining(&file, f)),
            _ => {}
        }
    }
    for seg in &facts.segments {
        if cut_segments.contains(&seg.id) {
            left.extend(seg.findings.iter().map(|f| remaining(&seg.file, f)));
        }
    }
    for action in actions {
        // An orphan removed, or refused for want of an evidence name (a
        // segment refused so keeps its findings as the plan is drawn).
        // The index of an unfinished newest segment was kept above already.
        let orphan = matches!(action, Action::RemoveOrphanIndex { .. })
            || (action.is_names_exhausted() && facts.index_files.iter().any(|ix| ix.file == action.file()));
        let kept_above = facts.indexes.iter().any(|ix| index_file_name(ix.segment_id) == action.file());
        if orphan && !kept_above {
            left.extend(facts.index_findings.iter().filter(|(f, _)| f == action.file()).map(|(f, x)| remaining(f, x)));
        }
    }
    left
}

/// `remove-orphan-index` for every index file that indexes nothing: no
/// segment has its id, or its segment is the unfinished newest one (removed
/// by `remove-unfinished` before this runs). Left in place, its findings
/// would stay "repairable" after every recovery, and a new segment of that
/// id could not be created without replacing it.
/// An orphan whose bytes have no free evidence name is refused instead
/// (the second list).
fn orphan_indexes(facts: &ShardFacts, taken: &alloc::collections::BTreeSet<&str>) -> (Vec<Action>, Vec<Action>) {
    let (mut out, mut refused) = (Vec::new(), Vec::new());
    for ix in &facts.index_files {
        let reason = match facts.segments.iter().find(|s| s.id == ix.id) {
            None => "no segment has this id: an orphaned index indexes nothing",
            Some(s) if s.unfinished && s.newest => "its segment is an unfinished creation, removed with it: the index indexes nothing",
            Some(_) => continue,
        };
        let Ok(evidence) = whole_file_evidence(ix.size, |k| index_evidence_name(ix.id, k), taken) else {
            refused.push(names_exhausted(&ix.file, 0, &index_evidence_name(ix.id, 1)));
            continue;
        };
        out.push(Action::RemoveOrphanIndex { file: ix.file.clone(), bytes: ix.size, reason: reason.into(), evidence });
    }
    (out, refused)
}

/// Where a whole file's bytes go before it is removed: no evidence for an
/// empty file, else the first free name; `Err` when every name is taken.
fn whole_file_evidence(
    size: u64,
    name_for: impl Fn(u32) -> String,
    taken: &alloc::collections::BTreeSet<&str>,
) -> Result<Option<String>, ()> {
    if size == 0 {
        return Ok(None);
    }
    first_free_evidence_name(name_for, taken).map(Some).ok_or(())
}

/// The refusal of an action whose evidence (of `file`, from `position`)
/// has no free name: `first` and each of its numbered variants, or its
/// note, is taken.
fn names_exhausted(file: &str, position: u64, first: &str) -> Action {
    Action::Refuse {
        file: file.into(),
        position,
        kind: EVIDENCE_NAMES_EXHAUSTED.into(),
        reason: format!(
            "{EVIDENCE_NAMES_EXHAUSTED} at byte {position}: the evidence of these bytes has no free name — {first} and its {} \
             numbered variants (-2 to -{MAX_EVIDENCE_ATTEMPTS}), or their .json notes, are all taken, and evidence is never \
             replaced; move some evidence out of the shard's folder, then run recover again",
            MAX_EVIDENCE_ATTEMPTS - 1
        ),
        allowed_by: None,
    }
}

/// Whether a kind belongs to a segment's records or header (what a cut or a
/// refusal is about), as opposed to an index or the epochs file.
#[must_use]
pub fn is_segment_kind(kind: &CorruptionKind) -> bool {
    !kind.name().starts_with("Index") && !kind.name().starts_with("Epochs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::corruption::CorruptionSite;
    use alloc::vec;

    fn finding(kind: CorruptionKind, position: u64, end: u64, repair: Repair) -> Finding {
        Finding { kind, site: CorruptionSite { shard: None, segment_id: Some(1), position }, end, offset: Some(9), repair }
    }

    fn seg(id: u64, newest: bool, findings: Vec<Finding>, clean: u64, size: u64) -> SegmentFacts {
        SegmentFacts {
            file: crate::format::file_name::segment_file_name(id),
            id,
            size,
            newest,
            findings,
            clean_prefix_end: clean,
            unfinished: false,
        }
    }

    fn names(p: &ShardPlan) -> Vec<&'static str> {
        p.actions
            .iter()
            .map(|a| match a {
                Action::RemoveTemporary { .. } => "remove-temporary",
                Action::RemoveUnfinished { .. } => "remove-unfinished",
                Action::Cut { .. } => "cut",
                Action::RemoveOrphanIndex { .. } => "remove-orphan-index",
                Action::RebuildIndex { .. } => "rebuild-index",
                Action::Refuse { .. } => "refuse",
            })
            .collect()
    }

    #[test]
    fn a_torn_tail_is_cut_to_evidence_and_its_index_rebuilt() {
        let torn = finding(CorruptionKind::Truncated { needed: 40, available: 9 }, 100, 109, Repair::Always);
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(1, true, vec![torn], 100, 109)],
            indexes: vec![IndexFacts { segment_id: 1, problem: None }],
            temporaries: vec!["epochs.tmp".into()],
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        assert_eq!(names(&p), ["remove-temporary", "cut", "rebuild-index"]);
        assert!(!p.refused());
        assert!(p.remaining_findings.is_empty());
        let Action::Cut { position, bytes, evidence, .. } = &p.actions[1] else { panic!() };
        assert_eq!((*position, *bytes, evidence.as_str()), (100, 9, "00000000000000000001.log.cut-100"));
    }

    #[test]
    fn opt_in_damage_is_refused_naming_the_flag_and_cut_with_it() {
        let rot = finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 100, 140, Repair::OptIn);
        let facts = ShardFacts { path: "s".into(), segments: vec![seg(1, true, vec![rot], 100, 140)], ..ShardFacts::default() };
        let p = plan_shard(&facts, RepairOptions::default());
        assert_eq!(names(&p), ["refuse"]);
        let Action::Refuse { allowed_by, .. } = &p.actions[0] else { panic!() };
        assert_eq!(allowed_by.as_deref(), Some("--repair-checksum-tail"));
        assert_eq!(p.remaining_findings.len(), 1);
        let p = plan_shard(&facts, RepairOptions { repair_checksum_tail: true });
        assert_eq!(names(&p), ["cut", "rebuild-index"]);
    }

    #[test]
    fn a_hard_refusal_says_what_would_make_recovery_succeed_and_an_opt_in_one_leaves_it_to_the_flag() {
        let rot = |position, offset| Finding {
            offset,
            ..finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, position, position + 30, Repair::Never)
        };
        let torn = finding(CorruptionKind::Truncated { needed: 40, available: 9 }, 100, 109, Repair::Always);
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(0, false, vec![rot(60, Some(7))], 60, 200), seg(1, true, vec![torn], 100, 109)],
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        assert_eq!(
            p.to_succeed().as_deref(),
            Some(
                "recover refuses until 00000000000000000000.log (the damaged record at offset 7) is replaced: copy that file \
                 from a healthy replica of this shard (`felix-storage diff` against it shows which offsets this copy lost and whether that replica holds them), after \
                 moving this replica's copy out of the shard's folder as evidence; then run recover again"
            )
        );
        // Two files; more offsets than a sentence names; a damaged header (no offset) by its byte.
        let many: Vec<Finding> = (0..5).map(|i| rot(60 + 40 * i, Some(10 + i))).collect();
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(0, false, many, 60, 400), seg(1, true, vec![rot(48, None)], 48, 200)],
            ..ShardFacts::default()
        };
        let said = plan_shard(&facts, RepairOptions::default()).to_succeed().unwrap();
        assert!(
            said.starts_with(
                "recover refuses until 00000000000000000000.log (the damaged records at offsets 10, 11, 12 and 2 more) \
                 and 00000000000000000001.log (damaged from byte 48) are replaced: copy those files"
            ),
            "{said}"
        );
        assert!(said.contains("this replica's copies out of the shard's folder"), "{said}");
        // Rot in an older segment and a rotten tail of the newest: after the copy, the flag (or a second copy).
        let older_and_tail = ShardFacts {
            path: "s".into(),
            segments: vec![
                seg(0, false, vec![rot(60, Some(7))], 60, 200),
                seg(1, true, vec![finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 100, 140, Repair::OptIn)], 100, 140),
            ],
            ..ShardFacts::default()
        };
        let said = plan_shard(&older_and_tail, RepairOptions::default()).to_succeed().unwrap();
        assert!(
            said.ends_with("then run recover again with --repair-checksum-tail (or copy 00000000000000000001.log from the replica too)"),
            "{said}"
        );
        // Opt-in damage: the flag is what makes it succeed, and the command carries it.
        let tail = finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 100, 140, Repair::OptIn);
        let facts = ShardFacts { path: "s".into(), segments: vec![seg(1, true, vec![tail], 100, 140)], ..ShardFacts::default() };
        assert_eq!(plan_shard(&facts, RepairOptions::default()).to_succeed(), None);
        assert_eq!(plan_shard(&ShardFacts::default(), RepairOptions::default()).to_succeed(), None);
    }

    #[test]
    fn a_segment_missing_from_the_middle_is_to_be_restored_not_its_successor_replaced() {
        // Segment 4 (offsets 190..=236) lost: segment 5 starts at 237.
        let gap = |expected, found| finding(CorruptionKind::SegmentDiscontinuity { expected, found }, 8, 16, Repair::Never);
        let facts = |findings| ShardFacts {
            path: "s".into(),
            segments: vec![seg(3, false, vec![], 32, 400), seg(5, true, findings, 32, 400)],
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts(vec![gap(190, 237)]), RepairOptions::default());
        assert_eq!(
            p.to_succeed().as_deref(),
            Some(
                "recover refuses until the segment with offsets 190..=236 (missing before 00000000000000000005.log) is restored: \
                 copy the segment holding them from a healthy replica of this shard (`felix-storage diff` against it shows which \
                 offsets this copy lost and whether that replica holds them); then run recover again"
            ),
            "nothing to move out: the file after the gap is whole"
        );
        // A gap of one offset, and rot in the same file: both named, and the file's copy moved out.
        let rot =
            Finding { offset: Some(240), ..finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 60, 90, Repair::Never) };
        let said = plan_shard(&facts(vec![gap(236, 237), rot]), RepairOptions::default()).to_succeed().unwrap();
        assert!(
            said.starts_with(
                "recover refuses until 00000000000000000005.log (the damaged record at offset 240) is replaced and the segment \
                 with offset 236 (missing before 00000000000000000005.log) restored: copy them from"
            ),
            "{said}"
        );
        assert!(said.contains("after moving this replica's copy out of the shard's folder as evidence"), "{said}");
        let said = plan_shard(&facts(vec![gap(236, 237)]), RepairOptions::default()).to_succeed().unwrap();
        assert!(said.contains("is restored: copy the segment holding it from"), "one offset is 'it': {said}");
        // Offsets held twice: the later file's copy is what to replace.
        let said = plan_shard(&facts(vec![gap(237, 200)]), RepairOptions::default()).to_succeed().unwrap();
        assert!(
            said.starts_with(
                "recover refuses until 00000000000000000005.log (its first offsets, from 200, repeat the segment before it) is replaced"
            ),
            "{said}"
        );
    }

    #[test]
    fn a_damaged_epochs_file_gets_advice_and_a_sound_one_none() {
        let damaged = finding(CorruptionKind::EpochsChecksum { stored: 1, computed: 2 }, 0, 60, Repair::Never);
        let facts = ShardFacts { path: "s".into(), other_findings: vec![("epochs".into(), damaged)], ..ShardFacts::default() };
        let p = plan_shard(&facts, RepairOptions::default());
        assert!(p.actions.is_empty() && !p.refused());
        assert!(p.epochs_advice().is_some_and(|w| w.starts_with("epochs reads as empty and recovery leaves it as it is: copy it")));
        assert_eq!(plan_shard(&ShardFacts::default(), RepairOptions::default()).epochs_advice(), None);
    }

    #[test]
    fn findings_past_the_list_are_said_to_exist() {
        let rot = finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 60, 90, Repair::Never);
        let facts = ShardFacts { path: "s".into(), segments: vec![seg(0, true, vec![rot], 60, 200)], ..ShardFacts::default() };
        let mut p = plan_shard(&facts, RepairOptions::default());
        p.remaining_omitted = 20_000;
        let said = p.to_succeed().unwrap();
        assert!(
            said.ends_with("then run recover again (20000 more findings are not listed: `felix-storage inspect` names every damaged file)"),
            "{said}"
        );
    }

    #[test]
    fn the_flag_is_named_only_where_it_would_lift_the_refusal() {
        let tail_rot =
            |position| finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, position, position + 40, Repair::OptIn);
        let rot = finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 60, 90, Repair::Never);
        let flags = |facts: &ShardFacts| -> Vec<Option<String>> {
            let p = plan_shard(facts, RepairOptions::default());
            p.actions
                .iter()
                .filter_map(|a| if let Action::Refuse { allowed_by, .. } = a { Some(allowed_by.clone()) } else { None })
                .collect()
        };
        // An older segment's rotten last record: the flag cuts only the newest segment's tail.
        let older = ShardFacts {
            path: "s".into(),
            segments: vec![seg(0, false, vec![tail_rot(100)], 100, 140), seg(1, true, vec![], 32, 32)],
            ..ShardFacts::default()
        };
        assert_eq!(flags(&older), [None]);
        let p = plan_shard(&older, RepairOptions { repair_checksum_tail: true });
        assert!(p.refused(), "the flag does not lift it: {:?}", p.actions);
        assert!(plan_shard(&older, RepairOptions::default()).to_succeed().is_some());
        // The newest segment's rotten tail behind damage no flag allows cutting.
        let behind =
            ShardFacts { path: "s".into(), segments: vec![seg(1, true, vec![rot, tail_rot(100)], 60, 140)], ..ShardFacts::default() };
        assert_eq!(flags(&behind), [None, None]);
        // Alone, the flag lifts it, and says so.
        let alone = ShardFacts { path: "s".into(), segments: vec![seg(1, true, vec![tail_rot(100)], 100, 140)], ..ShardFacts::default() };
        assert_eq!(flags(&alone), [Some("--repair-checksum-tail".into())]);
    }

    #[test]
    fn damage_in_an_older_segment_refuses_the_whole_shard_and_everything_remains() {
        let rot = finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 60, 90, Repair::Never);
        let torn = finding(CorruptionKind::Truncated { needed: 40, available: 9 }, 100, 109, Repair::Always);
        let mismatch = finding(CorruptionKind::IndexEntryMismatch { offset: 3, position: 77 }, 40, 56, Repair::Always);
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(0, false, vec![rot], 60, 200), seg(1, true, vec![torn], 100, 109)],
            indexes: vec![IndexFacts { segment_id: 0, problem: Some(IndexProblem::Finding(mismatch.clone())) }],
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        assert!(p.refused());
        assert_eq!(names(&p), ["cut", "rebuild-index", "rebuild-index", "refuse"]);
        assert_eq!(p.remaining_findings.len(), 3, "{:?}", p.remaining_findings);
        // With every finding of the index known (the full inspection), every one remains.
        let index = "00000000000000000000.index";
        let every: Vec<(String, Finding)> = (0..5)
            .map(|n| {
                (
                    index.into(),
                    finding(CorruptionKind::IndexEntryMismatch { offset: n, position: 77 }, 24 + 16 * n, 40 + 16 * n, Repair::Always),
                )
            })
            .collect();
        let p = plan_shard(&ShardFacts { index_findings: every.clone(), ..facts }, RepairOptions::default());
        let left: Vec<(&str, u64)> =
            p.remaining_findings.iter().filter(|f| f.file == index).map(|f| (f.file.as_str(), f.finding.position)).collect();
        assert_eq!(left, every.iter().map(|(f, x)| (f.as_str(), x.position())).collect::<Vec<_>>());
        assert_eq!(p.remaining_findings.len(), 7);
    }

    #[test]
    fn orphaned_indexes_are_removed_to_evidence_and_sound_ones_kept() {
        let index = |id: u64, size: u64| IndexFile { file: index_file_name(id), id, size };
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(0, false, vec![], 0, 200), SegmentFacts { unfinished: true, ..seg(1, true, vec![], 0, 0) }],
            indexes: vec![IndexFacts { segment_id: 0, problem: None }, IndexFacts { segment_id: 1, problem: None }],
            index_files: vec![index(0, 16), index(1, 6), index(7, 0)],
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        assert_eq!(names(&p), ["remove-unfinished", "remove-orphan-index", "remove-orphan-index"]);
        let Action::RemoveOrphanIndex { file, bytes, evidence, .. } = &p.actions[1] else { panic!() };
        assert_eq!(
            (file.as_str(), *bytes, evidence.as_deref()),
            ("00000000000000000001.index", 6, Some("00000000000000000001.index.cut-0"))
        );
        let Action::RemoveOrphanIndex { evidence, reason, .. } = &p.actions[2] else { panic!() };
        assert_eq!(*evidence, None, "nothing to keep from a 0-byte file");
        assert!(reason.contains("no segment has this id"), "{reason}");
        assert!(!p.refused() && p.remaining_findings.is_empty());
    }

    #[test]
    fn an_unfinished_newest_segment_is_removed_with_its_bytes_kept() {
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(0, false, vec![], 0, 500), SegmentFacts { unfinished: true, ..seg(1, true, vec![], 0, 17) }],
            indexes: vec![IndexFacts { segment_id: 1, problem: Some(IndexProblem::Missing) }],
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        assert_eq!(names(&p), ["remove-unfinished"]);
        let Action::RemoveUnfinished { bytes, evidence, .. } = &p.actions[0] else { panic!() };
        assert_eq!((*bytes, evidence.as_deref()), (17, Some("00000000000000000001.log.cut-0")));
        let empty = ShardFacts { segments: vec![SegmentFacts { unfinished: true, ..seg(1, true, vec![], 0, 0) }], ..facts };
        let Action::RemoveUnfinished { evidence, .. } = &plan_shard(&empty, RepairOptions::default()).actions[0] else { panic!() };
        assert_eq!(*evidence, None, "nothing to keep from a 0-byte file");
    }

    #[test]
    fn epochs_findings_remain_without_an_action() {
        let bad = finding(CorruptionKind::EpochsChecksum { stored: 1, computed: 2 }, 0, 44, Repair::Never);
        let facts = ShardFacts { path: "s".into(), other_findings: vec![("epochs".into(), bad)], ..ShardFacts::default() };
        let p = plan_shard(&facts, RepairOptions::default());
        assert!(p.actions.is_empty() && !p.refused());
        assert_eq!(p.remaining_findings[0].file, "epochs");
        assert!(!p.is_clean());
    }

    #[test]
    fn a_plan_differs_from_a_reviewed_one_by_its_work_not_its_evidence_names() {
        let cut = |position: u64, bytes: u64, evidence: &str| Action::Cut {
            file: "00000000000000000001.log".into(),
            position,
            bytes,
            kind: "Truncated".into(),
            reason: "torn".into(),
            evidence: evidence.into(),
        };
        let plan = |actions: Vec<Action>| ShardPlan { path: "p".into(), actions, remaining_findings: Vec::new(), remaining_omitted: 0 };
        let reviewed = plan(vec![cut(1064, 77, "00000000000000000001.log.cut-1064")]);
        assert_eq!(plan(vec![cut(1064, 77, "00000000000000000001.log.cut-1064-2")]).differs_from(&reviewed), None);
        assert_eq!(
            plan(vec![cut(1064, 36, "00000000000000000001.log.cut-1064")]).differs_from(&reviewed).as_deref(),
            Some(
                "action 1: the reviewed plan says cut 00000000000000000001.log at byte 1064 (77 bytes, Truncated); \
                 the shard now needs cut 00000000000000000001.log at byte 1064 (36 bytes, Truncated)"
            )
        );
        let rebuild = Action::RebuildIndex { file: "00000000000000000001.index".into(), reason: "cut".into() };
        assert_eq!(
            plan(vec![cut(1064, 77, "e"), rebuild]).differs_from(&reviewed).as_deref(),
            Some("action 2: the reviewed plan says nothing more; the shard now needs rebuild-index 00000000000000000001.index")
        );
        assert_eq!(
            plan(Vec::new()).differs_from(&reviewed).as_deref(),
            Some("action 1: the reviewed plan says cut 00000000000000000001.log at byte 1064 (77 bytes, Truncated); the shard now needs nothing more")
        );
    }

    /// Every name `name_for` gives (or, with `notes`, every note's name).
    fn all_taken(name_for: impl Fn(u32) -> String, notes: bool) -> Vec<String> {
        let names = (1..=MAX_EVIDENCE_ATTEMPTS).map(name_for);
        if notes {
            names.map(|n| crate::format::file_name::evidence_note_name(&n)).collect()
        } else {
            names.collect()
        }
    }

    #[test]
    fn a_cut_whose_every_evidence_name_or_note_is_taken_is_refused_and_changes_nothing() {
        let torn = finding(CorruptionKind::Truncated { needed: 40, available: 9 }, 100, 109, Repair::Always);
        for notes in [false, true] {
            let facts = ShardFacts {
                path: "s".into(),
                segments: vec![seg(1, true, vec![torn.clone()], 100, 109)],
                indexes: vec![IndexFacts { segment_id: 1, problem: None }],
                temporaries: vec!["epochs.tmp".into()],
                evidence_present: all_taken(|k| evidence_name(1, 100, k), notes),
                ..ShardFacts::default()
            };
            let p = plan_shard(&facts, RepairOptions::default());
            assert_eq!(names(&p), ["remove-temporary", "refuse"], "notes only: {notes}");
            assert!(p.refused() && p.actions[1].is_names_exhausted());
            let Action::Refuse { file, position, kind, reason, allowed_by } = &p.actions[1] else { panic!() };
            assert_eq!(
                (file.as_str(), *position, kind.as_str(), allowed_by),
                ("00000000000000000001.log", 100, EVIDENCE_NAMES_EXHAUSTED, &None)
            );
            assert!(reason.contains("00000000000000000001.log.cut-100 and its 9999 numbered variants"), "{reason}");
            assert!(reason.contains("move some evidence out of the shard's folder"), "{reason}");
            // The torn tail stays, and the remedy is room for evidence, never a replica's copy.
            assert_eq!(p.remaining_findings, vec![remaining("00000000000000000001.log", &torn)]);
            let said = p.to_succeed().unwrap();
            assert!(said.starts_with("recover refuses until some evidence") && !said.contains("replica"), "{said}");
            assert!(said.ends_with("recovery never replaces evidence; then run recover again"), "{said}");
            // One name free again: the cut, under that name.
            let mut one_free = facts.clone();
            one_free.evidence_present.pop();
            let p = plan_shard(&one_free, RepairOptions::default());
            assert_eq!(names(&p), ["remove-temporary", "cut", "rebuild-index"]);
            let Action::Cut { evidence, .. } = &p.actions[1] else { panic!() };
            assert_eq!(evidence, "00000000000000000001.log.cut-100-10000");
        }
    }

    #[test]
    fn a_whole_file_whose_every_evidence_name_is_taken_is_refused_at_byte_0() {
        let unfinished = SegmentFacts { unfinished: true, ..seg(2, true, vec![], 0, 17) };
        let orphan_bad = finding(CorruptionKind::IndexMagic { found: [0; 4] }, 0, 4, Repair::Always);
        let mut taken = all_taken(|k| evidence_name(2, 0, k), false);
        taken.extend(all_taken(|k| index_evidence_name(5, k), true));
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(1, false, vec![], 0, 200), unfinished],
            index_files: vec![IndexFile { file: index_file_name(5), id: 5, size: 8 }],
            index_findings: vec![(index_file_name(5), orphan_bad.clone())],
            evidence_present: taken,
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        let refusals: Vec<(&str, u64, &str)> = p
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::Refuse { file, position, kind, .. } => Some((file.as_str(), *position, kind.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            refusals,
            [("00000000000000000002.log", 0, EVIDENCE_NAMES_EXHAUSTED), ("00000000000000000005.index", 0, EVIDENCE_NAMES_EXHAUSTED)]
        );
        assert!(!p.actions.iter().any(|a| matches!(a, Action::RemoveUnfinished { .. } | Action::RemoveOrphanIndex { .. })));
        let Action::Refuse { reason, .. } = &p.actions[1] else { panic!() };
        assert!(reason.contains("00000000000000000005.index.cut-0 and its 9999 numbered variants"), "{reason}");
        assert_eq!(p.remaining_findings, vec![remaining("00000000000000000005.index", &orphan_bad)], "the orphan's finding stays");
        assert!(p.to_succeed().unwrap().contains("00000000000000000002.log and 00000000000000000005.index"));
    }

    /// A rotten tail of the newest segment that `--repair-checksum-tail`
    /// would cut, but whose cut has no free evidence name: the flag alone
    /// does not make recovery succeed, so the plan must not say it does —
    /// it refuses for the names too, and says to move evidence out (then
    /// run with the flag); with the flag, it refuses for the names alone.
    #[test]
    fn an_opt_in_tail_whose_evidence_names_are_taken_is_not_promised_to_the_flag_alone() {
        let tail = finding(CorruptionKind::RecordChecksum { stored: 1, computed: 2 }, 100, 140, Repair::OptIn);
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(1, true, vec![tail.clone()], 100, 140)],
            evidence_present: all_taken(|k| evidence_name(1, 100, k), false),
            ..ShardFacts::default()
        };
        let with_flag = plan_shard(&facts, RepairOptions { repair_checksum_tail: true });
        assert_eq!(names(&with_flag), ["refuse"]);
        assert!(with_flag.actions[0].is_names_exhausted());
        let p = plan_shard(&facts, RepairOptions::default());
        let kinds: Vec<(&str, Option<&str>)> = p
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::Refuse { kind, allowed_by, .. } => Some((kind.as_str(), allowed_by.as_deref())),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, [("RecordChecksum", Some(OPT_IN_FLAG)), (EVIDENCE_NAMES_EXHAUSTED, None)]);
        let said = p.to_succeed().expect("the flag alone would only refuse again");
        assert!(said.starts_with("recover refuses until some evidence") && !said.contains("replica"), "{said}");
        assert!(said.ends_with(&format!("then run recover again with {OPT_IN_FLAG}")), "{said}");
        assert_eq!(p.remaining_findings, vec![remaining("00000000000000000001.log", &tail)], "each finding once");
    }

    /// An unfinished newest segment whose evidence has no free name, and its
    /// damaged index (an orphan: it indexes nothing): the shard is refused,
    /// and the index's finding remains — once, as `inspect` lists it.
    #[test]
    fn an_unfinished_segments_damaged_index_left_by_a_refusal_remains_once() {
        let bad = finding(CorruptionKind::IndexMagic { found: [0; 4] }, 0, 4, Repair::Always);
        let unfinished = SegmentFacts { unfinished: true, ..seg(2, true, vec![], 0, 17) };
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(1, false, vec![], 0, 200), unfinished],
            indexes: vec![
                IndexFacts { segment_id: 1, problem: None },
                IndexFacts { segment_id: 2, problem: Some(IndexProblem::Finding(bad.clone())) },
            ],
            index_files: vec![
                IndexFile { file: index_file_name(1), id: 1, size: 8 },
                IndexFile { file: index_file_name(2), id: 2, size: 8 },
            ],
            index_findings: vec![(index_file_name(2), bad.clone())],
            evidence_present: all_taken(|k| evidence_name(2, 0, k), false),
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        assert!(p.refused(), "{:?}", p.actions);
        assert_eq!(p.remaining_findings, vec![remaining("00000000000000000002.index", &bad)]);
    }

    /// Two pieces of evidence to keep, only one of them without a free name
    /// (a torn tail whose cut has one, an orphaned index whose bytes have
    /// none): the whole shard is refused, the cut is listed but not run, both
    /// files' findings remain, and the words name only the index.
    #[test]
    fn one_piece_of_evidence_without_a_name_refuses_the_whole_shard() {
        let torn = finding(CorruptionKind::Truncated { needed: 40, available: 9 }, 100, 109, Repair::Always);
        let bad = finding(CorruptionKind::IndexMagic { found: [0; 4] }, 0, 4, Repair::Always);
        let facts = ShardFacts {
            path: "s".into(),
            segments: vec![seg(1, true, vec![torn.clone()], 100, 109)],
            indexes: vec![IndexFacts { segment_id: 1, problem: None }],
            index_files: vec![
                IndexFile { file: index_file_name(1), id: 1, size: 8 },
                IndexFile { file: index_file_name(5), id: 5, size: 8 },
            ],
            index_findings: vec![(index_file_name(5), bad.clone())],
            evidence_present: all_taken(|k| index_evidence_name(5, k), false),
            ..ShardFacts::default()
        };
        let p = plan_shard(&facts, RepairOptions::default());
        assert_eq!(names(&p), ["cut", "rebuild-index", "refuse"]);
        assert!(p.refused() && p.actions[2].is_names_exhausted() && p.actions[2].file() == "00000000000000000005.index");
        let Action::Cut { evidence, .. } = &p.actions[0] else { panic!() };
        assert_eq!(evidence, "00000000000000000001.log.cut-100", "the cut's own name is free");
        assert_eq!(p.remaining_findings, vec![remaining("00000000000000000001.log", &torn), remaining("00000000000000000005.index", &bad)]);
        let said = p.to_succeed().unwrap();
        assert!(said.contains("the evidence of 00000000000000000005.index could") && !said.contains("00000000000000000001.log"), "{said}");
    }
}
