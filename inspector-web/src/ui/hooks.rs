//! Hooks and handlers several components share (browser only), each a thin
//! layer over the pure logic beside it: the virtual list's scroll state over
//! [`super::scroll::Virtual`], and the file pickers' and drop targets' handlers.

use std::cell::RefCell;
use std::rc::Rc;

use web_sys::{Element, File, HtmlInputElement};
use yew::prelude::*;

use super::scroll::Virtual;
use crate::web;
use crate::worker::runner::Errand;

/// A virtual list's scroll: the first row drawn, the scroll box, and the
/// box's scroll handler (the one place a scroll position becomes a row).
#[derive(Clone)]
pub struct VirtualScroll {
    /// The first row drawn.
    pub first: UseStateHandle<u64>,
    /// The scroll box (its `ref`).
    pub node: NodeRef,
    /// The scroll box's `onscroll`.
    pub on_scroll: Callback<Event>,
    v: Virtual,
}

impl VirtualScroll {
    /// Scrolls the box so that `row` is at its top (the state is not touched).
    pub fn scroll_to(&self, row: u64) {
        if let Some(el) = self.node.cast::<Element>() {
            el.set_scroll_top(i32::try_from(self.v.px_of(row)).unwrap_or(i32::MAX));
        }
    }

    /// The scroll position that shows `row` at the top ([`Virtual::px_of`]).
    #[must_use]
    pub fn px_of(&self, row: u64) -> u64 {
        self.v.px_of(row)
    }

    /// The spacer's height ([`Virtual::spacer_px`]).
    #[must_use]
    pub fn spacer_px(&self) -> u64 {
        self.v.spacer_px()
    }

    /// Shows `row` first: the box scrolls there and the rows drawn follow at once.
    pub fn show(&self, row: u64) {
        self.scroll_to(row);
        self.first.set(row);
    }

    /// Shows `row` first (or the last page's first row), the box scrolling in
    /// a later task: scrolling lays the page out, which is not to lengthen this one.
    pub fn show_later(&self, row: u64) {
        let this = self.clone();
        web::later(move || this.scroll_to(row));
        self.first.set(row.min(self.v.max_first()));
    }
}

/// The scroll state of the virtual list `v`: the first row drawn follows the
/// box's scroll position, read in a later task (see [`web::later`]).
#[hook]
pub fn use_virtual_scroll(v: Virtual) -> VirtualScroll {
    let first = use_state(|| 0u64);
    let node = use_node_ref();
    let on_scroll = {
        let first = first.clone();
        Callback::from(move |e: Event| {
            let el: Element = e.target_unchecked_into();
            let first = first.clone();
            web::later(move || {
                let row = v.first_at(u64::try_from(el.scroll_top()).unwrap_or(0));
                if row != *first {
                    first.set(row);
                }
            });
        })
    };
    VirtualScroll { first, node, on_scroll, v }
}

/// A file picker's `onchange`: its files go to `on_files`, and it is emptied
/// (so choosing the same files again is a change too).
#[must_use]
pub fn on_picked(on_files: &Callback<Vec<(String, File)>>) -> Callback<Event> {
    let cb = on_files.clone();
    Callback::from(move |e: Event| {
        let input: HtmlInputElement = e.target_unchecked_into();
        cb.emit(web::picked(input.files()));
        input.set_value("");
    })
}

/// A drop target's `ondrop`: the dropped files (folders walked) go to
/// `on_files`, or the browser's flat list when the walk finds none; `then`
/// runs first.
#[must_use]
pub fn on_dropped(on_files: &Callback<Vec<(String, File)>>, then: impl Fn() + 'static) -> Callback<DragEvent> {
    let cb = on_files.clone();
    Callback::from(move |e: DragEvent| {
        e.prevent_default();
        then();
        let Some(dt) = e.data_transfer() else { return };
        let items: wasm_bindgen::JsValue = dt.items().into();
        let fallback = web::picked(dt.files());
        let cb = cb.clone();
        wasm_bindgen_futures::spawn_local(async move {
            match web::files_from_drop(&items).await {
                Ok(files) if !files.is_empty() => cb.emit(files),
                _ => cb.emit(fallback),
            }
        });
    })
}

/// A node ref whose `<input type="file">` picks a folder: `webkitdirectory`
/// is not a standard attribute, so it is set on the element once mounted.
#[hook]
pub fn use_folder_picker() -> NodeRef {
    let input = use_node_ref();
    {
        let input = input.clone();
        use_effect_with((), move |()| {
            if let Some(el) = input.cast::<Element>() {
                let _ = el.set_attribute("webkitdirectory", "");
            }
            || ()
        });
    }
    input
}
/// The component's folder job runner: one job at a time, stopped when the
/// component goes.
#[hook]
pub fn use_errand() -> Rc<RefCell<Errand>> {
    let errand = use_memo((), |()| RefCell::new(Errand::default()));
    {
        let errand = Rc::clone(&errand);
        use_effect_with((), move |()| move || errand.borrow_mut().stop());
    }
    errand
}
