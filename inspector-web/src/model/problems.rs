//! The problems panel (after Wireshark's Expert Info): every finding of every
//! file with a severity, filterable, with next/previous navigation.

use felix_codec::doc::report::{FileReport, FindingReport};
use felix_codec::Repair;

/// How bad a finding is for an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Recovery repairs it by itself (a torn tail, a stale index).
    Note,
    /// Repairable only with `repair_checksum_tail`.
    Warning,
    /// Recovery refuses: an operator decides.
    Error,
}

impl Severity {
    /// Of a finding, from its repair verdict.
    #[must_use]
    pub fn of(f: &FindingReport) -> Self {
        match f.repair {
            Repair::Always => Self::Note,
            Repair::OptIn => Self::Warning,
            Repair::Never => Self::Error,
        }
    }

    /// `"note"`, `"warning"` or `"error"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Note => "note",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// Which problems to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only this severity and worse.
    pub min_severity: Option<Severity>,
    /// Only this kind.
    pub kind: Option<String>,
}

impl Filter {
    /// This filter with the severity select's value: `"warning"` (warnings
    /// and errors), `"error"` (errors only), anything else all.
    #[must_use]
    pub fn with_severity(&self, value: &str) -> Self {
        let min_severity = match value {
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        };
        Self { min_severity, ..self.clone() }
    }

    /// This filter with the kind select's value (empty: every kind).
    #[must_use]
    pub fn with_kind(&self, value: &str) -> Self {
        Self { kind: (!value.is_empty()).then(|| value.to_owned()), ..self.clone() }
    }
}

/// A problem: file index and finding index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProblemRef {
    /// Index of the file in the report list.
    pub file: usize,
    /// Index of the finding in that file.
    pub finding: usize,
}

/// Findings a file's report counts but does not list (`findings_omitted`:
/// past the per-file limit), for every file with any: `(file index, count)`.
#[must_use]
pub fn unlisted<'a>(files: impl IntoIterator<Item = &'a FileReport>) -> Vec<(usize, u64)> {
    files.into_iter().enumerate().filter(|(_, f)| f.findings_omitted > 0).map(|(i, f)| (i, f.findings_omitted)).collect()
}

/// The problems panel's heading: how many are listed and, when some are
/// not, how many more (never a count that looks like the whole).
#[must_use]
pub fn heading(listed: usize, unlisted: u64) -> String {
    if unlisted == 0 {
        format!("Problems ({listed})")
    } else {
        format!("Problems ({listed} listed, {unlisted} more not listed)")
    }
}

/// Every problem passing `filter`, files in order, findings by position.
#[must_use]
pub fn list<'a>(files: impl IntoIterator<Item = &'a FileReport>, filter: &Filter) -> Vec<ProblemRef> {
    let mut out = Vec::new();
    for (fi, f) in files.into_iter().enumerate() {
        for (i, x) in f.findings.iter().enumerate() {
            let severe = filter.min_severity.is_none_or(|s| Severity::of(x) >= s);
            let kind = filter.kind.as_ref().is_none_or(|k| *k == x.kind);
            if severe && kind {
                out.push(ProblemRef { file: fi, finding: i });
            }
        }
    }
    out
}

/// The kinds present, for the filter menu.
#[must_use]
pub fn kinds<'a>(files: impl IntoIterator<Item = &'a FileReport>) -> Vec<String> {
    let mut k: Vec<String> = files.into_iter().flat_map(|f| f.findings.iter().map(|x| x.kind.clone())).collect();
    k.sort();
    k.dedup();
    k
}

/// The next (or previous) problem after `current`, wrapping around.
#[must_use]
pub fn step<T: Copy + PartialEq>(list: &[T], current: Option<T>, forward: bool) -> Option<T> {
    if list.is_empty() {
        return None;
    }
    let at = current.and_then(|c| list.iter().position(|p| *p == c));
    let n = list.len();
    let i = match (at, forward) {
        (None, true) => 0,
        (None, false) => n - 1,
        (Some(i), true) => (i + 1) % n,
        (Some(i), false) => (i + n - 1) % n,
    };
    list.get(i).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{sample, scan::scan_all};

    #[test]
    fn the_filter_selects_set_one_field_and_keep_the_other() {
        let f = Filter { min_severity: None, kind: Some("Truncated".into()) };
        assert_eq!(f.with_severity("warning"), Filter { min_severity: Some(Severity::Warning), kind: Some("Truncated".into()) });
        assert_eq!(f.with_severity("error").min_severity, Some(Severity::Error));
        assert_eq!(f.with_severity("error").with_severity("").min_severity, None, "all");
        assert_eq!(f.with_severity("note").min_severity, None, "no such choice: all");
        let e = Filter { min_severity: Some(Severity::Error), kind: None };
        assert_eq!(e.with_kind("BadCrc"), Filter { min_severity: Some(Severity::Error), kind: Some("BadCrc".into()) });
        assert_eq!(e.with_kind("BadCrc").with_kind(""), e, "empty: every kind");
    }

    #[test]
    fn filters_and_wrapping_navigation() {
        let files: Vec<FileReport> = scan_all(&sample::files()).into_iter().map(|s| s.report).collect();
        let all = list(&files, &Filter::default());
        assert!(all.len() >= 3);
        let errors = list(&files, &Filter { min_severity: Some(Severity::Error), kind: None });
        assert!(errors.iter().all(|p| files[p.file].findings[p.finding].repair == Repair::Never));
        assert!(!errors.is_empty() && errors.len() < all.len());
        let only = list(&files, &Filter { min_severity: None, kind: Some("Truncated".into()) });
        assert_eq!(only.len(), 1);
        assert_eq!(step(&all, None, true), Some(all[0]));
        assert_eq!(step(&all, Some(all[0]), false), Some(*all.last().unwrap()));
        assert_eq!(step(&all, Some(*all.last().unwrap()), true), Some(all[0]));
        assert!(kinds(&files).contains(&"RecordChecksum".to_string()));
    }

    #[test]
    fn findings_not_listed_are_counted_in_the_heading() {
        let mut a = FileReport::new("a.log".into(), felix_codec::format::file_name::FileKind::Segment, 100);
        let b = a.clone();
        a.findings_omitted = 20_000;
        assert_eq!(unlisted([&b, &a]), vec![(1, 20_000)]);
        assert_eq!(heading(10_000, 20_000), "Problems (10000 listed, 20000 more not listed)");
        assert_eq!(heading(3, 0), "Problems (3)");
    }
}
