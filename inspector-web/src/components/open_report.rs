//! Open a report by pasting its JSON (`felix-storage inspect --json`).

use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Receives the pasted text.
    pub on_text: Callback<String>,
}

/// A disclosure with a text area and an Open button.
#[function_component(OpenReport)]
pub fn open_report(props: &Props) -> Html {
    let area = use_node_ref();
    let on_open = {
        let (area, cb) = (area.clone(), props.on_text.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(t) = area.cast::<HtmlTextAreaElement>() {
                cb.emit(t.value());
            }
        })
    };
    html! {
        <details class="open-report" id="open-report">
            <summary>{ "Paste a JSON report…" }</summary>
            <label for="report-text">{ "The output of felix-storage inspect --json, or a report downloaded here:" }</label>
            <textarea id="report-text" ref={area} rows="4" spellcheck="false"></textarea>
            <button id="open-report-text" onclick={on_open}>{ "Open the report" }</button>
        </details>
    }
}
