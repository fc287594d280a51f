//! The page's own hooks: the dispatcher, the runner and loader made once,
//! what happens on mount (the scan worker, the permalink), the keyboard
//! shortcuts, and the stages a newly shown file's detail views mount in.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use felix_codec::shard::{diff::Diff, recovery::Plan};
use yew::prelude::*;

use super::loader::Loader;
use crate::state::{Action, RowId, State};
use crate::ui::keys::{self, Shortcut};
use crate::web;
use crate::worker::runner::{self, Runner};

/// Frames the detail views of a newly shown file mount in, one after the other
/// (see [`use_detail_stages`]): the file map; the records; the index and epochs; the hex view.
const DETAIL_STAGES: u8 = 4;

/// The reducer's dispatcher as a callback, made once.
#[hook]
pub fn use_dispatch(state: &UseReducerHandle<State>) -> Callback<Action> {
    let d = state.dispatcher();
    (*use_memo((), move |()| Callback::from(move |a: Action| d.dispatch(a)))).clone()
}

/// What the page keeps besides the reducer's state: the runner, the loader
/// (both made once), and the diff and the plan opened from a paste or a JSON file.
pub struct Page {
    /// The scan's runner.
    pub runner: Rc<RefCell<Runner>>,
    /// The page's actions on files and documents.
    pub loader: Loader,
    /// The diff opened last (numbered, so the same diff opened again shows again).
    pub opened_diff: UseStateHandle<Option<(u32, Rc<Diff>)>>,
    /// The recovery plan opened.
    pub opened_plan: UseStateHandle<Option<Rc<Plan>>>,
}

/// The page's runner and loader, made once, and the documents opened.
#[hook]
pub fn use_page(dispatch: &Callback<Action>) -> Page {
    let runner: Rc<RefCell<Runner>> = (*use_memo((), |()| Rc::new(RefCell::new(Runner::default())))).clone();
    let opened_diff = use_state(|| None::<(u32, Rc<Diff>)>);
    let opened_plan = use_state(|| None::<Rc<Plan>>);
    let loader = {
        let (runner, dispatch, diff, plan) = (Rc::clone(&runner), dispatch.clone(), opened_diff.setter(), opened_plan.setter());
        (*use_memo((), move |()| {
            Loader::new(runner, dispatch, Callback::from(move |d| diff.set(Some(d))), Callback::from(move |p| plan.set(p)))
        }))
        .clone()
    };
    Page { runner, loader, opened_diff, opened_plan }
}

/// On mount: the scan worker is spawned, and the report the address carries
/// is opened — again whenever the fragment changes (a link pasted into the
/// address bar of an open page changes only the fragment).
#[hook]
pub fn use_startup(page: &Page, dispatch: &Callback<Action>) {
    let (runner, dispatch, loader) = (Rc::clone(&page.runner), dispatch.clone(), page.loader.clone());
    use_effect_with((), move |()| {
        runner::spawn_worker(&runner, &dispatch);
        loader.open_link();
        web::on_hash_change(move || loader.open_link());
        || ()
    });
}

/// The page-wide shortcuts: `n` / `p` (and their kin) step through the
/// problems, unless typed into a field (`ui::keys::shortcut`).
#[must_use]
pub fn on_shortcut(dispatch: &Callback<Action>) -> Callback<KeyboardEvent> {
    let dispatch = dispatch.clone();
    Callback::from(move |e: KeyboardEvent| {
        let target =
            e.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok()).map(|el| el.tag_name()).unwrap_or_default();
        match keys::shortcut(&e.key(), &target, e.ctrl_key() || e.meta_key() || e.alt_key()) {
            Some(Shortcut::Next) => dispatch.emit(Action::Step(!e.shift_key())),
            Some(Shortcut::Previous) => dispatch.emit(Action::Step(false)),
            None => {}
        }
    })
}

/// How many of a shown file's detail views are mounted (0 to
/// [`DETAIL_STAGES`]): they mount in later frames than the verdict — the
/// file map, the records, the index, and the hex view last — so that no one
/// task of the page builds, lays out and paints them all (issue 8: no
/// main-thread task over 50 ms). `key` names the file shown (its row and
/// scan); another starts again from 0.
#[hook]
pub fn use_detail_stages(key: Option<(RowId, usize)>) -> u8 {
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
    if stage.0 == key {
        stage.1
    } else {
        0
    }
}
