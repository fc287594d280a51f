//! Permalinks: the report (never the file bytes) and what the sender says
//! about it — who, when, which build — as JSON, deflated and base64url-encoded
//! into the URL fragment, which browsers never send to a server.
//!
//! `#s=` links carry `{ shared_by, made_at_micros, build, report }`; older
//! `#r=` links carry the bare report and still open.
//!
//! What a link may carry is capped, and the same caps apply when a link is
//! made and when one is opened: at most [`MAX_FRAGMENT_CHARS`] characters,
//! inflating to at most [`MAX_INFLATED_BYTES`], with at most
//! [`MAX_LINK_FILES`] files and [`MAX_LINK_FINDINGS`] findings. A larger
//! report is shared as a JSON file.

use felix_codec::report::Report;
use serde::{Deserialize, Serialize};

use super::link::{self, Caps};
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

#[derive(Serialize, Deserialize)]
struct Envelope {
    #[serde(flatten)]
    provenance: Provenance,
    report: Report,
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
pub fn encode(report: &Report, provenance: &Provenance) -> Result<String, String> {
    let findings: usize = report.files.iter().map(|f| f.findings.len()).sum();
    if report.files.len() > MAX_LINK_FILES || findings > MAX_LINK_FINDINGS {
        return Err(format!(
            "this report has {} files and {findings} findings; a link carries at most {MAX_LINK_FILES} files and {MAX_LINK_FINDINGS} findings — share the JSON report instead",
            report.files.len()
        ));
    }
    shared::validate_provenance(provenance).map_err(|e| e.to_string().replace("the report is refused: ", "the link cannot say that: "))?;
    let envelope = Envelope { provenance: provenance.clone(), report: report.clone() };
    let json = serde_json::to_vec(&envelope).map_err(|e| e.to_string())?;
    link::pack(PREFIX, &json, CAPS, "this report", "share the JSON report instead")
}

/// The shared report in a fragment, checked.
///
/// # Errors
/// A sentence naming what is wrong with the link: its length, the character
/// that is not base64url, the compressed data, the JSON (line and column) or
/// the report's field.
pub fn decode(fragment: &str) -> Result<SharedReport, String> {
    let old = match (fragment.starts_with(PREFIX), fragment.starts_with(OLD_PREFIX)) {
        (true, _) => false,
        (false, true) => true,
        (false, false) => return Err("the link carries no report (#s=…)".into()),
    };
    let json = link::unpack(fragment, PREFIX.len(), CAPS, "the link's report")?;
    let (report, provenance) = if old {
        let r: Report = serde_json::from_slice(&json).map_err(|e| format!("the link's report is not a version-1 report: {e}"))?;
        (r, Provenance::default())
    } else {
        let e: Envelope = serde_json::from_slice(&json).map_err(|e| format!("the link's report is not a version-1 report: {e}"))?;
        (e.report, e.provenance)
    };
    shared::validate(&report, LINK_LIMITS).map_err(|e| format!("the link: {e}"))?;
    shared::validate_provenance(&provenance).map_err(|e| format!("the link: {e}"))?;
    Ok(SharedReport { report, source: Source::Link, provenance })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::{sample, scan::scan_all};
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
        };
        let link = encode(&report, &p).unwrap();
        assert!(link.starts_with("#s=") && link.len() < 5000, "{}", link.len());
        let back = decode(&link).unwrap();
        assert_eq!((back.report, back.provenance, back.source), (report.clone(), p, Source::Link));
        assert!(!serde_json::to_string(&report).unwrap().contains("order_id"), "payload text must never be in a report");
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
    fn broken_links_say_why() {
        assert_eq!(decode("#x").unwrap_err(), "the link carries no report (#s=…)");
        assert_eq!(decode("#s=ab%cd").unwrap_err(), "character 5 of the link's report (\u{2068}%\u{2069}) is not base64url");
        assert_eq!(decode("#s=abcé").unwrap_err(), "character 6 of the link's report (\u{2068}é\u{2069}) is not base64url");
        assert_eq!(decode("#s=AAAA").unwrap_err(), "the link's report is damaged (deflate: FailedCannotMakeProgress)");
        assert!(decode(&format!("#s={}", "A".repeat(MAX_FRAGMENT_CHARS))).unwrap_err().contains("a link may carry at most 262144"));
        assert!(decode(&raw_link(b"{\"report\":5}")).unwrap_err().starts_with("the link's report is not a version-1 report: invalid type"));
    }

    #[test]
    fn a_multibyte_hash_is_refused_by_name_not_a_panic() {
        let mut report = sample_report();
        report.files[0].sha256 = Some("€".repeat(22));
        let json = serde_json::to_vec(&Envelope { provenance: Provenance::default(), report }).unwrap();
        assert_eq!(
            decode(&raw_link(&json)).unwrap_err(),
            "the link: the report is refused: files[0].sha256 is not 64 lower-case hex digits (it holds 22 characters)"
        );
    }

    #[test]
    fn a_small_link_that_inflates_to_a_flood_is_refused() {
        // The case: a small fragment that inflates to hundreds of thousands of findings.
        let mut report = sample_report();
        let f = report.files[2].findings[0].clone();
        report.files[2].findings = vec![f; 215_087];
        let json = serde_json::to_vec(&Envelope { provenance: Provenance::default(), report }).unwrap();
        let link = raw_link(&json);
        assert!(link.len() < MAX_FRAGMENT_CHARS, "the flood fits in {} characters", link.len());
        assert!(decode(&link).unwrap_err().contains(&format!("inflates past {MAX_INFLATED_BYTES} bytes")));
        // Under the byte cap, the count cap still holds.
        let mut report = sample_report();
        let f = report.files[2].findings[0].clone();
        report.files[2].findings = vec![f; MAX_LINK_FINDINGS + 1];
        let json = serde_json::to_vec(&Envelope { provenance: Provenance::default(), report }).unwrap();
        assert!(json.len() < MAX_INFLATED_BYTES);
        let e = decode(&raw_link(&json)).unwrap_err();
        assert!(e.contains("findings in all; at most 10000 are accepted here"), "{e}");
    }

    #[test]
    fn links_over_the_caps_are_not_made() {
        let mut report = sample_report();
        let f = report.files[2].findings[0].clone();
        report.files[2].findings = vec![f; MAX_LINK_FINDINGS + 1];
        assert!(encode(&report, &Provenance::default()).unwrap_err().contains("share the JSON report instead"));
        let long = Provenance { shared_by: Some("x".repeat(201)), ..Provenance::default() };
        assert!(encode(&sample_report(), &long).unwrap_err().starts_with("the link cannot say that: shared_by is 201 characters"));
    }
}
