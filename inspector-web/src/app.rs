//! The page: the reducer's state (`crate::state`), the file bytes (kept here,
//! by id, since they are browser objects), the scan runner, and the layout.
//! Components get plain data and typed callbacks.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use web_sys::{Blob, File};
use yew::prelude::*;

use crate::components::{
    drop_zone::DropZone, epochs_view::EpochsView, file_map::FileMapView, find::Find, hex_view::HexView, index_view::IndexView,
    open_report::OpenReport, overview::Overview, problems::Problems, progress::Progress, record_table::RecordTable, share::ShareBar,
    shared_banner::SharedBanner,
};
use crate::components::{
    message::Message, plan_claim::PlanClaim, recovery_preview::RecoveryPreview, replica_diff::ReplicaDiff, text_field::TextField,
    verdicts::Verdicts,
};
use crate::model::group::{file_name, Dropped};
use crate::model::{hex, sample, verify};
use crate::share::open_error::{Document, OpenError, Origin};
use crate::share::opened::{self, Opened};
use crate::share::permalink;
use crate::share::shared::{self, SharedReport, Source};
use crate::state::{Action, FileId, RowId, State};
use crate::ui::keys::{self, Shortcut};
use crate::ui::message::quote;
use crate::web;
use crate::worker::runner::{self, Runner};

/// Frames the detail views of a newly shown file mount in, one after the other
/// (see `App`): the file map; the records; the index and epochs; the hex view.
const DETAIL_STAGES: u8 = 4;

/// Milliseconds of reading dropped files' sizes per task, at most (see `Loader::sized`).
const SIZES_TASK_MS: f64 = 12.0;

/// The files' bytes, by id (replaced on every drop).
type Blobs = Rc<RefCell<Vec<(FileId, Blob)>>>;

/// What loading files needs: fresh ids, the bytes kept by id, the runner, the reducer.
#[derive(Clone)]
struct Loader {
    next_id: Rc<RefCell<u32>>,
    blobs: Blobs,
    runner: Rc<RefCell<Runner>>,
    dispatch: Callback<Action>,
    /// The shared report open names files by SHA-256 only (made before the `hash` field).
    sha256: Rc<Cell<bool>>,
    /// Diffs opened from a paste or a JSON file so far.
    diffs_opened: Rc<Cell<u32>>,
    /// Shows an opened diff.
    on_diff: Callback<(u32, Rc<felix_codec::shard::diff::Diff>)>,
    /// Shows an opened recovery plan (`None` closes it).
    on_plan: Callback<Option<Rc<felix_codec::shard::recovery::Plan>>>,
}

impl Loader {
    /// Opens a shared report; files dropped for it get the hash it can be checked with.
    fn open(&self, report: SharedReport) {
        self.sha256.set(verify::needs_sha256(&report.report.files));
        self.dispatch.emit(Action::Open(report));
    }

    /// Shows a diff opened from a paste or a JSON file in the replica compare.
    fn show_diff(&self, diff: Box<felix_codec::shard::diff::Diff>) {
        let n = self.diffs_opened.get().wrapping_add(1);
        self.diffs_opened.set(n);
        self.on_diff.emit((n, Rc::new(*diff)));
    }

    /// Opens what was pasted: a report, a diff, or a permalink (the whole URL).
    fn open_pasted(&self, text: &str) {
        match opened::open(text.as_bytes(), Source::Pasted) {
            Ok(Opened::Report(report)) => self.open(report),
            Ok(Opened::Diff(diff)) => self.show_diff(diff),
            Ok(Opened::Plan(plan)) => {
                self.on_plan.emit(Some(Rc::new(*plan)));
                web::scroll_into_view("plan-claim");
            }
            Err(e) => self.dispatch.emit(Action::Error(e.to_string())),
        }
    }

    /// Closes the shared report.
    fn close(&self) {
        self.sha256.set(false);
        self.dispatch.emit(Action::Close);
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

    /// Opens a dropped JSON report, then scans the other files against it.
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
                Ok(Opened::Report(report)) => {
                    self.open(report);
                    self.load(rest);
                }
                Ok(Opened::Diff(diff)) => {
                    self.show_diff(diff);
                    self.load(rest);
                }
                Ok(Opened::Plan(plan)) => {
                    self.on_plan.emit(Some(Rc::new(*plan)));
                    self.load(rest);
                }
                Err(e) => self.dispatch.emit(Action::Error(e.to_string())),
            },
            Err(e) => self.dispatch.emit(Action::Error(format!("{}: reading the report: {e}", quote(&path)))),
        }
    }
}

/// Whether a dropped file is a JSON report rather than a file to inspect.
fn is_report(path: &str) -> bool {
    file_name(path).to_ascii_lowercase().ends_with(".json")
}

/// The inspector page.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(State::default);
    let dispatch: Callback<Action> = {
        let d = state.dispatcher();
        (*use_memo((), move |()| Callback::from(move |a: Action| d.dispatch(a)))).clone()
    };
    let runner: Rc<RefCell<Runner>> = (*use_memo((), |()| Rc::new(RefCell::new(Runner::default())))).clone();
    let opened_diff = use_state(|| None::<(u32, Rc<felix_codec::shard::diff::Diff>)>);
    let opened_plan = use_state(|| None::<Rc<felix_codec::shard::recovery::Plan>>);
    let loader = {
        let (runner, dispatch, opened_diff, plan) = (Rc::clone(&runner), dispatch.clone(), opened_diff.setter(), opened_plan.setter());
        (*use_memo((), move |()| Loader {
            next_id: Rc::new(RefCell::new(0)),
            blobs: Rc::new(RefCell::new(Vec::new())),
            runner,
            dispatch,
            sha256: Rc::new(Cell::new(false)),
            diffs_opened: Rc::new(Cell::new(0)),
            on_diff: Callback::from(move |d| opened_diff.set(Some(d))),
            on_plan: Callback::from(move |p| plan.set(p)),
        }))
        .clone()
    };
    {
        let (runner, dispatch, loader) = (Rc::clone(&runner), dispatch.clone(), loader.clone());
        use_effect_with((), move |()| {
            runner::spawn_worker(&runner, &dispatch);
            let open = move || {
                let hash = web::hash();
                if permalink::is_link(&hash) {
                    match permalink::decode(&hash) {
                        Ok(report) => loader.open(report),
                        Err(e) => dispatch.emit(Action::Error(e.to_string())),
                    }
                }
            };
            open();
            // A link pasted into the address bar of an open page changes only the fragment.
            web::on_hash_change(open);
            || ()
        });
    }
    let on_files = {
        let (loader, dispatch) = (loader.clone(), dispatch.clone());
        Callback::from(move |files: Vec<(String, File)>| {
            if let Some(p) = crate::model::group::path_given_twice(&files) {
                return dispatch.emit(Action::Error(format!(
                    "{} is dropped twice (two folders or files of that name, from different places): drop one of them at a time, \
                     or compare two replicas of a shard with the replica compare",
                    quote(p)
                )));
            }
            let (reports, rest): (Vec<_>, Vec<_>) = files.into_iter().partition(|(p, _)| is_report(p));
            match reports.len() {
                0 => loader.load(rest),
                1 => {
                    if let Some(r) = reports.into_iter().next() {
                        wasm_bindgen_futures::spawn_local(loader.clone().open_then_load(r, rest));
                    }
                }
                _ => {
                    let names: Vec<String> = reports.iter().map(|(p, _)| quote(p)).collect();
                    dispatch.emit(Action::Error(format!("drop one report at a time, not {}", names.join(", "))));
                }
            }
        })
    };
    let on_sample = {
        let (loader, dispatch) = (loader.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            let files: Result<Vec<(String, File)>, String> =
                sample::files().into_iter().map(|(p, b)| web::file_from_bytes(file_name(&p), &b).map(|f| (p, f))).collect();
            match files {
                // In the CLI's order, as a drop of the same folder (its JSON is then `inspect --json`'s).
                Ok(mut files) => {
                    crate::model::group::sort_in_cli_order(&mut files);
                    loader.load(files);
                }
                Err(e) => dispatch.emit(Action::Error(e)),
            }
        })
    };
    let on_sample_tar = {
        let dispatch = dispatch.clone();
        Callback::from(move |_: MouseEvent| {
            let result = sample::tar(&sample::files())
                .ok_or_else(|| "the sample's names do not fit a tar archive".to_string())
                .and_then(|tar| web::download_bytes(sample::TAR_NAME, "application/x-tar", &tar));
            if let Err(e) = result {
                dispatch.emit(Action::Error(e));
            }
        })
    };
    let on_paste = {
        let loader = loader.clone();
        Callback::from(move |text: String| loader.open_pasted(&text))
    };
    let on_cancel = {
        let (runner, dispatch) = (Rc::clone(&runner), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            runner.borrow_mut().next_load();
            runner.borrow_mut().stop();
            runner::spawn_worker(&runner, &dispatch);
            dispatch.emit(Action::ScanCancelled);
        })
    };
    let on_key = {
        let dispatch = dispatch.clone();
        Callback::from(move |e: KeyboardEvent| {
            let target = e
                .target()
                .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
                .map(|el| el.tag_name())
                .unwrap_or_default();
            match keys::shortcut(&e.key(), &target, e.ctrl_key() || e.meta_key() || e.alt_key()) {
                Some(Shortcut::Next) => dispatch.emit(Action::Step(!e.shift_key())),
                Some(Shortcut::Previous) => dispatch.emit(Action::Step(false)),
                None => {}
            }
        })
    };
    let shards = shard_folders(&state, &loader.blobs.borrow());
    let on_show = {
        let (rows, dispatch) = (Rc::clone(&state.rows), dispatch.clone());
        Callback::from(move |(path, range): (String, (u64, u64))| {
            if let Some(row) = rows.iter().find(|r| r.report.path == path) {
                dispatch.emit(Action::Select(row.id, Some(range)));
            }
        })
    };
    let on_select = dispatch.reform(|row: RowId| Action::Select(row, None));
    let on_error = dispatch.reform(Action::Error);
    let detail = state.detail().map(|(row, file, scanned)| (row.id, file.path.clone(), Rc::clone(scanned)));
    // The detail views mount in later frames than the verdict — the file map,
    // the records, the index, and the hex view last — so that no one task of the
    // page builds, lays out and paints them all (issue 8: no main-thread task over 50 ms).
    let key = detail.as_ref().map(|(row, _, s)| (*row, Rc::as_ptr(s) as usize));
    let stage = use_state(|| (None::<(RowId, usize)>, 0u8));
    {
        let stage = stage.clone();
        use_effect_with(key, move |k| {
            let (k, live) = (*k, Rc::new(Cell::new(true)));
            if k.is_some() {
                let live = Rc::clone(&live);
                wasm_bindgen_futures::spawn_local(async move {
                    for n in 1..=DETAIL_STAGES {
                        // Each stage after the last one's frame is drawn: one
                        // frame no longer styles, lays out and paints them all.
                        web::after_frame(100).await;
                        if !live.get() {
                            return;
                        }
                        stage.set((k, n));
                    }
                });
            }
            move || live.set(false)
        });
    }
    let shown = if stage.0 == key { stage.1 } else { 0 };
    let blob = detail
        .as_ref()
        .and_then(|(row, _, _)| state.row(*row)?.file)
        .and_then(|id| loader.blobs.borrow().iter().find(|(f, _)| *f == id).map(|(_, b)| b.clone()));
    html! {
        <div class="app" onkeydown={on_key}>
            <header>
                <h1>{ "Felix storage inspector" }</h1>
                <p class="lede">{ "Drop .log, .index and epochs files, or a whole shard folder — or a JSON report to check. Everything runs in this page: nothing is uploaded." }</p>
                <div class="actions">
                    <DropZone on_files={on_files} />
                    <button id="sample" onclick={on_sample}>{ "Open the sample shard" }</button>
                    <button id="sample-tar" onclick={on_sample_tar} title="the same files, to try felix-storage inspect and the share-and-check round trip on">{ "Download its files (.tar)" }</button>
                    if state.scanning { <button id="cancel" onclick={on_cancel}>{ "Cancel" }</button> }
                </div>
                <OpenReport on_text={on_paste} />
                <p class="hint">{ "Keys: n / p next and previous problem, Enter on a problem jumps to its bytes, Tab reaches each table once and the arrows move inside it (the overview, the problems, the records, the bytes, the file map)." }</p>
            </header>
            <main>
            <Verdicts verdicts={Rc::clone(&state.verdicts)} />
            if let Some(e) = &state.error { <div class="banner error" id="error" role="alert"><Message text={e.clone()} /></div> }
            if let Some(claim) = &state.claim {
                <SharedBanner claim={Rc::clone(claim)} tally={state.tally()} dropped={!state.files.is_empty()}
                    unpaired={Rc::new(state.unpaired().iter().map(|f| f.path.clone()).collect::<Vec<_>>())}
                    on_close={{ let l = loader.clone(); Callback::from(move |()| l.close()) }} />
            }
            <Progress files={state.files.clone()} live={Rc::clone(&state.live)} />
            if let (Some(first), Some(all)) = state.timings {
                <p class="timing" id="timing">{ format!("first finding after {first:.0} ms, all verified after {all:.0} ms") }</p>
            } else if let (None, Some(all)) = state.timings {
                <p class="timing" id="timing">{ format!("all verified after {all:.0} ms, nothing damaged") }</p>
            }
            if let Some(ms) = state.hashed_ms {
                <p class="timing" id="hash-timing">{ format!("every file hashed after {ms:.0} ms") }</p>
            }
            if !state.rows.is_empty() {
                <Overview rows={Rc::clone(&state.rows)} selected={state.selected} shared={state.claim.is_some()} on_select={on_select} />
                <Problems rows={Rc::clone(&state.rows)} problems={Rc::clone(&state.problems)} kinds={Rc::clone(&state.kinds)}
                    filter={state.filter.clone()} current={state.problem}
                    on_filter={dispatch.reform(Action::Filter)} on_problem={dispatch.reform(Action::Problem)}
                    on_step={dispatch.reform(Action::Step)} on_jump={dispatch.reform(|()| Action::Jump)} />
                <ShareBar rows={Rc::clone(&state.rows)} claim={state.claim.clone()} permalink={state.permalink.clone()}
                    complete={state.claim.is_some() || state.all_hashed()}
                    on_error={on_error} on_permalink={dispatch.reform(Action::Permalink)} at={state.pointed()} />
            }
            if let Some(plan) = &*opened_plan {
                <PlanClaim plan={Rc::clone(plan)} on_close={loader.on_plan.reform(|()| None)} />
            }
            if let Some(shards) = shards { <RecoveryPreview shards={shards} on_show={on_show} /> }
            { detail_section(&state, detail, blob, &dispatch, shown) }
            // Below the bytes: its results, as they grow, never move the hex view.
            if !state.files.is_empty() {
                <Find files={find_files(&state, &loader.blobs.borrow())} shown={state.detail().map(|(_, f, _)| f.id.0)}
                    on_select={dispatch.reform(|(file, start, end): (u32, u64, u64)| Action::Select(RowId::File(FileId(file)), Some((start, end))))} />
            }
            <ReplicaDiff opened={(*opened_diff).clone()} />
            </main>
        </div>
    }
}

/// Every dropped file with its bytes, in the drop's order (what Find searches).
fn find_files(state: &State, blobs: &[(FileId, Blob)]) -> Rc<Vec<(Dropped, Blob)>> {
    let files = state
        .files
        .iter()
        .filter_map(|f| {
            blobs.iter().find(|(id, _)| *id == f.id).map(|(_, b)| (Dropped { id: f.id.0, path: f.path.clone(), size: f.size }, b.clone()))
        })
        .collect();
    Rc::new(files)
}

/// The dropped shard folders and their bytes, once every file was scanned
/// (for the recovery previews).
fn shard_folders(state: &State, blobs: &[(FileId, Blob)]) -> Option<Rc<crate::components::recovery_preview::Shards>> {
    use crate::components::recovery_preview::{ShardFolder, Shards};
    if state.scanning || state.files.is_empty() || state.files.iter().any(|f| f.scanned.is_none()) {
        return None;
    }
    let dropped: Vec<Dropped> = state.files.iter().map(|f| Dropped { id: f.id.0, path: f.path.clone(), size: f.size }).collect();
    let mut shards = Vec::new();
    for g in crate::model::group::group(&dropped) {
        let Some(name) = g.shard else { continue };
        let files = g
            .files
            .iter()
            .filter_map(|i| dropped.get(*i))
            .filter_map(|d| blobs.iter().find(|(id, _)| id.0 == d.id).map(|(_, b)| (d.path.clone(), d.size, b.clone())))
            .collect();
        shards.push(ShardFolder { name, files });
    }
    (!shards.is_empty()).then(|| Rc::new(Shards { key: dropped.iter().map(|d| d.id).collect(), shards }))
}

fn detail_section(
    state: &State,
    detail: Option<(RowId, String, Rc<crate::model::scan::Scanned>)>,
    blob: Option<Blob>,
    dispatch: &Callback<Action>,
    shown: u8,
) -> Html {
    let Some(selected) = state.selected.and_then(|id| state.row(id)) else { return html! {} };
    let Some((row, path, scanned)) = detail else {
        let report = Rc::clone(&selected.report);
        return html! {
            <section class="detail">
                <h2><TextField text={report.path.clone()} />{ format!(" — {}", report.kind.as_str()) }</h2>
                <p class="none" id="needs-files">{ "This report came without bytes: drop the same files (or their folder) to see the bytes, the file map and the records — and to check the report against them." }</p>
                <IndexView report={Rc::clone(&report)} />
                <EpochsView report={report} />
            </section>
        };
    };
    let Some(blob) = blob else { return html! {} };
    // With the file on the page, the views show what its bytes say (not what a shared report claims).
    let Some(own) = state.detail().and_then(|(_, f, _)| f.report.clone()) else { return html! {} };
    let on_range = dispatch.reform(move |range: (u64, u64)| Action::Select(row, Some(range)));
    let on_pick = {
        let (s, on_range) = (Rc::clone(&scanned), on_range.clone());
        Callback::from(move |pos: u64| on_range.emit(hex::click_selection(s.report.kind, &s.detail.records, s.report.size, pos)))
    };
    let index = crate::model::scan::companion_index(&scanned, state.files.iter().filter_map(|f| f.scanned.as_ref())).cloned();
    html! {
        <section class="detail">
            <h2><TextField text={path} />{ format!(" — {}", scanned.report.kind.as_str()) }</h2>
            <div class="bytes">
                if shown >= 1 { <FileMapView scanned={Rc::clone(&scanned)} index={index} range={state.range} on_pick={on_pick} /> }
                if shown >= 4 { <HexView blob={blob.clone()} scanned={Rc::clone(&scanned)} range={state.range} focus={state.focus_hex} on_range={on_range.clone()} /> }
            </div>
            if shown >= 2 { <RecordTable blob={blob.clone()} scanned={Rc::clone(&scanned)} range={state.range} on_range={on_range} /> }
            if shown >= 3 {
                <IndexView report={Rc::clone(&own)} scanned={Some(Rc::clone(&scanned))} />
                <EpochsView report={own} />
            }
        </section>
    }
}
