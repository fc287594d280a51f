//! The record table, virtualised; selecting a row (click, or arrows and
//! Enter) selects its bytes.

use std::rc::Rc;

use felix_codec::format::time::format_micros;
use web_sys::Blob;
use yew::prelude::*;

use crate::model::scan::Scanned;
use crate::model::window::{RowSource, Want, Window};
use crate::ui::hooks::{use_virtual_scroll, VirtualScroll};
use crate::ui::keys::{move_in_list, row_nav};
use crate::ui::scroll::Virtual;

const ROWS: u64 = 14;
const ROW_PX: u64 = 22;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The file's bytes (rows past the listed ones are read from them).
    pub blob: Blob,
    /// The scanned file.
    pub scanned: Rc<Scanned>,
    /// The selected byte range.
    pub range: Option<(u64, u64)>,
    /// A record's bytes selected here.
    pub on_range: Callback<(u64, u64)>,
}

/// Rows read from the file for one scanned file (the `Rc` names which).
type Read = Option<(Rc<Scanned>, Rc<Window>)>;

/// The window read for `scanned`, if the one held is its own.
fn window_of<'a>(read: &'a Read, scanned: &Rc<Scanned>) -> Option<&'a Window> {
    read.as_ref().filter(|(s, _)| Rc::ptr_eq(s, scanned)).map(|(_, w)| &**w)
}

fn source<'a>(s: &'a Scanned, window: Option<&'a Window>) -> RowSource<'a> {
    RowSource { listed: &s.detail.records, capped: s.detail.records_capped, seen: s.detail.records_seen, window }
}

/// Reads `want` of `scanned`'s file into `read`; then `then` with the window.
fn fetch(blob: &Blob, scanned: &Rc<Scanned>, want: Want, read: &UseStateHandle<Read>, then: impl FnOnce(&Window) + 'static) {
    let (blob, scanned, read) = (blob.clone(), Rc::clone(scanned), read.clone());
    wasm_bindgen_futures::spawn_local(async move {
        let (size, cps) = (scanned.report.size, &scanned.detail.checkpoints);
        if let Ok(w) = crate::web::read_window(&blob, size, cps, want).await {
            let w = Rc::new(w);
            then(&w);
            read.set(Some((scanned, w)));
        }
    });
}

/// The record table.
#[function_component(RecordTable)]
pub fn record_table(props: &Props) -> Html {
    let read = use_state(|| None::<(Rc<Scanned>, Rc<Window>)>);
    let src = source(&props.scanned, window_of(&read, &props.scanned));
    let total = src.len();
    let scroll = use_virtual_scroll(Virtual { rows: total, row_px: ROW_PX, visible: ROWS });
    // The record holding the selection's first byte.
    let at = props.range.and_then(|(start, _)| src.holding(start));
    use_selected_in_view(props, &scroll, &read, at);
    use_rows_in_view(props, &read, src.want_for(*scroll.first, ROWS));
    if total == 0 {
        return html! {};
    }
    let top = *scroll.first;
    // Only the visible rows are read (each decoded from its packed bytes).
    let rows = (top..total.min(top.saturating_add(ROWS))).map(|i| record_row(props, &src, i, top, at));
    let active = at.filter(|i| *i >= top && *i < top + ROWS).map(|i| format!("rec-{i}"));
    html! {
        <div class="records">
            <h3 id="records-heading">{ heading(&props.scanned) }</h3>
            // The grid is its own scroll box, both ways (its header row stays on top):
            // the one Tab stop, and the region the keyboard scrolls.
            <div role="grid" aria-labelledby="records-heading" aria-rowcount={(total + 1).to_string()} aria-colcount="5" tabindex="0"
                aria-activedescendant={active} onkeydown={on_key(props, &read, &scroll, at)} class="recgrid"
                ref={scroll.node.clone()} onscroll={scroll.on_scroll.clone()} style={format!("height:{}px", (total.clamp(1, ROWS) + 1) * ROW_PX + 2)}>
                <div class="rec head" role="row" aria-rowindex="1">
                    <span role="columnheader">{"offset"}</span><span role="columnheader">{"timestamp"}</span><span role="columnheader">{"length"}</span>
                    <span role="columnheader">{"byte"}</span><span role="columnheader">{"status"}</span>
                </div>
                <div id="records" class="reclist" role="rowgroup">
                    <div class="spacer" style={format!("height:{}px", scroll.spacer_px())}>
                        <div class="rows" style={format!("top:{}px", scroll.px_of(top))}>{ for rows }</div>
                    </div>
                </div>
            </div>
        </div>
    }
}

/// Keeps the selected record (`at`) in view; one past the listed rows is
/// found in the file first.
#[hook]
fn use_selected_in_view(props: &Props, scroll: &VirtualScroll, read: &UseStateHandle<Read>, at: Option<u64>) {
    let (scroll, read, blob) = (scroll.clone(), read.clone(), props.blob.clone());
    use_effect_with((props.range, Rc::clone(&props.scanned)), move |(range, scanned)| {
        match (at, range) {
            (Some(i), _) => scroll.show_later(i.saturating_sub(2)),
            (None, Some((start, _))) if scanned.detail.records_capped => {
                let start = *start;
                fetch(&blob, scanned, Want::Bytes { start, end: start + 1 }, &read, move |w| {
                    if w.rows.get(0).is_some_and(|r| r.position <= start && start < r.end()) {
                        scroll.show_later(w.first_row.saturating_sub(2));
                    }
                });
            }
            _ => {}
        }
        || ()
    });
}

/// Reads the rows in view past the listed ones (`want`) from the file.
#[hook]
fn use_rows_in_view(props: &Props, read: &UseStateHandle<Read>, want: Option<Want>) {
    let (read, blob) = (read.clone(), props.blob.clone());
    use_effect_with((want, Rc::clone(&props.scanned)), move |(want, scanned)| {
        if let Some(want) = want {
            fetch(&blob, scanned, *want, &read, |_| ());
        }
        || ()
    });
}

/// The arrows, Page Up/Down, Home and End select another record's bytes.
fn on_key(props: &Props, read: &UseStateHandle<Read>, scroll: &VirtualScroll, at: Option<u64>) -> Callback<KeyboardEvent> {
    let (scanned, cb, read, first) = (Rc::clone(&props.scanned), props.on_range.clone(), read.clone(), scroll.first.clone());
    Callback::from(move |e: KeyboardEvent| {
        let Some(n) = row_nav(&e.key()) else { return };
        e.prevent_default();
        let src = source(&scanned, window_of(&read, &scanned));
        let total = src.len();
        let at = at.and_then(|i| usize::try_from(i).ok());
        let len = usize::try_from(total).unwrap_or(usize::MAX);
        let Some(i) = move_in_list(at, n, len, ROWS as usize).map(|i| i as u64) else { return };
        match src.get(i) {
            Some(r) => cb.emit(r.selection(scanned.report.size)),
            // Not read yet: show it (its rows are read), and the next key selects.
            None => first.set(i.saturating_sub(2).min(total.saturating_sub(ROWS))),
        }
    })
}

/// Row `i`, drawn below the first drawn (`top`); "reading…" until it is read.
fn record_row(props: &Props, src: &RowSource<'_>, i: u64, top: u64, at: Option<u64>) -> Html {
    let style = format!("top:{}px", (i - top) * ROW_PX);
    let Some(r) = src.get(i) else {
        return html! { <div role="row" class="rec pending" aria-rowindex={(i + 2).to_string()} style={style}><span role="gridcell">{ "reading…" }</span></div> };
    };
    let size = props.scanned.report.size;
    let on_click = props.on_range.reform(move |_: MouseEvent| r.selection(size));
    let sel = at == Some(i);
    // Written before the row above: the producer's clock went back here.
    let back = src.clock_back_at(i);
    let status = format!("{:?}", r.status);
    html! {
        <div role="row" id={format!("rec-{i}")} aria-rowindex={(i + 2).to_string()} aria-selected={sel.to_string()}
            class={classes!("rec", sel.then_some("selected"), status.to_lowercase())} style={style} onclick={on_click}>
            <span role="gridcell" class="num">{ r.offset }</span>
            <span role="gridcell" class={classes!(back.then_some("clock-back"))}>{ format_micros(r.timestamp_micros) }{ if back { " (clock back)" } else { "" } }</span>
            <span role="gridcell" class="num">{ r.payload_len }</span>
            <span role="gridcell" class="num">{ r.position }</span>
            <span role="gridcell">{ status }</span>
        </div>
    }
}

/// The list's heading: how many rows; when the file has more than the page
/// keeps in memory, that the rest are read from the file as they come into view.
fn heading(s: &Scanned) -> String {
    let n = s.detail.records.len();
    if s.detail.records_capped {
        format!("Records ({}: the first {n} held, the rest read from the file as you reach them)", s.detail.records_seen)
    } else {
        format!("Records ({n})")
    }
}

#[cfg(test)]
mod tests {
    use super::heading;
    use crate::model::group::{Dropped, Group};
    use crate::model::scan::{Budget, GroupScan, Scanned, MAX_INDEX_ROWS};
    use felix_codec::format::record::encode_record;
    use felix_codec::format::segment_header::SegmentHeader;

    /// A segment of 10 records, records 3 and 6 with a flipped payload byte
    /// (rows, but not intact records).
    fn rotten() -> Vec<u8> {
        let mut out = SegmentHeader::new(0, 1).encode().to_vec();
        let mut at = Vec::new();
        for o in 0..10u64 {
            at.push(out.len());
            encode_record(o, 1 + o, b"payload-bytes", &mut out).unwrap();
        }
        for i in [3, 6] {
            out[at[i] + 30] ^= 0x20;
        }
        out
    }

    fn scan(bytes: &[u8], records: usize) -> Scanned {
        let dropped = [Dropped { id: 0, path: "00000000000000000000.log".into(), size: bytes.len() as u64 }];
        let g = Group { shard: None, files: vec![0] };
        let mut s = GroupScan::new(&g, &dropped);
        let mut budget = Budget { records, entries: MAX_INDEX_ROWS };
        let mut job = s.begin(0, &budget);
        job.feed(bytes);
        s.end(0, job, &mut budget);
        s.finish().into_iter().next().unwrap()
    }

    /// The heading counts rows against every row the scan met (damaged ones
    /// too), never against the report's count of intact records.
    #[test]
    fn a_cut_list_says_how_many_rows_it_holds_of_how_many() {
        let bytes = rotten();
        let all = scan(&bytes, 1_000_000);
        assert_eq!((all.detail.records.len(), all.report.records, heading(&all).as_str()), (10, 8, "Records (10)"));
        for (budget, want) in [
            (0, "Records (10: the first 0 held, the rest read from the file as you reach them)"),
            (8, "Records (10: the first 8 held, the rest read from the file as you reach them)"),
            (9, "Records (10: the first 9 held, the rest read from the file as you reach them)"),
            (10, "Records (10)"),
        ] {
            assert_eq!(heading(&scan(&bytes, budget)), want, "budget {budget}");
        }
    }
}
