//! The hex view, virtualised: only the visible rows exist in the DOM, and
//! only their bytes are read (`Blob.slice`), so a 2 GiB file scrolls.

use wasm_bindgen::JsCast;
use web_sys::{Blob, Element};
use yew::prelude::*;

use web_sys::HtmlInputElement;

use crate::app::{Action, Shared, State};
use crate::logic::hex::{byte_classes, click_selection, describe, field_at, parse_jump, row_count, row_of, Window, BYTES_PER_ROW};
use crate::logic::scan::Scanned;
use crate::web;

/// Rows in view.
pub const VISIBLE_ROWS: u64 = 24;
/// Height of a row in CSS pixels (must match `www/style.css`).
pub const ROW_PX: u64 = 20;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The file's bytes.
    pub blob: Blob,
    /// Its scan.
    pub scanned: Shared<Scanned>,
    /// The selected byte range, scrolled to and outlined.
    pub range: Option<(u64, u64)>,
    /// The file's index in the page.
    pub file: usize,
    /// Where selections go.
    pub on_action: UseReducerDispatcher<State>,
}

/// The hex view.
#[function_component(HexView)]
pub fn hex_view(props: &Props) -> Html {
    let size = props.scanned.0.report.size;
    let rows = row_count(size);
    let first = use_state(|| 0u64);
    let window = use_state(Window::default);
    let hover = use_state(String::new);
    let container = use_node_ref();
    // Scroll to the selected range.
    {
        let (container, first) = (container.clone(), first.clone());
        use_effect_with((props.range, props.scanned.clone()), move |(range, _)| {
            let row = range.map_or(0, |(start, _)| row_of(start).saturating_sub(4)).min(rows.saturating_sub(VISIBLE_ROWS));
            if let Some(el) = container.cast::<Element>() {
                #[allow(clippy::cast_possible_truncation)]
                el.set_scroll_top((row * ROW_PX) as i32);
            }
            first.set(row);
            || ()
        });
    }
    // Fetch the visible bytes whenever the first row changes.
    {
        let (window, blob) = (window.clone(), props.blob.clone());
        use_effect_with((*first, props.scanned.clone()), move |(first, _)| {
            let start = first * BYTES_PER_ROW;
            let end = ((first + VISIBLE_ROWS + 1) * BYTES_PER_ROW).min(size);
            // Reach back one record header so CRCs of headers cut by the top edge can be computed.
            let from = start.saturating_sub(32);
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(bytes) = web::read_slice(&blob, from, end).await {
                    window.set(Window { start: from, bytes });
                }
            });
            || ()
        });
    }
    let on_scroll = {
        let first = first.clone();
        Callback::from(move |e: Event| {
            let el: Element = e.target_unchecked_into();
            let row = u64::try_from(el.scroll_top()).unwrap_or(0) / ROW_PX;
            if row != *first {
                first.set(row);
            }
        })
    };
    let jump_error = use_state(String::new);
    let on_jump = {
        let (d, file, scanned, jump_error) = (props.on_action.clone(), props.file, props.scanned.clone(), jump_error.clone());
        Callback::from(move |e: KeyboardEvent| {
            if e.key() != "Enter" {
                return;
            }
            let input: HtmlInputElement = e.target_unchecked_into();
            match parse_jump(&input.value(), &scanned.0.detail.records, scanned.0.report.size) {
                Ok(range) => {
                    jump_error.set(String::new());
                    d.dispatch(Action::Select(file, Some(range)));
                }
                Err(msg) => jump_error.set(msg),
            }
        })
    };
    // One listener each on the container (not one per byte): the byte is read from `data-pos`.
    let byte_of = |e: &MouseEvent| -> Option<u64> {
        let el: Element = e.target()?.dyn_into().ok()?;
        el.get_attribute("data-pos")?.parse().ok()
    };
    let on_over = {
        let (hover, window, scanned) = (hover.clone(), window.clone(), props.scanned.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(pos) = byte_of(&e) else { return };
            let r = &scanned.0;
            let text = field_at(r.report.kind, &r.detail.records, r.report.size, pos).map_or_else(
                || format!("byte {pos}: not part of a recognised structure"),
                |l| format!("byte {pos}: {}", describe(&l, &window)),
            );
            hover.set(text);
        })
    };
    let on_click = {
        let (d, file, scanned) = (props.on_action.clone(), props.file, props.scanned.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(pos) = byte_of(&e) else { return };
            let r = &scanned.0;
            d.dispatch(Action::Select(file, Some(click_selection(r.report.kind, &r.detail.records, r.report.size, pos))));
        })
    };
    let s = &props.scanned.0;
    let kind = s.report.kind;
    let top = *first;
    let body = (top..(top + VISIBLE_ROWS).min(rows)).map(|row| {
        let cells = (0..BYTES_PER_ROW).map(|i| {
            let pos = row * BYTES_PER_ROW + i;
            if pos >= size {
                return html! { <span class="b pad">{ "  " }</span> };
            }
            let byte = window.slice(pos, pos + 1).and_then(|b| b.first().copied());
            let mut class = byte_classes(kind, &s.detail.records, &s.report.findings, size, pos);
            if props.range.is_some_and(|(a, b)| pos >= a && pos < b) {
                class.push_str(" sel");
            }
            let text = byte.map_or_else(|| "··".to_string(), |b| format!("{b:02X}"));
            html! { <span class={class} data-pos={pos.to_string()}>{ text }</span> }
        });
        let ascii: String = (0..BYTES_PER_ROW)
            .map(|i| row * BYTES_PER_ROW + i)
            .filter(|p| *p < size)
            .map(|p| {
                window
                    .slice(p, p + 1)
                    .and_then(|b| b.first().copied())
                    .map_or('·', |b| if b.is_ascii_graphic() { char::from(b) } else { '.' })
            })
            .collect();
        html! {
            <div class="row" style={format!("top:{}px", (row - top) * ROW_PX)}>
                <span class="addr">{ format!("{:010X}", row * BYTES_PER_ROW) }</span>
                { for cells }
                <span class="ascii">{ ascii }</span>
            </div>
        }
    });
    html! {
        <div class="hexwrap">
            <h3>{ "Bytes" }</h3>
            <label class="jump">{ "jump to " }
                <input id="jump" type="text" placeholder="byte 1234 / 0x4d2, or @offset" onkeydown={on_jump} aria-label="jump to a byte position or record offset" />
            </label>
            if !jump_error.is_empty() { <span class="jump-error" role="alert">{ (*jump_error).clone() }</span> }
            <p class="hover" id="hex-hover">{ if hover.is_empty() { "hover a byte to name its field" } else { hover.as_str() } }</p>
            <div id="hex" class="hex" ref={container} onscroll={on_scroll} onmouseover={on_over} onclick={on_click} style={format!("height:{}px", rows.clamp(1, VISIBLE_ROWS) * ROW_PX + 2)}>
                <div class="spacer" style={format!("height:{}px", rows * ROW_PX)}>
                    <div class="rows" style={format!("top:{}px", top * ROW_PX)}>{ for body }</div>
                </div>
            </div>
            <p class="legend">
                <span class="f-magic">{"magic"}</span>{" "}<span class="f-meta">{"version/flags"}</span>{" "}<span class="f-offset">{"offset"}</span>{" "}
                <span class="f-length">{"length"}</span>{" "}<span class="f-time">{"timestamp"}</span>{" "}<span class="f-crc">{"checksum"}</span>{" "}
                <span class="f-payload">{"payload"}</span>{" "}<span class="dmg">{"damaged"}</span>
            </p>
        </div>
    }
}
