//! The hex view, virtualised: only the visible rows exist in the DOM, and
//! only their bytes are read (`Blob.slice`), so a 2 GiB file scrolls. A
//! keyboard grid: arrows, Page Up/Down, Home/End move a cursor whose field
//! is named in a live region; Enter selects it as a click would.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::{Blob, Element, HtmlElement, HtmlInputElement};
use yew::prelude::*;

use super::message::Message;
use crate::model::hex::{
    click_selection, damage_at, describe, field_at, move_cursor, parse_jump, row_count, row_of, rows_html, sought, window_missed, Damage,
    Jump, JumpFile, Marks, VisibleRows, Window, BYTES_PER_ROW,
};
use crate::ui::hooks::{use_virtual_scroll, VirtualScroll};
use crate::ui::keys::{keep_in_view, nav};
use crate::ui::latest::Latest;
use felix_codec::format::segment_header::SEGMENT_HEADER_LEN;

use crate::model::scan::{Rows, Scanned};
use crate::model::window::{RowSource, Want, Window as RowWindow};
use crate::ui::scroll::Virtual;
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
    pub scanned: Rc<Scanned>,
    /// The selected byte range, scrolled to and outlined.
    pub range: Option<(u64, u64)>,
    /// Changes when the view should take the keyboard focus.
    pub focus: u32,
    /// A byte range selected here.
    pub on_range: Callback<(u64, u64)>,
}

fn hover_text(s: &Scanned, records: &Rows, window: &Window, pos: u64) -> String {
    let r = &s.report;
    let what =
        field_at(r.kind, records, r.size, pos).map_or_else(|| "not part of a recognised structure".to_string(), |l| describe(&l, window));
    let damage = match damage_at(r.kind, records, &Marks::of(s), r.size, pos) {
        Some(Damage::Listed(f)) => format!(" — damaged: {}", f.kind),
        Some(Damage::Unlisted(Some(why))) => format!(" — damaged: {why} (one of the findings not listed)"),
        Some(Damage::Unlisted(None)) => " — damaged: no verified record holds it (one of the findings not listed)".into(),
        None => String::new(),
    };
    format!("byte {pos}: {what}{damage}")
}

/// Rows read from the file for one scanned file (the `Rc` names which).
type Read = Option<(Rc<Scanned>, Rc<RowWindow>)>;

fn source<'a>(s: &'a Scanned, window: Option<&'a RowWindow>) -> RowSource<'a> {
    RowSource { listed: &s.detail.records, capped: s.detail.records_capped, seen: s.detail.records_seen, window }
}

/// The jump box: a byte position, a range or `@offset`, selected through
/// `on_range`; an offset past the held rows is found by reading the file
/// near where it belongs. Returns the box's handler and its error (empty
/// when none). A jump answered late is dropped when a newer jump was asked,
/// or another file shown, or the view closed meanwhile.
#[hook]
fn use_jump(props: &Props, size: u64) -> (Callback<KeyboardEvent>, UseStateHandle<String>) {
    let jump_error = use_state(String::new);
    let jumps = use_memo((), |()| Latest::default());
    {
        let jumps = Rc::clone(&jumps);
        use_effect_with(Rc::as_ptr(&props.scanned) as usize, move |_| move || jumps.supersede());
    }
    let (cb, scanned, error, blob) = (props.on_range.clone(), Rc::clone(&props.scanned), jump_error.clone(), props.blob.clone());
    let on_jump = Callback::from(move |e: KeyboardEvent| {
        if e.key() != "Enter" {
            return;
        }
        let ticket = jumps.ask();
        let input: HtmlInputElement = e.target_unchecked_into();
        let (d, r) = (&scanned.detail, &scanned.report);
        let file = JumpFile {
            records: &d.records,
            capped: d.records_capped,
            first_offset: r.first_offset,
            last_offset: r.last_offset,
            time: r.time,
            size,
        };
        let want = match parse_jump(&input.value(), &file) {
            Ok(Jump::Range(a, b)) => {
                error.set(String::new());
                cb.emit((a, b));
                return;
            }
            Ok(Jump::Offset(o)) => Want::Offset(o),
            Ok(Jump::Time(at)) => Want::Time { at, from_row: d.records.len() as u64 },
            Err(msg) => return error.set(msg.to_string()),
        };
        let (cb, scanned, error, blob) = (cb.clone(), Rc::clone(&scanned), error.clone(), blob.clone());
        wasm_bindgen_futures::spawn_local(async move {
            let read = web::read_window(&blob, size, &scanned.detail.checkpoints, want).await;
            if !ticket.is_current() {
                return;
            }
            match (read, want) {
                (Ok(w), _) if !w.rows.is_empty() => {
                    error.set(String::new());
                    cb.emit(w.rows.get(0).map_or((0, 1), |r| r.selection(size)));
                }
                (Ok(_), _) => error.set(window_missed(want)),
                (Err(e), _) => error.set(format!("could not read the file to find {}: {e}", sought(want))),
            }
        });
    });
    (on_jump, jump_error)
}

/// The hex view.
#[function_component(HexView)]
pub fn hex_view(props: &Props) -> Html {
    let size = props.scanned.report.size;
    let rows = row_count(size);
    let scroll = use_virtual_scroll(Virtual { rows, row_px: ROW_PX, visible: VISIBLE_ROWS });
    let cursor = use_state(|| props.range.map_or(0, |r| r.0));
    let window = use_state(Window::default);
    let hover = use_state(String::new);
    // Rows read from the file for the bytes in view, when they are past the listed ones.
    let read = use_state(|| None::<(Rc<Scanned>, Rc<RowWindow>)>);
    use_follow_range(props, &scroll, &cursor, &hover);
    use_focus(props.focus, &scroll.node);
    use_visible_bytes(props, *scroll.first, &window, &read);
    let (on_jump, jump_error) = use_jump(props, size);
    let view = View {
        scanned: Rc::clone(&props.scanned),
        on_range: props.on_range.clone(),
        // Rows read from the file for this file (any bytes in view: the ones it holds are the file's rows).
        rows_read: read.as_ref().filter(|(s, _)| Rc::ptr_eq(s, &props.scanned)).map(|(_, w)| Rc::clone(w)),
        scroll,
        cursor,
        hover,
        window,
    };
    let (top, cursor) = (*view.scroll.first, *view.cursor);
    let active = (row_of(cursor) >= top && row_of(cursor) < top + VISIBLE_ROWS && cursor < size).then(|| format!("hex-b-{cursor}"));
    let hover = if view.hover.is_empty() { "hover a byte, or use the arrow keys here, to name its field" } else { view.hover.as_str() };
    html! {
        <div class="hexwrap">
            <h3 id="hex-heading">{ "Bytes" }</h3>
            <label class="jump">{ "jump to " }
                <input id="jump" type="text" placeholder="byte 1234 / 0x4d2, @offset, or time 2026-12-01T14:03:00Z" onkeydown={on_jump} aria-label="jump to a byte position, record offset or time" />
            </label>
            if !jump_error.is_empty() { <span class="jump-error" role="alert"><Message text={(*jump_error).clone()} /></span> }
            <p class="hover" id="hex-hover" aria-live="polite">{ hover }</p>
            <div id="hex" class="hex" role="grid" tabindex="0" aria-labelledby="hex-heading" aria-rowcount={rows.to_string()} aria-colcount="18"
                aria-activedescendant={active} ref={view.scroll.node.clone()} onscroll={view.scroll.on_scroll.clone()}
                onmouseover={view.on_over()} onclick={view.on_click()} onkeydown={view.on_key()}
                style={format!("height:{}px", rows.clamp(1, VISIBLE_ROWS) * ROW_PX + 2)}>
                <div class="spacer" style={format!("height:{}px", view.scroll.spacer_px())}>
                    <div class="rows" role="rowgroup" style={format!("top:{}px", view.scroll.px_of(top))}>{ view.body(props.range) }</div>
                </div>
            </div>
            { legend() }
        </div>
    }
}

/// Scrolls to the selected range, the cursor following it; another file
/// clears the hover text (it named a byte of the old one).
#[hook]
fn use_follow_range(props: &Props, scroll: &VirtualScroll, cursor: &UseStateHandle<u64>, hover: &UseStateHandle<String>) {
    let rows = row_count(props.scanned.report.size);
    let (scroll, cursor, hover) = (scroll.clone(), cursor.clone(), hover.clone());
    use_effect_with(Rc::clone(&props.scanned), move |_| {
        hover.set(String::new());
        || ()
    });
    use_effect_with((props.range, Rc::clone(&props.scanned)), move |(range, _)| {
        let row = range.map_or(0, |(start, _)| row_of(start).saturating_sub(4)).min(rows.saturating_sub(VISIBLE_ROWS));
        scroll.show_later(row);
        cursor.set(range.map_or(0, |r| r.0));
        || ()
    });
}

/// Takes the focus when `focus` changes to above 0 (Enter on a problem).
#[hook]
fn use_focus(focus: u32, node: &NodeRef) {
    let node = node.clone();
    use_effect_with(focus, move |focus| {
        if *focus > 0 {
            if let Some(el) = node.cast::<HtmlElement>() {
                let _ = el.focus();
            }
        }
        || ()
    });
}

/// Reads the visible bytes whenever the first row changes (and their
/// records' rows, when they are past the listed ones).
#[hook]
fn use_visible_bytes(props: &Props, first: u64, window: &UseStateHandle<Window>, read: &UseStateHandle<Read>) {
    let (window, blob, read, size) = (window.clone(), props.blob.clone(), read.clone(), props.scanned.report.size);
    use_effect_with((first, Rc::clone(&props.scanned)), move |(first, scanned)| {
        let start = first * BYTES_PER_ROW;
        let end = ((first + VISIBLE_ROWS + 1) * BYTES_PER_ROW).min(size);
        // Reach back a header's worth (the longest prefix a header CRC covers) so the
        // CRCs of headers cut by the top edge can be computed.
        let from = start.saturating_sub(SEGMENT_HEADER_LEN as u64);
        let scanned = Rc::clone(scanned);
        wasm_bindgen_futures::spawn_local(async move {
            if let Ok(bytes) = web::read_slice(&blob, from, end).await {
                window.set(Window { start: from, bytes });
            }
            if source(&scanned, None).past_list(end) {
                let want = Want::Bytes { start: from, end };
                if let Ok(w) = web::read_window(&blob, size, &scanned.detail.checkpoints, want).await {
                    read.set(Some((scanned, Rc::new(w))));
                }
            }
        });
        || ()
    });
}

/// What the grid's handlers share: the file, the scroll, the cursor, the
/// hover text, the bytes in view and the rows read for them.
#[derive(Clone)]
struct View {
    scanned: Rc<Scanned>,
    on_range: Callback<(u64, u64)>,
    scroll: VirtualScroll,
    cursor: UseStateHandle<u64>,
    hover: UseStateHandle<String>,
    window: UseStateHandle<Window>,
    rows_read: Option<Rc<RowWindow>>,
}

impl View {
    /// The rows that name the bytes up to `end`.
    fn records(&self, end: u64) -> &Rows {
        source(&self.scanned, self.rows_read.as_deref()).for_bytes(end)
    }

    /// Names byte `pos` in the hover line.
    fn name(&self, pos: u64) {
        self.hover.set(hover_text(&self.scanned, self.records(pos + 1), &self.window, pos));
    }

    /// Selects what a click on byte `pos` selects.
    fn select(&self, pos: u64) {
        let s = &self.scanned;
        self.on_range.emit(click_selection(s.report.kind, self.records(pos + 1), s.report.size, pos));
    }

    /// Enter or Space selects the cursor's byte; the arrows, Page Up/Down,
    /// Home and End move the cursor, naming its byte and keeping it in view.
    fn on_key(&self) -> Callback<KeyboardEvent> {
        let this = self.clone();
        Callback::from(move |e: KeyboardEvent| {
            let (size, cursor, first) = (this.scanned.report.size, *this.cursor, *this.scroll.first);
            if e.key() == "Enter" || e.key() == " " {
                e.prevent_default();
                return this.select(cursor);
            }
            let Some(n) = nav(&e.key()) else { return };
            e.prevent_default();
            let pos = move_cursor(cursor, n, size, VISIBLE_ROWS);
            this.cursor.set(pos);
            this.name(pos);
            let row = keep_in_view(row_of(pos), first, VISIBLE_ROWS, row_count(size));
            if row != first {
                this.scroll.show(row);
            }
        })
    }

    /// Names the byte under the pointer (one listener on the grid, not one per byte).
    fn on_over(&self) -> Callback<MouseEvent> {
        let this = self.clone();
        Callback::from(move |e: MouseEvent| {
            if let Some(pos) = byte_of(&e) {
                this.name(pos);
            }
        })
    }

    /// A click selects the byte's field or record, and moves the cursor there.
    fn on_click(&self) -> Callback<MouseEvent> {
        let this = self.clone();
        Callback::from(move |e: MouseEvent| {
            let Some(pos) = byte_of(&e) else { return };
            this.cursor.set(pos);
            this.select(pos);
        })
    }

    /// The visible rows as one HTML string, inserted in one step (`model::hex::rows_html`).
    fn body(&self, range: Option<(u64, u64)>) -> Html {
        let (s, top, size) = (&self.scanned, *self.scroll.first, self.scanned.report.size);
        let rows = row_count(size);
        let end = ((top + VISIBLE_ROWS + 1) * BYTES_PER_ROW).min(size);
        Html::from_html_unchecked(AttrValue::from(rows_html(&VisibleRows {
            kind: s.report.kind,
            records: self.records(end),
            marks: Marks::of(s),
            size,
            top,
            rows: (top + VISIBLE_ROWS).min(rows).saturating_sub(top),
            row_px: ROW_PX,
            window: &self.window,
            range,
            cursor: *self.cursor,
        })))
    }
}

/// The byte an event is over, read from its `data-pos`. A byte is an inline
/// box a little shorter than its row: over the row itself (above or below a
/// byte), the byte is the one in that column.
fn byte_of(e: &MouseEvent) -> Option<u64> {
    let el: Element = e.target()?.dyn_into().ok()?;
    if let Some(pos) = el.get_attribute("data-pos") {
        return pos.parse().ok();
    }
    if !el.class_name().split_whitespace().any(|c| c == "row") {
        return None;
    }
    let mid = el.get_bounding_client_rect();
    let under = el.owner_document()?.element_from_point(f64::from(e.client_x()) as f32, (mid.top() + mid.height() / 2.0) as f32)?;
    under.get_attribute("data-pos")?.parse().ok()
}

/// What the field colours mean.
fn legend() -> Html {
    html! {
        <p class="legend">
            <span class="f-magic">{"magic"}</span>{" "}<span class="f-meta">{"version/flags"}</span>{" "}<span class="f-offset">{"offset"}</span>{" "}
            <span class="f-length">{"length"}</span>{" "}<span class="f-time">{"timestamp"}</span>{" "}<span class="f-crc">{"checksum"}</span>{" "}
            <span class="f-payload">{"payload"}</span>{" "}<span class="dmg">{"damaged (bold, underlined)"}</span>
        </p>
    }
}
