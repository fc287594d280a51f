//! The page's half of the scan: a warm Web Worker (spawned when the page
//! loads, so a drop does not wait for its module), or — when no worker can
//! start — the same loop on the page in awaited chunks. Messages go both
//! ways through `logic::protocol`, and arrive in the reducer as
//! [`Action::Scan`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, MessageEvent, Worker};
use yew::Callback;

use crate::driver;
use crate::logic::group::Dropped;
use crate::logic::protocol::{self, Job, ToPage, FILES_KEY, JOB_KEY};
use crate::state::Action;

/// The scan worker's script (trunk's loader shim; `filehash` is off so the name is stable).
pub const WORKER_SCRIPT: &str = "./felix-scan-worker_loader.js";

/// The scan machinery: the worker (warm, or running a job), or a cancel flag
/// for the page's own loop.
#[derive(Debug, Default)]
pub struct Runner {
    worker: Option<Worker>,
    ready: bool,
    busy: bool,
    pending: Option<Object>,
    cancel: Option<Rc<Cell<bool>>>,
}

impl Runner {
    /// Stops whatever runs.
    pub fn stop(&mut self) {
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

fn on_worker_message(runner: &Rc<RefCell<Runner>>, data: &JsValue, dispatch: &Callback<Action>) {
    let bytes = if data.is_instance_of::<Uint8Array>() { Uint8Array::new(data).to_vec() } else { Vec::new() };
    let msg = match protocol::decode(&bytes) {
        Ok(msg) => msg,
        Err(e) => ToPage::Error { message: format!("the scan worker sent an unreadable message: {e}") },
    };
    match msg {
        ToPage::Ready => {
            let mut r = runner.borrow_mut();
            r.ready = true;
            if let (Some(job), Some(w)) = (r.pending.take(), r.worker.as_ref()) {
                if w.post_message(&job).is_err() {
                    drop(r);
                    dispatch.emit(Action::Scan(ToPage::Error { message: "could not hand the files to the scan worker".into() }));
                }
            }
        }
        msg => {
            if matches!(msg, ToPage::Done { .. } | ToPage::Error { .. }) {
                runner.borrow_mut().busy = false;
            }
            dispatch.emit(Action::Scan(msg));
        }
    }
}

/// Spawns the scan worker ahead of time. It says "ready" once running; a job sent earlier waits.
pub fn spawn_worker(runner: &Rc<RefCell<Runner>>, dispatch: &Callback<Action>) {
    let Ok(worker) = Worker::new(WORKER_SCRIPT) else { return };
    let weak = Rc::downgrade(runner);
    let d = dispatch.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        if let Some(runner) = weak.upgrade() {
            on_worker_message(&runner, &e.data(), &d);
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let d = dispatch.clone();
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        d.emit(Action::Scan(ToPage::Error { message: "the scan worker failed to run".into() }))
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    let mut r = runner.borrow_mut();
    r.worker = Some(worker);
    r.ready = false;
}

/// Starts scanning `files`, already loaded into the state under their ids:
/// in the worker, or on the page if none runs.
pub fn start(files: Vec<(Dropped, Blob)>, runner: &Rc<RefCell<Runner>>, dispatch: &Callback<Action>) {
    let started_ms = driver::wall_ms();
    if runner.borrow().busy {
        // A scan is running: stop it and start from a fresh worker.
        runner.borrow_mut().stop();
        spawn_worker(runner, dispatch);
    }
    let job = Job { files: files.iter().map(|(d, _)| d.clone()).collect(), started_ms };
    let msg = Object::new();
    let blobs: Array = files.iter().map(|(_, b)| JsValue::from(b)).collect();
    let _ = Reflect::set(&msg, &JOB_KEY.into(), &Uint8Array::from(protocol::encode_job(&job).as_slice()));
    let _ = Reflect::set(&msg, &FILES_KEY.into(), &blobs);
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
    let dispatch = dispatch.clone();
    wasm_bindgen_futures::spawn_local(async move {
        driver::run(files, &|m| dispatch.emit(Action::Scan(m)), move || cancel.get(), started_ms).await;
    });
}
