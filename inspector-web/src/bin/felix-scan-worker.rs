//! The inspector's worker, started three times by the page: as the reader,
//! the scan worker and the hash worker. It receives a job
//! (`worker::protocol`) with the `File`s and the ends of the channels between
//! the workers beside it, runs the shared loop for its task off the main
//! thread ([`driver::read`], [`driver::run`] or [`driver::hash`]), and posts
//! each [`ToPage`] message back as one byte buffer (transferred, not copied).
//! A find job (`protocol::FindJob`, sent to a worker of its own) runs
//! [`driver::find`] instead; a folder job (`protocol::FolderJob`: the
//! recovery preview's plans, the replica compare) runs [`driver::folders`]
//! and answers `protocol::Answer`s.

use std::rc::Rc;

use felix_inspector::worker::driver;
use felix_inspector::worker::error::JobError;
use felix_inspector::worker::protocol::{self, Task, ToPage, FILES_KEY, JOB_KEY, PORT_KEY, READER_KEY};
use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

fn post(scope: &DedicatedWorkerGlobalScope, msg: &ToPage) {
    let bytes = Uint8Array::from(protocol::encode(msg).as_slice());
    let transfer = Array::of1(&bytes.buffer());
    let _ = scope.post_message_with_transfer(&bytes, &transfer);
}

/// A find job (`protocol::FindJob`): the search runs here, off the page.
fn find(scope: &DedicatedWorkerGlobalScope, bytes: &[u8], files: &Array) {
    let job = match protocol::decode_find_job(bytes) {
        Ok(job) if job.files.len() == files.length() as usize => job,
        Ok(job) => return post(scope, &JobError::FileCount { sent: files.length(), listed: job.files.len(), search: true }.to_page()),
        Err(e) => return post(scope, &JobError::Unreadable(e).to_page()),
    };
    let list: Vec<_> = job.files.into_iter().zip(files.iter().map(JsCast::unchecked_into::<Blob>)).collect();
    let scope = scope.clone();
    wasm_bindgen_futures::spawn_local(async move {
        driver::find(list, job.needle, job.started_ms, &|m| post(&scope, &m), &|| false).await;
    });
}

/// A folder job (`protocol::FolderJob`): read and answered here, off the page.
fn folders(scope: &DedicatedWorkerGlobalScope, bytes: &[u8], files: &Array) {
    let answer = |scope: &DedicatedWorkerGlobalScope, a: &protocol::Answer| {
        let bytes = Uint8Array::from(protocol::encode_answer(a).as_slice());
        let _ = scope.post_message_with_transfer(&bytes, &Array::of1(&bytes.buffer()));
    };
    let job = match protocol::decode_folder_job(bytes) {
        Ok(job) => job,
        Err(e) => return answer(scope, &protocol::Answer::Failed(e.to_string())),
    };
    let named: usize = job.folders().iter().map(|f| f.files.len()).sum();
    if named != files.length() as usize {
        let message = format!("the page sent {} files for folders of {named}", files.length());
        return answer(scope, &protocol::Answer::Failed(message));
    }
    let blobs: Vec<Blob> = files.iter().map(JsCast::unchecked_into::<Blob>).collect();
    let scope = scope.clone();
    wasm_bindgen_futures::spawn_local(async move {
        driver::folders(job, blobs, &|a| answer(&scope, &a), &|| false).await;
    });
}

fn main() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let job =
            Reflect::get(&data, &JOB_KEY.into()).ok().filter(|v| v.is_instance_of::<Uint8Array>()).map(|v| Uint8Array::new(&v).to_vec());
        let files: Array = Reflect::get(&data, &FILES_KEY.into()).ok().and_then(|v| v.dyn_into().ok()).unwrap_or_default();
        let port: Option<MessagePort> = Reflect::get(&data, &PORT_KEY.into()).ok().and_then(|v| v.dyn_into().ok());
        let reader: Option<MessagePort> = Reflect::get(&data, &READER_KEY.into()).ok().and_then(|v| v.dyn_into().ok());
        if let Some(bytes) = job.as_deref().filter(|b| protocol::is_find_job(b)) {
            return find(&reply, bytes, &files);
        }
        if let Some(bytes) = job.as_deref().filter(|b| protocol::is_folder_job(b)) {
            return folders(&reply, bytes, &files);
        }
        let job = job.ok_or(JobError::NoJob).and_then(|b| protocol::decode_job(&b).map_err(JobError::Unreadable));
        let job = match job {
            Ok(job) if job.files.len() == files.length() as usize => job,
            Ok(job) => {
                return post(&reply, &JobError::FileCount { sent: files.length(), listed: job.files.len(), search: false }.to_page())
            }
            Err(e) => return post(&reply, &e.to_page()),
        };
        let list: Vec<_> = job.files.into_iter().zip(files.iter().map(JsCast::unchecked_into::<Blob>)).collect();
        let scope = reply.clone();
        match (job.task, port, reader) {
            (Task::Hash { sha256 }, Some(port), _) => {
                driver::hash(list, &port, sha256, job.started_ms, Rc::new(move |m| post(&scope, &m)));
            }
            (Task::Read, _, Some(reader)) => wasm_bindgen_futures::spawn_local(driver::read(list, reader)),
            (task @ (Task::Hash { .. } | Task::Read), _, _) => {
                post(&reply, &JobError::NoChannel(task).to_page());
            }
            (task, port, reader) => wasm_bindgen_futures::spawn_local(async move {
                driver::run(list, &|m| post(&scope, &m), || false, job.started_ms, task, (reader, port)).await;
            }),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&scope, &ToPage::Ready);
}
