//! The report as Markdown, for a ticket or a chat.
//!
//! Every field is data from files or from strangers, escaped for where it
//! lands: paths go in code spans whose fence is longer than any backtick run
//! inside; other text is backslash-escaped (all ASCII punctuation, so no
//! emphasis, link, image, HTML or entity can start) with every `:` written
//! as an entity-free `\:` so no autolink can form; in table cells `|` is
//! escaped, and line breaks, control, bidirectional and zero-width
//! characters are written as the codec's escapes (`report::one_line`, the
//! rule of the CLI and the page: `\n`, `\u{202e}`), so one file or finding
//! is always exactly one row and reads as it does everywhere else. Findings
//! a file counts but does not list are said below the table.

use std::fmt::Write as _;

use felix_codec::doc::report::{one_line, FileReport, Report};
use felix_codec::doc::sentence::by_shard;
use felix_codec::doc::text::{shard_time_words, span_words};

/// `s` with every character that could reorder, hide or break a line shown
/// as an escape: the codec's one rule ([`one_line`], what the CLI prints and
/// the page shows), so the Markdown, the page and the terminal agree.
fn escaped(s: &str) -> std::borrow::Cow<'_, str> {
    one_line(s)
}

/// `s` as a code span that survives a table cell.
#[must_use]
pub fn code(s: &str) -> String {
    let body: String = escaped(s).replace('|', "\\|");
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if body.is_empty() {
        return "(empty)".into();
    }
    let pad = body.starts_with(['`', ' ']) || body.ends_with(['`', ' ']);
    if pad {
        format!("{fence} {body} {fence}")
    } else {
        format!("{fence}{body}{fence}")
    }
}

/// `s` as plain text that survives a table cell or a paragraph: every ASCII
/// punctuation character backslash-escaped, control characters made visible,
/// leading and trailing spaces kept as `&#32;` (a reader would trim them, or
/// take four for a code block), and the two triggers of GitHub's extended
/// autolinks that escaping cannot stop — `@` (e-mail addresses) and `www.` —
/// set in code spans, where no link forms.
#[must_use]
pub fn text(s: &str) -> String {
    let body = s.trim_matches(' ');
    let lead = s.len() - s.trim_start_matches(' ').len();
    let trail = if body.is_empty() { 0 } else { s.len() - s.trim_end_matches(' ').len() };
    let mut out = String::with_capacity(s.len() + s.len() / 4);
    out.push_str(&"&#32;".repeat(lead));
    escape_inner(body, &mut out);
    out.push_str(&"&#32;".repeat(trail));
    out
}

/// The middle of [`text`]: no leading or trailing space.
fn escape_inner(s: &str, out: &mut String) {
    let chars: Vec<char> = escaped(s).chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let www: Option<String> = chars.get(i..i + 4).map(|w| w.iter().collect()).filter(|w: &String| w.eq_ignore_ascii_case("www."));
        if let Some(word) = www {
            out.extend(["`", &word, "`"]);
            i += 4;
            continue;
        }
        if c == '@' {
            out.push_str("`@`");
        } else {
            if c.is_ascii_punctuation() {
                out.push('\\');
            }
            out.push(c);
        }
        i += 1;
    }
}

/// What to say above the tables about where the report came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preface {
    /// Lines of plain text (escaped when rendered).
    pub lines: Vec<String>,
}

/// Renders `report` as Markdown: a summary table of files, then every finding.
#[must_use]
pub fn render(report: &Report, preface: &Preface) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Felix storage report\n");
    for line in &preface.lines {
        let _ = writeln!(out, "{}\n", text(line));
    }
    let _ =
        writeln!(out, "report\\_version {}, {} files, {} findings\n", report.report_version, report.files.len(), report.finding_count());
    let _ = writeln!(out, "| file | kind | size | status | records | offsets | time | hash |");
    let _ = writeln!(out, "|---|---|---:|---|---:|---|---|---|");
    for f in &report.files {
        let offsets = match (f.first_offset, f.last_offset) {
            (Some(a), Some(b)) => format!("{a}..={b}"),
            _ => String::new(),
        };
        let sha = crate::model::verify::claimed_identity(f)
            .map_or(String::new(), |(a, v)| format!("{} {}", a.as_str(), code(&super::shared::short(v, 12))));
        let status = format!("{:?}", f.status).to_lowercase();
        let time = f.time.map_or(String::new(), span_words);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {status} | {} | {} | {} | {sha} |",
            code(&f.path),
            text(f.kind.as_str()),
            f.size,
            f.records,
            text(&offsets),
            text(&time)
        );
    }
    shard_times(report, &mut out);
    let _ = writeln!(out, "\n## Findings\n");
    let _ = writeln!(out, "| file | kind | byte | offset | repair | meaning |");
    let _ = writeln!(out, "|---|---|---:|---:|---|---|");
    for f in &report.files {
        for x in &f.findings {
            let offset = x.offset.map_or(String::new(), |o| o.to_string());
            let _ = writeln!(
                out,
                "| {} | {} | {} ({:#x}) | {offset} | {} | {} |",
                code(&f.path),
                text(&x.kind),
                x.position,
                x.position,
                text(x.repair.as_str()),
                text(&x.message)
            );
        }
    }
    notes(report, &mut out);
    for f in report.files.iter().filter(|f| f.findings_omitted > 0) {
        let _ = writeln!(out, "\n{}\\: {} more findings not listed", code(&f.path), f.findings_omitted);
    }
    out
}

/// Each shard's span of time, in the words `inspect` prints before its
/// verdict (`felix_codec::doc::text::shard_time_words`); nothing when no
/// shard has an intact record.
fn shard_times(report: &Report, out: &mut String) {
    let files: Vec<&FileReport> = report.files.iter().collect();
    let spans: Vec<(String, String)> = by_shard(&files)
        .iter()
        .filter_map(|v| Some((v.label(&files).to_string(), shard_time_words(files.get(v.files.clone())?)?)))
        .collect();
    if spans.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Time\n");
    let _ = writeln!(out, "| shard | time |");
    let _ = writeln!(out, "|---|---|");
    for (label, words) in spans {
        let _ = writeln!(out, "| {} | {} |", code(&label), text(&words));
    }
}

/// Every note the page shows beside a file (and the CLI prints after its
/// line), one row each: the file in a code span, the note as text — both by
/// the one rule, so the row reads as the page does. Nothing when no file
/// has a note.
fn notes(report: &Report, out: &mut String) {
    let mut noted = report.files.iter().filter(|f| !f.notes.is_empty()).peekable();
    if noted.peek().is_none() {
        return;
    }
    let _ = writeln!(out, "\n## Notes\n");
    let _ = writeln!(out, "| file | note |");
    let _ = writeln!(out, "|---|---|");
    for f in noted {
        for n in &f.notes {
            let _ = writeln!(out, "| {} | {} |", code(&f.path), text(n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{sample, scan::scan_all};
    use comrak::nodes::{AstNode, NodeValue};
    use comrak::{parse_document, Arena, Options};
    use felix_codec::doc::report::FindingReport;
    use proptest::prelude::*;

    /// What a GitHub-flavoured Markdown reader sees.
    #[derive(Debug, Default)]
    struct Seen {
        tables: Vec<usize>,
        headings: Vec<String>,
        active: Vec<String>,
    }

    fn gfm() -> Options<'static> {
        let mut o = Options::default();
        o.extension.table = true;
        o.extension.autolink = true;
        o.extension.strikethrough = true;
        o.extension.tagfilter = true;
        o.extension.tasklist = true;
        o.extension.footnotes = true;
        o
    }

    fn walk<'a>(node: &'a AstNode<'a>, seen: &mut Seen) {
        match &node.data.borrow().value {
            NodeValue::Table(_) => {
                seen.tables.push(node.children().filter(|c| matches!(c.data.borrow().value, NodeValue::TableRow(false))).count())
            }
            NodeValue::Heading(_) => {
                let mut t = String::new();
                for d in node.descendants() {
                    if let NodeValue::Text(s) = &d.data.borrow().value {
                        t.push_str(s);
                    }
                }
                seen.headings.push(t);
            }
            NodeValue::Link(l) => seen.active.push(format!("link {}", l.url)),
            NodeValue::Image(l) => seen.active.push(format!("image {}", l.url)),
            NodeValue::HtmlInline(h) => seen.active.push(format!("html {h}")),
            NodeValue::HtmlBlock(h) => seen.active.push(format!("html block {}", h.literal)),
            NodeValue::FootnoteReference(_) | NodeValue::FootnoteDefinition(_) => seen.active.push("footnote".into()),
            NodeValue::CodeBlock(_) => seen.active.push("code block".into()),
            _ => {}
        }
        for c in node.children() {
            walk(c, seen);
        }
    }

    fn read(md: &str) -> Seen {
        let arena = Arena::new();
        let root = parse_document(&arena, md, &gfm());
        let mut seen = Seen::default();
        walk(root, &mut seen);
        seen
    }

    fn hostile_report(path: &str, kind: &str, message: &str) -> Report {
        let mut f = FileReport::new(path.into(), felix_codec::format::file_name::FileKind::Segment, 100);
        f.sha256 = Some(path.into());
        f.findings.push(FindingReport {
            kind: kind.into(),
            position: 1,
            end: 2,
            offset: Some(3),
            repair: felix_codec::Repair::Never,
            message: message.into(),
            discontinuity: None,
        });
        let g = FileReport::new(message.into(), felix_codec::format::file_name::FileKind::Index, 0);
        Report::new(vec![f, g])
    }

    fn assert_safe(report: &Report, preface: &Preface) {
        let md = render(report, preface);
        let seen = read(&md);
        let findings: usize = report.files.iter().map(|f| f.findings.len()).sum();
        let files: Vec<&FileReport> = report.files.iter().collect();
        let spans = by_shard(&files).iter().filter(|v| shard_time_words(files.get(v.files.clone()).unwrap_or(&[])).is_some()).count();
        let (mut tables, mut headings) = (vec![report.files.len()], vec!["Felix storage report".to_string()]);
        if spans > 0 {
            tables.push(spans);
            headings.push("Time".to_string());
        }
        tables.push(findings);
        headings.push("Findings".to_string());
        assert_eq!(seen.tables, tables, "one row per file, per shard's span of time and per finding:\n{md}");
        assert_eq!(seen.headings, headings, "no forged heading:\n{md}");
        assert!(seen.active.is_empty(), "{:?} in\n{md}", seen.active);
    }

    #[test]
    fn every_finding_has_a_row() {
        let report = Report::new(scan_all(&sample::files()).into_iter().map(|s| s.report).collect());
        let md = render(&report, &Preface::default());
        assert_safe(&report, &Preface::default());
        assert!(md.contains("| Truncated |"), "{md}");
        assert!(
            md.contains("| written 2026\\-11\\-01T09\\:00\\:00\\.000000Z to 2026\\-11\\-01T09\\:00\\:09\\.750000Z |"),
            "each segment's time:\n{md}"
        );
        assert!(md.contains("\n## Time\n"), "each shard's span:\n{md}");
    }

    #[test]
    fn the_issues_attacks_are_inert() {
        let attacks = [
            (
                "a`<img src=x onerror=alert(1)>`b",
                "Truncated\n| forged | row |\n# ALL FILES CLEAN",
                "![t](https://tracker.example/p.png) [click](javascript:alert(1))",
            ),
            ("``", "|", "<script>alert(1)</script>"),
            ("x\\|y", "www.example.com", "see https://evil.example/ and mail@evil.example"),
            ("    indented", "[^1]", "[^1]: footnote\n\n    code"),
            ("\u{2028}a\r\nb\u{85}", "&amp; &#x3C;b&#x3E;", "* [ ] task\n- item\n> quote\n1. list"),
            ("ü€𝄞 <b>", "", "\\"),
        ];
        for (path, kind, message) in attacks {
            assert_safe(&hostile_report(path, kind, message), &Preface { lines: vec![message.into(), path.into()] });
        }
    }

    #[test]
    fn code_spans_keep_the_text() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code("a\nb"), "`a\\nb`");
        // Issue 18: a bidirectional override reads as the CLI prints it, not as U+FFFD.
        assert_eq!(code("alice\u{202e}evil\u{202c} bob"), "`alice\\u{202e}evil\\u{202c} bob`");
        assert_eq!(text("alice\u{202e}evil"), "alice\\\\u\\{202e\\}evil");
        let arena = Arena::new();
        for s in ["a`b", "`x`", "``` y", "ü `é`", " lead", "trail "] {
            let root = parse_document(&arena, &code(s), &gfm());
            let mut got = String::new();
            for d in root.descendants() {
                if let NodeValue::Code(c) = &d.data.borrow().value {
                    got.push_str(&c.literal);
                }
            }
            assert_eq!(got, s, "{}", code(s));
        }
        // Text with controls reads, through a GFM parser, as the CLI prints it (one rule).
        for s in ["alice\u{202e}evil\u{202c} bob", "a\nb\tc", "x\u{200b}y\\z", "\u{2066}q"] {
            let root = parse_document(&arena, &format!("{}\n\n{}", code(s), text(s)), &gfm());
            let (mut in_code, mut plain) = (String::new(), String::new());
            for d in root.descendants() {
                match &d.data.borrow().value {
                    NodeValue::Code(c) => in_code.push_str(&c.literal),
                    NodeValue::Text(t) => plain.push_str(t),
                    _ => {}
                }
            }
            assert_eq!((in_code.as_str(), plain.as_str()), (&*one_line(s), &*one_line(s)), "{s:?}");
        }
    }

    #[test]
    fn findings_not_listed_are_said() {
        let mut f = FileReport::new("a.log".into(), felix_codec::format::file_name::FileKind::Segment, 100);
        f.findings_omitted = 20_000;
        let md = render(&Report::new(vec![f]), &Preface::default());
        assert!(md.contains("`a.log`\\: 20000 more findings not listed"), "{md}");
    }

    /// The cells of the last table, each as a reader sees its text (code spans' too).
    fn last_table_cells(md: &str) -> Vec<Vec<String>> {
        let arena = Arena::new();
        let root = parse_document(&arena, md, &gfm());
        let table = root.descendants().filter(|d| matches!(d.data.borrow().value, NodeValue::Table(_))).last().unwrap();
        let rows = table.children().filter(|r| matches!(r.data.borrow().value, NodeValue::TableRow(false)));
        rows.map(|r| {
            r.children()
                .map(|cell| {
                    let mut t = String::new();
                    for d in cell.descendants() {
                        match &d.data.borrow().value {
                            NodeValue::Text(s) => t.push_str(s),
                            NodeValue::Code(c) => t.push_str(&c.literal),
                            _ => {}
                        }
                    }
                    t
                })
                .collect()
        })
        .collect()
    }

    #[test]
    fn every_note_beside_a_file_has_a_row_that_reads_as_the_page_shows_it() {
        let path = "x\u{202e}txt.log/00000000000000000001.log";
        let mut f = FileReport::new(path.into(), felix_codec::format::file_name::FileKind::Segment, 100);
        let notes =
            ["no index file", "evil\u{202e}gol.x | *bold* \u{2066}q", "line\nbreak `tick` <b>", "    four spaces before, two after  "];
        f.notes = notes.iter().map(|n| (*n).to_string()).collect();
        let clean = FileReport::new("y.log".into(), felix_codec::format::file_name::FileKind::Segment, 0);
        let md = render(&Report::new(vec![f, clean]), &Preface::default());
        let seen = read(&md);
        assert_eq!(seen.headings, ["Felix storage report", "Findings", "Notes"], "{md}");
        assert_eq!(seen.tables, [2, 0, 4], "one row per note:\n{md}");
        assert!(seen.active.is_empty(), "{:?} in\n{md}", seen.active);
        let want: Vec<Vec<String>> = notes.iter().map(|n| vec![one_line(path).into_owned(), one_line(n).into_owned()]).collect();
        assert_eq!(last_table_cells(&md), want, "{md}");
        // A report without notes has no notes section.
        let md = render(
            &Report::new(vec![FileReport::new("y.log".into(), felix_codec::format::file_name::FileKind::Segment, 0)]),
            &Preface::default(),
        );
        assert!(!md.contains("Notes"), "{md}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        /// For any strings in any field, one row per file and per finding,
        /// the two headings we write, and no link, image, HTML or code block.
        #[test]
        fn any_strings_render_safely(
            path in "(\\PC|[`|\\\\\n\r<>!\\[\\]()#*_~:/.@&;{}\"' ])*",
            kind in "(\\PC|[`|\\\\\n\r<>!\\[\\]()#*_~:/.@&;{}\"' ])*",
            message in "(\\PC|[`|\\\\\n\r<>!\\[\\]()#*_~:/.@&;{}\"' ]|https?://|www\\.|javascript:|<img|!\\[|\\]\\()*",
            line in ".*",
        ) {
            assert_safe(&hostile_report(&path, &kind, &message), &Preface { lines: vec![line] });
        }
    }
}
