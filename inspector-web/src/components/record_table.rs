//! The record table, virtualised; selecting a row selects its bytes.

use web_sys::Element;
use yew::prelude::*;

use crate::app::{Action, Shared, State};
use crate::logic::scan::Scanned;
use felix_codec::time::format_micros;

const ROWS: usize = 14;
const ROW_PX: usize = 22;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The scanned file.
    pub scanned: Shared<Scanned>,
    /// The selected byte range.
    pub range: Option<(u64, u64)>,
    /// The file's index in the page.
    pub file: usize,
    /// Where selections go.
    pub on_action: UseReducerDispatcher<State>,
}

/// The record table.
#[function_component(RecordTable)]
pub fn record_table(props: &Props) -> Html {
    let records = &props.scanned.0.detail.records;
    let first = use_state(|| 0usize);
    let container = use_node_ref();
    {
        // Keep the selected record in view.
        let (first, container, scanned) = (first.clone(), container.clone(), props.scanned.clone());
        use_effect_with(props.range, move |range| {
            if let Some((start, _)) = range {
                let recs = &scanned.0.detail.records;
                let i = recs.partition_point(|r| r.position <= *start).saturating_sub(1).min(recs.len().saturating_sub(ROWS - 2));
                if let Some(el) = container.cast::<Element>() {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                    el.set_scroll_top((i.saturating_sub(2) * ROW_PX) as i32);
                }
                first.set(i.saturating_sub(2));
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
            first.set(usize::try_from(el.scroll_top()).unwrap_or(0) / ROW_PX);
        })
    };
    let top = *first;
    let rows = records.iter().enumerate().skip(top).take(ROWS).map(|(i, r)| {
        let on_click = {
            let (d, r, file) = (props.on_action.clone(), *r, props.file);
            Callback::from(move |_: MouseEvent| d.dispatch(Action::Select(file, Some((r.position, r.end())))))
        };
        let sel = props.range.is_some_and(|(a, _)| a >= r.position && a < r.end());
        let status = format!("{:?}", r.status);
        html! {
            <div class={classes!("rec", sel.then_some("selected"), status.to_lowercase())} style={format!("top:{}px", (i - top) * ROW_PX)} onclick={on_click}>
                <span class="num">{ r.offset }</span>
                <span>{ format_micros(r.timestamp_micros) }</span>
                <span class="num">{ r.payload_len }</span>
                <span class="num">{ r.position }</span>
                <span>{ status }</span>
            </div>
        }
    });
    html! {
        <div class="records">
            <h3>{ format!("Records ({}{})", records.len(), if props.scanned.0.detail.records_capped { ", list capped" } else { "" }) }</h3>
            <div class="rec head"><span>{"offset"}</span><span>{"timestamp"}</span><span>{"length"}</span><span>{"byte"}</span><span>{"status"}</span></div>
            <div id="records" class="reclist" ref={container} onscroll={on_scroll} style={format!("height:{}px", records.len().clamp(1, ROWS) * ROW_PX + 2)}>
                <div class="spacer" style={format!("height:{}px", records.len() * ROW_PX)}>
                    <div class="rows" style={format!("top:{}px", top * ROW_PX)}>{ for rows }</div>
                </div>
            </div>
        </div>
    }
}
