//! The file map: the whole file to scale beside the hex view — verified,
//! damaged, gaps, the torn tail, index entries — from the scan's own
//! counts. A click (or arrows to step between notable runs, then Enter)
//! jumps the hex view and the record table there.

use std::rc::Rc;

use web_sys::Element;
use yew::prelude::*;

use crate::model::filemap::{self, cell_of, cell_start, run_at, step_notable, FileMap, MapRun};
use crate::model::scan::Scanned;

/// Height of the strip in CSS pixels (the hex view's height).
pub const STRIP_PX: f64 = 482.0;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The scanned file.
    pub scanned: Rc<Scanned>,
    /// The segment's companion index, when scanned with it (its entries are ticks).
    pub index: Option<Rc<Scanned>>,
    /// The selected range (marked on the strip).
    pub range: Option<(u64, u64)>,
    /// A byte position picked on the map.
    pub on_pick: Callback<u64>,
}

/// The file map.
#[function_component(FileMapView)]
pub fn file_map(props: &Props) -> Html {
    // Built once per file (not per render): the deps compare by pointer first.
    let map = use_memo((Rc::clone(&props.scanned), props.index.clone()), |(s, index)| {
        let pointed = index.as_deref().map(crate::model::scan::pointed).unwrap_or_default();
        filemap::build(&s.detail.map, s.report.kind, &s.report.findings, &pointed).timed(
            &s.detail.records,
            s.detail.records_capped,
            s.report.time,
        )
    });
    let cursor = use_state(|| None::<usize>);
    let size = props.scanned.report.size;
    let strip_ref = use_node_ref();
    let runs = map.runs.iter().enumerate().map(|(i, r)| run_view(&map, i, r, *cursor == Some(i)));
    let mark = props.range.map(|(a, _)| {
        let c = cell_of(a, map.cells, size);
        html! { <div class="here" aria-hidden="true" style={format!("top:{:.3}%", pct(&map, c))}></div> }
    });
    let summary = map.summary(size);
    let active = cursor.map(|i| format!("map-run-{i}"));
    let (on_click, on_key) = (on_click(props, &map, &cursor, &strip_ref), on_key(props, &map, &cursor));
    html! {
        <div class="filemap">
            <div id="file-map" class="strip" role="group" tabindex="0" aria-label={summary.clone()} aria-activedescendant={active}
                style={format!("height:{STRIP_PX}px")} onclick={on_click} onkeydown={on_key} ref={strip_ref}>
                { for runs }
                { for mark }
            </div>
            <p class="sr-only" id="map-summary">{ summary }</p>
            <ul class="map-legend">
                <li><span class="key m-verified"></span>{ "verified" }</li>
                <li><span class="key m-damaged"></span>{ "damaged" }</li>
                <li><span class="key m-gap"></span>{ "gap" }</li>
                <li><span class="key m-torn-tail"></span>{ "torn tail" }</li>
                <li><span class="key m-header"></span>{ "header" }</li>
                <li><span class="key indexed"></span>{ "index entry" }</li>
            </ul>
        </div>
    }
}

/// Where cell `cell` starts down the strip, in percent.
fn pct(map: &FileMap, cell: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let pct = cell as f64 * 100.0 / map.cells.max(1) as f64;
    pct
}

/// Run `i` of the strip.
fn run_view(map: &FileMap, i: usize, r: &MapRun, cursor: bool) -> Html {
    let class =
        classes!("run", format!("m-{}", r.class.as_str().replace(' ', "-")), r.indexed.then_some("indexed"), cursor.then_some("cursor"));
    html! { <div class={class} id={format!("map-run-{i}")} data-class={r.class.as_str()} data-start={r.start.to_string()} title={r.label()}
    style={format!("top:{:.3}%;height:{:.3}%", pct(map, r.first_cell), pct(map, r.cells))}></div> }
}

/// A click picks the byte at the cell under the pointer.
fn on_click(props: &Props, map: &Rc<FileMap>, cursor: &UseStateHandle<Option<usize>>, strip_ref: &NodeRef) -> Callback<MouseEvent> {
    let (cb, map, cursor, strip_ref, size) =
        (props.on_pick.clone(), Rc::clone(map), cursor.clone(), strip_ref.clone(), props.scanned.report.size);
    Callback::from(move |e: MouseEvent| {
        // Yew delegates events, so the strip is found by its ref, not `currentTarget`.
        let Some(strip) = strip_ref.cast::<Element>() else { return };
        let rect = strip.get_bounding_client_rect();
        let y = (f64::from(e.client_y()) - rect.top()).clamp(0.0, rect.height().max(1.0) - 0.001);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
        let cell = ((y / rect.height().max(1.0)) * map.cells as f64) as usize;
        cursor.set(run_at(&map, cell));
        cb.emit(cell_start(cell, map.cells, size));
    })
}

/// The arrows step between notable runs; Enter or Space picks the run's first byte.
fn on_key(props: &Props, map: &Rc<FileMap>, cursor: &UseStateHandle<Option<usize>>) -> Callback<KeyboardEvent> {
    let (cb, map, cursor) = (props.on_pick.clone(), Rc::clone(map), cursor.clone());
    Callback::from(move |e: KeyboardEvent| match e.key().as_str() {
        "ArrowDown" | "ArrowUp" => {
            e.prevent_default();
            cursor.set(step_notable(&map, *cursor, e.key() == "ArrowDown").or(*cursor));
        }
        "Enter" | " " => {
            e.prevent_default();
            if let Some(r) = cursor.and_then(|i| map.runs.get(i)) {
                cb.emit(r.start);
            }
        }
        _ => {}
    })
}
