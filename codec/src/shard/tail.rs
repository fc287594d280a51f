//! Which of a shard's newest segments never took effect — an unfinished
//! creation, a rollover never swapped in — and so which segment is the
//! log's newest once recovery removes them: the one rule the recovery plan,
//! the verdict's sentence, `inspect`, the page and the engine's open share.

use crate::verdict::corruption::CorruptionKind;

/// Whether a segment whose header verifies, at `base`, continues the one
/// before it: a [`CorruptionKind::SegmentDiscontinuity`] when `base` is not
/// where that one tells the log ends (`told_end`: after its last intact
/// record, past any damage; `None` when its header was rejected — then
/// nothing is measured), unless that one's tail is damaged
/// (`tail_damaged`) and `base` lies past its end (records lost in its tail
/// would have held the offsets between). The one rule `inspect`, `recover`
/// and the engine's open judge consecutive segments by.
///
/// ```
/// use felix_codec::shard::tail::discontinuity;
/// assert!(discontinuity(Some(10), false, 10).is_none());
/// assert!(discontinuity(Some(10), false, 12).is_some(), "a gap");
/// assert!(discontinuity(Some(10), true, 12).is_none(), "the gap lies in the damaged tail");
/// assert!(discontinuity(Some(10), true, 4).is_some(), "an overlap is never explained by damage");
/// assert!(discontinuity(None, false, 4).is_none(), "a rejected header tells no end");
/// ```
#[must_use]
pub fn discontinuity(told_end: Option<u64>, tail_damaged: bool, base: u64) -> Option<CorruptionKind> {
    let expected = told_end?;
    (base != expected && !(tail_damaged && base > expected)).then_some(CorruptionKind::SegmentDiscontinuity { expected, found: base })
}

/// What [`abandoned_tail`] needs of one segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TailShape {
    /// Shorter than a header and holding a prefix of one, as the newest
    /// segment (the scanner's `unfinished`).
    pub unfinished: bool,
    /// Its base offset, when it holds exactly a header that verifies: no
    /// record, no finding, not a byte more.
    pub empty_at: Option<u64>,
    /// The offset after its last intact record (its base when it holds
    /// none); `None` when its header was rejected (nothing behind it tells
    /// where the log ends) or it has none.
    pub next_offset: Option<u64>,
}

/// How many of a shard's newest segments (`shapes` in id order) never took
/// effect, and so hold nothing to lose: recovery removes them, newest
/// first, and the segment before them is the log's newest — its tail judged
/// as the newest segment's. Each is either an unfinished creation (the
/// newest file, shorter than a header), or a segment that holds a header
/// and no record and whose base offset is not where the segment before it
/// ends: a rollover that never took effect (upstream's broker builds the
/// next segment before it swaps it in, so a crash, or a truncation below
/// it, leaves one — successive crashes more than one). An empty segment
/// whose base is where the one before it ends is a finished rollover, kept.
///
/// ```
/// use felix_codec::shard::tail::{abandoned_tail, TailShape};
/// let full = TailShape { next_offset: Some(10), ..TailShape::default() };
/// let at = |base| TailShape { empty_at: Some(base), next_offset: Some(base), unfinished: false };
/// assert_eq!(abandoned_tail(&[full, at(10)]), 0, "a finished rollover");
/// assert_eq!(abandoned_tail(&[full, at(4)]), 1, "built for offset 4, the log went on to 10");
/// assert_eq!(abandoned_tail(&[full, at(12), at(15)]), 2, "two crashes");
/// assert_eq!(abandoned_tail(&[full, TailShape { unfinished: true, ..TailShape::default() }]), 1);
/// let no_end = TailShape::default();
/// assert_eq!(abandoned_tail(&[full, no_end, at(10)]), 0, "no end to measure it by (a rejected header before it)");
/// ```
#[must_use]
pub fn abandoned_tail(shapes: &[TailShape]) -> usize {
    let mut left = shapes.len();
    while let Some(last) = left.checked_sub(1).and_then(|i| shapes.get(i)) {
        let before = left.checked_sub(2).and_then(|i| shapes.get(i));
        let unfinished = left == shapes.len() && last.unfinished;
        // Only an end the segment before tells can prove a base is not where
        // the log ends: after a segment with no such end (its header rejected,
        // or a prefix of one) nothing is judged stranded.
        let stranded = last.empty_at.is_some_and(|base| before.and_then(|b| b.next_offset).is_some_and(|end| end != base));
        if !(unfinished || stranded) {
            break;
        }
        left -= 1;
    }
    shapes.len() - left
}

/// The offsets no segment holds below a segment that never took effect,
/// built for `base` past where the segment before it ends (`end`) — a
/// truncation under a segment built ahead (upstream's broker makes one), or
/// records lost; `None` unless `base` is past `end`. Recovery removes the
/// segment all the same, as upstream's does (it holds no record), and the
/// log goes on from `end`: these words are the verdict's and the note's, so
/// the offsets it may reuse are never passed over in silence.
///
/// ```
/// use felix_codec::shard::tail::unheld_words;
/// assert_eq!(unheld_words(10, 4), None);
/// assert!(unheld_words(10, 12).unwrap().starts_with("offsets 10..=11 are held by no segment"));
/// ```
#[must_use]
pub fn unheld_words(end: u64, base: u64) -> Option<alloc::string::String> {
    let last = base.checked_sub(1).filter(|l| *l >= end)?;
    Some(alloc::format!(
        "{} {} held by no segment, below a segment that never took effect: a truncation under a segment built ahead \
         (upstream's broker builds one), or records lost — `felix-storage diff` against a healthy replica shows whether \
         one holds them; the log goes on from offset {end}",
        crate::doc::report::offsets_words(end, last),
        if last == end { "is" } else { "are" }
    ))
}
