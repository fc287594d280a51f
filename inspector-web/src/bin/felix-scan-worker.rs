//! The scan worker: receives `{ paths, files, started }` from the page, runs
//! the shared scan loop off the main thread, and posts back `progress`,
//! `live`, `group` (reports as JSON, record rows packed as bytes) and `done`.

use felix_codec::report::FindingReport;
use felix_inspector::driver::{self, Events};
use felix_inspector::logic::{scan::Scanned, wire};
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, DedicatedWorkerGlobalScope, File, MessageEvent};

struct Poster(DedicatedWorkerGlobalScope);

fn message(kind: &str, fields: &[(&str, JsValue)]) -> Object {
    let m = Object::new();
    let _ = Reflect::set(&m, &"type".into(), &kind.into());
    for (k, v) in fields {
        let _ = Reflect::set(&m, &(*k).into(), v);
    }
    m
}

impl Poster {
    fn post(&self, m: &Object) {
        let _ = self.0.post_message(m);
    }
}

impl Events for Poster {
    fn progress(&self, file: usize, done: u64) {
        #[allow(clippy::cast_precision_loss)]
        self.post(&message("progress", &[("file", (file as f64).into()), ("done", (done as f64).into())]));
    }
    fn live(&self, file: usize, found: Vec<FindingReport>, ms: f64) {
        let json = serde_json::to_string(&found).unwrap_or_default();
        #[allow(clippy::cast_precision_loss)]
        self.post(&message("live", &[("file", (file as f64).into()), ("findings", json.into()), ("ms", ms.into())]));
    }
    fn scanned(&self, results: Vec<Scanned>, ms: f64) {
        let items = Array::new();
        for r in results {
            let report = serde_json::to_string(&r.report).unwrap_or_default();
            #[allow(clippy::cast_precision_loss)]
            let item = message(
                "item",
                &[
                    ("dropped", (r.dropped as f64).into()),
                    ("report", report.into()),
                    ("detail", Uint8Array::from(&wire::pack(&r.detail)[..]).into()),
                ],
            );
            items.push(&item);
        }
        self.post(&message("group", &[("items", items.into()), ("ms", ms.into())]));
    }
    fn done(&self, ms: f64) {
        self.post(&message("done", &[("ms", ms.into())]));
    }
    fn error(&self, text: String) {
        self.post(&message("error", &[("message", text.into())]));
    }
}

fn main() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let poster_scope = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let get = |k: &str| Reflect::get(&data, &k.into()).unwrap_or(JsValue::UNDEFINED);
        let paths: Array = get("paths").unchecked_into();
        let files: Array = get("files").unchecked_into();
        let started = get("started").as_f64().unwrap_or_else(driver::wall_ms);
        let list: Vec<(String, u64, Blob)> = paths
            .iter()
            .zip(files.iter())
            .map(|(p, f)| {
                let f: File = f.unchecked_into();
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let size = f.size() as u64;
                (p.as_string().unwrap_or_default(), size, f.into())
            })
            .collect();
        let poster = Poster(poster_scope.clone());
        wasm_bindgen_futures::spawn_local(async move { driver::run(list, &poster, || false, started).await });
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let _ = scope.post_message(&message("ready", &[]));
}
