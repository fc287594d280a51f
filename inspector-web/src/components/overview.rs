//! Overview: one row per file with its verdict in words, and — for a shared
//! report checked against dropped files — whether the row matches.

use std::rc::Rc;

use felix_codec::doc::report::FileReport;
use felix_codec::doc::text::span_words;
use felix_codec::format::file_name::FileKind;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};
use yew::prelude::*;

use super::text_field::{shown, TextField};
use crate::model::group::{shards_in_two_folders, within_shard};
use crate::model::verify::{self, Check};
use crate::share::shared::short;
use crate::state::{Row, RowId};
use crate::ui::keys::{move_in_list, row_nav, tab_stop};
use crate::ui::scroll::{rows_to_render, ROWS_PER_FRAME};

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The rows.
    pub rows: Rc<Vec<Row>>,
    /// The selected row.
    pub selected: Option<RowId>,
    /// Whether the rows are a shared report's claims.
    pub shared: bool,
    /// Selects a row.
    pub on_select: Callback<RowId>,
}

/// The file's path, its shard's folders (the shard column's) kept in the
/// text but not drawn: the cell shows the file's name.
fn path_words(f: &FileReport) -> Html {
    let (folders, name) = within_shard(&f.path, f.shard.as_deref());
    html! {
        <>
            if !folders.is_empty() { <span class="in-shard"><TextField text={folders.to_string()} /></span> }
            <TextField text={name.to_string()} />
        </>
    }
}

/// The shard column: its name, or — when another folder holds a shard of
/// the same name — its folder as dropped (`a/s-1/`), so the rows differ.
fn shard_cell(f: &FileReport, twice: bool) -> Html {
    match (&f.shard, twice) {
        (None, _) => html! { "(alone)" },
        (Some(s), false) => html! { <TextField text={s.clone()} /> },
        (Some(s), true) => {
            let (folders, _) = within_shard(&f.path, Some(s));
            html! { <TextField text={folders.to_string()} /> }
        }
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "—".into(), |v| v.to_string())
}

/// How many reasons a check cell lists before "and N more".
const REASONS_SHOWN: usize = 5;

fn check_cell(check: Option<&Check>) -> Html {
    let Some(check) = check else {
        return html! { <td role="cell" class="check" data-check="unchecked">{ "not checked" }</td> };
    };
    let word = check.word();
    let reasons = match check {
        Check::Differs(why) => {
            let more = why.len().saturating_sub(REASONS_SHOWN);
            html! {
                <ul class="reasons">
                    { for why.iter().take(REASONS_SHOWN).map(|d| html! { <li>{ unbroken(&d.to_string()) }</li> }) }
                    if more > 0 { <li>{ format!("and {more} more") }</li> }
                </ul>
            }
        }
        _ => html! {},
    };
    let mark = match check {
        Check::Matches => "✓ ",
        Check::Differs(_) => "✗ ",
        _ => "",
    };
    html! { <td role="cell" class={classes!("check", word.replace(' ', "-"))} data-check={word}><span class="word">{ format!("{mark}{word}") }</span>{ reasons }</td> }
}

/// `text` with each of its times and dates (a word holding a digit and a
/// `-`) kept on one line: a browser breaks a line after a hyphen, even
/// between digits, and split `2026-12-02T…` in two.
pub(crate) fn unbroken(text: &str) -> Html {
    let mut parts = Vec::new();
    let mut plain = String::new();
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            plain.push(' ');
        }
        if word.contains('-') && word.bytes().any(|b| b.is_ascii_digit()) {
            parts.push(html! { { std::mem::take(&mut plain) } });
            parts.push(html! { <span class="nowrap">{ word.to_string() }</span> });
        } else {
            plain.push_str(word);
        }
    }
    parts.push(html! { { plain } });
    parts.into_iter().collect::<Html>()
}

/// The file's notes (what the CLI prints after its line: "no index file",
/// "inspected alone…", what a file that is not a Felix file is), beside it.
fn notes(f: &FileReport) -> Html {
    if f.notes.is_empty() {
        return html! {};
    }
    html! { <ul class="notes">{ for f.notes.iter().map(|n| html! { <li class="note">{ "note: " }<TextField text={n.clone()} /></li> }) }</ul> }
}

/// Rows a Page Up or Page Down moves over.
const PAGE_ROWS: usize = 10;

/// Moves the keyboard focus to row `i` of the table, shown whole.
fn focus_row(table: &NodeRef, i: usize) {
    let row = table.cast::<Element>().and_then(|b| b.query_selector(&format!("tr[data-row=\"{i}\"]")).ok().flatten());
    if let Some(row) = row.and_then(|r| r.dyn_into::<HtmlElement>().ok()) {
        let _ = row.focus();
        reveal_settled(row.into(), true, focused);
    }
}

/// [`reveal`] now, and again after each of the next frames while `still`
/// holds: the blocks around a row the browser had skipped are laid out only
/// then, at their own heights, which moves it. `page`: the window scrolls
/// too (the keyboard's row), else only the box (a selection made elsewhere).
fn reveal_settled(row: Element, page: bool, still: impl Fn(&Element) -> bool + 'static) {
    reveal(&row, page);
    wasm_bindgen_futures::spawn_local(async move {
        for _ in 0..SETTLE_FRAMES {
            crate::web::after_frame(50).await;
            if !still(&row) {
                return;
            }
            reveal(&row, page);
        }
    });
}

/// Frames a revealed row is kept in view while the blocks around it are drawn.
const SETTLE_FRAMES: usize = 3;

/// Whether `row` holds the keyboard focus.
fn focused(row: &Element) -> bool {
    web_sys::window().and_then(|w| w.document()).and_then(|d| d.active_element()).is_some_and(|a| &a == row)
}

/// Scrolls the overview's own box (never the page) so `row` shows whole,
/// below the box's sticky header: the browser's own scroll to a focused row
/// stops at the box's top edge, under the header.
/// `page`: the keyboard's row — the box scrolls no further than it must (a
/// step at a time) and the window too, so the row is on screen. Else a
/// selection made elsewhere: a row out of view is brought to the middle of
/// the box, with its neighbours around it, so a scroll bar appearing or a
/// block above it drawn at its own height later never leaves it at an edge.
fn reveal(row: &Element, page: bool) {
    let Some(table) = row.closest("#overview").ok().flatten() else { return };
    let Some(scroller) = table.parent_element() else { return };
    let bounds = scroller.get_bounding_client_rect();
    let top = table.query_selector(".ov-head").ok().flatten().map_or(bounds.top(), |h| h.get_bounding_client_rect().bottom());
    let bottom = bounds.top() + f64::from(scroller.client_top() + scroller.client_height());
    if let Some(by) = into_view(&row.get_bounding_client_rect(), top, bottom, !page) {
        scroller.set_scroll_top(scroller.scroll_top().saturating_add(by));
    }
    let Some(window) = web_sys::window().filter(|_| page) else { return };
    let height = window.inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0);
    if let Some(by) = into_view(&row.get_bounding_client_rect(), 0.0, height, false) {
        window.scroll_by_with_x_and_y(0.0, f64::from(by));
    }
}

/// How far to scroll so `r` shows whole between `top` and `bottom` (its top
/// edge if it is taller); `None` if it does. `middle`: to the middle of the
/// space, not its nearest edge.
fn into_view(r: &web_sys::DomRect, top: f64, bottom: f64, middle: bool) -> Option<i32> {
    let by = if r.top() >= top && r.bottom() <= bottom {
        return None;
    } else if middle || r.height() > bottom - top {
        (r.top() - top - ((bottom - top - r.height()) / 2.0).max(0.0)).floor()
    } else if r.top() < top {
        (r.top() - top).floor()
    } else {
        (r.bottom() - bottom).ceil()
    };
    #[allow(clippy::cast_possible_truncation)]
    Some(by as i32)
}

/// The overview table: one Tab stop (a roving tabindex: the row the keyboard
/// last moved to, else the selected file), arrows, Page Up/Down, Home and End
/// move between rows, Enter or Space selects one.
///
/// One table to assistive technology (`role="table"`), drawn as a header and
/// blocks of [`BLOCK_ROWS`] rows, each block its own fixed-layout table with
/// the same columns: the browser lays out only the blocks in view
/// (`content-visibility: auto`), so a 300-file folder's rows filling in —
/// verdicts, times, hashes — never relays out the whole list at once.
#[function_component(Overview)]
pub fn overview(props: &Props) -> Html {
    let cursor = use_state_eq(|| None::<usize>);
    let table = use_node_ref();
    let n = props.rows.len();
    let selected_at = props.selected.and_then(|s| props.rows.iter().position(|r| r.id == s));
    let stop = tab_stop(*cursor, selected_at, n);
    let shown = use_grow_by_frames(props.rows.first().map(|r| r.id), n, selected_at.max(*cursor));
    let unpin = use_reveal_selected(&table, props.selected, &props.rows);
    let cols = columns(props.shared);
    // A shard of one name under two roots: its rows draw their folders.
    let twice = use_memo(Rc::as_ptr(&props.rows) as usize, {
        let rows = Rc::clone(&props.rows);
        move |_| shards_in_two_folders(rows.iter().map(|r| (r.report.path.as_str(), r.report.shard.as_deref())))
    });
    // Stable across renders, so a block whose rows did not change is not drawn again.
    let on_select = use_latest(&props.on_select);
    let on_cursor = {
        let cursor = cursor.setter();
        use_memo((), move |()| Callback::from(move |i: usize| cursor.set(Some(i))))
    };
    // Keyed — the header, the blocks by place, the rows by file: Yew matches an unkeyed list
    // from its end, so rows added below rewrote every row above with another file's (the
    // focused row among them) and the box's scroll, anchored on those rows, jumped.
    // The selected row's block is always drawn: the box anchors its scroll on a row that is
    // laid out, so blocks drawn around it at their own heights never move it out of view.
    let blocks = (0..shown.div_ceil(BLOCK_ROWS)).map(|b| {
        let at = b * BLOCK_ROWS..(b * BLOCK_ROWS + BLOCK_ROWS).min(shown);
        let within = |i: Option<usize>| i.filter(|i| at.contains(i));
        html! {
            <Block key={b} rows={Rc::clone(&props.rows)} twice={Rc::clone(&twice)} at={at.clone()} selected={within(selected_at)} stop={within(stop)}
                shared={props.shared} on_select={(*on_select).clone()} on_cursor={(*on_cursor).clone()} table={table.clone()} />
        }
    });
    html! {
        <section class="overview">
            <h2 id="overview-heading">{ "Overview" }</h2>
            // Scrolls inside its own box (sideways on a narrow screen); its one Tab stop is a row.
            <div class="tablebox" role="region" aria-labelledby="overview-heading" onwheel={unpin.reform(|_: WheelEvent| ())}
                ontouchstart={unpin.reform(|_: TouchEvent| ())} onpointerdown={unpin.reform(|_: PointerEvent| ())} onkeydown={unpin.reform(|_: KeyboardEvent| ())}>
            // The browser leaves the rows of a block it skips out of the accessibility tree too:
            // each row says where it is (`aria-rowindex`), as in a virtualised grid.
            <div id="overview" role="table" ref={table.clone()} aria-label="files, one per row; arrow keys move between them, Enter selects a file"
                aria-rowcount={(n + 1).to_string()} style={widths(&props.rows, props.shared)}>
                <table key="head" class="ov-head" role="presentation">{ cols.clone() }<thead role="rowgroup"><tr role="row" aria-rowindex="1">
                    <th role="columnheader">{"shard"}</th><th role="columnheader">{"file"}</th><th role="columnheader">{"kind"}</th><th role="columnheader">{"size"}</th>
                    <th role="columnheader">{"base"}</th><th role="columnheader">{"first"}</th><th role="columnheader">{"last"}</th><th role="columnheader">{"time"}</th><th role="columnheader">{"contents"}</th>
                    <th role="columnheader">{"status"}</th><th role="columnheader">{"hash"}</th>
                    if props.shared { <th role="columnheader">{"check"}</th> }
                </tr></thead></table>
                { for blocks }
            </div>
            </div>
        </section>
    }
}

/// The selected file's row kept in the overview's box (not the page) from
/// the moment the selection changes — on open, by a problem, by Find, by a
/// link — through the renders that follow (rows filling in, blocks drawn at
/// their own heights, the box or the table resized by a scroll bar or a
/// column), until the reader scrolls the box: the callback it returns, for
/// the box's wheel, touch, pointer and key events.
#[hook]
fn use_reveal_selected(table: &NodeRef, selected: Option<RowId>, rows: &Rc<Vec<Row>>) -> Callback<()> {
    let pinned = use_mut_ref(|| false);
    {
        let pinned = Rc::clone(&pinned);
        use_effect_with(selected, move |_| *pinned.borrow_mut() = true);
    }
    {
        // A block the browser skipped while the box was off screen is laid out when it comes
        // back, at its own height: each change of size puts the row back, after layout, before paint.
        let (table, pinned) = (table.clone(), Rc::clone(&pinned));
        use_effect_with((), move |()| {
            let watch = table.cast::<Element>().and_then(|t| {
                let again = table.clone();
                crate::web::SizeWatch::new(&[t.parent_element()?, t], move || {
                    let row = again.cast::<Element>().and_then(|t| t.query_selector("tr[aria-current=\"true\"]").ok().flatten());
                    if let Some(row) = row.filter(|_| *pinned.borrow()) {
                        reveal(&row, false);
                    }
                })
            });
            move || drop(watch)
        });
    }
    {
        let (table, pinned) = (table.clone(), Rc::clone(&pinned));
        use_effect_with((selected, Rc::as_ptr(rows) as usize), move |_| {
            let row = table.cast::<Element>().and_then(|t| t.query_selector("tr[aria-current=\"true\"]").ok().flatten());
            if let Some(row) = row.filter(|_| *pinned.borrow()) {
                reveal_settled(row, false, move |_| *pinned.borrow());
            }
        });
    }
    {
        // The browser's own find (Ctrl+F, Cmd+F, F3) scrolls the box to what it finds: the row
        // is no longer held there, or each row filling in would pull the box back from the match.
        let pinned = Rc::clone(&pinned);
        use_effect_with((), move |()| {
            let listener = crate::web::KeyListener::new(move |e| {
                if opens_find(e) {
                    *pinned.borrow_mut() = false;
                }
            });
            move || drop(listener)
        });
    }
    Callback::from(move |()| *pinned.borrow_mut() = false)
}

/// Whether `e` is the browser's find or its next match: Ctrl+F or Cmd+F,
/// Ctrl+G or Cmd+G (with Shift: the match before), F3. Ctrl or Cmd held for
/// anything else (a copy, a tab switch, a zoom) leaves the selected row held.
fn opens_find(e: &KeyboardEvent) -> bool {
    // The key's place, whatever the layout prints on it (Ctrl+F on a Cyrillic layout is "а").
    let letter = matches!(e.code().as_str(), "KeyF" | "KeyG") || matches!(e.key().to_ascii_lowercase().as_str(), "f" | "g");
    e.key() == "F3" || ((e.ctrl_key() || e.meta_key()) && !e.alt_key() && letter)
}

/// Rows per block of the overview (the unit the browser lays out or skips).
const BLOCK_ROWS: usize = 8;

/// A callback that stays the same object across renders and calls the latest `cb`.
#[hook]
fn use_latest(cb: &Callback<RowId>) -> Rc<Callback<RowId>> {
    let latest = use_mut_ref(|| cb.clone());
    *latest.borrow_mut() = cb.clone();
    use_memo((), move |()| Callback::from(move |v: RowId| latest.borrow().emit(v)))
}

/// A block's props.
#[derive(Properties)]
struct BlockProps {
    /// Every row of the table (the block draws `at`).
    rows: Rc<Vec<Row>>,
    /// The shards dropped from two folders ([`shards_in_two_folders`]).
    twice: Rc<std::collections::BTreeSet<String>>,
    /// Which rows the block draws.
    at: std::ops::Range<usize>,
    /// The selected row, if it is in the block.
    selected: Option<usize>,
    /// The table's Tab stop, if it is in the block.
    stop: Option<usize>,
    shared: bool,
    on_select: Callback<RowId>,
    on_cursor: Callback<usize>,
    table: NodeRef,
}

impl PartialEq for BlockProps {
    /// Its own rows compared by identity (a file's report is shared, made
    /// anew only when it changes), so a hash arriving draws one block again,
    /// not the table.
    fn eq(&self, o: &Self) -> bool {
        let same_row = |a: &Row, b: &Row| a.id == b.id && Rc::ptr_eq(&a.report, &b.report) && a.file == b.file && a.check == b.check;
        let (Some(mine), Some(theirs)) = (self.rows.get(self.at.clone()), o.rows.get(o.at.clone())) else { return false };
        self.at == o.at
            && Rc::ptr_eq(&self.twice, &o.twice)
            && self.rows.len() == o.rows.len()
            && mine.iter().zip(theirs).all(|(a, b)| same_row(a, b))
            && (self.selected, self.stop, self.shared) == (o.selected, o.stop, o.shared)
            && self.on_select == o.on_select
            && self.on_cursor == o.on_cursor
            && self.table == o.table
    }
}

/// Rows `at` of the overview, as one fixed-layout table.
#[function_component(Block)]
fn block(p: &BlockProps) -> Html {
    let rows = p.rows.get(p.at.clone()).unwrap_or(&[]);
    let n = p.rows.len();
    let drawn = rows.iter().enumerate().map(|(k, r)| {
        let i = p.at.start + k;
        let twice = r.report.shard.as_ref().is_some_and(|s| p.twice.contains(s));
        let row = RowProps { i, n, shared: p.shared, selected: p.selected == Some(i), stop: p.stop == Some(i), twice };
        file_row(&row, r, &p.on_select, &p.on_cursor, &p.table)
    });
    html! {
        <div class={classes!("ov-block", p.selected.map(|_| "sel"))}><table role="presentation">{ columns(p.shared) }<tbody role="rowgroup">{ for drawn }</tbody></table></div>
    }
}

/// Where a row is and what it is to the table.
struct RowProps {
    /// Its place.
    i: usize,
    /// The table's rows.
    n: usize,
    shared: bool,
    selected: bool,
    /// Whether it holds the table's Tab stop.
    stop: bool,
    /// Whether its shard's name is another folder's too: its folder is drawn.
    twice: bool,
}

/// The columns (their widths in the style sheet), the same in the header and every block.
fn columns(shared: bool) -> Html {
    html! {
        <colgroup>
            <col class="c-shard" /><col class="c-file" /><col class="c-kind" /><col class="c-size" /><col class="c-base" /><col class="c-first" /><col class="c-last" />
            <col class="c-time" /><col class="c-contents" /><col class="c-status" /><col class="c-hash" />
            if shared { <col class="c-check" /> }
        </colgroup>
    }
}

/// Digits of `v` as the page prints it.
fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// What the contents column counts: records, index entries or generations.
fn contents_count(f: &FileReport) -> u64 {
    match f.kind {
        FileKind::Index => f.index_entries.unwrap_or(0),
        FileKind::Epochs => f.entries.as_ref().map_or(0, |e| e.len() as u64),
        _ => f.records,
    }
}

/// The number columns' widths, as the style sheet's `--w-*` (in digits, at
/// least a header's or a word's): each as wide as its widest value, so no
/// number is broken across lines — the fixed columns take no measure of
/// their contents. The check column's width when there is one.
fn widths(rows: &[Row], shared: bool) -> String {
    let widest = |of: &dyn Fn(&FileReport) -> usize, least: usize| rows.iter().map(|r| of(&r.report)).max().unwrap_or(0).max(least);
    let shown = |v: Option<u64>| v.map_or(1, digits);
    format!(
        "--w-size: {}ch; --w-base: {}ch; --w-first: {}ch; --w-last: {}ch; --w-contents: {}ch; --w-check: {}",
        widest(&|f| digits(f.size), 5),
        widest(&|f| shown(f.base_offset), 5),
        widest(&|f| shown(f.first_offset), 5),
        widest(&|f| shown(f.last_offset), 5),
        widest(&|f| digits(contents_count(f)), 10),
        if shared { "var(--check-width)" } else { "0px" },
    )
}

/// A row's key: its file (or the shared report's n-th file), wherever it is drawn.
fn row_key(id: RowId) -> u32 {
    match id {
        RowId::File(f) => f.0,
        RowId::Shared(i) => i,
    }
}

/// Row `p.i`, file `r`: a click, or Enter or Space on it, selects it; the
/// arrows, Page Up/Down, Home and End move the focus.
fn file_row(p: &RowProps, r: &Row, on_select: &Callback<RowId>, on_cursor: &Callback<usize>, table: &NodeRef) -> Html {
    let (id, i, n) = (r.id, p.i, p.n);
    let on_click = on_select.reform(move |_: MouseEvent| id);
    let on_focus = {
        let on_cursor = on_cursor.clone();
        Callback::from(move |e: FocusEvent| {
            on_cursor.emit(i);
            // Reached by the keyboard (Tab, Shift+Tab): shown whole, not under the header.
            if let Some(row) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) {
                if row.matches(":focus-visible").unwrap_or(false) {
                    reveal_settled(row, true, focused);
                }
            }
        })
    };
    let on_key = {
        let (cb, on_cursor, table) = (on_select.clone(), on_cursor.clone(), table.clone());
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" || e.key() == " " {
                e.prevent_default();
                cb.emit(id);
            } else if let Some(to) = row_nav(&e.key()).and_then(|nav| move_in_list(Some(i), nav, n, PAGE_ROWS)) {
                e.prevent_default();
                on_cursor.emit(to);
                focus_row(&table, to);
            }
        })
    };
    let f = &r.report;
    let word = f.verdict().as_str();
    let badge = word.replace(' ', "-");
    let (selected, stop) = (p.selected, p.stop);
    let unit = match f.kind {
        FileKind::Index => "entries",
        FileKind::Epochs => "generations",
        _ => "records",
    };
    let detail = format!("{} {unit}", contents_count(f));
    html! {
        <tr key={row_key(id)} role="row" data-row={i.to_string()} aria-rowindex={(i + 2).to_string()} class={classes!(selected.then_some("selected"))} onclick={on_click} onkeydown={on_key} onfocus={on_focus}
            tabindex={if stop { "0" } else { "-1" }} aria-current={selected.then_some("true")}>
            <td role="cell" class="shard">{ shard_cell(f, p.twice) }</td>
            <td role="cell" class="path" title={shown(&f.path)}>{ path_words(f) }{ notes(f) }</td>
            <td role="cell">{ f.kind.as_str() }</td>
            <td role="cell" class="num">{ f.size }</td>
            <td role="cell" class="num">{ opt(f.base_offset) }</td>
            <td role="cell" class="num">{ opt(f.first_offset) }</td>
            <td role="cell" class="num">{ opt(f.last_offset) }</td>
            <td role="cell" class="time">{ f.time.map_or_else(Html::default, |t| unbroken(&span_words(t))) }</td>
            <td role="cell" class="num">{ detail }</td>
            <td role="cell"><span class={classes!("badge", badge)}>{ word }</span></td>
            { hash_cell(f, p.shared) }
            if p.shared { { check_cell(r.check.as_ref()) } }
        </tr>
    }
}

/// How many rows to draw now: a long table grows [`ROWS_PER_FRAME`] rows a
/// frame (each step in a task after the frame before is drawn), through
/// `must` at once; a new drop (another first row) starts again.
#[hook]
fn use_grow_by_frames(first: Option<RowId>, n: usize, must: Option<usize>) -> usize {
    let grown = use_state_eq(|| (first, ROWS_PER_FRAME));
    let base = if grown.0 == first { grown.1 } else { ROWS_PER_FRAME };
    let shown = rows_to_render(base, n, must);
    {
        let grown = grown.clone();
        use_effect_with((first, shown, n), move |&(first, shown, n)| {
            if shown < n {
                wasm_bindgen_futures::spawn_local(async move {
                    crate::web::after_frame(50).await;
                    grown.set((first, shown + ROWS_PER_FRAME));
                });
            }
        });
    }
    shown
}

/// The file's identity: the algorithm and the value's first digits (all of it on hover);
/// "hashing…" for a dropped file whose hash is still being computed.
fn hash_cell(f: &FileReport, shared: bool) -> Html {
    match verify::claimed_identity(f) {
        Some((algorithm, value)) => html! {
            <td role="cell" class="sha" title={format!("{} {value}", algorithm.as_str())}>{ format!("{} {}", algorithm.as_str(), short(value, 12)) }</td>
        },
        None if !shared => html! { <td role="cell" class="sha pending">{ "hashing…" }</td> },
        None => html! { <td role="cell" class="sha"></td> },
    }
}
