//! Each dropped shard's recovery preview: the plan `felix-storage recover`
//! would run on the same bytes (the codec's `plan_shard` over the facts of
//! the same inspection, `model::replica::plan`), with each cut's bytes (what
//! would move to evidence) and a jump to them in the hex view, each index
//! rebuild, each refusal with its reason and the flag that would allow it,
//! and the command to run on the broker. The folders are read and planned
//! off the page, in a worker of their own (`protocol::FolderJob::Plan`).

use std::cell::RefCell;
use std::rc::Rc;

use felix_codec::shard::recovery::{Action, ShardPlan};
use web_sys::Blob;
use yew::prelude::*;

use super::message::Message;
use super::text_field::{shown, TextField};
use super::verdicts::codec_words;

use crate::model::group::file_name;
use crate::model::replica::{plans, recover_command, recover_flag, remains, Planned, ReadFailure, SHOWN_CUT_BYTES};
use crate::share::plan_share;
use crate::ui::hooks::use_errand;
use crate::web;
use crate::worker::protocol::{Answer, Folder, FolderJob};
use crate::worker::runner::Errand;

/// A shard folder on the page: its name and its files' bytes.
#[derive(Clone, Debug)]
pub struct ShardFolder {
    /// The shard directory's name.
    pub name: String,
    /// Its folder as dropped (`root/shard`): what the preview is headed
    /// with, and how it is told from another root's shard of the same name.
    pub folder: String,
    /// `(path, size, bytes)` of each file. The size is the one read when the
    /// file was dropped: asking a picked file's `size` again is a synchronous
    /// trip to the disk in Chromium (a third of a millisecond each, 300 in one task).
    pub files: Vec<(String, u64, Blob)>,
}

/// The shards to preview, compared by `key` (the files' ids): the blobs are browser objects.
#[derive(Clone, Debug)]
pub struct Shards {
    /// Identifies this set of files.
    pub key: Vec<u32>,
    /// The shards.
    pub shards: Vec<ShardFolder>,
}

impl PartialEq for Shards {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The dropped shard folders.
    pub shards: Rc<Shards>,
    /// Shows `(path, byte range)` in the hex view.
    pub on_show: Callback<(String, (u64, u64))>,
}

fn hex_line(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(" ")
}

/// Text from the plan (a file's name, the evidence's, a reason) as the page shows text from outside.
fn field(text: &str) -> Html {
    html! { <TextField text={text.to_string()} /> }
}

/// ", kept in EVIDENCE", when there is evidence.
fn kept_in(evidence: Option<&String>) -> Html {
    evidence.map_or_else(|| html! {}, |e| html! { <>{ ", kept in " }{ field(e) }</> })
}

/// One action in words. A cut of dropped files shows its first bytes
/// (`cut_bytes`) and a button to them (`on_show`); a shared plan's has neither.
fn action_item(
    files: &[(String, u64, Blob)],
    cut_bytes: &[(String, Vec<u8>)],
    action: &Action,
    on_show: Option<&Callback<(String, (u64, u64))>>,
) -> Html {
    match action {
        Action::RemoveTemporary { file, reason } => {
            html! { <li class="action" data-action="remove-temporary">{ "remove " }{ field(file) }{ ": " }{ field(reason) }</li> }
        }
        Action::RemoveUnfinished { file, bytes, reason, evidence } => html! {
            <li class="action" data-action="remove-unfinished">{ "remove " }{ field(file) }{ format!(" ({bytes} bytes") }{ kept_in(evidence.as_ref()) }{ "): " }{ field(reason) }</li>
        },
        Action::Cut { file, position, bytes, reason, evidence, .. } => {
            let path = files.iter().find(|(p, _, _)| file_name(p) == file).map(|(p, _, _)| p.clone()).unwrap_or_default();
            let range = (*position, position.saturating_add(*bytes));
            let show = on_show.map(|on_show| {
                let on_show = on_show.clone();
                let click = Callback::from(move |_: MouseEvent| on_show.emit((path.clone(), range)));
                html! { <button class="show-cut" onclick={click}>{ "Show these bytes in the hex view" }</button> }
            });
            let first = cut_bytes.iter().find(|(f, _)| f == file).map(|(_, b)| hex_line(b));
            html! {
                <li class="action" data-action="cut">
                    { "cut " }{ field(file) }{ format!(" at byte {position} ({position:#x}): {bytes} bytes move to ") }{ field(evidence) }{ ". " }{ field(reason) }
                    if let Some(first) = first {
                        <div class="cut-bytes"><code>{ first }</code>{ if *bytes > SHOWN_CUT_BYTES { " …" } else { "" } }</div>
                    }
                    { show.unwrap_or_default() }
                </li>
            }
        }
        Action::RemoveOrphanIndex { file, bytes, reason, evidence } => html! {
            <li class="action" data-action="remove-orphan-index">{ "remove " }{ field(file) }{ format!(" ({bytes} bytes") }{ kept_in(evidence.as_ref()) }{ "): " }{ field(reason) }</li>
        },
        Action::RebuildIndex { file, reason } => {
            html! { <li class="action" data-action="rebuild-index">{ "rebuild " }{ field(file) }{ ": " }{ field(reason) }</li> }
        }
        Action::Refuse { file, position, reason, allowed_by, .. } => html! {
            <li class="action refused" data-action="refuse">
                { "REFUSED: " }{ field(file) }{ format!(" at byte {position}: ") }{ field(reason) }
                if let Some(flag) = allowed_by { <span class="allowed-by">{ format!(" — {flag} would allow cutting it, as the newest segment of the files planned") }</span> }
            </li>
        },
    }
}

/// What to run on the broker for this plan: the command
/// (`model::replica::recover_command`), or — when the shard's name cannot be
/// typed safely in a shell — which folder to run it on, in words.
fn on_the_broker(name: &str, plan: &ShardPlan) -> Html {
    // A shard refused for damage no flag allows cutting: first what would
    // make recovery succeed (the codec's words, as `recover` prints them),
    // and the command only as the step after it — alone it would only refuse.
    let to_succeed = plan.to_succeed();
    let lead = if to_succeed.is_some() { "Then, on the broker: " } else { "On the broker: " };
    let first = to_succeed.map(|words| html! { <p class="to-succeed">{ "To make recovery succeed: " }{ codec_words(&words) }</p> });
    html! { <>{ first.unwrap_or_default() }{ command_line(lead, name, plan) }</> }
}

/// What `--dry-run` on the broker shows: the plan of the folder as it is
/// there — a folder holding more than was dropped (a later segment) plans
/// otherwise (issue 18's second review: one `.log` dropped from a shard's
/// folder was planned as its newest segment).
const DRY_RUN_FIRST: &str =
    " (add --dry-run first: it plans the folder as the broker holds it, the same plan as this one when that folder holds exactly these files)";

/// A command's words, a flag never broken at its hyphens (at 320 px
/// `--repair-checksum-tail` read as three lines); the text is the command's.
fn command_words(command: &str) -> Html {
    html! {
        <>{ for command.split_inclusive(' ').map(|w| if w.starts_with("--") {
            html! { <span class="flag">{ w.to_string() }</span> }
        } else {
            html! { { w.to_string() } }
        }) }</>
    }
}

/// The command for `plan`, after `lead`.
fn command_line(lead: &str, name: &str, plan: &ShardPlan) -> Html {
    match recover_command(name, plan) {
        Some(command) => html! {
            <p>{ lead }<code class="command">{ command_words(&command) }</code>{ DRY_RUN_FIRST }</p>
        },
        None => html! {
            <p class="no-command">
                { format!("{lead}run felix-storage recover{}{DRY_RUN_FIRST} on the folder ", recover_flag(plan)) }
                <TextField text={name.to_string()} />
                { ". No command is printed: the folder's name holds characters a shell cannot be given as shown here (the escape, pasted, would name another folder)." }
            </p>
        },
    }
}

/// What recovery would do to `plan`'s shard, in words.
#[must_use]
pub fn verdict(plan: &ShardPlan) -> &'static str {
    let others = plan.actions.iter().any(|a| !matches!(a, Action::Refuse { .. }));
    if plan.refused() && others {
        "recovery refuses this shard: nothing in it would change (the other steps below run only once nothing is refused)"
    } else if plan.refused() {
        "recovery refuses this shard: nothing in it would change"
    } else if plan.actions.is_empty() && plan.remaining_findings.is_empty() {
        "nothing to do"
    } else if plan.actions.is_empty() {
        "recovery changes nothing in this shard: what it holds is not recovery's to repair (below)"
    } else {
        "recovery would run these steps, in this order"
    }
}

/// One shard's preview: the verdict, the actions, what would remain, the
/// command, the plan as JSON and its download (the CLI's `recover --dry-run
/// --json` of this shard), headed with `folder` (the shard's folder as
/// dropped, or a shared plan's path). For dropped files, `files`,
/// `cut_bytes` and `on_show` add each cut's bytes; a shared plan has none.
pub fn plan_section(
    name: &str,
    folder: &str,
    plan: &ShardPlan,
    files: &[(String, u64, Blob)],
    cut_bytes: &[(String, Vec<u8>)],
    on_show: Option<&Callback<(String, (u64, u64))>>,
) -> Html {
    let json = serde_json::to_string_pretty(plan).unwrap_or_default();
    let download = {
        let whole = plan_share::to_json(&plans(vec![plan.clone()]));
        Callback::from(move |_: MouseEvent| {
            let _ = web::download("felix-plan.json", "application/json", &whole);
        })
    };
    html! {
        <section class="recovery" data-shard={name.to_string()} data-folder={folder.to_string()} aria-label={format!("recovery preview of {}", shown(folder))}>
            <h3>{ "Recovery preview: " }<TextField text={folder.to_string()} /></h3>
            <p class="verdict">{ verdict(plan) }</p>
            <ol class="actions">{ for plan.actions.iter().map(|a| action_item(files, cut_bytes, a, on_show)) }</ol>
            if let Some(remain) = remains(plan) { <p class="remains">{ remain }</p> }
            if let Some(advice) = plan.epochs_advice() { <p class="epochs-advice">{ "The epochs file: " }{ codec_words(&advice) }</p> }
            // Nothing to run: no command (recover would do nothing).
            if !plan.actions.is_empty() { { on_the_broker(name, plan) } }
            <details>
                <summary>{ "the plan as JSON (recover --dry-run --json)" }</summary>
                // A scroll box of its own: focusable, so the keyboard scrolls it too.
                <pre class="plan-json" role="region" tabindex="0" aria-label={format!("the recovery plan of {} as JSON", shown(folder))}>{ json }</pre>
                <button class="download-plan" onclick={download}>{ "Download the plan (JSON)" }</button>
            </details>
        </section>
    }
}

/// Each shard's plan, or why its bytes could not be read, by its folder.
type Previews = Vec<(String, Result<Planned, ReadFailure>)>;

/// Plans `shards` in a worker (or on the page when none starts); `planned`
/// gets every shard's answer at once, in order, when the last arrives.
fn start_plans(shards: &Shards, planned: &UseStateHandle<Previews>, errand: &RefCell<Errand>) {
    let folders: Vec<Folder> = shards
        .shards
        .iter()
        .map(|s| Folder { name: s.name.clone(), files: s.files.iter().map(|(p, size, _)| (p.clone(), *size)).collect() })
        .collect();
    let blobs = shards.shards.iter().flat_map(|s| s.files.iter().map(|(_, _, b)| b.clone())).collect();
    let names: Vec<String> = shards.shards.iter().map(|s| s.folder.clone()).collect();
    let got: RefCell<Vec<Option<Result<Planned, ReadFailure>>>> = RefCell::new(names.iter().map(|_| None).collect());
    let planned = planned.clone();
    let on = Callback::from(move |answer: Answer| match answer {
        Answer::Planned { shard, plan } => {
            if let Some(slot) = got.borrow_mut().get_mut(shard as usize) {
                *slot = Some(plan.map(|p| *p));
            }
        }
        Answer::Done { .. } | Answer::Failed(_) => {
            let failed = match answer {
                Answer::Failed(message) => Some(ReadFailure::Worker(message)),
                _ => None,
            };
            let got = std::mem::take(&mut *got.borrow_mut());
            let out = names.iter().zip(got).filter_map(|(name, p)| Some((name.clone(), p.or_else(|| failed.clone().map(Err))?)));
            planned.set(out.collect());
        }
        Answer::Ready | Answer::Diffed(_) => {}
    });
    errand.borrow_mut().start(FolderJob::Plan { shards: folders }, blobs, &on);
}

/// One preview per shard.
#[function_component(RecoveryPreview)]
pub fn recovery_preview(props: &Props) -> Html {
    let planned = use_state(Previews::new);
    let errand = use_errand();
    {
        let planned = planned.clone();
        use_effect_with(Rc::clone(&props.shards), move |shards| {
            start_plans(shards, &planned, &errand);
            || ()
        });
    }
    let items = props.shards.shards.iter().filter_map(|shard| {
        let (_, result) = planned.iter().find(|(n, _)| *n == shard.folder)?;
        Some(match result {
            Err(e) => html! { <section class="recovery" data-shard={shard.name.clone()} data-folder={shard.folder.clone()}><p class="error"><Message text={e.to_string()} /></p></section> },
            Ok(p) => plan_section(&shard.name, &shard.folder, &p.plan, &shard.files, &p.cut_bytes, Some(&props.on_show)),
        })
    });
    html! {
        <section class="recovery-previews" id="recovery-preview" aria-label="recovery previews">
            <h2>{ "What recovery would do" }</h2>
            { for items }
        </section>
    }
}
