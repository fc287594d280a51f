//! The report as Markdown, for a ticket or a chat.

use std::fmt::Write as _;

use felix_codec::report::Report;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Renders `report` as Markdown: a summary table of files, then every finding.
#[must_use]
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Felix storage report\n");
    let _ = writeln!(out, "report_version {}, {} files, {} findings\n", report.report_version, report.files.len(), report.finding_count());
    let _ = writeln!(out, "| file | kind | size | status | records | offsets | sha256 |");
    let _ = writeln!(out, "|---|---|---:|---|---:|---|---|");
    for f in &report.files {
        let offsets = match (f.first_offset, f.last_offset) {
            (Some(a), Some(b)) => format!("{a}..={b}"),
            _ => String::new(),
        };
        let sha = f.sha256.as_deref().map_or(String::new(), |s| format!("`{}…`", &s[..s.len().min(12)]));
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {:?} | {} | {offsets} | {sha} |",
            cell(&f.path),
            f.kind.as_str(),
            f.size,
            f.status,
            f.records
        );
    }
    let _ = writeln!(out, "\n## Findings\n");
    let _ = writeln!(out, "| file | kind | byte | offset | repair | meaning |");
    let _ = writeln!(out, "|---|---|---:|---:|---|---|");
    for f in &report.files {
        for x in &f.findings {
            let offset = x.offset.map_or(String::new(), |o| o.to_string());
            let _ = writeln!(
                out,
                "| `{}` | {} | {} ({:#x}) | {offset} | {} | {} |",
                cell(&f.path),
                x.kind,
                x.position,
                x.position,
                x.repair,
                cell(&x.message)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::{sample, scan::scan_all};

    #[test]
    fn every_finding_has_a_row() {
        let report = Report::new(scan_all(&sample::files()).into_iter().map(|s| s.report).collect());
        let md = render(&report);
        let rows = md.lines().filter(|l| l.starts_with("| `") && l.contains("(0x")).count() as u64;
        assert_eq!(rows, report.finding_count());
        assert!(md.contains("| Truncated |"), "{md}");
    }
}
