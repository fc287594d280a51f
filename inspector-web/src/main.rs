//! Entry point: mounts the inspector.

fn main() {
    yew::Renderer::<felix_inspector::app::App>::new().render();
}
