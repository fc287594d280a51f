//! Both replicas' bytes side by side at their first divergence: which
//! bounded byte range of which file to read on each side (never more than
//! [`SHOWN_BYTES`]), and the rows of byte pairs with every byte that differs
//! marked. The component reads the two ranges with `Blob.slice` and renders
//! the rows.
//!
//! The first divergence is the lower of two places the codec's diff names:
//! the first offset both sides hold with different records (both records'
//! first bytes), and the first offset one side lost that the other still
//! holds (the holder's intact record beside the bytes where the lacking
//! side's damage there begins).

use felix_codec::format::record::RECORD_HEADER_LEN;
use felix_codec::format::time::format_micros;
use felix_codec::shard::diff::{blocks, Diff, Lost, RecordRef, SideReport};

/// Most bytes shown of each side.
pub const SHOWN_BYTES: u64 = 256;

/// Bytes per row.
pub const ROW_BYTES: usize = 16;

/// A bounded byte range of one replica's file (by its name in the folder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The file's name.
    pub file: String,
    /// First byte.
    pub start: u64,
    /// Exclusive end (at most [`SHOWN_BYTES`] past `start`).
    pub end: u64,
    /// The timestamp of the intact record shown (`None`: the bytes where a
    /// side's damage begins — a damaged record's timestamp is not believed).
    pub time_micros: Option<u64>,
}

impl Span {
    /// Where the bytes are and, for an intact record, when it was written
    /// (UTC with the micros): `byte 32, written 2026-…Z`.
    #[must_use]
    pub fn place(&self) -> String {
        match self.time_micros {
            Some(t) => format!("byte {}, written {}", self.start, format_micros(t)),
            None => format!("byte {} (damaged: no time believed)", self.start),
        }
    }
}

/// Where both sides are shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstDivergence {
    /// The offset.
    pub offset: u64,
    /// Why there: `"differ"` (both hold it, the records differ) or `"lost"`
    /// (one side lost it; the other still holds it).
    pub why: &'static str,
    /// A's bytes.
    pub a: Span,
    /// B's bytes.
    pub b: Span,
}

fn record_span(r: &RecordRef) -> Span {
    let len = (RECORD_HEADER_LEN as u64).saturating_add(u64::from(r.payload_len)).min(SHOWN_BYTES);
    Span { file: r.file.clone(), start: r.position, end: r.position.saturating_add(len), time_micros: Some(r.timestamp_micros) }
}

/// The first lost offset of `lost` (the lacking side `side`): the holder's
/// record span, and the lacking side's bytes where its blocking finding at
/// that offset begins (none named there: no span).
fn lost_spans(lost: &[Lost], side: &SideReport) -> Option<(u64, Span, Span)> {
    let l = lost.first()?;
    let o = l.range.from;
    let f = side.findings.iter().find(|f| blocks(f) && f.finding.offset == Some(o))?;
    let held = record_span(&l.held_at);
    let damaged_len = f.finding.end.saturating_sub(f.finding.position).clamp(RECORD_HEADER_LEN as u64, SHOWN_BYTES);
    let damaged =
        Span { file: f.file.clone(), start: f.finding.position, end: f.finding.position.saturating_add(damaged_len), time_micros: None };
    Some((o, held, damaged))
}

/// Where the diff's first divergence is, or `None` when it names none (or a
/// lost offset whose damage it does not place).
#[must_use]
pub fn first_divergence(d: &Diff) -> Option<FirstDivergence> {
    let differ =
        d.divergence.as_ref().map(|v| FirstDivergence { offset: v.offset, why: "differ", a: record_span(&v.a), b: record_span(&v.b) });
    let lost_a = lost_spans(&d.lost_a, &d.a).map(|(offset, held, damaged)| FirstDivergence { offset, why: "lost", a: damaged, b: held });
    let lost_b = lost_spans(&d.lost_b, &d.b).map(|(offset, held, damaged)| FirstDivergence { offset, why: "lost", a: held, b: damaged });
    [differ, lost_a, lost_b].into_iter().flatten().min_by_key(|f| f.offset)
}

/// One byte position of the two sides: each side's byte there (`None`:
/// that side's bytes ended before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// Position from each side's first shown byte.
    pub at: usize,
    /// A's byte.
    pub a: Option<u8>,
    /// B's byte.
    pub b: Option<u8>,
}

impl Pair {
    /// Whether the two sides differ here (a byte only one side has differs).
    #[must_use]
    pub fn differs(&self) -> bool {
        self.a != self.b
    }

    /// Whether this byte is a record's payload (past the 28-byte header),
    /// masked on the page unless the user unmasks it.
    #[must_use]
    pub fn is_payload(&self) -> bool {
        self.at >= RECORD_HEADER_LEN
    }
}

/// The two sides' bytes as rows of [`ROW_BYTES`] pairs, as long as the
/// longer side (each at most [`SHOWN_BYTES`] is read).
#[must_use]
pub fn rows(a: &[u8], b: &[u8]) -> Vec<Vec<Pair>> {
    let len = a.len().max(b.len());
    let pairs: Vec<Pair> = (0..len).map(|at| Pair { at, a: a.get(at).copied(), b: b.get(at).copied() }).collect();
    pairs.chunks(ROW_BYTES).map(<[Pair]>::to_vec).collect()
}

/// How many positions differ.
#[must_use]
pub fn differing(a: &[u8], b: &[u8]) -> usize {
    (0..a.len().max(b.len())).filter(|i| a.get(*i) != b.get(*i)).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::replica::diff_in_memory;
    use felix_codec::format::record::encode_record;
    use felix_codec::format::segment_header::SegmentHeader;

    fn log(n: u64, salt: impl Fn(u64) -> u8) -> Vec<u8> {
        let mut out = SegmentHeader::new(0, 1).encode().to_vec();
        for o in 0..n {
            encode_record(o, 1_000 + o, &[salt(o); 20], &mut out).unwrap();
        }
        out
    }

    const SEG: &str = "00000000000000000000.log";

    fn folder(name: &str, bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
        vec![(format!("{name}/{SEG}"), bytes)]
    }

    #[test]
    fn the_records_at_the_first_divergent_offset_are_shown_with_their_differences_marked() {
        let a = log(10, |_| 7);
        let b = log(10, |o| if o >= 4 { 9 } else { 7 });
        let d = diff_in_memory(("a", &folder("a", a.clone())), ("b", &folder("b", b.clone())));
        let f = first_divergence(&d).unwrap();
        let at = 32 + 4 * 48;
        assert_eq!((f.offset, f.why), (4, "differ"));
        assert_eq!(f.a, Span { file: SEG.into(), start: at, end: at + 48, time_micros: Some(1_004) });
        assert_eq!(f.b, f.a);
        assert_eq!(
            f.a.place(),
            format!("byte {at}, written 1970-01-01T00:00:00.001004Z"),
            "each side's record's time, UTC with the micros"
        );
        let (sa, sb) = (&a[at as usize..][..48], &b[at as usize..][..48]);
        let rows = rows(sa, sb);
        assert_eq!(rows.len(), 3);
        let marked: Vec<usize> = rows.iter().flatten().filter(|p| p.differs()).map(|p| p.at).collect();
        // The checksum (bytes 24..28) and all 20 payload bytes differ; offset, length and time do not.
        assert_eq!(marked, (24..28).chain(28..48).collect::<Vec<_>>());
        assert_eq!(differing(sa, sb), 24);
    }

    #[test]
    fn a_side_that_lost_an_offset_to_rot_is_shown_beside_the_side_that_holds_it() {
        let a = log(10, |_| 7);
        let mut b = a.clone();
        let at = 32 + 3 * 48;
        b[at + 40] ^= 1; // offset 3's payload rots on B
        let d = diff_in_memory(("a", &folder("a", a.clone())), ("b", &folder("b", b.clone())));
        assert_eq!(d.first_divergent_offset, None);
        let f = first_divergence(&d).unwrap();
        assert_eq!((f.offset, f.why), (3, "lost"));
        assert_eq!((f.a.start, f.a.end), (at as u64, at as u64 + 48), "A's intact record");
        assert_eq!((f.b.file.as_str(), f.b.start), (SEG, at as u64), "B's damaged bytes where its finding begins");
        assert_eq!((f.a.time_micros, f.b.time_micros), (Some(1_003), None), "A's record's time; B's damaged one's is not believed");
        assert_eq!(f.b.place(), format!("byte {at} (damaged: no time believed)"));
        let (sa, sb) = (&a[f.a.start as usize..f.a.end as usize], &b[f.b.start as usize..(f.b.end as usize).min(b.len())]);
        let marked: Vec<usize> = rows(sa, sb).iter().flatten().filter(|p| p.differs()).map(|p| p.at).collect();
        assert_eq!(marked, [40]);
        // The same the other way round.
        let d = diff_in_memory(("b", &folder("b", b)), ("a", &folder("a", a)));
        let f = first_divergence(&d).unwrap();
        assert_eq!((f.offset, f.a.start, f.b.start), (3, at as u64, at as u64));
    }

    #[test]
    fn reads_are_bounded_and_unequal_lengths_are_marked() {
        let rec =
            |position, payload_len| RecordRef { file: SEG.into(), position, payload_len, timestamp_micros: 0, checksum: String::new() };
        let span = record_span(&rec(100, u32::MAX));
        assert_eq!(span.end - span.start, SHOWN_BYTES);
        let span = record_span(&rec(u64::MAX - 3, 20));
        assert_eq!(span.end, u64::MAX);
        let r = rows(&[1, 2, 3], &[1, 2]);
        assert_eq!(r[0][2], Pair { at: 2, a: Some(3), b: None });
        assert!(r[0][2].differs() && !r[0][1].differs());
        assert!(rows(&[], &[]).is_empty());
        let identical = diff_in_memory(("a", &folder("a", log(3, |_| 1))), ("b", &folder("b", log(3, |_| 1))));
        assert_eq!(first_divergence(&identical), None);
    }
}
