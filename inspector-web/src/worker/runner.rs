//! The page's half of the workers: three warm Web Workers of the same script
//! (spawned when the page loads, so a drop does not wait for a module) —
//! the reader, the scan worker it hands every chunk to, and the hash worker
//! the scan hands them on to, joined by `MessageChannel`s (`driver`) — or,
//! when no worker can start, the scan and then the hashes on the page in
//! awaited chunks. Messages go every way through
//! `worker::protocol`; each one the page hears becomes the state's own
//! action ([`action`]), so the reducer never reads the wire.
//! A folder job (the recovery preview, the replica compare) gets a worker
//! of its own ([`Errand`]), with the same fallback to the page.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, MessageChannel, MessageEvent, MessagePort, Worker};
use yew::Callback;

use crate::model::group::Dropped;
use crate::state::{Action, FileId};
use crate::worker::driver;
use crate::worker::error::{Role, ScanError};
use crate::worker::protocol::{self, Answer, Feed, FolderJob, Job, Task, ToPage, FILES_KEY, JOB_KEY, PORT_KEY, READER_KEY};

/// Cores from which the reader gets a worker of its own. Measured on 2 cores
/// (`tests/e2e/bench.mjs`, both ways in one run): the scan's verdict came
/// sooner with a reader than with the scan reading for itself.
pub const READER_MIN_CORES: u32 = 2;

/// Cores from which the hash runs beside the scan (the scan hands it every
/// chunk). With fewer, the hash worker reads the files itself once the
/// verdict is shown: measured on 2 cores (`tests/e2e/bench.mjs`), hashing
/// beside the scan held the verdict back to 0.36–0.42x the fastest bare read,
/// against 0.49–0.64x with the hash after it.
pub const HASH_BESIDE_SCAN_MIN_CORES: u32 = 3;

/// Files of fewer bytes than this in all are hashed beside the scan on any
/// number of cores: the hash costs little there, and the export is ready
/// with the verdict.
pub const HASH_DEFER_MIN_BYTES: u64 = 64 << 20;

/// The deferred hash starts once the page has a whole idle period of this
/// many milliseconds after the verdict (the detail views mount over the
/// tasks and frames after it, and a hash read beside them would lengthen
/// those tasks on two cores) — or [`HASH_AFTER_MAX_WAIT_MS`] after it.
const HASH_AFTER_QUIET_MS: f64 = 45.0;
/// The longest the deferred hash waits for the page to be quiet.
const HASH_AFTER_MAX_WAIT_MS: f64 = 2000.0;

/// The workers' script (trunk's loader shim; `filehash` is off so the name is stable).
pub const WORKER_SCRIPT: &str = "./felix-scan-worker_loader.js";

/// A worker's place in [`Runner::failed`].
fn index(role: Role) -> usize {
    match role {
        Role::Read => 0,
        Role::Scan => 1,
        Role::Hash => 2,
    }
}

/// What a worker's message means to the page's state: the one translation
/// from the wire to the state's own actions (`None`: nothing for the state —
/// a worker ready, a find's answer).
#[must_use]
pub fn action(msg: ToPage) -> Option<Action> {
    Some(match msg {
        ToPage::Ready | ToPage::Found { .. } => return None,
        ToPage::Progress { file, done } => Action::Progress { file: FileId(file), done },
        ToPage::Live { file, findings, ms } => Action::Met { file: FileId(file), findings, ms },
        ToPage::Group { items, ms } => Action::GroupScanned { items, ms },
        ToPage::Done { ms } => Action::ScanDone { ms },
        ToPage::Error { message } => Action::ScanFailed(ScanError::Worker(message)),
        ToPage::Hashes { items, ms } => Action::Hashed { items: items.into_iter().map(|(f, h)| (FileId(f), h)).collect(), ms },
    })
}

/// One worker: warm, or running a job (a job sent before it is ready waits).
#[derive(Debug, Default)]
struct Slot {
    worker: Option<Worker>,
    ready: bool,
    busy: bool,
    pending: Option<(Object, Array)>,
}

impl Slot {
    fn stop(&mut self) {
        if let Some(w) = self.worker.take() {
            w.terminate();
        }
        *self = Self::default();
    }

    /// Sends `msg` (with `transfer`) now, or when the worker says it is ready.
    fn send(&mut self, msg: Object, transfer: Array) -> bool {
        let Some(w) = &self.worker else { return false };
        self.busy = true;
        if !self.ready {
            self.pending = Some((msg, transfer));
            return true;
        }
        w.post_message_with_transfer(&msg, &transfer).is_ok()
    }
}

/// The scan machinery: the two workers, or a cancel flag for the page's own loop.
#[derive(Debug, Default)]
pub struct Runner {
    read: Slot,
    scan: Slot,
    hash: Slot,
    /// Files whose hashes the hash worker still owes.
    hashes_left: usize,
    /// The hash worker's channel and the files it hashes once the scan is
    /// done (when it does not run beside the scan).
    deferred_hash: Option<(MessagePort, Vec<u32>)>,
    cancel: Option<Rc<Cell<bool>>>,
    /// Messages decoded but not yet given to the reducer, in arrival order.
    queue: VecDeque<Action>,
    /// Counts drops and cancels: a job started a task after its drop starts
    /// only if nothing came in between.
    loads: u64,
    /// Roles whose worker failed before it ever ran: never spawned again
    /// (the scan reads for itself, hashes after, or the page scans).
    failed: [bool; 3],
}

impl Runner {
    /// A new drop or a cancel: the number a job waiting to start checks with [`Runner::is_latest`].
    pub fn next_load(&mut self) -> u64 {
        self.loads = self.loads.wrapping_add(1);
        self.loads
    }

    /// Whether a job is running on any worker.
    fn busy(&self) -> bool {
        self.read.busy || self.scan.busy || self.hash.busy
    }

    /// Whether `load` (from [`Runner::next_load`]) is still the latest.
    #[must_use]
    pub fn is_latest(&self, load: u64) -> bool {
        self.loads == load
    }

    /// Stops whatever runs.
    pub fn stop(&mut self) {
        self.queue.clear();
        self.read.stop();
        self.scan.stop();
        self.hash.stop();
        self.hashes_left = 0;
        self.deferred_hash = None;
        if let Some(c) = self.cancel.take() {
            c.set(true);
        }
    }

    /// Whether `target` (an event's target) is the worker now in `role`'s
    /// slot: events from a worker already replaced are stale.
    fn is_current(&mut self, role: Role, target: Option<web_sys::EventTarget>) -> bool {
        match (self.slot(role).worker.as_ref(), target) {
            (Some(w), Some(t)) => JsValue::from(w) == JsValue::from(t),
            _ => false,
        }
    }

    fn slot(&mut self, role: Role) -> &mut Slot {
        match role {
            Role::Read => &mut self.read,
            Role::Scan => &mut self.scan,
            Role::Hash => &mut self.hash,
        }
    }
}

fn on_worker_message(runner: &Rc<RefCell<Runner>>, role: Role, data: &JsValue, dispatch: &Callback<Action>) {
    // Copied into wasm memory once; the record rows it carries stay in this buffer.
    let bytes = bytes::Bytes::from(if data.is_instance_of::<Uint8Array>() { Uint8Array::new(data).to_vec() } else { Vec::new() });
    let msg = match protocol::decode_shared(&bytes) {
        Ok(ToPage::Ready) => return on_ready(runner, role, dispatch),
        Ok(msg) => msg,
        Err(error) => {
            runner.borrow_mut().slot(role).busy = false;
            return deliver(runner, Action::ScanFailed(ScanError::Unreadable { role, error }), dispatch);
        }
    };
    {
        let mut r = runner.borrow_mut();
        match &msg {
            ToPage::Done { .. } if role == Role::Scan => {
                r.scan.busy = false;
                r.read.busy = false;
                if let Some((port, files)) = r.deferred_hash.take() {
                    wasm_bindgen_futures::spawn_local(async move {
                        crate::web::quiet(HASH_AFTER_QUIET_MS, HASH_AFTER_MAX_WAIT_MS).await;
                        for file in files {
                            let _ = driver::post_feed(&port, &Feed::Rest { file, at: 0 }, None);
                        }
                    });
                }
            }
            ToPage::Hashes { items, .. } => {
                r.hashes_left = r.hashes_left.saturating_sub(items.len());
                r.hash.busy = r.hashes_left > 0;
            }
            ToPage::Error { .. } => r.slot(role).busy = false,
            _ => {}
        }
    }
    if let Some(action) = action(msg) {
        deliver(runner, action, dispatch);
    }
}

/// A worker says it runs: the job waiting for it, if any, is handed over.
fn on_ready(runner: &Rc<RefCell<Runner>>, role: Role, dispatch: &Callback<Action>) {
    let mut r = runner.borrow_mut();
    let slot = r.slot(role);
    slot.ready = true;
    if let (Some((job, transfer)), Some(w)) = (slot.pending.take(), slot.worker.as_ref()) {
        if w.post_message_with_transfer(&job, &transfer).is_err() {
            drop(r);
            dispatch.emit(Action::ScanFailed(ScanError::NotHanded(role)));
        }
    }
}

/// Gives `action` to the reducer. A group's results (a file's record rows
/// decoded: tens of milliseconds for a large file) go in a later task than
/// the one that decoded them, and every message after one waiting goes after
/// it, in order — so the decoding and the page's update are two tasks, not one.
fn deliver(runner: &Rc<RefCell<Runner>>, action: Action, dispatch: &Callback<Action>) {
    let first = {
        let mut r = runner.borrow_mut();
        if r.queue.is_empty() && !matches!(action, Action::GroupScanned { .. }) {
            Err(action)
        } else {
            r.queue.push_back(action);
            Ok(r.queue.len() == 1)
        }
    };
    match first {
        Err(action) => dispatch.emit(action),
        Ok(true) => {
            let (runner, dispatch) = (Rc::clone(runner), dispatch.clone());
            wasm_bindgen_futures::spawn_local(async move {
                loop {
                    crate::web::next_task().await;
                    let Some(action) = runner.borrow_mut().queue.pop_front() else { return };
                    dispatch.emit(action);
                    if runner.borrow().queue.is_empty() {
                        return;
                    }
                }
            });
        }
        Ok(false) => {}
    }
}

fn spawn(runner: &Rc<RefCell<Runner>>, role: Role, dispatch: &Callback<Action>) {
    if runner.borrow().failed[index(role)] {
        return;
    }
    let Ok(worker) = Worker::new(WORKER_SCRIPT) else { return };
    let weak = Rc::downgrade(runner);
    let d = dispatch.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        if let Some(runner) = weak.upgrade() {
            if runner.borrow_mut().is_current(role, e.target()) {
                on_worker_message(&runner, role, &e.data(), &d);
            }
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let (d, weak) = (dispatch.clone(), Rc::downgrade(runner));
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        e.prevent_default();
        let why = Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).filter(|m| !m.is_empty());
        let Some(runner) = weak.upgrade() else { return };
        // An error queued by a worker already replaced says nothing of the one now in its place.
        if !runner.borrow_mut().is_current(role, e.target()) {
            return;
        }
        on_worker_error(&runner, role, &d);
        d.emit(Action::ScanFailed(ScanError::Crashed { role, why }));
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    let mut r = runner.borrow_mut();
    let slot = r.slot(role);
    slot.stop();
    slot.worker = Some(worker);
}

/// A worker threw. One that never said "ready" is never spawned again (the
/// scan then reads for itself, the hash comes after the scan, or the page
/// scans on its own). A job it was part of is stopped — never left waiting
/// on it — and the other workers are spawned afresh for the next drop.
fn on_worker_error(runner: &Rc<RefCell<Runner>>, role: Role, dispatch: &Callback<Action>) {
    let (ready, busy) = {
        let mut r = runner.borrow_mut();
        let ready = r.slot(role).ready;
        if !ready {
            r.failed[index(role)] = true;
        }
        (ready, r.busy())
    };
    if ready || busy {
        runner.borrow_mut().stop();
        spawn_worker(runner, dispatch);
    } else {
        runner.borrow_mut().slot(role).stop();
    }
}

/// Stops the job now running, if any, before a new one: its messages not yet
/// given to the reducer are dropped, the page's own loop is cancelled, and
/// busy workers are replaced by fresh ones.
pub fn stop_job(runner: &Rc<RefCell<Runner>>, dispatch: &Callback<Action>) {
    let busy = {
        let mut r = runner.borrow_mut();
        r.queue.clear();
        if let Some(c) = r.cancel.take() {
            c.set(true);
        }
        r.busy()
    };
    if busy {
        runner.borrow_mut().stop();
        spawn_worker(runner, dispatch);
    }
}

/// Spawns the reader, scan and hash workers ahead of time. Each says "ready" once running; a job sent earlier waits.
pub fn spawn_worker(runner: &Rc<RefCell<Runner>>, dispatch: &Callback<Action>) {
    spawn(runner, Role::Read, dispatch);
    spawn(runner, Role::Scan, dispatch);
    spawn(runner, Role::Hash, dispatch);
}

fn message(files: &[(Dropped, Blob)], job: &Job, ports: &[(&str, JsValue)]) -> (Object, Array) {
    let msg = Object::new();
    let blobs: Array = files.iter().map(|(_, b)| JsValue::from(b)).collect();
    let _ = Reflect::set(&msg, &JOB_KEY.into(), &Uint8Array::from(protocol::encode_job(job).as_slice()));
    let _ = Reflect::set(&msg, &FILES_KEY.into(), &blobs);
    let transfer = Array::new();
    for (key, p) in ports {
        let _ = Reflect::set(&msg, &(*key).into(), p);
        transfer.push(p);
    }
    (msg, transfer)
}

/// Starts scanning and hashing `files`, already loaded into the state under
/// their ids (`sha256`: SHA-256 too): in the workers, or on the page if none runs.
pub fn start(files: Vec<(Dropped, Blob)>, sha256: bool, runner: &Rc<RefCell<Runner>>, dispatch: &Callback<Action>) {
    let started_ms = driver::wall_ms();
    stop_job(runner, dispatch);
    let dropped: Vec<Dropped> = files.iter().map(|(d, _)| d.clone()).collect();
    {
        let mut r = runner.borrow_mut();
        if r.scan.worker.is_some() {
            let mut scan_ports: Vec<(&str, JsValue)> = Vec::new();
            let mut sent = true;
            // From two cores, a reader of its own: the scan then gets every chunk
            // from it. On one core the scan reads for itself.
            let reader = r.read.worker.as_ref().filter(|_| crate::web::cores() >= READER_MIN_CORES);
            if let Some(channel) = reader.and_then(|_| MessageChannel::new().ok()) {
                let read = Job { files: dropped.clone(), started_ms, task: Task::Read };
                let (msg, transfer) = message(&files, &read, &[(READER_KEY, channel.port2().into())]);
                sent &= r.read.send(msg, transfer);
                scan_ports.push((READER_KEY, channel.port1().into()));
            }
            let task = match r.hash.worker.as_ref().and_then(|_| MessageChannel::new().ok()) {
                Some(channel) => {
                    let hash = Job { files: dropped.clone(), started_ms, task: Task::Hash { sha256 } };
                    let (msg, transfer) = message(&files, &hash, &[(PORT_KEY, channel.port2().into())]);
                    r.hashes_left = files.len();
                    sent &= r.hash.send(msg, transfer);
                    let total: u64 = dropped.iter().map(|d| d.size).sum();
                    if crate::web::cores() >= HASH_BESIDE_SCAN_MIN_CORES || total < HASH_DEFER_MIN_BYTES {
                        scan_ports.push((PORT_KEY, channel.port1().into()));
                    } else {
                        // The page tells the hash worker to read each file once the verdict is shown.
                        r.deferred_hash = Some((channel.port1(), dropped.iter().map(|d| d.id).collect()));
                    }
                    Task::Scan
                }
                None => Task::ScanThenHash { sha256 },
            };
            let job = Job { files: dropped.clone(), started_ms, task };
            let (msg, transfer) = message(&files, &job, &scan_ports);
            let sent = sent && r.scan.send(msg, transfer);
            if sent {
                return;
            }
            r.stop();
        }
    }
    // No worker: scan, then hash, on the page, in awaited chunks.
    let cancel = Rc::new(Cell::new(false));
    runner.borrow_mut().cancel = Some(Rc::clone(&cancel));
    let dispatch = dispatch.clone();
    wasm_bindgen_futures::spawn_local(async move {
        // Once cancelled (a new drop, or the person's cancel, which the page
        // reports itself), the loop's last words are for no one.
        let send = |m| {
            if let Some(action) = action(m).filter(|_| !cancel.get()) {
                dispatch.emit(action);
            }
        };
        let stopped = Rc::clone(&cancel);
        driver::run(files, &send, move || stopped.get(), started_ms, Task::ScanThenHash { sha256 }, (None, None)).await;
    });
}

/// A folder job (`protocol::FolderJob`: the recovery preview's plans, the
/// replica compare) in a worker of its own, spawned for the job and ended
/// with it — or, when no worker starts (or it fails to run), on the page
/// in awaited reads, as the scan falls back. A new job ends the last one.
#[derive(Debug, Default)]
pub struct Errand {
    worker: Option<Worker>,
    on_message: Option<Closure<dyn FnMut(MessageEvent)>>,
    on_error: Option<Closure<dyn FnMut(web_sys::Event)>>,
    cancelled: Option<Rc<Cell<bool>>>,
}

impl Errand {
    /// Ends the job now running, if any: no answer of it comes after this.
    pub fn stop(&mut self) {
        if let Some(w) = self.worker.take() {
            w.terminate();
        }
        self.on_message = None;
        self.on_error = None;
        if let Some(c) = self.cancelled.take() {
            c.set(true);
        }
    }

    /// Starts `job` over `blobs` (the folders' `File`s, folder after folder);
    /// each answer goes to `on`.
    pub fn start(&mut self, job: FolderJob, blobs: Vec<Blob>, on: &Callback<Answer>) {
        self.stop();
        let cancelled = Rc::new(Cell::new(false));
        self.cancelled = Some(Rc::clone(&cancelled));
        let Ok(worker) = Worker::new(WORKER_SCRIPT) else { return on_page(job, blobs, on.clone(), cancelled) };
        let msg = Object::new();
        let _ = Reflect::set(&msg, &JOB_KEY.into(), &Uint8Array::from(protocol::encode_folder_job(&job).as_slice()));
        let _ = Reflect::set(&msg, &FILES_KEY.into(), &blobs.iter().map(JsValue::from).collect::<Array>());
        // A worker that failed to run is left alone: the page runs its job.
        let abandoned = Rc::new(Cell::new(false));
        let (w, d, stop, left) = (worker.clone(), on.clone(), Rc::clone(&cancelled), Rc::clone(&abandoned));
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let data = e.data();
            let bytes = if data.is_instance_of::<Uint8Array>() { Uint8Array::new(&data).to_vec() } else { Vec::new() };
            match protocol::decode_answer(&bytes) {
                _ if stop.get() || left.get() => {}
                Ok(Answer::Ready) => {
                    if w.post_message(&msg).is_err() {
                        d.emit(Answer::Failed("could not hand the files to the worker".into()));
                    }
                }
                Ok(done @ Answer::Done { .. }) => {
                    w.terminate();
                    d.emit(done);
                }
                Ok(answer) => d.emit(answer),
                Err(e) => d.emit(Answer::Failed(format!("the worker sent an unreadable message: {e}"))),
            }
        });
        // A worker that cannot run: the job runs on the page instead.
        let (w, d) = (worker.clone(), on.clone());
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            e.prevent_default();
            w.terminate();
            if !abandoned.replace(true) && !cancelled.get() {
                on_page(job.clone(), blobs.clone(), d.clone(), Rc::clone(&cancelled));
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        (self.worker, self.on_message, self.on_error) = (Some(worker), Some(on_message), Some(on_error));
    }
}

/// A folder job on the page itself, in awaited reads.
fn on_page(job: FolderJob, blobs: Vec<Blob>, on: Callback<Answer>, cancelled: Rc<Cell<bool>>) {
    wasm_bindgen_futures::spawn_local(async move {
        driver::folders(job, blobs, &|a| on.emit(a), &|| cancelled.get()).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hash::hash_bytes;

    /// Every message the page hears becomes the state's own action, or none;
    /// a worker's words become a `ScanError` the banner shows as they were.
    #[test]
    fn each_worker_message_becomes_the_states_own_action() {
        assert!(action(ToPage::Ready).is_none());
        assert!(action(ToPage::Found { file: 1, total: 0, matches: Vec::new() }).is_none());
        assert!(matches!(action(ToPage::Progress { file: 3, done: 9 }), Some(Action::Progress { file: FileId(3), done: 9 })));
        assert!(matches!(
            action(ToPage::Live { file: 4, findings: Vec::new(), ms: 2.0 }),
            Some(Action::Met { file: FileId(4), ms, .. }) if ms == 2.0
        ));
        assert!(matches!(action(ToPage::Group { items: Vec::new(), ms: 1.0 }), Some(Action::GroupScanned { ms, .. }) if ms == 1.0));
        assert!(matches!(action(ToPage::Done { ms: 5.0 }), Some(Action::ScanDone { ms }) if ms == 5.0));
        let Some(Action::Hashed { items, ms }) = action(ToPage::Hashes { items: vec![(7, hash_bytes(b"x", false))], ms: 6.0 }) else {
            panic!("hashes are not Hashed")
        };
        assert_eq!((items, ms), (vec![(FileId(7), hash_bytes(b"x", false))], 6.0));
        let Some(Action::ScanFailed(e)) = action(ToPage::Error { message: "x.log: reading from byte 0: gone".into() }) else {
            panic!("an error is not ScanFailed")
        };
        assert_eq!(e, ScanError::Worker("x.log: reading from byte 0: gone".into()));
        assert_eq!(e.to_string(), "x.log: reading from byte 0: gone");
    }
}
