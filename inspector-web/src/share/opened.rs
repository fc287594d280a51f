//! What a pasted text or an opened JSON file is, and the document in it: a
//! permalink (the whole URL, as copied from an address bar or a ticket, with
//! spaces or line breaks around or inside it), a report (`inspect --json`),
//! a diff (`diff --json`, the page's "Download the diff") or a recovery plan
//! (`recover --dry-run --json`, the page's "Download the plan"). Each is checked by
//! the same functions as when it comes by its own path.

use felix_codec::shard::diff::Diff;
use felix_codec::shard::recovery::Plan;
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::open_error::OpenError;
use super::shared::{self, SharedReport, Source, MAX_JSON_BYTES};
use super::{diff_share, permalink, plan_share};

/// A document opened from a paste or a file.
#[derive(Clone, Debug, PartialEq)]
pub enum Opened {
    /// A report (or a report permalink).
    Report(SharedReport),
    /// A replica diff (or a diff permalink).
    Diff(Box<Diff>),
    /// A recovery plan (`recover --dry-run --json`, the page's "Download the plan").
    Plan(Box<Plan>),
}

/// The version keys that tell the documents apart (every other key ignored).
#[derive(Deserialize)]
struct Versions {
    diff_version: Option<IgnoredAny>,
    plan_version: Option<IgnoredAny>,
}

/// The fragment of `text` when it is a link (an URL or a bare fragment,
/// whitespace anywhere in it dropped), else `None`.
#[must_use]
pub fn link_in(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return None;
    }
    let at = trimmed.find('#')?;
    Some(trimmed.get(at..)?.chars().filter(|c| !c.is_whitespace()).collect())
}

/// The document in `bytes`, pasted or read from a file (`source`).
///
/// # Errors
/// Why it cannot be opened, in words, as its own path would say it.
pub fn open(bytes: &[u8], source: Source) -> Result<Opened, OpenError> {
    if let Some(fragment) = std::str::from_utf8(bytes).ok().and_then(link_in) {
        if diff_share::is_link(&fragment) {
            return diff_share::decode(&fragment).map(|d| Opened::Diff(Box::new(d)));
        }
        return permalink::decode(&fragment).map(Opened::Report);
    }
    let from = source.origin();
    if bytes.len() as u64 > MAX_JSON_BYTES {
        return Err(OpenError::TooLarge {
            from,
            document: super::open_error::Document::Report,
            bytes: bytes.len() as u64,
            max: MAX_JSON_BYTES,
        });
    }
    // Only an object is sniffed (serde would read a list as a struct's fields in order).
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    match serde_json::from_slice::<Versions>(bytes).ok().filter(|_| object).ok_or(()) {
        Ok(Versions { diff_version: Some(_), .. }) => diff_share::from_json(bytes, from).map(|d| Opened::Diff(Box::new(d))),
        Ok(Versions { plan_version: Some(_), .. }) => plan_share::from_json(bytes, from).map(|p| Opened::Plan(Box::new(p))),
        // A report, or what is not one: the report's reader says what is wrong.
        _ => shared::from_json(bytes, source).map(Opened::Report),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::replica::diff_in_memory;
    use crate::model::{sample, scan::scan_all};
    use crate::share::open_error::Origin;
    use crate::share::shared::Provenance;
    use felix_codec::doc::report::Report;

    fn sample_report() -> Report {
        Report::new(scan_all(&sample::files()).into_iter().map(|s| s.report).collect())
    }

    #[test]
    fn a_pasted_permalink_url_opens_like_the_link() {
        let p = Provenance { shared_by: Some("ops".into()), ..Provenance::default() };
        let fragment = permalink::encode(&sample_report(), &p).unwrap();
        let url = format!("http://127.0.0.1:8080/{fragment}");
        let want = Opened::Report(permalink::decode(&fragment).unwrap());
        for pasted in [url.clone(), format!("  \n{url}\n\t"), fragment.clone(), format!("{}\n{}", &url[..40], &url[40..])] {
            assert_eq!(open(pasted.as_bytes(), Source::Pasted).unwrap(), want, "{pasted}");
        }
        // A diff link pasted opens the diff.
        let files = sample::files();
        let d = diff_in_memory(("a", &files), ("b", &files[..3]));
        let url = format!("https://x.example/inspector/{}", diff_share::encode(&d).unwrap());
        assert_eq!(open(format!(" {url} ").as_bytes(), Source::Pasted).unwrap(), Opened::Diff(Box::new(d)));
        // A broken pasted link says what a broken link says.
        assert_eq!(open(b"http://x/#s=AAAA\n", Source::Pasted).unwrap_err(), OpenError::CutShort { from: Origin::Link });
        assert_eq!(open(b"http://x/#q=1", Source::Pasted).unwrap_err().to_string(), "the link carries no report (#s=…)");
    }

    #[test]
    fn the_pages_diff_json_and_the_cli_s_reopen_as_a_diff() {
        let files = sample::files();
        let d = diff_in_memory(("a", &files), ("b", &files[..3]));
        let json = diff_share::to_json(&d);
        assert_eq!(open(json.as_bytes(), Source::JsonFile("felix-diff.json".into())).unwrap(), Opened::Diff(Box::new(d.clone())));
        // A forged diff is refused by the diff's own checks, naming the file.
        let mut forged = d;
        forged.identical = !forged.identical;
        let e = open(diff_share::to_json(&forged).as_bytes(), Source::JsonFile("d.json".into())).unwrap_err().to_string();
        assert!(e.starts_with("\u{2068}d.json\u{2069}: the diff is refused: identical is"), "{e}");
        // A field of the wrong shape, by its path.
        let mut v = serde_json::to_value(&forged).unwrap();
        v["a"]["records"] = serde_json::json!("many");
        let e = open(v.to_string().as_bytes(), Source::Pasted).unwrap_err().to_string();
        assert_eq!(e, "the pasted text is not a diff: field `a.records` should be a whole number from 0 to 18446744073709551615, not text");
    }

    #[test]
    fn the_pages_plan_json_reopens_as_a_plan() {
        let files = sample::files();
        let plan = crate::model::replica::plans(vec![crate::model::replica::plan_in_memory("s", &files)]);
        let json = plan_share::to_json(&plan);
        assert_eq!(open(json.as_bytes(), Source::JsonFile("felix-plan.json".into())).unwrap(), Opened::Plan(Box::new(plan)));
    }

    #[test]
    fn a_report_still_opens_and_other_text_says_what_it_is_not() {
        let json = shared::to_json(&sample_report());
        assert!(matches!(open(json.as_bytes(), Source::Pasted).unwrap(), Opened::Report(r) if r.report == sample_report()));
        assert_eq!(
            open(b"  [1,2]", Source::Pasted).unwrap_err().to_string(),
            "the pasted text is not a report: it holds a list where a report's JSON object should be"
        );
        assert_eq!(
            open(b"hello", Source::Pasted).unwrap_err().to_string(),
            "the pasted text is not JSON: something unexpected at line 1, column 1"
        );
    }
}
