//! Text from files, file names and shared reports, as the page shows it:
//! escaped by the codec's one rule for text that came from outside
//! (`felix_codec::doc::report::one_line` — the rule the CLI prints with: control
//! characters, bidirectional controls, separators and zero-width characters
//! shown as `\u{…}` escapes, never interpreted) and isolated from the text
//! around it (`<bdi>`), so no name can reorder or hide the page's own words.

use felix_codec::doc::report::one_line;
use yew::prelude::*;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The text, as it came.
    pub text: AttrValue,
}

/// `text` escaped and isolated.
#[function_component(TextField)]
pub fn text_field(props: &Props) -> Html {
    html! { <bdi class="field">{ shown(&props.text) }</bdi> }
}

/// `text` as an attribute (a `title`, an `aria-label`) shows it: the same
/// escape (an attribute cannot be isolated; with its controls escaped it
/// holds none to isolate).
#[must_use]
pub fn shown(text: &str) -> String {
    one_line(text).into_owned()
}
