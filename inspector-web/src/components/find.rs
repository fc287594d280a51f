//! Find: a query (text or hex bytes), where to look (the file shown or every
//! dropped file), the matches by byte position and record, and next /
//! previous stepping that selects the match's bytes in the hex view. The
//! search runs in a Web Worker of its own (`driver::find` over the streamed
//! files, `model::find`); with no worker, on the page in awaited reads.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, HtmlInputElement, HtmlSelectElement, MessageEvent, Worker};
use yew::prelude::*;

use super::message::Message;
use super::text_field::TextField;
use crate::model::find::{parse_query, Mode, Search};
use crate::model::group::Dropped;
use crate::worker::driver;
use crate::worker::protocol::{self, FindJob, ToPage, FILES_KEY, JOB_KEY};
use crate::worker::runner::WORKER_SCRIPT;

/// Matches drawn at once, around the selected one.
const SHOWN_MATCHES: usize = 100;

/// The find panel's inputs.
#[derive(Properties, PartialEq)]
pub struct FindProps {
    /// Every dropped file with its bytes, in the drop's order.
    pub files: Rc<Vec<(Dropped, Blob)>>,
    /// The file the detail views show (what "this file" searches).
    pub shown: Option<u32>,
    /// A match selected: `(file, start, end)`.
    pub on_select: Callback<(u32, u64, u64)>,
}

enum FindAction {
    Start(Search),
    Message(u64, ToPage),
    Step(bool),
    Pick(usize),
    Refused(String),
    /// Another drop: the last one's matches name files it no longer holds.
    Clear,
}

#[derive(Default, PartialEq)]
struct FindState {
    search: Option<Search>,
    refused: Option<String>,
}

impl Reducible for FindState {
    type Action = FindAction;

    fn reduce(self: Rc<Self>, action: FindAction) -> Rc<Self> {
        let mut next = Self { search: self.search.clone(), refused: None };
        match action {
            FindAction::Start(s) => next.search = Some(s),
            FindAction::Message(id, msg) => {
                if let (Some(s), Some(heard)) = (&mut next.search, msg.for_find()) {
                    s.on_message(id, heard);
                }
                next.refused.clone_from(&self.refused);
            }
            FindAction::Step(forward) => {
                if let Some(s) = &mut next.search {
                    s.results.step(forward);
                }
            }
            FindAction::Pick(i) => {
                if let Some(s) = next.search.as_mut().filter(|s| i < s.results.items.len()) {
                    s.results.current = Some(i);
                }
            }
            // The last search's matches do not answer the query refused.
            FindAction::Refused(why) => {
                next.refused = Some(why);
                next.search = None;
            }
            FindAction::Clear => next.search = None,
        }
        Rc::new(next)
    }
}

/// The worker of the running search (a new search ends the last one's).
#[derive(Default)]
struct Running {
    worker: Option<Worker>,
    cancelled: Option<Rc<std::cell::Cell<bool>>>,
}

impl Running {
    fn stop(&mut self) {
        if let Some(w) = self.worker.take() {
            w.terminate();
        }
        if let Some(c) = self.cancelled.take() {
            c.set(true);
        }
    }
}

/// Starts search `id` of `list` for `needle`: in a worker, or on the page.
fn start(running: &Rc<RefCell<Running>>, id: u64, list: Vec<(Dropped, Blob)>, needle: Vec<u8>, dispatch: Callback<FindAction>) {
    running.borrow_mut().stop();
    let job = FindJob { files: list.iter().map(|(d, _)| d.clone()).collect(), needle, started_ms: driver::wall_ms() };
    if let Ok(worker) = Worker::new(WORKER_SCRIPT) {
        let msg = Object::new();
        let _ = Reflect::set(&msg, &JOB_KEY.into(), &Uint8Array::from(protocol::encode_find_job(&job).as_slice()));
        let blobs: Array = list.iter().map(|(_, b)| JsValue::from(b)).collect();
        let _ = Reflect::set(&msg, &FILES_KEY.into(), &blobs);
        let (w, d) = (worker.clone(), dispatch);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let data = e.data();
            let bytes = if data.is_instance_of::<Uint8Array>() { Uint8Array::new(&data).to_vec() } else { Vec::new() };
            match protocol::decode(&bytes) {
                Ok(ToPage::Ready) => {
                    if w.post_message(&msg).is_err() {
                        d.emit(FindAction::Message(id, ToPage::Error { message: "could not hand the files to the find worker".into() }));
                    }
                }
                Ok(m) => d.emit(FindAction::Message(id, m)),
                Err(e) => {
                    d.emit(FindAction::Message(id, ToPage::Error { message: format!("the find worker sent an unreadable message: {e}") }))
                }
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        running.borrow_mut().worker = Some(worker);
        return;
    }
    // No worker: on the page, in awaited reads.
    let cancelled = Rc::new(std::cell::Cell::new(false));
    running.borrow_mut().cancelled = Some(Rc::clone(&cancelled));
    wasm_bindgen_futures::spawn_local(async move {
        let send = |m| dispatch.emit(FindAction::Message(id, m));
        driver::find(list, job.needle, job.started_ms, &send, &|| cancelled.get()).await;
    });
}

fn match_line(files: &[(Dropped, Blob)], file: u32, position: u64, record: Option<u64>) -> Html {
    let path = files.iter().find(|(d, _)| d.id == file).map_or_else(String::new, |(d, _)| d.path.clone());
    let record = record.map_or_else(|| "in no record (a header, an index or damaged bytes)".to_owned(), |o| format!("in record {o}"));
    html! { <><TextField text={path} />{ format!(" · byte {position} ({position:#x}) · {record}") }</> }
}

fn results_view(state: &FindState, files: &[(Dropped, Blob)], dispatch: &Callback<FindAction>) -> Html {
    let Some(s) = &state.search else { return html! {} };
    let r = &s.results;
    let shown = r.visible(SHOWN_MATCHES);
    let drawn = r.drawn(&shown);
    let start = (shown.start + 1).to_string();
    let items = shown.filter_map(|i| r.items.get(i).map(|m| (i, m))).map(|(i, (file, f))| {
        let current = r.current == Some(i);
        let onclick = dispatch.reform(move |_: MouseEvent| FindAction::Pick(i));
        html! {
            <li class={classes!("match", current.then_some("current"))} aria-current={current.then_some("true")}
                data-position={f.position.to_string()} data-record={f.record.map(|o| o.to_string())}>
                <button type="button" {onclick}>{ match_line(files, *file, f.position, f.record) }</button>
            </li>
        }
    });
    html! {
        <>
            <p id="find-status" role="status">{ r.summary(s.done) }</p>
            if let Some(e) = &s.error { <div class="banner error" id="find-error" role="alert"><Message text={e.clone()} /></div> }
            <ol id="find-results" class="find-results" {start}>{ for items }</ol>
            if let Some(d) = drawn { <p id="find-drawn" class="find-drawn">{ d }</p> }
        </>
    }
}

/// The find panel.
#[function_component(Find)]
pub fn find(props: &FindProps) -> Html {
    let state = use_reducer(FindState::default);
    let running: Rc<RefCell<Running>> = use_mut_ref(Running::default);
    let next_id = use_mut_ref(|| 0u64);
    let form = Form { query: use_node_ref(), mode: use_node_ref(), scope: use_node_ref() };
    use_selection_shown(&props.on_select, state.search.as_ref().and_then(Search::selection));
    let dispatch = state.dispatcher();
    let dispatch: Callback<FindAction> = Callback::from(move |a| dispatch.dispatch(a));
    use_end_on_drop(&props.files, &running, &dispatch);
    let on_submit = on_submit(props, &form, &dispatch, running, next_id);
    let on_key = {
        let dispatch = dispatch.clone();
        Callback::from(move |e: KeyboardEvent| {
            // Enter searches (the form); F3 / Shift+F3 step.
            if e.key() == "F3" {
                e.prevent_default();
                dispatch.emit(FindAction::Step(!e.shift_key()));
            }
        })
    };
    let any = state.search.as_ref().is_some_and(|s| !s.results.items.is_empty());
    html! {
        <section class="find" id="find" aria-labelledby="find-title" onkeydown={on_key}>
            <h2 id="find-title">{ "Find" }</h2>
            { form_view(&form, on_submit, any, &dispatch) }
            if let Some(why) = &state.refused { <p class="banner error" id="find-refused" role="alert">{ why.clone() }</p> }
            { results_view(&state, &props.files, &dispatch) }
        </section>
    }
}

/// The form's fields: the query, how to read it, where to look.
struct Form {
    query: NodeRef,
    mode: NodeRef,
    scope: NodeRef,
}

/// The selected match's bytes go to the hex view.
#[hook]
fn use_selection_shown(on_select: &Callback<(u32, u64, u64)>, selection: Option<(u32, u64, u64)>) {
    let on_select = on_select.clone();
    use_effect_with(selection, move |sel| {
        if let Some(sel) = *sel {
            on_select.emit(sel);
        }
        || ()
    });
}

/// A new drop ends the search of the files it replaced, and its matches go.
#[hook]
fn use_end_on_drop(files: &Rc<Vec<(Dropped, Blob)>>, running: &Rc<RefCell<Running>>, dispatch: &Callback<FindAction>) {
    let (running, dispatch) = (running.clone(), dispatch.clone());
    use_effect_with(Rc::clone(files), move |_| {
        dispatch.emit(FindAction::Clear);
        move || running.borrow_mut().stop()
    });
}

/// The form's submit: the query read as asked (or refused in words), then
/// searched for in the files asked, as a new search.
fn on_submit(
    props: &FindProps,
    form: &Form,
    dispatch: &Callback<FindAction>,
    running: Rc<RefCell<Running>>,
    next_id: Rc<RefCell<u64>>,
) -> Callback<SubmitEvent> {
    let (files, shown, dispatch) = (Rc::clone(&props.files), props.shown, dispatch.clone());
    let (query, mode, scope) = (form.query.clone(), form.mode.clone(), form.scope.clone());
    Callback::from(move |e: SubmitEvent| {
        e.prevent_default();
        let text = query.cast::<HtmlInputElement>().map(|i| i.value()).unwrap_or_default();
        let hex = mode.cast::<HtmlSelectElement>().is_some_and(|s| s.value() == "hex");
        let all = scope.cast::<HtmlSelectElement>().is_none_or(|s| s.value() == "all");
        let needle = match parse_query(&text, if hex { Mode::Hex } else { Mode::Text }) {
            Ok(n) => n,
            Err(why) => return dispatch.emit(FindAction::Refused(why.to_string())),
        };
        let list: Vec<(Dropped, Blob)> = files.iter().filter(|(d, _)| all || Some(d.id) == shown).cloned().collect();
        let id = {
            let mut n = next_id.borrow_mut();
            *n = n.wrapping_add(1);
            *n
        };
        dispatch.emit(FindAction::Start(Search::new(id, needle.len())));
        start(&running, id, list, needle, dispatch.clone());
    })
}

/// The form: the query, its mode and scope, Find, previous and next.
fn form_view(form: &Form, on_submit: Callback<SubmitEvent>, any: bool, dispatch: &Callback<FindAction>) -> Html {
    let step = |forward: bool| dispatch.reform(move |_: MouseEvent| FindAction::Step(forward));
    html! {
        <form class="find-form" onsubmit={on_submit}>
            <label for="find-query">{ "Find" }</label>
            <input id="find-query" ref={form.query.clone()} type="search" autocomplete="off" spellcheck="false"
                placeholder="text, or bytes in hex: de ad be ef" />
            <label for="find-mode" class="sr-only">{ "read the query as" }</label>
            <select id="find-mode" ref={form.mode.clone()}>
                <option value="text" selected=true>{ "text (UTF-8)" }</option>
                <option value="hex">{ "hex bytes" }</option>
            </select>
            <label for="find-scope" class="sr-only">{ "search in" }</label>
            <select id="find-scope" ref={form.scope.clone()}>
                <option value="all" selected=true>{ "in every dropped file" }</option>
                <option value="shown">{ "in the file shown" }</option>
            </select>
            <button id="find-go" type="submit">{ "Find" }</button>
            <button id="find-prev" type="button" disabled={!any} onclick={step(false)}>{ "◀ previous" }</button>
            <button id="find-next" type="button" disabled={!any} onclick={step(true)}>{ "next ▶" }</button>
        </form>
    }
}
