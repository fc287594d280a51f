//! Permalinks: the report (never the file bytes) and what the sender says
//! about it — who, when, which build — as JSON, deflated and base64url-encoded
//! into the URL fragment, which browsers never send to a server.
//!
//! `#s=` links carry `{ shared_by, made_at_micros, build, at?, report }`
//! (`at`: the bytes the sender points at); older
//! `#r=` links carry the bare report and still open.
//!
//! What a link may carry is capped, and the same caps apply when a link is
//! made and when one is opened: at most [`MAX_FRAGMENT_CHARS`] characters,
//! inflating to at most [`MAX_INFLATED_BYTES`], with at most
//! [`MAX_LINK_FILES`] files and [`MAX_LINK_FINDINGS`] findings. A larger
//! report is shared as a JSON file.

use felix_codec::doc::report::Report;
use serde::{Deserialize, Serialize};

use super::link::{self, Caps, LinkError};
use super::open_error::{parse, Document, OpenError, Origin};
use super::shared::{self, Limits, Provenance, SharedReport, Source};

/// The fragment prefix of a link made by this build.
pub const PREFIX: &str = "#s=";
/// The fragment prefix of older links (a bare report).
pub const OLD_PREFIX: &str = "#r=";
/// Longest fragment a link may have, in characters (256 KiB).
pub const MAX_FRAGMENT_CHARS: usize = 256 << 10;
/// Largest JSON a link may inflate to (4 MiB).
pub const MAX_INFLATED_BYTES: usize = 4 << 20;
/// Most files a link may carry.
pub const MAX_LINK_FILES: usize = 1_000;
/// Most findings a link may carry, across all files.
pub const MAX_LINK_FINDINGS: usize = 10_000;
/// A link's size caps.
const CAPS: Caps = Caps { fragment_chars: MAX_FRAGMENT_CHARS, inflated_bytes: MAX_INFLATED_BYTES };
/// The caps a link's report is checked against.
pub const LINK_LIMITS: Limits = Limits { files: MAX_LINK_FILES, findings: MAX_LINK_FINDINGS };

/// What a `#s=` link carries. Each field is its own (no `flatten`), so a
/// field of the wrong type is named by its path (`report.files[3].size`).
#[derive(Serialize, Deserialize)]
struct Envelope {
    shared_by: Option<String>,
    made_at_micros: Option<u64>,
    build: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<shared::At>,
    report: Report,
}

impl Envelope {
    fn new(provenance: Provenance, report: Report) -> Self {
        let Provenance { shared_by, made_at_micros, build, at } = provenance;
        Self { shared_by, made_at_micros, build, at, report }
    }

    fn split(self) -> (Report, Provenance) {
        let Self { shared_by, made_at_micros, build, at, report } = self;
        (report, Provenance { shared_by, made_at_micros, build, at })
    }
}

/// Whether `fragment` is meant as a permalink (so an error is worth showing).
#[must_use]
pub fn is_link(fragment: &str) -> bool {
    fragment.starts_with(PREFIX) || fragment.starts_with(OLD_PREFIX)
}

/// The fragment (`#s=…`) carrying `report` and what the sender says about it.
///
/// # Errors
/// When the report is over a link's caps (then it is shared as a file).
pub fn encode(report: &Report, provenance: &Provenance) -> Result<String, LinkError> {
    let findings: usize = report.files.iter().map(|f| f.findings.len()).sum();
    if report.files.len() > MAX_LINK_FILES || findings > MAX_LINK_FINDINGS {
        return Err(LinkError::TooMany { files: report.files.len(), findings, max_files: MAX_LINK_FILES, max_findings: MAX_LINK_FINDINGS });
    }
    shared::validate_provenance(provenance).map_err(LinkError::CannotSay)?;
    if let Some(at) = &provenance.at {
        shared::validate_at(report, at).map_err(LinkError::CannotSay)?;
    }
    let envelope = Envelope::new(provenance.clone(), report.clone());
    let json = serde_json::to_vec(&envelope).map_err(|e| LinkError::Json(e.to_string()))?;
    link::pack(PREFIX, &json, CAPS, "this report", "share the JSON report instead")
}

/// The shared report in a fragment, checked.
///
/// # Errors
/// What is wrong with the link, in words ([`OpenError`]): its length, the
/// character that is not base64url, compressed data cut short or damaged,
/// the JSON, a field by its path (`report.files[3].size`), or the report's
/// field refused.
pub fn decode(fragment: &str) -> Result<SharedReport, OpenError> {
    let old = match (fragment.starts_with(PREFIX), fragment.starts_with(OLD_PREFIX)) {
        (true, _) => false,
        (false, true) => true,
        (false, false) => return Err(OpenError::NoDocument { prefix: PREFIX, document: Document::Report }),
    };
    let from = Origin::Link;
    let json = link::unpack(fragment, PREFIX.len(), CAPS, &from)?;
    let (report, provenance) = if old {
        (parse::<Report>(&json, &from, Document::Report)?, Provenance::default())
    } else {
        parse::<Envelope>(&json, &from, Document::Report)?.split()
    };
    let refused = |e: shared::Refused| OpenError::Refused { from: from.clone(), document: Document::Report, why: e.into() };
    shared::validate(&report, LINK_LIMITS).map_err(refused)?;
    shared::validate_provenance(&provenance).map_err(refused)?;
    if let Some(at) = &provenance.at {
        shared::validate_at(&report, at).map_err(refused)?;
    }
    Ok(SharedReport { report, source: Source::Link, provenance })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{sample, scan::scan_all};
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;

    fn sample_report() -> Report {
        Report::new(scan_all(&sample::files()).into_iter().map(|s| s.report).collect())
    }

    fn raw_link(json: &[u8]) -> String {
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(json, 9)))
    }

    #[test]
    fn a_report_survives_the_link_with_its_provenance_and_no_payload_bytes() {
        let report = sample_report();
        let p = Provenance {
            shared_by: Some("broker 7 — ünïcode".into()),
            made_at_micros: Some(1_800_000_000_000_000),
            build: Some(shared::this_build()),
            at: None,
        };
        let link = encode(&report, &p).unwrap();
        assert!(link.starts_with("#s=") && link.len() < 5000, "{}", link.len());
        let back = decode(&link).unwrap();
        assert_eq!((back.report, back.provenance, back.source), (report.clone(), p, Source::Link));
        assert!(!serde_json::to_string(&report).unwrap().contains("order_id"), "payload text must never be in a report");
    }

    #[test]
    fn a_link_points_at_bytes_of_a_file_it_lists_and_nowhere_else() {
        let report = sample_report();
        let file = report.files[2].path.clone();
        let at = |file: &str, start, end| Provenance { at: Some(shared::At { file: file.into(), start, end }), ..Provenance::default() };
        let link = encode(&report, &at(&file, 1692, 1720)).unwrap();
        assert_eq!(decode(&link).unwrap().provenance.at, Some(shared::At { file: file.clone(), start: 1692, end: 1720 }));
        // Crafted: a file the report does not list, an empty or reversed range, a range past the file.
        let size = report.files[2].size;
        let said = |p: Provenance| {
            let json = serde_json::to_vec(&serde_json::json!({ "report": report, "at": p.at })).unwrap();
            decode(&raw_link(&json)).unwrap_err().to_string()
        };
        assert_eq!(
            said(at("x\u{202e}.log", 0, 1)),
            "this link's report: the report is refused: at.file names \u{2068}x\\u{202e}.log\u{2069}, a file its report does not list"
        );
        assert_eq!(
            said(at(&file, 9, 9)),
            "this link's report: the report is refused: at.end is 9, not past at.start (9): a range holds at least one byte"
        );
        assert_eq!(
            said(at(&file, 0, size + 1)),
            format!(
                "this link's report: the report is refused: at.end is {}, past the end of \u{2068}{file}\u{2069} ({size} bytes)",
                size + 1
            )
        );
        let json = serde_json::to_vec(&serde_json::json!({ "report": report, "at": { "file": file, "start": -1, "end": 2 } })).unwrap();
        assert_eq!(
            decode(&raw_link(&json)).unwrap_err().to_string(),
            "this link's report is not a report: field `at.start` should be a whole number from 0 to 18446744073709551615, not the number -1"
        );
        // Nor is such a link made.
        assert!(encode(&report, &at(&file, 0, size + 1)).unwrap_err().to_string().starts_with("the link cannot say that: at.end is"));
    }

    #[test]
    fn older_links_still_open() {
        let report = sample_report();
        let json = serde_json::to_vec(&report).unwrap();
        let link = format!("{OLD_PREFIX}{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(&json, 9)));
        let back = decode(&link).unwrap();
        assert_eq!((back.report, back.provenance), (report, Provenance::default()));
    }

    #[test]
    fn broken_links_say_why_in_words() {
        let said = |fragment: &str| decode(fragment).unwrap_err().to_string();
        assert_eq!(said("#x"), "the link carries no report (#s=…)");
        assert_eq!(said("#s=ab%cd"), "character 5 of this link's report (\u{2068}%\u{2069}) is not base64url");
        assert_eq!(said("#s=abcé"), "character 6 of this link's report (\u{2068}é\u{2069}) is not base64url");
        // The three: an empty `#s=`, a link cut short, JSON of another shape.
        assert_eq!(said("#s="), "this link's report is empty: nothing follows the link's prefix (was the whole link copied?)");
        assert_eq!(said("#s=AAAA"), "this link's report is cut short: its compressed data ends too early (was the whole link copied?)");
        let whole = encode(&sample_report(), &Provenance::default()).unwrap();
        assert_eq!(decode(&whole[..whole.len() / 2]).unwrap_err(), OpenError::CutShort { from: Origin::Link });
        assert_eq!(said(&raw_link(b"[1]")), "this link's report is not a report: it holds a list where a report's JSON object should be");
        assert_eq!(
            said(&raw_link(b"{\"report\":5}")),
            "this link's report is not a report: field `report` should be a JSON object, not the number 5"
        );
        let mut v = serde_json::json!({ "report": sample_report() });
        v["report"]["files"][3]["size"] = serde_json::json!("big");
        assert_eq!(
            said(&raw_link(v.to_string().as_bytes())),
            "this link's report is not a report: field `report.files[3].size` should be a whole number from 0 to 18446744073709551615, not text"
        );
        assert_eq!(
            said(&raw_link(b"{\"report\":{")),
            "this link's report is cut short: its JSON ends at line 1, column 11, before it is complete"
        );
        assert!(said(&format!("#s={}", "A".repeat(MAX_FRAGMENT_CHARS))).contains("a link may carry at most 262144"));
    }

    #[test]
    fn a_multibyte_hash_is_refused_by_name_not_a_panic() {
        let mut report = sample_report();
        report.files[0].sha256 = Some("€".repeat(22));
        let json = serde_json::to_vec(&Envelope::new(Provenance::default(), report)).unwrap();
        assert_eq!(
            decode(&raw_link(&json)).unwrap_err().to_string(),
            "this link's report: the report is refused: files[0].sha256 is not 64 lower-case hex digits (it holds 22 characters)"
        );
    }

    #[test]
    fn a_small_link_that_inflates_to_a_flood_is_refused() {
        // The case: a small fragment that inflates to hundreds of thousands of findings.
        let mut report = sample_report();
        let f = report.files[2].findings[0].clone();
        report.files[2].findings = vec![f; 215_087];
        let json = serde_json::to_vec(&Envelope::new(Provenance::default(), report)).unwrap();
        let link = raw_link(&json);
        assert!(link.len() < MAX_FRAGMENT_CHARS, "the flood fits in {} characters", link.len());
        assert!(decode(&link).unwrap_err().to_string().contains(&format!("inflates past {MAX_INFLATED_BYTES} bytes")));
        // Under the byte cap, the count cap still holds.
        let mut report = sample_report();
        let f = report.files[2].findings[0].clone();
        report.files[2].findings = vec![f; MAX_LINK_FINDINGS + 1];
        let json = serde_json::to_vec(&Envelope::new(Provenance::default(), report)).unwrap();
        assert!(json.len() < MAX_INFLATED_BYTES);
        let e = decode(&raw_link(&json)).unwrap_err().to_string();
        assert!(e.contains("findings in all; at most 10000 are accepted here"), "{e}");
    }

    #[test]
    fn links_over_the_caps_are_not_made() {
        let mut report = sample_report();
        let f = report.files[2].findings[0].clone();
        report.files[2].findings = vec![f; MAX_LINK_FINDINGS + 1];
        assert!(encode(&report, &Provenance::default()).unwrap_err().to_string().contains("share the JSON report instead"));
        let long = Provenance { shared_by: Some("x".repeat(201)), ..Provenance::default() };
        assert!(encode(&sample_report(), &long)
            .unwrap_err()
            .to_string()
            .starts_with("the link cannot say that: shared_by is 201 characters"));
    }
}
