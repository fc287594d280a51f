//! The application: state in a reducer, the scan driver, and the layout.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker};

use felix_codec::report::{FileReport, FindingReport, Report};
use web_sys::{Blob, File};
use yew::prelude::*;

use crate::components::{
    drop_zone::DropZone, epochs_view::EpochsView, hex_view::HexView, index_view::IndexView, overview::Overview, problems::Problems,
    record_table::RecordTable, share::ShareBar,
};
use crate::driver::{self, Events};
use crate::logic::problems::{self, Filter, ProblemRef};
use crate::logic::scan::Scanned;
use crate::logic::{permalink, sample, wire};
use crate::web;

/// An `Rc` compared by identity, so large scan results are cheap props.
#[derive(Debug)]
pub struct Shared<T>(pub Rc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Rc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// One file in the page.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// Path as dropped.
    pub path: String,
    /// Size.
    pub size: u64,
    /// Its bytes, read only by slices.
    pub blob: Blob,
    /// Bytes scanned so far.
    pub done: u64,
    /// The result, once scanned.
    pub scanned: Option<Shared<Scanned>>,
}

/// The page's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// Files dropped, in order.
    pub files: Vec<Loaded>,
    /// A report opened from a permalink (no bytes).
    pub shared: Option<Rc<Report>>,
    /// The file shown in the detail views.
    pub selected: Option<usize>,
    /// The byte range selected (highlighted and scrolled to).
    pub range: Option<(u64, u64)>,
    /// The current problem.
    pub problem: Option<ProblemRef>,
    /// The problem filter.
    pub filter: Filter,
    /// A scan is running.
    pub scanning: bool,
    /// Milliseconds from drop to the first finding, and to the end.
    pub timings: (Option<f64>, Option<f64>),
    /// The last error, shown in a banner.
    pub error: Option<String>,
    /// The last permalink made.
    pub permalink: Option<String>,
    /// Findings met while scanning, before the reports are final: (file, finding).
    pub live: Vec<(usize, FindingReport)>,
}

/// What can happen.
#[derive(Debug)]
pub enum Action {
    /// New files: replaces what was loaded.
    Load(Vec<Loaded>),
    /// Scan progress of file `i`.
    Progress(usize, u64),
    /// Findings met so far in file `i` (provisional), at `ms` after the drop.
    Live(usize, Vec<FindingReport>, f64),
    /// Results of one group.
    Scanned(Vec<Scanned>, f64),
    /// The scan ended (or was cancelled).
    Done(f64),
    /// Select a file and optionally a byte range.
    Select(usize, Option<(u64, u64)>),
    /// Select a problem.
    Problem(ProblemRef),
    /// Step to the next (`true`) or previous problem.
    Step(bool),
    /// Change the filter.
    Filter(Filter),
    /// A report from a permalink.
    Shared(Report),
    /// An error to show.
    Error(String),
    /// A permalink was made.
    Permalink(String),
}

impl State {
    /// The reports shown: scanned files, or the shared report.
    #[must_use]
    pub fn reports(&self) -> Vec<FileReport> {
        if let Some(shared) = &self.shared {
            if self.files.is_empty() {
                return shared.files.clone();
            }
        }
        self.files.iter().filter_map(|f| f.scanned.as_ref().map(|s| s.0.report.clone())).collect()
    }

    /// Index into `files` of the n-th report.
    fn file_of_report(&self, n: usize) -> Option<usize> {
        if self.files.is_empty() {
            return Some(n);
        }
        self.files.iter().enumerate().filter(|(_, f)| f.scanned.is_some()).nth(n).map(|(i, _)| i)
    }

    fn select_problem(&mut self, p: ProblemRef) {
        let reports = self.reports();
        let Some(f) = reports.get(p.file).and_then(|r| r.findings.get(p.finding)) else { return };
        self.range = Some((f.position, f.end.max(f.position + 1)));
        self.selected = self.file_of_report(p.file);
        self.problem = Some(p);
    }
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::Load(files) => {
                s = State { files, scanning: true, shared: s.shared.clone(), ..State::default() };
            }
            Action::Progress(i, done) => {
                if let Some(f) = s.files.get_mut(i) {
                    f.done = done;
                }
            }
            Action::Live(i, found, ms) => {
                if s.timings.0.is_none() && !found.is_empty() {
                    s.timings.0 = Some(ms);
                }
                s.live.extend(found.into_iter().map(|f| (i, f)));
            }
            Action::Scanned(results, ms) => {
                for r in results {
                    let i = r.dropped;
                    if s.timings.0.is_none() && !r.report.findings.is_empty() {
                        s.timings.0 = Some(ms);
                    }
                    if let Some(f) = s.files.get_mut(i) {
                        f.done = f.size;
                        f.scanned = Some(Shared(Rc::new(r)));
                    }
                }
                if s.selected.is_none() && s.problem.is_none() {
                    let list = problems::list(&s.reports(), &s.filter);
                    if let Some(first) = list.first() {
                        s.select_problem(*first);
                    } else {
                        s.selected = s.files.iter().position(|f| f.scanned.is_some());
                    }
                }
            }
            Action::Done(ms) => {
                s.scanning = false;
                s.timings.1 = Some(ms);
            }
            Action::Select(i, range) => {
                s.selected = Some(i);
                s.range = range;
            }
            Action::Problem(p) => s.select_problem(p),
            Action::Step(forward) => {
                let list = problems::list(&s.reports(), &s.filter);
                if let Some(p) = problems::step(&list, s.problem, forward) {
                    s.select_problem(p);
                }
            }
            Action::Filter(f) => s.filter = f,
            Action::Shared(report) => {
                s = State { shared: Some(Rc::new(report)), ..State::default() };
                let list = problems::list(&s.reports(), &s.filter);
                if let Some(first) = list.first() {
                    s.problem = Some(*first);
                }
            }
            Action::Error(e) => {
                s.error = Some(e);
                s.scanning = false;
            }
            Action::Permalink(p) => s.permalink = Some(p),
        }
        Rc::new(s)
    }
}

/// The page's side of the scan: actions for the reducer.
struct Dispatch(UseReducerDispatcher<State>);

impl Events for Dispatch {
    fn progress(&self, file: usize, done: u64) {
        self.0.dispatch(Action::Progress(file, done));
    }
    fn live(&self, file: usize, found: Vec<FindingReport>, ms: f64) {
        self.0.dispatch(Action::Live(file, found, ms));
    }
    fn scanned(&self, results: Vec<Scanned>, ms: f64) {
        self.0.dispatch(Action::Scanned(results, ms));
    }
    fn done(&self, ms: f64) {
        self.0.dispatch(Action::Done(ms));
    }
    fn error(&self, message: String) {
        self.0.dispatch(Action::Error(message));
    }
}

/// The scan worker's script (trunk's loader shim; `filehash` is off so the name is stable).
pub const WORKER_SCRIPT: &str = "./felix-scan-worker_loader.js";

fn field(data: &JsValue, k: &str) -> JsValue {
    Reflect::get(data, &k.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Turns one worker message into the page's events.
fn on_worker_message(data: &JsValue, events: &Dispatch) {
    let num = |k: &str| field(data, k).as_f64().unwrap_or(0.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let index = |v: f64| v as usize;
    match field(data, "type").as_string().as_deref() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some("progress") => events.progress(index(num("file")), num("done") as u64),
        Some("live") => {
            let found = serde_json::from_str(&field(data, "findings").as_string().unwrap_or_default()).unwrap_or_default();
            events.live(index(num("file")), found, num("ms"));
        }
        Some("group") => {
            let items: Array = field(data, "items").unchecked_into();
            let mut results = Vec::new();
            for item in items.iter() {
                let report = serde_json::from_str(&field(&item, "report").as_string().unwrap_or_default());
                let detail = wire::unpack(&Uint8Array::new(&field(&item, "detail")).to_vec());
                match (report, detail) {
                    (Ok(report), Ok(detail)) => {
                        results.push(Scanned { dropped: index(field(&item, "dropped").as_f64().unwrap_or(0.0)), report, detail });
                    }
                    (Err(e), _) => return events.error(format!("the scan worker sent an unreadable report: {e}")),
                    (_, Err(e)) => return events.error(format!("the scan worker sent unreadable records: {e}")),
                }
            }
            events.scanned(results, num("ms"));
        }
        Some("done") => events.done(num("ms")),
        Some("error") => events.error(field(data, "message").as_string().unwrap_or_default()),
        _ => {}
    }
}

/// Spawns the scan worker ahead of time, so a drop does not wait for its
/// module to load. It says "ready" once running; a job sent earlier waits.
fn spawn_worker(runner: &Rc<RefCell<Runner>>, dispatch: &UseReducerDispatcher<State>) {
    let Ok(worker) = Worker::new(WORKER_SCRIPT) else { return };
    let events = Dispatch(dispatch.clone());
    let weak = Rc::downgrade(runner);
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let kind = field(&data, "type").as_string();
        let Some(runner) = weak.upgrade() else { return };
        match kind.as_deref() {
            Some("ready") => {
                let mut r = runner.borrow_mut();
                r.ready = true;
                if let (Some(job), Some(w)) = (r.pending.take(), r.worker.as_ref()) {
                    if w.post_message(&job).is_err() {
                        drop(r);
                        events.error("could not hand the files to the scan worker".into());
                    }
                }
                return;
            }
            Some("done" | "error") => runner.borrow_mut().busy = false,
            _ => {}
        }
        on_worker_message(&data, &events);
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let err_dispatch = dispatch.clone();
    let on_error =
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_| err_dispatch.dispatch(Action::Error("the scan worker failed to run".into())));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    let mut r = runner.borrow_mut();
    r.worker = Some(worker);
    r.ready = false;
}

/// The job message for the worker.
fn job(files: &[Loaded], started: f64) -> Object {
    let msg = Object::new();
    let paths = Array::new();
    let blobs = Array::new();
    for f in files {
        paths.push(&JsValue::from_str(&f.path));
        blobs.push(&f.blob);
    }
    let _ = Reflect::set(&msg, &"paths".into(), &paths);
    let _ = Reflect::set(&msg, &"files".into(), &blobs);
    let _ = Reflect::set(&msg, &"started".into(), &started.into());
    msg
}

/// Starts scanning `files` (path, file): in the worker, or on the page if none runs.
fn start(files: Vec<(String, File)>, state: &UseReducerHandle<State>, runner: &Rc<RefCell<Runner>>) {
    let loaded: Vec<Loaded> =
        files.into_iter().map(|(path, f)| Loaded { path, size: f.size() as u64, blob: f.into(), done: 0, scanned: None }).collect();
    if loaded.is_empty() {
        return;
    }
    let started = driver::wall_ms();
    let busy = runner.borrow().busy;
    if busy {
        // A scan is running: stop it and start from a fresh worker.
        runner.borrow_mut().stop();
        spawn_worker(runner, &state.dispatcher());
    }
    state.dispatch(Action::Load(loaded.clone()));
    let msg = job(&loaded, started);
    {
        let mut r = runner.borrow_mut();
        if r.worker.is_some() {
            r.busy = true;
            if !r.ready {
                r.pending = Some(msg);
                return;
            }
            if r.worker.as_ref().is_some_and(|w| w.post_message(&msg).is_ok()) {
                return;
            }
        }
    }
    // No worker: scan on the page, in awaited chunks.
    let cancel = Rc::new(Cell::new(false));
    runner.borrow_mut().cancel = Some(Rc::clone(&cancel));
    let events = Dispatch(state.dispatcher());
    let list: Vec<(String, u64, Blob)> = loaded.into_iter().map(|f| (f.path, f.size, f.blob)).collect();
    wasm_bindgen_futures::spawn_local(async move { driver::run(list, &events, move || cancel.get(), started).await });
}

/// The scan machinery: the worker (warm, or running a job), or a cancel flag
/// for the page's own loop.
#[derive(Debug, Default)]
struct Runner {
    worker: Option<Worker>,
    ready: bool,
    busy: bool,
    pending: Option<Object>,
    cancel: Option<Rc<Cell<bool>>>,
}

impl Runner {
    fn stop(&mut self) {
        if let Some(w) = self.worker.take() {
            w.terminate();
        }
        if let Some(c) = self.cancel.take() {
            c.set(true);
        }
        self.ready = false;
        self.busy = false;
        self.pending = None;
    }
}

/// The inspector page.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(State::default);
    let runner = use_memo((), |()| Rc::new(RefCell::new(Runner::default())));
    {
        let (runner, dispatch) = (Rc::clone(&runner), state.dispatcher());
        use_effect_with((), move |()| {
            spawn_worker(&runner, &dispatch);
            || ()
        });
    }
    {
        let state = state.clone();
        use_effect_with((), move |()| {
            let hash = web::hash();
            if hash.starts_with(permalink::PREFIX) {
                match permalink::decode(&hash) {
                    Ok(report) => state.dispatch(Action::Shared(report)),
                    Err(e) => state.dispatch(Action::Error(e)),
                }
            }
            || ()
        });
    }
    let on_files = {
        let (state, runner) = (state.clone(), Rc::clone(&runner));
        Callback::from(move |files: Vec<(String, File)>| start(files, &state, &runner))
    };
    let on_sample = {
        let (state, runner) = (state.clone(), Rc::clone(&runner));
        Callback::from(move |_: MouseEvent| {
            let files: Result<Vec<(String, File)>, String> = sample::files()
                .into_iter()
                .map(|(p, b)| web::file_from_bytes(crate::logic::group::file_name(&p), &b).map(|f| (p, f)))
                .collect();
            match files {
                Ok(files) => start(files, &state, &runner),
                Err(e) => state.dispatch(Action::Error(e)),
            }
        })
    };
    let on_cancel = {
        let (runner, state) = (Rc::clone(&runner), state.clone());
        Callback::from(move |_: MouseEvent| {
            runner.borrow_mut().stop();
            spawn_worker(&runner, &state.dispatcher());
            state.dispatch(Action::Error("scan cancelled".into()));
        })
    };
    let on_key = {
        let state = state.clone();
        Callback::from(move |e: KeyboardEvent| match e.key().as_str() {
            "n" | "j" | "F8" => state.dispatch(Action::Step(true)),
            "p" | "k" => state.dispatch(Action::Step(false)),
            _ => {}
        })
    };
    let reports = state.reports();
    let selected = state.selected.and_then(|i| state.files.get(i).cloned());
    let dispatch = state.dispatcher();
    html! {
        <div class="app" tabindex="0" onkeydown={on_key}>
            <header>
                <h1>{ "Felix storage inspector" }</h1>
                <p class="lede">{ "Drop .log, .index and epochs files, or a whole shard folder. Everything runs in this page: nothing is uploaded." }</p>
                <div class="actions">
                    <DropZone on_files={on_files} />
                    <button id="sample" onclick={on_sample}>{ "Open the sample shard" }</button>
                    if state.scanning { <button id="cancel" onclick={on_cancel}>{ "Cancel" }</button> }
                </div>
            </header>
            if let Some(e) = &state.error { <div class="banner error" role="alert">{ e }</div> }
            if state.shared.is_some() && state.files.is_empty() {
                <div class="banner info" id="shared-banner">{ "This report came from a link: it carries findings, not bytes. Load the same files to see bytes (compare the SHA-256 in the overview)." }</div>
            }
            <Progress files={state.files.clone()} live={state.live.clone()} />
            if let (Some(first), Some(all)) = state.timings {
                <p class="timing" id="timing">{ format!("first finding after {first:.0} ms, all verified after {all:.0} ms") }</p>
            } else if let (None, Some(all)) = state.timings {
                <p class="timing" id="timing">{ format!("all verified after {all:.0} ms, nothing damaged") }</p>
            }
            if !reports.is_empty() {
                <Overview reports={reports.clone()} selected={state.selected} on_select={dispatch.clone()} />
                <Problems reports={reports.clone()} filter={state.filter.clone()} current={state.problem} on_action={dispatch.clone()} />
                <ShareBar reports={reports.clone()} permalink={state.permalink.clone()} on_action={dispatch.clone()} />
            }
            if let Some(file) = selected {
                if let Some(scanned) = file.scanned.clone() {
                    <section class="detail">
                        <h2>{ format!("{} — {}", file.path, scanned.0.report.kind.as_str()) }</h2>
                        <HexView blob={file.blob.clone()} scanned={scanned.clone()} range={state.range} file={state.selected.unwrap_or(0)} on_action={dispatch.clone()} />
                        <RecordTable scanned={scanned.clone()} range={state.range} file={state.selected.unwrap_or(0)} on_action={dispatch.clone()} />
                        <IndexView scanned={scanned.clone()} />
                        <EpochsView scanned={scanned} />
                    </section>
                }
            }
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct ProgressProps {
    files: Vec<Loaded>,
    live: Vec<(usize, FindingReport)>,
}

#[function_component(Progress)]
fn progress(props: &ProgressProps) -> Html {
    let busy: Vec<&Loaded> = props.files.iter().filter(|f| f.scanned.is_none()).collect();
    if busy.is_empty() {
        return html! {};
    }
    html! {
        <div class="progress">
            { for busy.iter().map(|f| html! {
                <div class="bar"><span>{ &f.path }</span><progress max={f.size.max(1).to_string()} value={f.done.to_string()} /></div>
            }) }
            if !props.live.is_empty() {
                <ul id="live-findings" class="live">
                    { for props.live.iter().take(20).filter_map(|(i, f)| props.files.get(*i).map(|file| html! {
                        <li data-kind={f.kind.clone()} data-position={f.position.to_string()}>{ format!("{}: {} at byte {} — still scanning, verdict provisional", file.path, f.kind, f.position) }</li>
                    })) }
                </ul>
            }
        </div>
    }
}
