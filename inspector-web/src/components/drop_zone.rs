//! The drop zone and the file and folder pickers.

use web_sys::{File, HtmlInputElement};
use yew::prelude::*;

use crate::web;

/// Props: where the chosen files go, as `(relative path, file)`.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Receives the files.
    pub on_files: Callback<Vec<(String, File)>>,
}

/// Drop target plus two pickers (files; a folder).
#[function_component(DropZone)]
pub fn drop_zone(props: &Props) -> Html {
    let hover = use_state(|| false);
    let on_change = {
        let cb = props.on_files.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            cb.emit(web::picked(input.files()));
            input.set_value("");
        })
    };
    let on_drop = {
        let (cb, hover) = (props.on_files.clone(), hover.clone());
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hover.set(false);
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
    };
    let on_over = {
        let hover = hover.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hover.set(true);
        })
    };
    let on_leave = {
        let hover = hover.clone();
        Callback::from(move |_: DragEvent| hover.set(false))
    };
    let folder_ref = use_node_ref();
    {
        // `webkitdirectory` is not a standard attribute: set it on the element.
        let folder_ref = folder_ref.clone();
        use_effect_with((), move |()| {
            if let Some(el) = folder_ref.cast::<web_sys::Element>() {
                let _ = el.set_attribute("webkitdirectory", "");
            }
            || ()
        });
    }
    let class = if *hover { "dropzone hover" } else { "dropzone" };
    html! {
        <div id="dropzone" class={class} role="region" aria-label="drop files, a shard folder or a JSON report here" ondrop={on_drop} ondragover={on_over} ondragleave={on_leave}>
            <span>{ "Drop files, a shard folder or a JSON report here, or " }</span>
            <label class="button">{ "choose files…" }
                <input id="file-input" type="file" multiple=true onchange={on_change.clone()} />
            </label>
            <label class="button">{ "choose a folder…" }
                <input id="folder-input" type="file" ref={folder_ref} onchange={on_change} />
            </label>
        </div>
    }
}
