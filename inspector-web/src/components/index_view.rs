//! The index view: every entry, and the codec's verdict on it — the finding
//! that covers the entry where the codec's layout puts it, if any. From a
//! report without its file, the entries the findings name.

use std::rc::Rc;

use felix_codec::doc::report::FileReport;
use felix_codec::format::file_name::FileKind;
use yew::prelude::*;

use super::text_field::TextField;

use crate::model::hex::{index_entry_finding, index_entry_number};
use crate::model::scan::{Scanned, MAX_INDEX_ROWS};

const SHOWN: usize = 500;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The file's report.
    pub report: Rc<FileReport>,
    /// Its scan, when the file is on the page.
    #[prop_or_default]
    pub scanned: Option<Rc<Scanned>>,
}

/// The entries' table in its own scroll box: one Tab stop (the box), the
/// arrow keys scroll it, a narrow screen scrolls it sideways, not the page.
fn entries_box(head: Html, rows: Html) -> Html {
    html! {
        <div class="tablebox" role="region" tabindex="0" aria-labelledby="index-heading">
            <table id="index-entries">{ head }<tbody>{ rows }</tbody></table>
        </div>
    }
}

/// The index view (index files only).
#[function_component(IndexView)]
pub fn index_view(props: &Props) -> Html {
    let r = &props.report;
    if r.kind != FileKind::Index {
        return html! {};
    }
    let head = html! { <thead><tr><th scope="col">{"#"}</th><th scope="col">{"offset"}</th><th scope="col">{"position"}</th><th scope="col">{"check"}</th></tr></thead> };
    let Some(s) = &props.scanned else {
        let rows = r.findings.iter().filter_map(|f| Some((index_entry_number(f.position)?, f))).take(SHOWN).map(|(n, f)| {
            html! {
                <tr class="bad" data-kind={f.kind.clone()}>
                    <td class="num">{ n }</td><td class="num">{ f.offset.map(|o| o.to_string()).unwrap_or_default() }</td><td class="num">{ "—" }</td>
                    <td>{ format!("✗ {}: ", f.kind) }<TextField text={f.message.clone()} /></td>
                </tr>
            }
        });
        return html! {
            <div class="index">
                <h3 id="index-heading">{ format!("Index entries ({}; the report names those with findings — drop the file to see every entry)", r.index_entries.unwrap_or(0)) }</h3>
                { entries_box(head, html! { for rows }) }
            </div>
        };
    };
    let rows = s.detail.index_entries.iter().enumerate().take(SHOWN).map(|(n, e)| {
        let finding = index_entry_finding(&r.findings, n as u64);
        let verdict = finding.map_or_else(
            || html! { "✓ lands on its record" },
            |f| html! { <>{ format!("✗ {}: ", f.kind) }<TextField text={f.message.clone()} /></> },
        );
        html! {
            <tr class={if finding.is_none() { "ok" } else { "bad" }} data-kind={finding.map(|f| f.kind.clone())}>
                <td class="num">{ n }</td><td class="num">{ e.offset }</td><td class="num">{ e.position }</td>
                <td>{ verdict }</td>
            </tr>
        }
    });
    let n = s.detail.index_entries.len();
    html! {
        <div class="index">
            <h3 id="index-heading">{ match s.report.index_entries {
                // The drop's row budget cut the list (see `model::scan::Budget`).
                Some(total) if (n as u64) < total => format!("Index entries ({total}; {} shown: the page keeps at most {MAX_INDEX_ROWS} per drop)", n.min(SHOWN)),
                _ if n > SHOWN => format!("Index entries ({n}, first {SHOWN} shown)"),
                _ => format!("Index entries ({n})"),
            } }</h3>
            { entries_box(head, html! { for rows }) }
        </div>
    }
}
