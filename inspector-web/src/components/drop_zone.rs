//! The drop zone and the file and folder pickers.

use web_sys::File;
use yew::prelude::*;

use crate::ui::hooks::{on_dropped, on_picked, use_folder_picker};

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
    let on_change = on_picked(&props.on_files);
    let on_drop = {
        let hover = hover.clone();
        on_dropped(&props.on_files, move || hover.set(false))
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
    let folder_ref = use_folder_picker();
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
