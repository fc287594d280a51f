//! The page's state as plain data, the actions and the reducer (after Yew's
//! `function_todomvc`). Nothing here touches the browser: file bytes stay in
//! the shell, keyed by [`FileId`], so every transition is tested natively.
//!
//! Rows are what the overview lists: the dropped files' own reports, or —
//! when a shared report is open — the report's claims, each paired with a
//! dropped file once files are dropped and then checked against it. Rows,
//! the problem list and the kinds are derived once per change of files,
//! report or filter, never per render.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use felix_codec::doc::report::{FileReport, FindingReport};
use felix_codec::doc::{sentence, text};

use crate::model::group::{shard_of, Dropped};
use crate::model::hash::Hashed;
use crate::model::problems::{self, Filter, Severity};
use crate::model::scan::Scanned;
use crate::model::verify::{self, Check, Named};
use crate::share::shared::{At, Provenance, SharedReport, Source};
use crate::worker::error::ScanError;

/// A dropped file, for as long as it is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A row of the overview.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowId {
    /// A dropped file's own report.
    File(FileId),
    /// The n-th file of the shared report.
    Shared(u32),
}

/// A finding of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProblemId {
    /// The row.
    pub row: RowId,
    /// The finding's index in the row's report.
    pub finding: u32,
}

/// Most provisional findings kept while scanning.
pub const MAX_LIVE: usize = 1_000;

/// One dropped file.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// Its id.
    pub id: FileId,
    /// Path as dropped.
    pub path: String,
    /// Size.
    pub size: u64,
    /// Bytes scanned so far.
    pub done: u64,
    /// The scan, once finished.
    pub scanned: Option<Rc<Scanned>>,
    /// Its hashes, once computed (they may come before or after the scan).
    pub hashed: Option<Hashed>,
    /// Its report with the hashes known so far, shared with the rows
    /// (made when the scan arrives, and again when the hashes do).
    pub report: Option<Rc<FileReport>>,
}

impl Loaded {
    fn make_report(&mut self) {
        self.report = self.scanned.as_ref().map(|s| {
            let mut r = s.report.clone();
            if let Some(h) = &self.hashed {
                h.fill(&mut r);
            }
            Rc::new(r)
        });
    }
}

/// A row of the overview.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Its id.
    pub id: RowId,
    /// The report shown (a scan's, or a shared claim).
    pub report: Rc<FileReport>,
    /// The dropped file whose bytes the detail views show.
    pub file: Option<FileId>,
    /// For a shared claim with files dropped: whether it holds.
    pub check: Option<Check>,
}

/// A shared report on the page.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// Where it came from.
    pub source: Source,
    /// What it says about itself.
    pub provenance: Provenance,
    /// Its files.
    pub files: Vec<Rc<FileReport>>,
    /// The dropped file paired with each of its files.
    pub pairing: Vec<Option<FileId>>,
}

/// Where a shared link points, and what the dropped files make of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkPoint {
    /// The file, as the report lists it, and the bytes.
    pub at: At,
    /// The report's row of that file.
    pub row: RowId,
    /// What the dropped files make of it.
    pub status: PointStatus,
}

/// What the dropped files make of the bytes a link points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointStatus {
    /// No dropped file pairs with the file the link names.
    NotDropped,
    /// The paired file is still being read.
    Reading,
    /// The paired file holds them (`cut_at`: its size, when the range runs past it).
    Held {
        /// The dropped file's size, when the range ends past it.
        cut_at: Option<u64>,
        /// Whether the dropped file is the report's (its check matches);
        /// `None` while that is being checked. A file that differs holds
        /// bytes there, but maybe not the ones the link meant.
        same: Option<bool>,
    },
    /// The paired file ends before them.
    PastEnd {
        /// The dropped file's size.
        size: u64,
    },
}

/// A shard's verdict (or a lone file's), as the page shows it first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The shard's name, or the lone file's path.
    pub label: String,
    /// The codec's sentence ([`felix_codec::doc::sentence::sentence`]).
    pub sentence: String,
    /// The span of time its records cover, in the codec's words
    /// ([`felix_codec::doc::text::shard_time_words`]); none for a lone file.
    pub time: Option<String>,
}

impl Verdict {
    /// The sentence in runs of plain text and code (`false`/`true`): a
    /// command the codec quotes in backticks ("that `recover` would fix")
    /// is shown as code. An unpaired backtick stays text.
    #[must_use]
    pub fn spans(&self) -> Vec<(bool, &str)> {
        code_spans(&self.sentence)
    }
}

/// The codec's words in runs of plain text and code (`false`/`true`): what
/// it quotes in backticks is code. An unpaired backtick stays text.
#[must_use]
pub fn code_spans(text: &str) -> Vec<(bool, &str)> {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return vec![(false, text)];
    }
    parts.into_iter().enumerate().filter(|(_, p)| !p.is_empty()).map(|(i, p)| (i % 2 == 1, p)).collect()
}

/// A claim's row once its file matches: the dropped file's report — its
/// own messages and notes — under the claim's path and shard (where the
/// report put it). Everything the check compares is the same in both.
fn own_words(claim: &FileReport, actual: &FileReport) -> FileReport {
    FileReport { path: claim.path.clone(), shard: claim.shard.clone(), ..actual.clone() }
}

/// Counts of the checks, for the banner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Rows that match.
    pub matches: usize,
    /// Rows that differ.
    pub differs: usize,
    /// Rows with no dropped file.
    pub no_file: usize,
    /// Rows still being checked.
    pub waiting: usize,
}

/// The page's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// Files dropped, in order.
    pub files: Vec<Loaded>,
    /// The shared report shown, if any.
    pub claim: Option<Rc<Claim>>,
    /// The overview's rows (derived).
    pub rows: Rc<Vec<Row>>,
    /// Every problem passing the filter (derived).
    pub problems: Rc<Vec<ProblemId>>,
    /// Finding kinds present, for the filter menu (derived).
    pub kinds: Rc<Vec<String>>,
    /// Each shard's (or lone file's) verdict in one sentence, from the codec (derived).
    pub verdicts: Rc<Vec<Verdict>>,
    /// The row shown in the detail views.
    pub selected: Option<RowId>,
    /// The byte range selected (highlighted and scrolled to).
    pub range: Option<(u64, u64)>,
    /// The current problem.
    pub problem: Option<ProblemId>,
    /// The problem filter.
    pub filter: Filter,
    /// A scan is running.
    pub scanning: bool,
    /// Milliseconds from drop to the first finding, and to the end.
    pub timings: (Option<f64>, Option<f64>),
    /// Milliseconds from drop to the last file's hash.
    pub hashed_ms: Option<f64>,
    /// The last error, shown in a banner.
    pub error: Option<String>,
    /// Whether that error is the page address's link's (it goes when the
    /// address stops carrying that link).
    pub error_from_link: bool,
    /// The last permalink made.
    pub permalink: Option<String>,
    /// Findings met while scanning, before the reports are final.
    pub live: Rc<Vec<(FileId, FindingReport)>>,
    /// Bumped when the hex view should take the keyboard focus (Enter on a problem).
    pub focus_hex: u32,
    /// The person chose the selection (until then, the first problem is selected as results arrive).
    pub chosen: bool,
    /// Each claim row's own words once its file matches ([`own_words`]),
    /// with the dropped report they were made from (by address): made once,
    /// so a row that did not change is not drawn again.
    matched: Vec<Option<(usize, Rc<FileReport>)>>,
}

/// What can happen.
#[derive(Debug)]
pub enum Action {
    /// New files (ids chosen by the shell): replaces the files loaded.
    Load(Vec<Dropped>),
    /// `done` bytes of a file read.
    Progress {
        /// The file.
        file: FileId,
        /// Bytes read.
        done: u64,
    },
    /// Findings met while reading a file (provisional verdicts).
    Met {
        /// The file.
        file: FileId,
        /// The findings.
        findings: Vec<FindingReport>,
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// Files scanned (a group's, or several small groups'): each one's final results.
    GroupScanned {
        /// Each file's results (its id inside).
        items: Vec<Scanned>,
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// Every file is scanned.
    ScanDone {
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// Files hashed.
    Hashed {
        /// Each file and its hashes.
        items: Vec<(FileId, Hashed)>,
        /// Milliseconds since the drop.
        ms: f64,
    },
    /// The scan stopped on an error (shown in the banner).
    ScanFailed(ScanError),
    /// The person cancelled the scan.
    ScanCancelled,
    /// Select a row and optionally a byte range.
    Select(RowId, Option<(u64, u64)>),
    /// Select a problem (its row and bytes).
    Problem(ProblemId),
    /// Step to the next (`true`) or previous problem.
    Step(bool),
    /// Jump to the current problem's bytes and give the hex view the keyboard.
    Jump,
    /// Change the filter.
    Filter(Filter),
    /// Open a shared report (from a link, a JSON file or a paste).
    Open(SharedReport),
    /// Close the shared report: show the dropped files' own reports.
    Close,
    /// An error to show.
    Error(String),
    /// The report link in the page's address was refused, in these words.
    LinkRefused(String),
    /// The address no longer carries a report link (a diff link or nothing
    /// replaced it): the error the last one left goes.
    LinkLeft,
    /// A permalink was made.
    Permalink(String),
}

impl State {
    /// The loaded file with `id`.
    #[must_use]
    pub fn file(&self, id: FileId) -> Option<&Loaded> {
        self.files.iter().find(|f| f.id == id)
    }

    /// The row with `id`.
    #[must_use]
    pub fn row(&self, id: RowId) -> Option<&Row> {
        self.rows.iter().find(|r| r.id == id)
    }

    /// The finding a problem names.
    #[must_use]
    pub fn finding(&self, p: ProblemId) -> Option<&FindingReport> {
        self.row(p.row)?.report.findings.get(p.finding as usize)
    }

    /// The selected row's file, once scanned: what the detail views show.
    #[must_use]
    pub fn detail(&self) -> Option<(&Row, &Loaded, &Rc<Scanned>)> {
        let row = self.row(self.selected?)?;
        let file = self.file(row.file?)?;
        Some((row, file, file.scanned.as_ref()?))
    }

    /// The bytes selected, as a link points at them: the shown file's path
    /// (as its report lists it) and the range — when a file's bytes are shown.
    #[must_use]
    pub fn pointed(&self) -> Option<At> {
        let (row, _, _) = self.detail()?;
        let (start, end) = self.range.filter(|(s, e)| s < e)?;
        Some(At { file: row.report.path.clone(), start, end })
    }

    /// Dropped files no claim of the shared report pairs with.
    #[must_use]
    pub fn unpaired(&self) -> Vec<&Loaded> {
        let Some(claim) = &self.claim else { return Vec::new() };
        let paired: HashSet<FileId> = claim.pairing.iter().flatten().copied().collect();
        self.files.iter().filter(|f| !paired.contains(&f.id)).collect()
    }

    /// How the checks stand.
    #[must_use]
    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for r in self.rows.iter() {
            match &r.check {
                Some(Check::Matches) => t.matches += 1,
                Some(Check::Differs(_)) => t.differs += 1,
                Some(Check::NoFile) => t.no_file += 1,
                Some(Check::Waiting) => t.waiting += 1,
                None => {}
            }
        }
        t
    }

    fn derive(&mut self) {
        let by_id: HashMap<FileId, &Loaded> = self.files.iter().map(|f| (f.id, f)).collect();
        let mut matched = std::mem::take(&mut self.matched);
        matched.resize(self.claim.as_ref().map_or(0, |c| c.files.len()), None);
        let rows: Vec<Row> = match &self.claim {
            Some(claim) => claim
                .files
                .iter()
                .enumerate()
                .map(|(i, report)| {
                    let file = claim.pairing.get(i).copied().flatten();
                    let actual = file.and_then(|id| by_id.get(&id)).and_then(|f| f.report.as_ref());
                    let check = (!self.files.is_empty()).then(|| match file.and_then(|id| by_id.get(&id)) {
                        None => Check::NoFile,
                        Some(Loaded { report: None, .. }) => Check::Waiting,
                        Some(Loaded { report: Some(r), .. }) => verify::check(report, r),
                    });
                    // Matched: the file's own words, not the report's (its messages and notes are
                    // not compared: a stranger's "harmless" never stands beside "matches").
                    let shown = match (&check, actual) {
                        (Some(Check::Matches), Some(actual)) => {
                            let key = Rc::as_ptr(actual) as usize;
                            match matched.get(i).cloned().flatten() {
                                Some((k, view)) if k == key => Some(view),
                                _ => Some(Rc::new(own_words(report, actual))),
                            }
                            .inspect(|view| {
                                if let Some(slot) = matched.get_mut(i) {
                                    *slot = Some((key, Rc::clone(view)));
                                }
                            })
                        }
                        _ => None,
                    };
                    let report = shown.unwrap_or_else(|| Rc::clone(report));
                    Row { id: RowId::Shared(u32::try_from(i).unwrap_or(u32::MAX)), report, file, check }
                })
                .collect(),
            None => self
                .files
                .iter()
                .filter_map(|f| Some(Row { id: RowId::File(f.id), report: Rc::clone(f.report.as_ref()?), file: Some(f.id), check: None }))
                .collect(),
        };
        let list = problems::list(rows.iter().map(|r| r.report.as_ref()), &self.filter);
        self.problems = Rc::new(
            list.iter().filter_map(|p| Some(ProblemId { row: rows.get(p.file)?.id, finding: u32::try_from(p.finding).ok()? })).collect(),
        );
        self.kinds = Rc::new(problems::kinds(rows.iter().map(|r| r.report.as_ref())));
        let reports: Vec<&FileReport> = rows.iter().map(|r| r.report.as_ref()).collect();
        self.verdicts = Rc::new(
            sentence::by_shard(&reports)
                .into_iter()
                .map(|v| Verdict {
                    label: v.label(&reports).to_string(),
                    time: text::shard_time_words(reports.get(v.files.clone()).unwrap_or(&[])),
                    sentence: v.sentence,
                })
                .collect(),
        );
        self.rows = Rc::new(rows);
        self.matched = matched;
    }

    fn select_problem(&mut self, p: ProblemId) {
        let Some(f) = self.finding(p) else { return };
        self.range = Some((f.position, f.end.max(f.position.saturating_add(1))));
        self.selected = Some(p.row);
        self.problem = Some(p);
    }

    fn select_first(&mut self) {
        if self.chosen || self.select_pointed() {
            return;
        }
        // The most severe problem (the first of them), else the first file.
        if let Some(worst) = self.problems.iter().copied().min_by_key(|p| std::cmp::Reverse(self.finding(*p).map(Severity::of))) {
            self.select_problem(worst);
        } else {
            self.selected = self.rows.iter().find(|r| r.file.is_some()).map(|r| r.id);
        }
    }

    /// Where the shared link points, and whether a dropped file holds those
    /// bytes: the banner says so, so a link is never silently not followed.
    #[must_use]
    pub fn link_points_at(&self) -> Option<LinkPoint> {
        let claim = self.claim.as_ref()?;
        let at = claim.provenance.at.as_ref()?;
        let i = claim.files.iter().position(|f| f.path == at.file)?;
        let row = RowId::Shared(u32::try_from(i).ok()?);
        let same = match self.row(row).and_then(|r| r.check.as_ref()) {
            Some(Check::Matches) => Some(true),
            Some(Check::Differs(_)) => Some(false),
            _ => None,
        };
        let status = match claim.pairing.get(i).copied().flatten().and_then(|id| self.file(id)) {
            None => PointStatus::NotDropped,
            Some(f) if f.scanned.is_none() => PointStatus::Reading,
            Some(f) if at.start >= f.size => PointStatus::PastEnd { size: f.size },
            Some(f) => PointStatus::Held { cut_at: (at.end > f.size).then_some(f.size), same },
        };
        Some(LinkPoint { at: at.clone(), row, status })
    }

    /// Selects the bytes the shared link points at ([`Self::link_points_at`]),
    /// once the file it names is paired with a dropped file and scanned (the
    /// range cut to that file's size; none when the file ends before it).
    fn select_pointed(&mut self) -> bool {
        let Some(point) = self.link_points_at() else { return false };
        self.range = match point.status {
            PointStatus::NotDropped | PointStatus::Reading => return false,
            PointStatus::PastEnd { .. } => None,
            PointStatus::Held { cut_at, .. } => Some((point.at.start, cut_at.unwrap_or(point.at.end))),
        };
        self.selected = Some(point.row);
        self.problem = None;
        true
    }

    fn load(&mut self, files: Vec<Dropped>) {
        let loaded: Vec<Loaded> = files
            .into_iter()
            .map(|d| Loaded { id: FileId(d.id), path: d.path, size: d.size, done: 0, scanned: None, hashed: None, report: None })
            .collect();
        let claim = self.claim.as_ref().map(|c| {
            let claimed: Vec<Named<'_>> = c.files.iter().map(|f| Named { shard: f.shard.as_deref(), path: &f.path }).collect();
            let dropped: Vec<Named<'_>> = loaded.iter().map(|f| Named { shard: shard_of(&f.path), path: &f.path }).collect();
            let pairing = verify::pair(&claimed, &dropped).into_iter().map(|i| i.and_then(|i| loaded.get(i)).map(|f| f.id)).collect();
            Rc::new(Claim { pairing, ..(**c).clone() })
        });
        let keep = claim.is_some();
        *self = State {
            files: loaded,
            claim,
            scanning: true,
            filter: self.filter.clone(),
            selected: self.selected.filter(|_| keep),
            problem: self.problem.filter(|_| keep),
            range: self.range.filter(|_| keep),
            chosen: self.chosen && keep,
            ..State::default()
        };
        self.derive();
    }

    fn progress(&mut self, file: FileId, done: u64) {
        if let Some(f) = self.files.iter_mut().find(|f| f.id == file) {
            f.done = done.min(f.size);
        }
    }

    fn met(&mut self, file: FileId, findings: Vec<FindingReport>, ms: f64) {
        if self.file(file).is_none() {
            return;
        }
        if self.timings.0.is_none() && !findings.is_empty() {
            self.timings.0 = Some(ms);
        }
        let room = MAX_LIVE.saturating_sub(self.live.len());
        if room > 0 {
            let mut live = (*self.live).clone();
            live.extend(findings.into_iter().take(room).map(|f| (file, f)));
            self.live = Rc::new(live);
        }
    }

    fn scanned(&mut self, items: Vec<Scanned>, ms: f64) {
        let mut any = false;
        let at: HashMap<FileId, usize> = self.files.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
        for s in items {
            let Some(f) = at.get(&FileId(s.file)).and_then(|i| self.files.get_mut(*i)) else { continue };
            if self.timings.0.is_none() && !s.report.findings.is_empty() {
                self.timings.0 = Some(ms);
            }
            f.done = f.size;
            f.scanned = Some(Rc::new(s));
            f.make_report();
            any = true;
        }
        if any {
            self.derive();
            self.select_first();
        }
    }

    fn hashed(&mut self, items: Vec<(FileId, Hashed)>, ms: f64) {
        let at: HashMap<FileId, usize> = self.files.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
        let mut any = false;
        for (file, h) in items {
            let Some(f) = at.get(&file).and_then(|i| self.files.get_mut(*i)) else { continue };
            f.hashed = Some(h);
            f.make_report();
            any = true;
        }
        if any {
            if self.all_hashed() {
                self.hashed_ms = Some(ms);
            }
            self.derive();
        }
    }

    /// The scan stopped: `why`, in the banner.
    fn stopped(&mut self, why: String) {
        (self.error, self.error_from_link) = (Some(why), false);
        self.scanning = false;
    }

    /// Whether every dropped file's report is final: scanned and hashed (what
    /// the JSON export waits for, so it equals `inspect --json`).
    #[must_use]
    pub fn all_hashed(&self) -> bool {
        self.files.iter().all(|f| f.hashed.is_some())
    }

    /// Applies `action` (the reducer, as a plain function).
    #[must_use]
    pub fn apply(mut self, action: Action) -> Self {
        match action {
            Action::Load(files) => self.load(files),
            Action::Progress { file, done } => self.progress(file, done),
            Action::Met { file, findings, ms } => self.met(file, findings, ms),
            Action::GroupScanned { items, ms } => self.scanned(items, ms),
            Action::ScanDone { ms } => {
                self.scanning = false;
                self.timings.1 = Some(ms);
            }
            Action::Hashed { items, ms } => self.hashed(items, ms),
            Action::ScanFailed(e) => self.stopped(e.to_string()),
            Action::ScanCancelled => self.stopped("scan cancelled".into()),
            Action::Select(row, range) => {
                if self.row(row).is_some() {
                    self.selected = Some(row);
                    self.range = range;
                    self.chosen = true;
                }
            }
            Action::Problem(p) => {
                self.select_problem(p);
                self.chosen = true;
            }
            Action::Step(forward) => {
                self.chosen = true;
                if let Some(p) = problems::step(&self.problems, self.problem, forward) {
                    self.select_problem(p);
                }
            }
            Action::Jump => {
                if let Some(p) = self.problem {
                    self.select_problem(p);
                    self.focus_hex = self.focus_hex.wrapping_add(1);
                }
            }
            Action::Filter(f) => {
                self.filter = f;
                self.derive();
            }
            Action::Open(shared) => {
                let files = shared.report.files.into_iter().map(Rc::new).collect::<Vec<_>>();
                let pairing = vec![None; files.len()];
                self = State {
                    claim: Some(Rc::new(Claim { source: shared.source, provenance: shared.provenance, files, pairing })),
                    ..State::default()
                };
                self.derive();
                self.select_first();
            }
            Action::Close => {
                self.claim = None;
                self.selected = None;
                self.problem = None;
                self.range = None;
                self.chosen = false;
                self.derive();
                self.select_first();
            }
            // An error of the page's own (a link too large to make, a report refused)
            // does not stop a scan; the scan's own errors come as `ScanFailed`.
            Action::Error(e) => (self.error, self.error_from_link) = (Some(e), false),
            Action::LinkRefused(e) => (self.error, self.error_from_link) = (Some(e), true),
            Action::LinkLeft => {
                if self.error_from_link {
                    (self.error, self.error_from_link) = (None, false);
                }
            }
            Action::Permalink(p) => self.permalink = Some(p),
        }
        self
    }
}

impl yew::Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(Rc::unwrap_or_clone(self).apply(action))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_verdict_shows_the_command_it_quotes_as_code() {
        let v = |s: &str| super::Verdict { label: "s".into(), sentence: s.into(), time: None };
        let said = v("a torn tail that `recover` would fix");
        assert_eq!(said.spans(), [(false, "a torn tail that "), (true, "recover"), (false, " would fix")]);
        assert_eq!(v("clean: nothing to do").spans(), [(false, "clean: nothing to do")]);
        assert_eq!(v("`a` and `b`").spans(), [(true, "a"), (false, " and "), (true, "b")]);
        assert_eq!(v("one ` alone").spans(), [(false, "one ` alone")]);
    }

    use super::*;
    use crate::model::sample;
    use crate::model::scan::scan_all;
    use crate::share::shared;
    use felix_codec::doc::report::Report;

    fn dropped(files: &[(String, Vec<u8>)]) -> Vec<Dropped> {
        files.iter().enumerate().map(|(i, (p, b))| Dropped { id: i as u32 + 100, path: p.clone(), size: b.len() as u64 }).collect()
    }

    /// Scans `files` as the workers would and feeds the results one group at
    /// a time, last group first (reports without their hashes, as the scan
    /// worker sends them), then the hashes (as the hash worker sends them).
    fn scan_backwards(s: State, files: &[(String, Vec<u8>)]) -> State {
        hash_all(scan_only(s, files), files)
    }

    fn scan_only(mut s: State, files: &[(String, Vec<u8>)]) -> State {
        let mut scanned = scan_all(files);
        for x in &mut scanned {
            x.file += 100;
            x.report.hash = None;
        }
        for x in scanned.into_iter().rev() {
            s = s.apply(Action::GroupScanned { items: vec![x], ms: 1.0 });
        }
        s.apply(Action::ScanDone { ms: 2.0 })
    }

    fn hash_all(s: State, files: &[(String, Vec<u8>)]) -> State {
        let items =
            files.iter().enumerate().map(|(i, (_, b))| (FileId(i as u32 + 100), crate::model::hash::hash_bytes(b, false))).collect();
        s.apply(Action::Hashed { items, ms: 3.0 })
    }

    #[test]
    fn the_verdict_is_shown_before_the_hash_and_the_report_completes_after() {
        let files = sample::files();
        let s = scan_only(State::default().apply(Action::Load(dropped(&files))), &files);
        assert!(!s.scanning && s.rows.len() == 7, "every verdict is in");
        assert!(s.rows.iter().all(|r| r.report.hash.is_none()) && !s.all_hashed() && s.hashed_ms.is_none());
        let s = hash_all(s, &files);
        assert!(s.all_hashed() && s.hashed_ms == Some(3.0));
        let want = scan_all(&files);
        for (row, w) in s.rows.iter().zip(&want) {
            assert_eq!(*row.report, w.report, "the page's final report is the scan's plus its hashes");
        }
        // Hashes may also come first: the report is made when the scan arrives.
        let s = hash_all(State::default().apply(Action::Load(dropped(&files))), &files);
        assert!(s.rows.is_empty() && s.all_hashed());
        let s = scan_only(s, &files);
        assert!(s.rows.iter().zip(&want).all(|(r, w)| *r.report == w.report));
    }

    #[test]
    fn a_claim_waits_for_the_hash_not_only_the_verdict() {
        let files = sample::files();
        let s = State::default().apply(Action::Open(shared_from(&files))).apply(Action::Load(dropped(&files)));
        let s = scan_only(s, &files);
        assert_eq!(s.tally(), Tally { waiting: 7, ..Tally::default() }, "same findings, but the bytes are not yet known to be the same");
        let s = hash_all(s, &files);
        assert_eq!(s.tally(), Tally { matches: 7, ..Tally::default() });
    }

    #[test]
    fn selection_is_by_id_even_while_files_finish_out_of_order() {
        let files = sample::files();
        let mut s = State::default().apply(Action::Load(dropped(&files)));
        assert!(s.scanning && s.rows.is_empty());
        // Only the last file has finished: its row is the only one, and selecting it shows it.
        let mut last = scan_all(&files).pop().unwrap();
        last.file += 100;
        s = s.apply(Action::GroupScanned { items: vec![last], ms: 1.0 });
        assert_eq!(s.rows.len(), 1);
        let id = RowId::File(FileId(106));
        s = s.apply(Action::Select(id, None));
        assert_eq!(s.detail().unwrap().1.path, files[6].0);
        // Every file done: selecting the first row by its id shows the first file, not the n-th scanned.
        s = scan_backwards(s, &files);
        s = s.apply(Action::Select(RowId::File(FileId(100)), None));
        assert_eq!(s.detail().unwrap().1.path, files[0].0);
        assert!(!s.scanning);
        // A row that does not exist changes nothing.
        let before = s.selected;
        s = s.apply(Action::Select(RowId::File(FileId(7)), None));
        assert_eq!(s.selected, before);
    }

    #[test]
    fn the_first_problem_is_selected_and_n_p_walk_and_wrap() {
        let files = sample::files();
        let s = scan_backwards(State::default().apply(Action::Load(dropped(&files))), &files);
        assert_eq!(s.problems.len(), 3);
        // The most severe problem is selected first: the rot recovery refuses, not the stale index listed before it.
        assert_eq!(s.problem, Some(s.problems[1]));
        assert_eq!(s.finding(s.problems[1]).map(|f| f.kind.as_str()), Some("RecordChecksum"));
        assert_eq!(s.selected, Some(s.problems[1].row));
        let f = s.finding(s.problems[1]).unwrap().clone();
        assert_eq!(s.range, Some((f.position, f.end.max(f.position + 1))));
        let s = s.apply(Action::Step(true)).apply(Action::Step(true)).apply(Action::Step(true));
        assert_eq!(s.problem, Some(s.problems[1]), "wraps");
        let s = s.apply(Action::Step(true)).apply(Action::Step(true));
        assert_eq!(s.problem, Some(s.problems[0]));
        let s = s.apply(Action::Step(false));
        assert_eq!(s.problem, Some(s.problems[2]));
        let focus = s.focus_hex;
        let s = s.apply(Action::Jump);
        assert_eq!((s.focus_hex, s.problem), (focus + 1, Some(s.problems[2])));
        let s = s.apply(Action::Filter(Filter { kind: Some("Truncated".into()), min_severity: None }));
        assert_eq!(s.problems.len(), 1);
        assert_eq!(*s.kinds, vec!["IndexEntryMismatch", "RecordChecksum", "Truncated"]);
    }

    #[test]
    fn messages_for_files_no_longer_loaded_are_ignored() {
        let files = sample::files();
        let s = State::default().apply(Action::Load(dropped(&files[..1])));
        let mut stale = scan_all(&files[..1]).pop().unwrap();
        stale.file = 5; // an id from an earlier drop
        let s = s
            .apply(Action::GroupScanned { items: vec![stale], ms: 1.0 })
            .apply(Action::Progress { file: FileId(5), done: 9 })
            .apply(Action::Met { file: FileId(5), findings: vec![], ms: 1.0 })
            .apply(Action::Hashed { items: vec![(FileId(5), crate::model::hash::hash_bytes(b"", false))], ms: 1.0 });
        assert!(s.rows.is_empty() && s.live.is_empty() && s.hashed_ms.is_none());
        assert_eq!((s.files[0].done, s.files[0].hashed.is_none()), (0, true));
    }

    fn shared_from(files: &[(String, Vec<u8>)]) -> SharedReport {
        let report = Report::new(scan_all(files).into_iter().map(|s| s.report).collect());
        SharedReport { report, source: shared::Source::Link, provenance: Provenance::default() }
    }

    #[test]
    fn a_link_that_points_at_bytes_selects_them_once_the_file_is_dropped_and_scanned() {
        let files = sample::files();
        let mut shared = shared_from(&files);
        let path = shared.report.files[2].path.clone();
        shared.provenance.at = Some(shared::At { file: path.clone(), start: 1692, end: 1720 });
        let s = State::default().apply(Action::Open(shared));
        let s = s.apply(Action::Load(dropped(&files)));
        let s = scan_backwards(s, &files);
        assert_eq!(s.selected, Some(RowId::Shared(2)));
        assert_eq!(s.range, Some((1692, 1720)));
        assert_eq!(s.detail().map(|(_, f, _)| f.path.clone()), Some(path.clone()));
        assert_eq!(s.pointed(), Some(shared::At { file: path.clone(), start: 1692, end: 1720 }));
        // A person's choice stands; a dropped file shorter than the link says cuts the range.
        let s = s.apply(Action::Select(RowId::Shared(0), None));
        assert_eq!(s.selected, Some(RowId::Shared(0)));
        let mut shorter = files.clone();
        shorter[2].1.truncate(1700);
        let mut shared = shared_from(&files);
        shared.provenance.at = Some(shared::At { file: path, start: 1692, end: 1720 });
        let s = scan_backwards(State::default().apply(Action::Open(shared)).apply(Action::Load(dropped(&shorter))), &shorter);
        assert_eq!((s.selected, s.range), (Some(RowId::Shared(2)), Some((1692, 1700))));
        assert_eq!(s.link_points_at().map(|p| p.status), Some(PointStatus::Held { cut_at: Some(1700), same: Some(false) }));
    }

    #[test]
    fn the_banner_is_told_whether_the_dropped_files_hold_the_bytes_a_link_points_at() {
        let files = sample::files();
        let mut shared = shared_from(&files);
        let path = shared.report.files[2].path.clone();
        let at = shared::At { file: path, start: 1692, end: 1720 };
        shared.provenance.at = Some(at.clone());
        let opened = State::default().apply(Action::Open(shared));
        let status = |s: &State| s.link_points_at().map(|p| (p.at, p.status));
        assert_eq!(status(&opened), Some((at.clone(), PointStatus::NotDropped)), "nothing dropped yet");
        // Only the other files dropped: the one it names is not.
        let others: Vec<_> = files.iter().enumerate().filter(|(i, _)| *i != 2).map(|(_, f)| f.clone()).collect();
        let s = scan_backwards(opened.clone().apply(Action::Load(dropped(&others))), &others);
        assert_eq!(status(&s), Some((at.clone(), PointStatus::NotDropped)));
        // Dropped but still being read, then held.
        let s = opened.clone().apply(Action::Load(dropped(&files)));
        assert_eq!(status(&s), Some((at.clone(), PointStatus::Reading)));
        let s = scan_backwards(s, &files);
        assert_eq!(status(&s), Some((at.clone(), PointStatus::Held { cut_at: None, same: Some(true) })));
        // A file of that name whose bytes differ from the report's: held, but not the report's.
        let mut rotten = files.clone();
        rotten[2].1[40] ^= 1;
        let s = scan_backwards(opened.clone().apply(Action::Load(dropped(&rotten))), &rotten);
        assert_eq!(status(&s), Some((at.clone(), PointStatus::Held { cut_at: None, same: Some(false) })));
        // A file of the same name that ends before the bytes.
        let mut short = files.clone();
        short[2].1.truncate(1000);
        let s = scan_backwards(opened.apply(Action::Load(dropped(&short))), &short);
        assert_eq!(status(&s), Some((at, PointStatus::PastEnd { size: 1000 })));
        assert_eq!(State::default().link_points_at(), None);
    }

    #[test]
    fn a_shared_report_is_a_claim_until_the_same_files_match() {
        let files = sample::files();
        let s = State::default().apply(Action::Open(shared_from(&files)));
        assert_eq!(s.rows.len(), 7);
        assert!(s.rows.iter().all(|r| r.check.is_none() && r.file.is_none()), "not checked against files");
        assert!(s.detail().is_none(), "no bytes to show");
        let s = s.apply(Action::Load(dropped(&files)));
        assert_eq!(s.tally(), Tally { waiting: 7, ..Tally::default() });
        let s = scan_backwards(s, &files);
        assert_eq!(s.tally(), Tally { matches: 7, ..Tally::default() });
        assert!(s.detail().is_some(), "the selected claim now shows its file's bytes");
        assert!(s.unpaired().is_empty());
    }

    /// A report whose words were forged (a finding's message, a note) but
    /// whose facts match the files: once matched, each row shows the file's
    /// own words, never the stranger's beside "matches" (issue 18's third review).
    #[test]
    fn a_matched_claim_shows_the_files_own_words() {
        let files = sample::files();
        let mut shared = shared_from(&files);
        let i = shared.report.files.iter().position(|f| !f.findings.is_empty()).unwrap();
        shared.report.files[i].findings[0].message = "harmless".into();
        shared.report.files[i].notes.push("all good: trust me".into());
        let claimed = shared.report.files[i].clone();
        let s = scan_backwards(State::default().apply(Action::Open(shared)).apply(Action::Load(dropped(&files))), &files);
        assert_eq!(s.rows[i].check, Some(Check::Matches), "messages and notes are not compared");
        let shown = &s.rows[i].report;
        assert_ne!(shown.findings[0].message, "harmless");
        assert!(!shown.notes.iter().any(|n| n == "all good: trust me"), "{:?}", shown.notes);
        assert_eq!((&shown.path, &shown.shard), (&claimed.path, &claimed.shard), "where the report put it");
        // Made once: a later action that changes nothing keeps the same row (it is not drawn again).
        let before = Rc::clone(&s.rows[i].report);
        let s = s.apply(Action::Filter(Filter::default()));
        assert!(Rc::ptr_eq(&before, &s.rows[i].report));
        // Before the files are in, the claim's words are shown as the claim's.
        let s = State::default().apply(Action::Open({
            let mut shared = shared_from(&files);
            shared.report.files[i].notes.push("all good: trust me".into());
            shared
        }));
        assert!(s.rows[i].report.notes.iter().any(|n| n == "all good: trust me"));
    }

    #[test]
    fn a_changed_or_missing_file_differs_and_says_why() {
        let files = sample::files();
        let s = State::default().apply(Action::Open(shared_from(&files)));
        let mut changed = files[..2].to_vec();
        changed[1].1[30] ^= 1; // index 0, entry 0's offset
        let s = scan_backwards(s.apply(Action::Load(dropped(&changed))), &changed);
        assert_eq!(s.tally(), Tally { matches: 1, differs: 1, no_file: 5, waiting: 0 });
        assert_eq!(s.rows[0].check, Some(Check::Matches));
        let Some(Check::Differs(why)) = &s.rows[1].check else { panic!("{:?}", s.rows[1].check) };
        assert!(why[0].to_string().starts_with("hash differs (blake3): the report says "), "{why:?}");
        // Closing the shared report shows the dropped files' own reports.
        let s = s.apply(Action::Close);
        assert_eq!(s.rows.len(), 2);
        assert!(s.rows.iter().all(|r| matches!(r.id, RowId::File(_)) && r.check.is_none()));
    }

    /// Issue 18: one sentence per shard from the codec, derived with the rows.
    #[test]
    fn each_shard_has_the_codecs_verdict() {
        let files = sample::files();
        let s = scan_backwards(State::default().apply(Action::Load(dropped(&files))), &files);
        let reports: Vec<FileReport> = scan_all(&files).into_iter().map(|x| x.report).collect();
        let refs: Vec<&FileReport> = reports.iter().collect();
        assert_eq!(s.verdicts.len(), 1);
        assert_eq!(s.verdicts[0].sentence, sentence::sentence(&refs));
        assert_eq!(
            s.verdicts[0].sentence,
            "1 record lost to rot at offset 60 (not repairable: fetch it from a replica); a torn tail and a stale index that `recover` would fix"
        );
    }

    /// Issue 18: a report of two shards, and only one shard's folder dropped
    /// (or that folder renamed): the other shard's rows have no file, never
    /// a file of the same name from the shard that was dropped.
    #[test]
    fn only_one_shard_dropped_checks_only_that_shards_rows() {
        let files = sample::files();
        let other: Vec<(String, Vec<u8>)> =
            files.iter().map(|(p, b)| (p.replacen("acme_default_orders_0", "audit", 1), b.clone())).collect();
        let both: Vec<(String, Vec<u8>)> = other.iter().chain(&files).cloned().collect();
        let s = State::default().apply(Action::Open(shared_from(&both)));
        assert_eq!(s.rows.len(), 14);
        let s = scan_backwards(s.apply(Action::Load(dropped(&files))), &files);
        assert_eq!(s.tally(), Tally { matches: 7, differs: 0, no_file: 7, waiting: 0 });
        assert!(s.rows[..7].iter().all(|r| r.check == Some(Check::NoFile) && r.file.is_none()), "the other shard's rows");
        let renamed: Vec<(String, Vec<u8>)> = files.iter().map(|(p, b)| (format!("copy of {p}"), b.clone())).collect();
        let s = scan_backwards(s.apply(Action::Load(dropped(&renamed))), &renamed);
        assert_eq!(s.tally(), Tally { no_file: 14, ..Tally::default() });
        assert_eq!(s.unpaired().len(), 7, "a renamed folder is listed as not in the report");
    }

    #[test]
    fn opening_a_report_replaces_the_files_and_errors_stop_the_scan() {
        let files = sample::files();
        let s = scan_backwards(State::default().apply(Action::Load(dropped(&files))), &files);
        let s = s.apply(Action::Open(shared_from(&files[..1])));
        assert!(s.files.is_empty());
        assert_eq!(s.rows.len(), 1);
        let s = s.apply(Action::Load(dropped(&files))).apply(Action::Error("this report has 2 files and 10001 findings".into()));
        assert!(s.scanning, "a page error does not stop the scan");
        let s = s.apply(Action::ScanFailed(ScanError::Worker("x.log: reading bytes 0..4: gone".into())));
        assert!(!s.scanning);
        assert_eq!(s.error.as_deref(), Some("x.log: reading bytes 0..4: gone"));
        assert_eq!(s.unpaired().len(), 6);
    }

    /// A refused report link's error goes when the address stops carrying
    /// it (a diff link replaced it); the page's other errors stay.
    #[test]
    fn a_refused_links_error_goes_with_the_link_and_no_other_does() {
        let s = State::default().apply(Action::LinkRefused("this link's report: cut short".into()));
        assert_eq!(s.error.as_deref(), Some("this link's report: cut short"));
        assert_eq!(s.apply(Action::LinkLeft).error, None);
        let s = State::default().apply(Action::Error("a drop refused".into())).apply(Action::LinkLeft);
        assert_eq!(s.error.as_deref(), Some("a drop refused"));
        let s = State::default()
            .apply(Action::LinkRefused("link".into()))
            .apply(Action::Error("a drop refused".into()))
            .apply(Action::LinkLeft);
        assert_eq!(s.error.as_deref(), Some("a drop refused"), "a later error of the page's own stays");
    }

    /// The state's own actions: progress and findings as met, a cancel, a
    /// worker's trouble in the page's words — none of them the wire's.
    #[test]
    fn progress_findings_and_a_cancel_are_the_states_own_actions() {
        let files = sample::files();
        let s = State::default().apply(Action::Load(dropped(&files)));
        let finding = scan_all(&files).into_iter().flat_map(|x| x.report.findings).next().unwrap();
        let s = s.apply(Action::Progress { file: FileId(101), done: u64::MAX }).apply(Action::Met {
            file: FileId(101),
            findings: vec![finding.clone()],
            ms: 4.5,
        });
        assert_eq!(s.files[1].done, s.files[1].size, "never past the file's size");
        assert_eq!(*s.live, vec![(FileId(101), finding)]);
        assert_eq!(s.timings.0, Some(4.5));
        let s = s.apply(Action::ScanCancelled);
        assert!(!s.scanning);
        assert_eq!(s.error.as_deref(), Some("scan cancelled"));
        let s = State::default()
            .apply(Action::Load(dropped(&files)))
            .apply(Action::ScanFailed(ScanError::Crashed { role: crate::worker::error::Role::Hash, why: None }));
        assert_eq!((s.scanning, s.error.as_deref()), (false, Some("the hash worker failed to run")));
    }
}
