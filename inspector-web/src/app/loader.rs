//! The page's own actions on files and documents: a drop or a pick (a JSON
//! report, diff or plan among the files opened first), the sample, a paste,
//! a permalink, a cancel. Each reads what it needs, gives the files fresh
//! ids, keeps their bytes (`Blob`s) by id and starts their scan.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use felix_codec::shard::{diff::Diff, recovery::Plan};
use web_sys::{Blob, File};
use yew::Callback;

use crate::model::group::{self, file_name, DropSplit, Dropped};
use crate::model::{sample, verify};
use crate::share::open_error::{Document, OpenError, Origin};
use crate::share::opened::{self, Opened};
use crate::share::permalink;
use crate::share::shared::{self, SharedReport, Source};
use crate::state::{Action, FileId};
use crate::ui::message::quote;
use crate::web;
use crate::worker::runner::{self, Runner};

/// Milliseconds of reading dropped files' sizes per task, at most (see `Loader::sized`).
const SIZES_TASK_MS: f64 = 12.0;

/// The files' bytes, by id (replaced on every drop).
pub type Blobs = Rc<RefCell<Vec<(FileId, Blob)>>>;

/// What loading files needs: fresh ids, the bytes kept by id, the runner, the reducer.
#[derive(Clone)]
pub struct Loader {
    next_id: Rc<RefCell<u32>>,
    /// The dropped files' bytes, by id.
    pub blobs: Blobs,
    runner: Rc<RefCell<Runner>>,
    dispatch: Callback<Action>,
    /// The shared report open names files by SHA-256 only (made before the `hash` field).
    sha256: Rc<Cell<bool>>,
    /// Diffs opened from a paste or a JSON file so far.
    diffs_opened: Rc<Cell<u32>>,
    /// Shows an opened diff.
    on_diff: Callback<(u32, Rc<Diff>)>,
    /// Shows an opened recovery plan (`None` closes it).
    pub on_plan: Callback<Option<Rc<Plan>>>,
}

impl Loader {
    /// A loader starting scans on `runner`, reporting to `dispatch`; opened
    /// diffs go to `on_diff` (numbered), opened plans to `on_plan`.
    pub fn new(
        runner: Rc<RefCell<Runner>>,
        dispatch: Callback<Action>,
        on_diff: Callback<(u32, Rc<Diff>)>,
        on_plan: Callback<Option<Rc<Plan>>>,
    ) -> Self {
        Self {
            next_id: Rc::new(RefCell::new(0)),
            blobs: Rc::new(RefCell::new(Vec::new())),
            runner,
            dispatch,
            sha256: Rc::new(Cell::new(false)),
            diffs_opened: Rc::new(Cell::new(0)),
            on_diff,
            on_plan,
        }
    }

    /// A callback running `f` with this loader (one of its actions).
    pub fn to<T: 'static>(&self, f: impl Fn(&Self, T) + 'static) -> Callback<T> {
        let this = self.clone();
        Callback::from(move |x: T| f(&this, x))
    }

    /// Opens a shared report; files dropped for it get the hash it can be checked with.
    fn open(&self, report: SharedReport) {
        self.sha256.set(verify::needs_sha256(&report.report.files));
        self.dispatch.emit(Action::Open(report));
    }

    /// Shows a document opened from a paste or a JSON file: a report, a diff
    /// (in the replica compare) or a recovery plan (scrolled to, when `scroll`).
    fn show(&self, opened: Opened, scroll: bool) {
        match opened {
            Opened::Report(report) => self.open(report),
            Opened::Diff(diff) => {
                let n = self.diffs_opened.get().wrapping_add(1);
                self.diffs_opened.set(n);
                self.on_diff.emit((n, Rc::new(*diff)));
            }
            Opened::Plan(plan) => {
                self.on_plan.emit(Some(Rc::new(*plan)));
                if scroll {
                    web::scroll_into_view("plan-claim");
                }
            }
        }
    }

    /// Opens what was pasted: a report, a diff, or a permalink (the whole URL).
    pub fn open_pasted(&self, text: &str) {
        match opened::open(text.as_bytes(), Source::Pasted) {
            Ok(o) => self.show(o, true),
            Err(e) => self.dispatch.emit(Action::Error(e.to_string())),
        }
    }

    /// Opens the report the page's address carries, if it carries one; when
    /// it carries none (any more), the error a refused one left goes.
    pub fn open_link(&self) {
        let hash = web::hash();
        if !permalink::is_link(&hash) {
            return self.dispatch.emit(Action::LinkLeft);
        }
        match permalink::decode(&hash) {
            Ok(report) => self.open(report),
            Err(e) => self.dispatch.emit(Action::LinkRefused(e.to_string())),
        }
    }

    /// Closes the shared report.
    pub fn close(&self) {
        self.sha256.set(false);
        self.dispatch.emit(Action::Close);
    }

    /// Files dropped or picked: refused when a path comes twice or more than
    /// one is a JSON document (`model::group`); a JSON document among them is
    /// opened first, then the rest are loaded.
    pub fn drop_files(&self, files: Vec<(String, File)>) {
        if let Some(p) = group::path_given_twice(&files) {
            return self.dispatch.emit(Action::Error(format!(
                "{} is dropped twice (two folders or files of that name, from different places): drop one of them at a time, \
                 or compare two replicas of a shard with the replica compare",
                quote(p)
            )));
        }
        match group::document_first(files) {
            Ok(DropSplit { document: None, files }) => self.load(files),
            Ok(DropSplit { document: Some(document), files }) => {
                wasm_bindgen_futures::spawn_local(self.clone().open_then_load(document, files));
            }
            Err(e) => self.dispatch.emit(Action::Error(e.to_string())),
        }
    }

    /// Loads the built-in sample shard, in the CLI's order as a drop of the
    /// same folder (its JSON is then `inspect --json`'s).
    pub fn open_sample(&self) {
        let files: Result<Vec<(String, File)>, String> =
            sample::files().into_iter().map(|(p, b)| web::file_from_bytes(file_name(&p), &b).map(|f| (p, f))).collect();
        match files {
            Ok(mut files) => {
                group::sort_in_cli_order(&mut files);
                self.load(files);
            }
            Err(e) => self.dispatch.emit(Action::Error(e)),
        }
    }

    /// Offers the sample's files as a tar archive.
    pub fn download_sample(&self) {
        let result = sample::tar(&sample::files())
            .ok_or_else(|| "the sample's names do not fit a tar archive".to_string())
            .and_then(|tar| web::download_bytes(sample::TAR_NAME, "application/x-tar", &tar));
        if let Err(e) = result {
            self.dispatch.emit(Action::Error(e));
        }
    }

    /// Cancels the scan: a fresh worker waits for the next drop.
    pub fn cancel(&self) {
        self.runner.borrow_mut().next_load();
        self.runner.borrow_mut().stop();
        runner::spawn_worker(&self.runner, &self.dispatch);
        self.dispatch.emit(Action::ScanCancelled);
    }

    /// Loads `files` into the state under fresh ids and starts their scan.
    fn load(&self, files: Vec<(String, File)>) {
        if files.is_empty() {
            return;
        }
        let (this, load) = (self.clone(), self.runner.borrow_mut().next_load());
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(list) = this.sized(files, load).await {
                this.start(list);
            }
        });
    }

    /// Gives each file a fresh id and reads its size, [`SIZES_TASK_MS`] of
    /// them at most per task: a picked folder's file tells its size by a
    /// synchronous trip to the disk (about 0.4 ms each in Chromium), so 300
    /// of them in one task would hold the page for over 100 ms. `None` when
    /// another drop or a cancel came in meanwhile.
    async fn sized(&self, files: Vec<(String, File)>, load: u64) -> Option<Vec<(Dropped, Blob)>> {
        let mut list = Vec::with_capacity(files.len());
        let mut since = js_sys::Date::now();
        for (path, f) in files {
            if js_sys::Date::now() - since > SIZES_TASK_MS {
                web::next_task().await;
                if !self.runner.borrow().is_latest(load) {
                    return None;
                }
                since = js_sys::Date::now();
            }
            let id = {
                let mut n = self.next_id.borrow_mut();
                *n = n.wrapping_add(1);
                *n
            };
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let size = f.size() as u64;
            list.push((Dropped { id, path, size }, Blob::from(f)));
        }
        self.runner.borrow().is_latest(load).then_some(list)
    }

    /// Shows `list` and starts its scan.
    fn start(&self, list: Vec<(Dropped, Blob)>) {
        *self.blobs.borrow_mut() = list.iter().map(|(d, b)| (FileId(d.id), b.clone())).collect();
        // The last job stops now, before the new files are shown: none of its
        // messages can land on them.
        runner::stop_job(&self.runner, &self.dispatch);
        self.dispatch.emit(Action::Load(list.iter().map(|(d, _)| d.clone()).collect()));
        // The job starts in the next task: the page's first render of the
        // dropped files and the hand-over to the workers are two tasks, not one.
        let (sha256, runner, dispatch) = (self.sha256.get(), Rc::clone(&self.runner), self.dispatch.clone());
        let load = runner.borrow_mut().next_load();
        web::later(move || {
            // Not if another drop or a cancel came in between.
            if runner.borrow().is_latest(load) {
                runner::start(list, sha256, &runner, &dispatch);
            }
        });
    }

    /// Opens a dropped JSON report (or diff, or plan), then scans the other files against it.
    async fn open_then_load(self, report: (String, File), rest: Vec<(String, File)>) {
        let (path, file) = report;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let size = file.size() as u64;
        if size > shared::MAX_JSON_BYTES {
            let e = OpenError::TooLarge { from: Origin::File(path), document: Document::Report, bytes: size, max: shared::MAX_JSON_BYTES };
            return self.dispatch.emit(Action::Error(e.to_string()));
        }
        match web::read_slice(&file, 0, size).await {
            Ok(bytes) => match opened::open(&bytes, Source::JsonFile(path)) {
                Ok(o) => {
                    self.show(o, false);
                    self.load(rest);
                }
                Err(e) => self.dispatch.emit(Action::Error(e.to_string())),
            },
            Err(e) => self.dispatch.emit(Action::Error(format!("{}: reading the report: {e}", quote(&path)))),
        }
    }
}
