//! The record table, virtualised; selecting a row (click, or arrows and
//! Enter) selects its bytes.

use std::rc::Rc;

use felix_codec::time::format_micros;
use web_sys::Element;
use yew::prelude::*;

use crate::logic::keys::{move_in_list, row_nav};
use crate::logic::scan::{Scanned, MAX_RECORD_ROWS};
use crate::logic::scroll::Virtual;

const ROWS: u64 = 14;
const ROW_PX: u64 = 22;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The scanned file.
    pub scanned: Rc<Scanned>,
    /// The selected byte range.
    pub range: Option<(u64, u64)>,
    /// A record's bytes selected here.
    pub on_range: Callback<(u64, u64)>,
}

fn scroll_to(container: &NodeRef, v: Virtual, first: u64) {
    if let Some(el) = container.cast::<Element>() {
        el.set_scroll_top(i32::try_from(v.px_of(first)).unwrap_or(i32::MAX));
    }
}

/// The record table.
#[function_component(RecordTable)]
pub fn record_table(props: &Props) -> Html {
    let records = &props.scanned.detail.records;
    let v = Virtual { rows: records.len() as u64, row_px: ROW_PX, visible: ROWS };
    let first = use_state(|| 0u64);
    let container = use_node_ref();
    // The record holding the selection's first byte.
    let at = props.range.and_then(|(start, _)| {
        let i = records.partition_point(|r| r.position <= start).checked_sub(1)?;
        records.get(i).filter(|r| start < r.end()).map(|_| i)
    });
    {
        // Keep the selected record in view.
        let (first, container) = (first.clone(), container.clone());
        use_effect_with((props.range, Rc::clone(&props.scanned)), move |_| {
            if let Some(i) = at {
                let top = (i as u64).saturating_sub(2);
                // In a later task: scrolling lays the page out, which is not to lengthen this one.
                crate::web::later(move || scroll_to(&container, v, top));
                first.set(top.min(v.rows.saturating_sub(ROWS)));
            }
            || ()
        });
    }
    if records.is_empty() {
        return html! {};
    }
    let on_scroll = {
        let first = first.clone();
        Callback::from(move |e: Event| {
            let el: Element = e.target_unchecked_into();
            let first = first.clone();
            // In a later task: see `web::later`.
            crate::web::later(move || {
                let row = v.first_at(u64::try_from(el.scroll_top()).unwrap_or(0));
                if row != *first {
                    first.set(row);
                }
            });
        })
    };
    let on_key = {
        let (scanned, cb) = (Rc::clone(&props.scanned), props.on_range.clone());
        Callback::from(move |e: KeyboardEvent| {
            let Some(n) = row_nav(&e.key()) else { return };
            e.prevent_default();
            let recs = &scanned.detail.records;
            if let Some(r) = move_in_list(at, n, recs.len(), ROWS as usize).and_then(|i| recs.get(i)) {
                cb.emit((r.position, r.end().min(scanned.report.size.max(r.position + 1))));
            }
        })
    };
    let top = usize::try_from(*first).unwrap_or(0);
    // Only the visible rows are read (each decoded from its packed bytes).
    let rows = (top..records.len().min(top.saturating_add(ROWS as usize))).filter_map(|i| records.get(i).map(|r| (i, r))).map(|(i, r)| {
        let size = props.scanned.report.size;
        let on_click = props.on_range.reform(move |_: MouseEvent| (r.position, r.end().min(size.max(r.position + 1))));
        let sel = at == Some(i);
        let status = format!("{:?}", r.status);
        html! {
            <div role="row" id={format!("rec-{i}")} aria-rowindex={(i + 2).to_string()} aria-selected={sel.to_string()}
                class={classes!("rec", sel.then_some("selected"), status.to_lowercase())} style={format!("top:{}px", (i - top) as u64 * ROW_PX)} onclick={on_click}>
                <span role="gridcell" class="num">{ r.offset }</span>
                <span role="gridcell">{ format_micros(r.timestamp_micros) }</span>
                <span role="gridcell" class="num">{ r.payload_len }</span>
                <span role="gridcell" class="num">{ r.position }</span>
                <span role="gridcell">{ status }</span>
            </div>
        }
    });
    let active = at.filter(|i| *i >= top && *i < top + ROWS as usize).map(|i| format!("rec-{i}"));
    html! {
        <div class="records">
            <h3 id="records-heading">{ heading(&props.scanned) }</h3>
            // The grid is its own scroll box, both ways (its header row stays on top):
            // the one Tab stop, and the region the keyboard scrolls.
            <div role="grid" aria-labelledby="records-heading" aria-rowcount={(records.len() + 1).to_string()} aria-colcount="5" tabindex="0"
                aria-activedescendant={active} onkeydown={on_key} class="recgrid"
                ref={container} onscroll={on_scroll} style={format!("height:{}px", ((records.len() as u64).clamp(1, ROWS) + 1) * ROW_PX + 2)}>
                <div class="rec head" role="row" aria-rowindex="1">
                    <span role="columnheader">{"offset"}</span><span role="columnheader">{"timestamp"}</span><span role="columnheader">{"length"}</span>
                    <span role="columnheader">{"byte"}</span><span role="columnheader">{"status"}</span>
                </div>
                <div id="records" class="reclist" role="rowgroup">
                    <div class="spacer" style={format!("height:{}px", v.spacer_px())}>
                        <div class="rows" style={format!("top:{}px", v.px_of(*first))}>{ for rows }</div>
                    </div>
                </div>
            </div>
        </div>
    }
}

/// The list's heading: how many rows, and when the drop's row budget cut the
/// list, how many of the file's records it holds.
fn heading(s: &Scanned) -> String {
    let n = s.detail.records.len();
    if s.detail.records_capped {
        format!("Records ({n} listed of {}: the page lists at most {MAX_RECORD_ROWS} per drop)", s.detail.records_seen)
    } else {
        format!("Records ({n})")
    }
}

#[cfg(test)]
mod tests {
    use super::heading;
    use crate::logic::group::{Dropped, Group};
    use crate::logic::scan::{Budget, GroupScan, Scanned, MAX_INDEX_ROWS};
    use felix_codec::record::encode_record;
    use felix_codec::segment_header::SegmentHeader;

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
            (0, "Records (0 listed of 10: the page lists at most 1000000 per drop)"),
            (8, "Records (8 listed of 10: the page lists at most 1000000 per drop)"),
            (9, "Records (9 listed of 10: the page lists at most 1000000 per drop)"),
            (10, "Records (10)"),
        ] {
            assert_eq!(heading(&scan(&bytes, budget)), want, "budget {budget}");
        }
    }
}
