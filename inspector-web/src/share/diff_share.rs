//! Sharing a replica diff like a report: its JSON (exactly `felix-storage
//! diff --json`), Markdown (every field escaped for where it lands) and a
//! permalink (`#d=` + base64url(deflate(JSON))). A diff carries no payload
//! byte by construction (the codec's model has no field for one), so neither
//! does anything made from it.
//!
//! A diff from a link is input from strangers: [`decode`] checks the length,
//! the encoding, the inflated size, the JSON against the model, and every
//! field a view trusts (version, counts, checksums, finding kinds, ranges)
//! before it is shown, as a claim.

use std::fmt::Write as _;

use felix_codec::doc::report::is_finding_kind;
use felix_codec::doc::text::span_words;
use felix_codec::format::time::format_micros;
use felix_codec::shard::diff::{
    blocks, different_shards, Diff, DivergentTime, Lost, OffsetRange, SideReport, DIFF_VERSION, MAX_DIFF_FINDINGS, MAX_LOST_RANGES,
};

use super::link::{self, Caps, LinkError};
use super::markdown::{code, text};
use super::open_error::{parse, Document, OpenError, Origin, Refusal};
use crate::ui::message::quote;

/// The fragment prefix of a diff link.
pub const PREFIX: &str = "#d=";
/// Longest fragment a diff link may be.
pub const MAX_FRAGMENT_CHARS: usize = 256 << 10;
/// Largest inflated JSON a diff link may carry.
pub const MAX_INFLATED_BYTES: usize = 1 << 20;
/// A diff link's size caps.
const CAPS: Caps = Caps { fragment_chars: MAX_FRAGMENT_CHARS, inflated_bytes: MAX_INFLATED_BYTES };
/// Longest path or message a shared diff may hold.
const MAX_TEXT_CHARS: usize = 4096;
/// Most epochs a side may list (the engine stores at most 1024).
const MAX_EPOCHS: usize = 1024;
/// Most notes.
const MAX_NOTES: usize = 16;

/// Whether `fragment` is meant as a diff link.
#[must_use]
pub fn is_link(fragment: &str) -> bool {
    fragment.starts_with(PREFIX)
}

/// The diff as the CLI prints it with `--json` (the model always serialises).
#[must_use]
pub fn to_json(diff: &Diff) -> String {
    let mut s = serde_json::to_string_pretty(diff).unwrap_or_default();
    s.push('\n');
    s
}

/// The fragment carrying `diff`.
///
/// # Errors
/// When it would be longer than a link may be (share the JSON instead).
pub fn encode(diff: &Diff) -> Result<String, LinkError> {
    let json = serde_json::to_vec(diff).map_err(|e| LinkError::Json(e.to_string()))?;
    link::pack(PREFIX, &json, CAPS, "this diff", "share the JSON instead")
}

/// The diff in a link, checked field by field.
///
/// # Errors
/// What is wrong, in words ([`OpenError`]): the length, the character that
/// is not base64url, compressed data cut short or damaged, the JSON, a field
/// by its path, or a field refused.
pub fn decode(fragment: &str) -> Result<Diff, OpenError> {
    if !fragment.starts_with(PREFIX) {
        return Err(OpenError::NoDocument { prefix: PREFIX, document: Document::Diff });
    }
    let json = link::unpack(fragment, PREFIX.len(), CAPS, &Origin::DiffLink)?;
    from_json(&json, Origin::DiffLink)
}

/// A diff from JSON (`felix-storage diff --json`, the page's own download,
/// a link's inside), checked field by field.
///
/// # Errors
/// Not JSON, a field by its path, or a field refused.
pub fn from_json(json: &[u8], from: Origin) -> Result<Diff, OpenError> {
    let diff: Diff = parse(json, &from, Document::Diff)?;
    validate(&diff).map_err(|why| OpenError::Refused { from, document: Document::Diff, why })?;
    Ok(diff)
}

fn check_text(field: &str, s: &str) -> Result<(), Refusal> {
    if s.chars().count() > MAX_TEXT_CHARS {
        return Err(Refusal::field(field, format!("is longer than {MAX_TEXT_CHARS} characters")));
    }
    Ok(())
}

fn check_side(name: &str, s: &SideReport) -> Result<(), Refusal> {
    check_text(&format!("{name}.path"), &s.path)?;
    if s.findings.len() > MAX_DIFF_FINDINGS {
        return Err(Refusal::field(
            format!("{name}.findings"),
            format!("has {} entries; a diff names at most {MAX_DIFF_FINDINGS}", s.findings.len()),
        ));
    }
    if s.epochs.len() > MAX_EPOCHS {
        return Err(Refusal::field(format!("{name}.epochs"), format!("has {} entries; at most {MAX_EPOCHS}", s.epochs.len())));
    }
    let bounded = match s.first_offset {
        // At least one record, and no more records than offsets in its range.
        Some(f) => f < s.next_offset && s.records >= 1 && s.records <= s.next_offset - f,
        None => s.records == 0,
    };
    if !bounded {
        return Err(Refusal::within(name, format!("first_offset and next_offset do not bound its {} records", s.records)));
    }
    let damaged = s.unordered_records > 0 || s.findings.iter().any(blocks);
    // A blocking finding past the cap may explain `blocked` unseen; a named one must block.
    if (damaged && !s.blocked) || (s.blocked && !damaged && s.findings_omitted == 0) {
        return Err(Refusal::field(format!("{name}.blocked"), format!("is {}, yet its findings say otherwise", s.blocked)));
    }
    for (i, f) in s.findings.iter().enumerate() {
        if !is_finding_kind(&f.finding.kind) {
            return Err(Refusal::field(format!("{name}.findings[{i}].kind"), format!("{} is not a finding kind", quote(&f.finding.kind))));
        }
        if f.finding.end < f.finding.position {
            return Err(Refusal::field(format!("{name}.findings[{i}]"), "ends before it starts"));
        }
        check_text(&format!("{name}.findings[{i}].file"), &f.file)?;
        check_text(&format!("{name}.findings[{i}].message"), &f.finding.message)?;
    }
    Ok(())
}

fn is_checksum(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

/// Checks every field a view trusts.
///
/// # Errors
/// The first field that is wrong, by name.
pub fn validate(d: &Diff) -> Result<(), Refusal> {
    if d.diff_version != DIFF_VERSION {
        return Err(Refusal::field("diff_version", format!("is {}, this page reads {DIFF_VERSION}", d.diff_version)));
    }
    check_side("a", &d.a)?;
    check_side("b", &d.b)?;
    if d.notes.len() > MAX_NOTES {
        return Err(Refusal::field("notes", format!("has {} entries; at most {MAX_NOTES}", d.notes.len())));
    }
    for (i, n) in d.notes.iter().enumerate() {
        check_text(&format!("notes[{i}]"), n)?;
    }
    if d.only_a.len() > 2 || d.only_b.len() > 2 {
        return Err(Refusal::Together("only_a and only_b hold at most two ranges each".into()));
    }
    for r in d.only_a.iter().chain(&d.only_b).chain(d.common_range.as_ref()) {
        if r.from >= r.to {
            return Err(Refusal::Together(format!("the range {}..{} is empty or reversed", r.from, r.to)));
        }
    }
    if d.divergent_records > d.compared_records {
        return Err(Refusal::field("divergent_records", "exceeds compared_records"));
    }
    check_derived(d)?;
    check_shards(d)?;
    check_lost("lost_a", &d.lost_a, &d.a)?;
    check_lost("lost_b", &d.lost_b, &d.b)?;
    check_times(d)?;
    check_verdict(d)
}

/// `divergent_time` (absent from diffs made before it): only with a
/// divergence, each side's span within its least and greatest, one its
/// `divergent_records` can have (`shared::could_span`), and begun by the
/// first divergent record's own timestamp.
fn check_times(d: &Diff) -> Result<(), Refusal> {
    let Some(t) = &d.divergent_time else { return Ok(()) };
    let Some(v) = &d.divergence else { return Err(Refusal::Together("divergent_time is given without a divergence".into())) };
    for (side, span, r) in [("a", t.a, &v.a), ("b", t.b, &v.b)] {
        let field = format!("divergent_time.{side}");
        if span.min > span.max || [span.first, span.last].iter().any(|&x| x < span.min || x > span.max) {
            return Err(Refusal::field(field, "has a first or last timestamp outside its min..=max"));
        }
        if !super::shared::could_span(span, d.divergent_records) {
            return Err(Refusal::field(field, format!("is not a span {} divergent records can have", d.divergent_records)));
        }
        if span.first != r.timestamp_micros {
            return Err(Refusal::field(
                format!("{field}.first"),
                format!("is {}, not the first divergent record's timestamp ({})", span.first, r.timestamp_micros),
            ));
        }
    }
    Ok(())
}

/// What the codec derives from the two sides' offsets, the claim must say too.
fn check_derived(d: &Diff) -> Result<(), Refusal> {
    let common = match (d.a.first_offset, d.b.first_offset) {
        (Some(fa), Some(fb)) => {
            let (from, to) = (fa.max(fb), d.a.next_offset.min(d.b.next_offset));
            (from < to).then_some(OffsetRange { from, to })
        }
        _ => None,
    };
    if d.common_range != common {
        return Err(Refusal::field("common_range", "is not where the two sides' offsets overlap"));
    }
    if d.only_a != only(&d.a, common) || d.only_b != only(&d.b, common) {
        return Err(Refusal::Together("only_a or only_b is not what one side holds outside the common range".into()));
    }
    if d.compared_records > d.a.records.min(d.b.records) || common.map_or(d.compared_records > 0, |c| d.compared_records > c.to - c.from) {
        return Err(Refusal::field("compared_records", "exceeds the records both sides hold in common"));
    }
    if d.divergence.is_some() != (d.divergent_records > 0) {
        return Err(Refusal::Together("divergent_records and divergence disagree".into()));
    }
    if let Some(o) = d.first_divergent_offset {
        if !common.is_some_and(|c| c.from <= o && o < c.to) {
            return Err(Refusal::field("first_divergent_offset", format!("{o} is outside the common range")));
        }
    }
    for (name, t, s) in [("truncate_a_to", d.truncate_a_to, &d.a), ("truncate_b_to", d.truncate_b_to, &d.b)] {
        if t.is_some_and(|t| t > s.next_offset) {
            return Err(Refusal::field(name, "is past that side's next_offset (a follower never truncates beyond its log)"));
        }
    }
    Ok(())
}

/// `identical` and the divergence: what the rest of the diff says.
fn check_verdict(d: &Diff) -> Result<(), Refusal> {
    let identical = d.divergence.is_none()
        && d.only_a.is_empty()
        && d.only_b.is_empty()
        && d.compared_records == d.a.records
        && d.compared_records == d.b.records
        && !d.a.blocked
        && !d.b.blocked
        && d.different_shards.is_none();
    if d.identical != identical {
        return Err(Refusal::field("identical", format!("is {}, yet the rest of the diff says {identical}", d.identical)));
    }
    match (&d.divergence, d.first_divergent_offset) {
        (None, None) => {}
        (Some(v), Some(o)) if v.offset == o => {
            for (side, r) in [("a", &v.a), ("b", &v.b)] {
                if !is_checksum(&r.checksum) {
                    return Err(Refusal::field(
                        format!("divergence.{side}.checksum"),
                        format!("{} is not 8 upper-case hex digits", quote(&r.checksum)),
                    ));
                }
                check_text(&format!("divergence.{side}.file"), &r.file)?;
            }
        }
        _ => return Err(Refusal::Together("first_divergent_offset and divergence disagree".into())),
    }
    Ok(())
}

/// A claim of two different shards must be the codec's judgement of the
/// two names it gives, and then advise no truncation.
fn check_shards(d: &Diff) -> Result<(), Refusal> {
    let Some(ds) = &d.different_shards else { return Ok(()) };
    check_text("different_shards.a_dir", &ds.a_dir)?;
    check_text("different_shards.b_dir", &ds.b_dir)?;
    if different_shards(&ds.a_dir, &ds.b_dir).as_ref() != Some(ds) {
        return Err(Refusal::field("different_shards", "is not what the two names it gives say"));
    }
    if d.truncate_a_to.is_some() || d.truncate_b_to.is_some() {
        return Err(Refusal::field("different_shards", "is set, yet a truncation is given"));
    }
    Ok(())
}

/// Lost ranges: capped, in order, apart, inside the lacking side's own range.
fn check_lost(name: &str, lost: &[Lost], side: &SideReport) -> Result<(), Refusal> {
    if lost.len() > MAX_LOST_RANGES {
        return Err(Refusal::field(name, format!("has {} entries; a diff names at most {MAX_LOST_RANGES}", lost.len())));
    }
    let mut after = side.first_offset;
    for (i, l) in lost.iter().enumerate() {
        let inside = after.is_some_and(|a| a < l.range.from) && l.range.from < l.range.to && l.range.to < side.next_offset;
        if !inside {
            return Err(Refusal::field(format!("{name}[{i}]"), "is not a range inside that side's own offsets, after the one before"));
        }
        after = Some(l.range.to);
        if !is_checksum(&l.held_at.checksum) {
            return Err(Refusal::field(
                format!("{name}[{i}].held_at.checksum"),
                format!("{} is not 8 upper-case hex digits", quote(&l.held_at.checksum)),
            ));
        }
        check_text(&format!("{name}[{i}].held_at.file"), &l.held_at.file)?;
    }
    Ok(())
}

/// The offsets `s` holds outside `common` (the codec's rule).
fn only(s: &SideReport, common: Option<OffsetRange>) -> Vec<OffsetRange> {
    let Some(first) = s.first_offset else { return Vec::new() };
    let Some(common) = common else { return vec![OffsetRange { from: first, to: s.next_offset }] };
    let mut out = Vec::new();
    if first < common.from {
        out.push(OffsetRange { from: first, to: common.from });
    }
    if s.next_offset > common.to {
        out.push(OffsetRange { from: common.to, to: s.next_offset });
    }
    out
}

fn offset(o: Option<u64>) -> String {
    o.map_or_else(|| "none".into(), |o| o.to_string())
}

/// A record's time as the compare shows it: UTC with the micros, and the
/// number stored (`2026-12-01T14:03:00.250000Z (1796…250000 µs)`).
#[must_use]
pub fn record_time(micros: u64) -> String {
    format!("{} ({micros} µs)", format_micros(micros))
}

/// When each side's divergent records were written, in the words `diff`
/// prints (`divergent records' times: A's written … to …; B's …`).
#[must_use]
pub fn divergent_time_words(t: &DivergentTime) -> String {
    format!("divergent records' times: A's {}; B's {}", span_words(t.a), span_words(t.b))
}

/// The diff as Markdown: a table of both sides, the first divergence, the
/// truncations and the damage, every field escaped.
#[must_use]
pub fn markdown(d: &Diff) -> String {
    let mut out = String::new();
    let verdict = if d.identical { "identical" } else { "DIFFERENT" };
    let _ = writeln!(out, "## Replica diff: {verdict}\n");
    let _ = writeln!(out, "| | path | first offset | next offset | records | epochs | truncates to |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for (name, s, t) in [("A", &d.a, d.truncate_a_to), ("B", &d.b, d.truncate_b_to)] {
        let epochs: Vec<String> = s.epochs.iter().map(|[g, o]| format!("g{g}@{o}")).collect();
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            code(&s.path),
            offset(s.first_offset),
            s.next_offset,
            s.records,
            if epochs.is_empty() { "none".into() } else { epochs.join(" ") },
            offset(t)
        );
    }
    out.push('\n');
    match &d.common_range {
        Some(r) => {
            let _ =
                writeln!(out, "Common range: {} ({} records compared, {} differ).\n", r.words(), d.compared_records, d.divergent_records);
        }
        None => out.push_str("No offset in common.\n\n"),
    }
    divergence_markdown(d, &mut out);
    if let Some(ds) = &d.different_shards {
        let _ = writeln!(out, "**Warning:** {}\n", text(&ds.warning()));
    }
    for line in d.lost_sentences() {
        let _ = writeln!(out, "- {}", text(&line));
    }
    for (name, ranges) in [("A", &d.only_a), ("B", &d.only_b)] {
        for r in ranges {
            let _ = writeln!(out, "- only {name} holds {}", r.words());
        }
    }
    for (name, s) in [("A", &d.a), ("B", &d.b)] {
        for f in &s.findings {
            let _ = writeln!(
                out,
                "- {name} damage: {} {} at byte {}: {}",
                code(&f.file),
                code(&f.finding.kind),
                f.finding.position,
                text(&f.finding.message)
            );
        }
    }
    for n in &d.notes {
        let _ = writeln!(out, "- note: {}", text(n));
    }
    out
}

/// The first divergence in Markdown: both records (never a payload), and
/// when each side's divergent records were written.
fn divergence_markdown(d: &Diff, out: &mut String) {
    match &d.divergence {
        Some(v) => {
            let _ = writeln!(out, "**First divergent offset: {}**\n", v.offset);
            let _ = writeln!(out, "| | file | byte | payload bytes | time | checksum |");
            let _ = writeln!(out, "|---|---|---|---|---|---|");
            for (name, r) in [("A", &v.a), ("B", &v.b)] {
                let _ = writeln!(
                    out,
                    "| {name} | {} | {} | {} | {} | {} |",
                    code(&r.file),
                    r.position,
                    r.payload_len,
                    text(&record_time(r.timestamp_micros)),
                    code(&r.checksum)
                );
            }
            out.push('\n');
            if let Some(t) = &d.divergent_time {
                let _ = writeln!(out, "{}\n", text(&divergent_time_words(t)));
            }
        }
        None => out.push_str("No divergent offset.\n\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    use felix_codec::shard::diff::{DiffMachine, Need, RecordSummary, Side, SideFacts};

    /// A and B agree up to 50; from there B's records differ, and A's clock
    /// went back at 55 (its timestamps go 1,050 … 1,054, then 2 … 6).
    fn diverged(path_b: &str) -> Diff {
        let rec = |offset: u64, checksum| {
            let timestamp_micros = if offset >= 55 && checksum == 2 { offset - 53 } else { 1_000 + offset };
            RecordSummary { offset, checksum, segment_id: 0, position: 32, payload_len: 2, timestamp_micros }
        };
        let a: Vec<_> = (0..60).map(|o| rec(o, if o < 50 { 1 } else { 2 })).collect();
        let b: Vec<_> = (0..60).map(|o| rec(o, if o < 50 { 1 } else { 3 })).collect();
        let (mut ia, mut ib) = (a.into_iter(), b.into_iter());
        let mut m = DiffMachine::new();
        while let Need::Record(side) = m.need() {
            let next = if side == Side::A { ia.next() } else { ib.next() };
            m.push(side, next);
        }
        m.finish(SideFacts::new("a"), SideFacts::new(path_b))
    }

    #[test]
    fn a_link_round_trips_and_a_crafted_one_is_refused_by_name() {
        let d = diverged("b");
        let link = encode(&d).unwrap();
        assert_eq!(decode(&link).unwrap(), d);
        let mut forged = d.clone();
        forged.identical = true;
        assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("identical is true"));
        let mut forged = d.clone();
        forged.divergence.as_mut().unwrap().a.checksum = "<img src=x>".into();
        assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("divergence.a.checksum"));
        let mut forged = d.clone();
        forged.first_divergent_offset = Some(7);
        assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("disagree"));
        let mut forged = d;
        forged.diff_version = 2;
        assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("diff_version"));
        assert!(decode("#d=%%%").unwrap_err().to_string().contains("not base64url"));
        assert_eq!(decode("#d=AAAA").unwrap_err(), OpenError::CutShort { from: Origin::DiffLink });
        let bomb = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(&vec![b' '; 8 << 20], 9)));
        assert!(decode(&bomb).unwrap_err().to_string().contains("inflates past"));
        let long = format!("{PREFIX}{}", "A".repeat(MAX_FRAGMENT_CHARS));
        assert!(decode(&long).unwrap_err().to_string().contains("characters long"));
        let not_json = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(b"{\"diff_version\":1}", 9)));
        assert_eq!(decode(&not_json).unwrap_err().to_string(), "this diff link is not a diff: field `identical` is missing");
    }

    /// Issue 18: a diff of two different shards and one with a lost offset
    /// round-trip through a link with their words in the Markdown; a claim
    /// of them the codec would not make is refused by name.
    #[test]
    fn different_shards_and_lost_offsets_travel_and_forged_ones_are_refused() {
        use felix_codec::format::record::encode_record;
        use felix_codec::format::segment_header::SegmentHeader;
        let log = |rot: bool| {
            let mut out = SegmentHeader::new(0, 1).encode().to_vec();
            for o in 0..10 {
                encode_record(o, 1, &[7; 20], &mut out).unwrap();
            }
            if rot {
                out[32 + 3 * 48 + 40] ^= 1;
            }
            vec![("x/00000000000000000000.log".to_owned(), out)]
        };
        let orders = "acme_default_orders_0-0d3aed4b998d2798";
        let payments = "acme_default_payments_0-feaf85568f3eb5b0";
        let d = crate::model::replica::diff_in_memory((orders, &log(false)), (payments, &log(false)));
        assert!(d.different_shards.is_some() && !d.identical);
        assert_eq!(decode(&encode(&d).unwrap()).unwrap(), d);
        assert!(
            markdown(&d).contains(&format!("**Warning:** {}", text(&d.different_shards.clone().unwrap().warning()))),
            "{}",
            markdown(&d)
        );
        let mut forged = d.clone();
        forged.different_shards.as_mut().unwrap().keys_differ = false;
        assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("different_shards is not what the two names"));
        let mut forged = d.clone();
        forged.truncate_a_to = Some(0);
        assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("yet a truncation is given"));
        let mut forged = d;
        forged.different_shards = None;
        assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("identical is false"));
        // Rot on B: offset 3 lost, A holds it.
        let d = crate::model::replica::diff_in_memory(("a", &log(false)), ("b", &log(true)));
        assert_eq!(d.lost_b.len(), 1);
        assert_eq!(decode(&encode(&d).unwrap()).unwrap(), d);
        assert!(markdown(&d).contains(&text(&d.lost_sentences()[0])), "{}", markdown(&d));
        assert!(d.lost_sentences()[0]
            .starts_with("B lost offset 3 (RecordChecksum at byte 176 of 00000000000000000000.log); A still holds it intact"));
        for (name, f) in [
            ("outside", &(|x: &mut Diff| x.lost_b[0].range.to = 10) as &dyn Fn(&mut Diff)),
            ("before", &|x: &mut Diff| x.lost_b[0].range.from = 0),
            ("empty", &|x: &mut Diff| x.lost_b[0].range.to = 3),
            ("checksum", &|x: &mut Diff| x.lost_b[0].held_at.checksum = "<b>".into()),
            ("order", &|x: &mut Diff| x.lost_b.push(x.lost_b[0].clone())),
        ] {
            let mut forged = d.clone();
            f(&mut forged);
            assert!(decode(&encode(&forged).unwrap()).unwrap_err().to_string().contains("lost_b["), "{name}");
        }
    }

    /// Each claim contradicts itself in a way the codec never produces; every
    /// one must be refused by name, and a real diff (any of the shapes the
    /// codec makes) must pass.
    #[test]
    fn a_claim_that_contradicts_itself_is_refused() {
        let d = diverged("b");
        assert!(validate(&d).is_ok());
        let refused = |name: &str, f: &dyn Fn(&mut Diff)| {
            let mut forged = d.clone();
            f(&mut forged);
            let link = encode(&forged).unwrap();
            assert!(decode(&link).is_err(), "{name}: accepted {forged:#?}");
        };
        refused("divergence outside the common range", &|x| {
            x.first_divergent_offset = Some(1_000);
            x.divergence.as_mut().unwrap().offset = 1_000;
        });
        refused("divergence with no common range", &|x| x.common_range = None);
        refused("identical with divergent records", &|x| {
            x.first_divergent_offset = None;
            x.divergence = None;
            x.identical = true;
        });
        refused("identical with fewer compared than held", &|x| {
            x.first_divergent_offset = None;
            x.divergence = None;
            x.divergent_records = 0;
            x.compared_records = 3;
            x.identical = true;
        });
        refused("a divergence yet no divergent record", &|x| x.divergent_records = 0);
        refused("more compared than a side holds", &|x| x.compared_records = 61);
        refused("more records than offsets", &|x| x.a.records = 61);
        refused("first offset at next offset with records", &|x| {
            x.a.first_offset = Some(60);
            x.a.records = 1;
        });
        refused("a common range the sides do not give", &|x| x.common_range = Some(OffsetRange { from: 10, to: 20 }));
        refused("only_a inside the common range", &|x| x.only_a = vec![OffsetRange { from: 10, to: 20 }]);
        refused("unblocked damage", &|x| {
            let f = felix_codec::verdict::corruption::Finding {
                kind: felix_codec::CorruptionKind::RecordChecksum { stored: 1, computed: 2 },
                site: felix_codec::verdict::corruption::CorruptionSite { shard: None, segment_id: Some(0), position: 32 },
                end: 60,
                offset: Some(0),
                repair: felix_codec::Repair::Never,
            };
            x.a.findings.push(felix_codec::shard::recovery::RemainingFinding {
                file: "00000000000000000000.log".into(),
                finding: felix_codec::doc::report::FindingReport::from(&f),
            });
        });
        refused("a truncation past the log's end", &|x| x.truncate_a_to = Some(u64::MAX));
        refused("divergent times without a divergence", &|x| {
            x.first_divergent_offset = None;
            x.divergence = None;
            x.divergent_records = 0;
        });
        refused("a divergent time begun by another record", &|x| x.divergent_time.as_mut().unwrap().b.first = 0);
        refused("a divergent time outside its own min..=max", &|x| x.divergent_time.as_mut().unwrap().a.max = 0);
        // One divergent record has one timestamp a side; two have their first and last as least and greatest.
        let one = |x: &mut Diff| {
            x.divergent_records = 1;
            let t = x.divergent_time.as_mut().unwrap();
            t.a = felix_codec::read::time::TimeSpan::of(t.a.first);
            t.b = felix_codec::read::time::TimeSpan::of(t.b.first);
        };
        let mut single = d.clone();
        one(&mut single);
        assert_eq!(validate(&single), Ok(()), "one divergent record, one timestamp a side");
        refused("one divergent record spanning two times", &|x| {
            one(x);
            x.divergent_time.as_mut().unwrap().a.max += 1;
        });
        refused("two divergent records whose greatest is neither", &|x| {
            one(x);
            x.divergent_records = 2;
            x.divergent_time.as_mut().unwrap().b.max += 1;
        });
        // Shapes the codec does make still pass: identical, empty, one side longer, begun mid-log.
        let rec = |offset| RecordSummary { offset, checksum: 1, segment_id: 0, position: 32, payload_len: 2, timestamp_micros: 1 };
        for (ra, rb) in [(0..60, 0..60), (0..0, 0..0), (0..60, 0..0), (0..60, 30..60), (10..60, 0..20), (0..10, 20..30)] {
            let (mut ia, mut ib) = (ra.map(rec), rb.map(rec));
            let mut m = DiffMachine::new();
            while let Need::Record(side) = m.need() {
                let next = if side == Side::A { ia.next() } else { ib.next() };
                m.push(side, next);
            }
            let real = m.finish(SideFacts::new("a"), SideFacts { empty_next_offset: Some(0), ..SideFacts::new("b") });
            assert_eq!(validate(&real), Ok(()), "{real:#?}");
        }
    }

    #[test]
    fn bidirectional_controls_never_reach_the_markdown() {
        // "evil\u{202E}gol.txt" shows as "eviltxt.log" wherever it is read.
        let hostile = "evil\u{202E}gol.txt \u{2066}x\u{2069} \u{200F}";
        let mut d = diverged(hostile);
        d.notes.push(hostile.into());
        let md = markdown(&d);
        for c in ['\u{202E}', '\u{2066}', '\u{2069}', '\u{200F}'] {
            assert!(!md.contains(c), "{c:?} in {md}");
        }
        assert!(md.contains("evil"), "{md}");
    }

    #[test]
    fn the_markdown_is_inert_whatever_the_paths_say() {
        let d = diverged("b|<script>alert(1)</script>\n# heading ![x](http://evil)");
        let md = markdown(&d);
        assert!(md.contains("First divergent offset: 50"));
        let mut options = comrak::Options::default();
        options.extension.table = true;
        options.extension.autolink = true;
        let html = comrak::markdown_to_html(&md, &options);
        assert!(!html.contains("<script") && !html.contains("<img") && !html.contains("<a ") && !html.contains("<h1"), "{html}");
        assert_eq!(html.matches("<tr>").count(), 2 + 1 + 3, "one row per side, whatever the path holds: {html}");
    }

    #[test]
    fn the_first_divergent_records_times_are_shown_on_both_sides_in_utc() {
        let d = diverged("b");
        let t = d.divergent_time.unwrap();
        assert_eq!((t.a.first, t.a.last, t.a.min, t.a.max), (1_050, 6, 2, 1_054), "A's clock went back among its divergent records");
        assert_eq!((t.b.first, t.b.last), (1_050, 1_059));
        assert_eq!(record_time(1_796_133_780_250_000), "2026-12-01T14:03:00.250000Z (1796133780250000 µs)");
        let md = markdown(&d);
        assert!(md.contains("| A | `00000000000000000000.log` | 32 | 2 | 1970\\-01\\-01T00\\:00\\:00\\.001050Z \\(1050 µs\\) |"), "{md}");
        assert!(
            md.contains(
                "divergent records\\' times\\: A\\'s written 1970\\-01\\-01T00\\:00\\:00\\.001050Z to 1970\\-01\\-01T00\\:00\\:00\\.000006Z \\(timestamps go back"
            ),
            "{md}"
        );
        assert_eq!(
            divergent_time_words(&t),
            d.to_text().lines().find(|l| l.starts_with("divergent records' times")).unwrap(),
            "the CLI's words"
        );
        // A diff made before the field existed still opens.
        let mut old = d;
        old.divergent_time = None;
        assert_eq!(validate(&old), Ok(()));
        assert!(!markdown(&old).contains("divergent records"));
    }
}
