//! Find: bytes (hex) or text (UTF-8) in a file streamed chunk by chunk, each
//! match named by its byte position and the record that holds it.
//!
//! - [`parse_query`] turns what a person typed into the needle (at most
//!   [`MAX_NEEDLE_BYTES`]), or says in words why not.
//! - [`Matcher`] finds every occurrence (overlapping ones too) in a stream
//!   of chunks of any sizes with `memchr::memmem`, keeping only the last
//!   `needle − 1` bytes between chunks: a match across a chunk boundary is
//!   found, none is reported twice, and memory does not grow with the file.
//! - [`Locator`] names the record holding each match (the record whose bytes
//!   hold its first byte) from the codec scanner's record items, which come
//!   in file order as the same chunks are scanned.
//! - [`FileFind`] is both over one file, with the codec's scan of it; the
//!   worker (`driver::find`) feeds it each chunk it reads.
//! - [`Results`]: what the page lists and steps through (next / previous).
//!
//! At most [`MAX_LISTED`] matches are listed per search (across every file);
//! the rest are counted.

use std::collections::VecDeque;
use std::fmt;

use felix_codec::format::record::RECORD_HEADER_LEN;
use felix_codec::read::scan::{Item, Sink};
use felix_codec::shard::inspect::FileScan;
use memchr::memmem;

/// Longest needle.
pub const MAX_NEEDLE_BYTES: usize = 256;
/// Most matches listed per search; the rest are counted.
pub const MAX_LISTED: usize = 1_000;
/// Recent records kept to place a match found after its record was scanned
/// (a needle reaching past its record's end): records are at least 28
/// bytes, so 16 cover more than [`MAX_NEEDLE_BYTES`].
const RECENT_RECORDS: usize = 16;

/// How the query is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Hex digits, two a byte, spaces allowed (`de ad be ef`).
    Hex,
    /// Text, searched as its UTF-8 bytes.
    Text,
}

/// Why a query is not a needle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryError {
    /// Nothing to find.
    Empty,
    /// Longer than [`MAX_NEEDLE_BYTES`].
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
    /// A character that is not a hex digit or a space.
    NotHex {
        /// Its position, in characters.
        at: usize,
        /// The character.
        found: char,
    },
    /// A run of hex digits (between spaces) of an odd length: "0 0" is not
    /// the byte 00, nor is "abc" two bytes.
    OddDigits {
        /// The run's first character, from 0.
        at: usize,
    },
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "type the bytes or text to find"),
            Self::TooLong { bytes } => write!(f, "the query is {bytes} bytes long; at most {MAX_NEEDLE_BYTES} are searched"),
            Self::NotHex { at, found } => {
                write!(
                    f,
                    "character {} ({}) is not a hex digit: type bytes as pairs of 0-9 and a-f, such as de ad be ef",
                    at + 1,
                    found.escape_debug()
                )
            }
            Self::OddDigits { at } => {
                write!(f, "the hex digits from character {} are an odd number: each byte is two digits, such as de ad be ef", at + 1)
            }
        }
    }
}

/// The needle a query names.
///
/// # Errors
/// Empty, too long, a character that is not a hex digit, an odd number of digits.
pub fn parse_query(query: &str, mode: Mode) -> Result<Vec<u8>, QueryError> {
    let needle = match mode {
        Mode::Text => query.as_bytes().to_vec(),
        Mode::Hex => {
            let mut digits = Vec::new();
            let mut count = 0usize;
            // The run of digits since the last space: where it began, how long it is.
            let mut run = (0usize, 0usize);
            for (at, c) in query.chars().enumerate() {
                match c.to_digit(16) {
                    // Past the longest needle the digits are only counted: the error says how long the query is.
                    Some(d) if count < 2 * MAX_NEEDLE_BYTES => digits.push(d as u8),
                    Some(_) => {}
                    None if c.is_whitespace() => {
                        if run.1 % 2 == 1 {
                            return Err(QueryError::OddDigits { at: run.0 });
                        }
                        run = (at + 1, 0);
                        continue;
                    }
                    None => return Err(QueryError::NotHex { at, found: c }),
                }
                count += 1;
                run.1 += 1;
            }
            if count > 2 * MAX_NEEDLE_BYTES {
                return Err(QueryError::TooLong { bytes: count.div_ceil(2) });
            }
            if run.1 % 2 == 1 {
                return Err(QueryError::OddDigits { at: run.0 });
            }
            digits.chunks(2).map(|p| p.iter().fold(0u8, |acc, d| (acc << 4) | d)).collect()
        }
    };
    match needle.len() {
        0 => Err(QueryError::Empty),
        n if n > MAX_NEEDLE_BYTES => Err(QueryError::TooLong { bytes: n }),
        _ => Ok(needle),
    }
}

/// Every occurrence of a needle in a stream of chunks.
#[derive(Clone, Debug)]
pub struct Matcher {
    finder: memmem::Finder<'static>,
    /// The last `needle − 1` bytes fed (fewer at the start).
    tail: Vec<u8>,
    /// Bytes fed so far.
    fed: u64,
}

/// Calls `found` with every start of `finder`'s needle in `hay` (overlapping ones too) below `limit`.
fn each_match(finder: &memmem::Finder<'_>, hay: &[u8], limit: usize, found: &mut impl FnMut(usize)) {
    let mut from = 0;
    while from < limit {
        let Some(i) = hay.get(from..).and_then(|h| finder.find(h)) else { return };
        let at = from + i;
        if at >= limit {
            return;
        }
        found(at);
        from = at + 1;
    }
}

impl Matcher {
    /// A matcher of `needle` (an empty needle matches nothing).
    #[must_use]
    pub fn new(needle: &[u8]) -> Self {
        Self { finder: memmem::Finder::new(needle).into_owned(), tail: Vec::new(), fed: 0 }
    }

    fn needle_len(&self) -> usize {
        self.finder.needle().len()
    }

    /// Feeds the next chunk; `found` hears every match's first byte
    /// position in the stream, in increasing order.
    pub fn feed(&mut self, chunk: &[u8], found: &mut impl FnMut(u64)) {
        let n = self.needle_len();
        if n == 0 {
            return;
        }
        let base = self.fed;
        // Matches starting in the tail end in this chunk: search the tail and the chunk's first bytes.
        if !self.tail.is_empty() {
            let tail_start = base - self.tail.len() as u64;
            let mut seam = self.tail.clone();
            seam.extend_from_slice(chunk.get(..(n - 1).min(chunk.len())).unwrap_or(chunk));
            let tail_len = self.tail.len();
            each_match(&self.finder, &seam, tail_len, &mut |i| found(tail_start + i as u64));
        }
        each_match(&self.finder, chunk, chunk.len(), &mut |i| found(base + i as u64));
        self.fed = base + chunk.len() as u64;
        // Keep the last n − 1 bytes of everything fed.
        let keep = n - 1;
        if chunk.len() >= keep {
            self.tail.clear();
            self.tail.extend_from_slice(chunk.get(chunk.len() - keep..).unwrap_or_default());
        } else {
            self.tail.extend_from_slice(chunk);
            let excess = self.tail.len().saturating_sub(keep);
            self.tail.drain(..excess);
        }
    }
}

/// One match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its first byte's position in the file.
    pub position: u64,
    /// The offset of the record whose bytes hold that byte (`None`: no
    /// record's — a header, an index, damaged bytes).
    pub record: Option<u64>,
}

/// Names the record holding each match, from record spans met in file order.
#[derive(Clone, Debug, Default)]
pub struct Locator {
    /// Matches waiting for their record (at most the listing's room).
    pending: VecDeque<u64>,
    /// The last records met: `(start, end, offset)`.
    recent: VecDeque<(u64, u64, u64)>,
    listed: Vec<Found>,
    room: usize,
    total: u64,
}

impl Locator {
    /// A locator that lists at most `room` matches.
    #[must_use]
    pub fn new(room: usize) -> Self {
        Self { room, ..Self::default() }
    }

    /// A match at `position` (matches come in increasing order).
    pub fn on_match(&mut self, position: u64) {
        self.total = self.total.saturating_add(1);
        if self.listed.len() + self.pending.len() >= self.room {
            return;
        }
        if self.pending.is_empty() {
            if let Some(&(_, _, offset)) = self.recent.iter().find(|(s, e, _)| *s <= position && position < *e) {
                return self.listed.push(Found { position, record: Some(offset) });
            }
            if self.recent.back().is_some_and(|(_, e, _)| position < *e) {
                // Before the last record met, in none: between records.
                return self.listed.push(Found { position, record: None });
            }
        }
        self.pending.push_back(position);
    }

    /// A record spanning `start..end` with `offset` (records come in file order).
    pub fn on_record(&mut self, start: u64, end: u64, offset: u64) {
        while let Some(&p) = self.pending.front() {
            if p >= end {
                break;
            }
            self.pending.pop_front();
            self.listed.push(Found { position: p, record: (p >= start).then_some(offset) });
        }
        if self.recent.len() == RECENT_RECORDS {
            self.recent.pop_front();
        }
        self.recent.push_back((start, end, offset));
    }

    /// The matches listed (in position order) and how many there were in all.
    #[must_use]
    pub fn finish(mut self) -> (Vec<Found>, u64) {
        self.listed.extend(self.pending.drain(..).map(|position| Found { position, record: None }));
        (self.listed, self.total)
    }
}

impl Sink for Locator {
    fn item(&mut self, item: Item<'_>) {
        if let Item::Record(r) = item {
            let end = r.position.saturating_add(RECORD_HEADER_LEN as u64).saturating_add(u64::from(r.header.payload_len));
            self.on_record(r.position, end, r.header.offset);
        }
    }
}

/// A search of one file: the matcher, and the codec's scan of the same
/// bytes (the file on its own) naming each match's record.
#[derive(Debug)]
pub struct FileFind {
    matcher: Matcher,
    locator: Locator,
    scan: FileScan,
}

impl FileFind {
    /// A search for `needle` in the file `path`, listing at most `room` matches.
    #[must_use]
    pub fn new(needle: &[u8], path: &str, room: usize) -> Self {
        let scan = FileScan::standalone(super::group::file_name(path));
        Self { matcher: Matcher::new(needle), locator: Locator::new(room), scan }
    }

    /// The next bytes of the file.
    pub fn feed(&mut self, chunk: &[u8]) {
        let locator = &mut self.locator;
        self.matcher.feed(chunk, &mut |p| locator.on_match(p));
        self.scan.feed(chunk, locator);
    }

    /// The matches listed and the count of all.
    #[must_use]
    pub fn finish(mut self) -> (Vec<Found>, u64) {
        // Its end names the records still in flight (a torn last one).
        let _ = self.scan.into_report(String::new(), &mut self.locator);
        self.locator.finish()
    }
}

/// What a search found: every listed match with its file, the count of
/// all, and the one selected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Results {
    /// `(file id, match)` in the order searched.
    pub items: Vec<(u32, Found)>,
    /// Matches in all, listed or not.
    pub total: u64,
    /// The selected one.
    pub current: Option<usize>,
}

impl Results {
    /// One file's matches arrived.
    pub fn add(&mut self, file: u32, found: &[Found], total: u64) {
        let room = MAX_LISTED.saturating_sub(self.items.len());
        self.items.extend(found.iter().take(room).map(|f| (file, *f)));
        self.total = self.total.saturating_add(total);
    }

    /// Matches counted but not listed.
    #[must_use]
    pub fn unlisted(&self) -> u64 {
        self.total.saturating_sub(self.items.len() as u64)
    }

    /// Selects the next (`forward`) or previous match, wrapping; the first
    /// step selects the first (or last) one.
    pub fn step(&mut self, forward: bool) -> Option<(u32, Found)> {
        let n = self.items.len();
        if n == 0 {
            return None;
        }
        let next = match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
        };
        self.current = Some(next);
        self.items.get(next).copied()
    }

    /// The sentence above the list.
    #[must_use]
    pub fn summary(&self, done: bool) -> String {
        let files: std::collections::BTreeSet<u32> = self.items.iter().map(|(f, _)| *f).collect();
        let state = if done { "" } else { " so far (searching…)" };
        let in_files = if files.len() == 1 { "1 file".to_owned() } else { format!("{} files", files.len()) };
        match (self.total, self.unlisted()) {
            (0, _) => format!("no match{state}"),
            (1, _) => format!("1 match in {in_files}{state}"),
            (t, 0) => format!("{t} matches in {in_files}{state}"),
            (t, u) => format!("{t} matches{state}: the first {} are listed, {u} more are not", self.items.len()),
        }
    }
}

impl Results {
    /// What the list drawn (`shown`, from [`Results::visible`]) leaves out of
    /// the listed matches, in words — `None` when it draws them all.
    #[must_use]
    pub fn drawn(&self, shown: &std::ops::Range<usize>) -> Option<String> {
        let n = self.items.len();
        (shown.len() < n).then(|| {
            let left = n - shown.len();
            format!(
                "drawn here: matches {} to {} of the {n} listed ({left} not drawn; next and previous step to them)",
                shown.start + 1,
                shown.end
            )
        })
    }

    /// The indexes to draw: at most `max`, around the selected one.
    #[must_use]
    pub fn visible(&self, max: usize) -> std::ops::Range<usize> {
        let n = self.items.len();
        let start = self.current.unwrap_or(0).saturating_sub(max / 2).min(n.saturating_sub(max));
        start..(start + max).min(n)
    }
}

/// One search as the page holds it: its number (a newer search's messages
/// replace it; an older one's are dropped), the needle's length (what a
/// match selects), the results, and whether it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    /// Which search.
    pub id: u64,
    /// The needle's length in bytes.
    pub needle_len: u64,
    /// What was found so far.
    pub results: Results,
    /// Every file was searched.
    pub done: bool,
    /// Why it stopped.
    pub error: Option<String>,
}

/// What the find worker says of a search (the wire's messages, as a search
/// hears them: `protocol::ToPage::for_find`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// Matches in one file: `total` found there, `matches` listed.
    Found { file: u32, total: u64, matches: Vec<Found> },
    /// The search is over.
    Done,
    /// The search stopped: why, in words.
    Failed(String),
}

impl Search {
    /// A new search numbered `id` for a needle of `needle_len` bytes.
    #[must_use]
    pub fn new(id: u64, needle_len: usize) -> Self {
        Self { id, needle_len: needle_len as u64, ..Self::default() }
    }

    /// What the worker said of search `id`; of another search, nothing changes.
    pub fn on_message(&mut self, id: u64, heard: Heard) {
        if id != self.id || self.done {
            return;
        }
        match heard {
            Heard::Found { file, total, matches } => self.results.add(file, &matches, total),
            Heard::Done => self.done = true,
            Heard::Failed(message) => {
                self.error = Some(message);
                self.done = true;
            }
        }
    }

    /// The bytes the selected match covers: `(file, start, end)`.
    #[must_use]
    pub fn selection(&self) -> Option<(u32, u64, u64)> {
        let (file, f) = self.results.items.get(self.results.current?)?;
        Some((*file, f.position, f.position.saturating_add(self.needle_len.max(1))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(hay: &[u8], needle: &[u8]) -> Vec<u64> {
        if needle.is_empty() || needle.len() > hay.len() {
            return Vec::new();
        }
        (0..=hay.len() - needle.len()).filter(|&i| &hay[i..i + needle.len()] == needle).map(|i| i as u64).collect()
    }

    fn chunked(hay: &[u8], needle: &[u8], cuts: &[usize]) -> Vec<u64> {
        let mut m = Matcher::new(needle);
        let mut out = Vec::new();
        let mut at = 0;
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (hay.len() + 1)).collect();
        cuts.sort_unstable();
        for c in cuts.into_iter().chain([hay.len()]) {
            m.feed(&hay[at..c.max(at)], &mut |p| out.push(p));
            at = c.max(at);
        }
        out
    }

    proptest! {
        /// Random haystacks over a small alphabet (so matches are many and
        /// overlap), split at random chunk boundaries (empty chunks too):
        /// exactly the naive search's positions.
        #[test]
        fn any_chunking_finds_what_a_naive_search_finds(
            hay in proptest::collection::vec(0u8..3, 0..400),
            needle in proptest::collection::vec(0u8..3, 1..8),
            cuts in proptest::collection::vec(0usize..401, 0..12),
        ) {
            prop_assert_eq!(chunked(&hay, &needle, &cuts), naive(&hay, &needle));
        }

        /// One-byte chunks, the hardest split.
        #[test]
        fn byte_at_a_time_finds_what_a_naive_search_finds(
            hay in proptest::collection::vec(0u8..2, 0..200),
            needle in proptest::collection::vec(0u8..2, 1..6),
        ) {
            let cuts: Vec<usize> = (0..hay.len()).collect();
            prop_assert_eq!(chunked(&hay, &needle, &cuts), naive(&hay, &needle));
        }
    }

    #[test]
    fn a_match_across_a_boundary_is_found_once_and_memory_is_the_needle() {
        let mut m = Matcher::new(b"dead");
        let mut out = Vec::new();
        for chunk in [&b"xxde"[..], b"a", b"dxdead", b""] {
            m.feed(chunk, &mut |p| out.push(p));
            assert!(m.tail.len() <= 3);
        }
        assert_eq!(out, [2, 7]);
        assert_eq!(chunked(b"aaaa", b"aa", &[1, 2, 3]), [0, 1, 2], "overlapping matches");
    }

    #[test]
    fn queries_are_read_as_hex_or_text_and_refused_in_words() {
        assert_eq!(parse_query("de ad BE ef", Mode::Hex), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(parse_query("deadbeef", Mode::Hex), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(parse_query("é", Mode::Text), Ok("é".as_bytes().to_vec()));
        assert_eq!(parse_query("", Mode::Text), Err(QueryError::Empty));
        assert_eq!(parse_query("  ", Mode::Hex), Err(QueryError::Empty));
        assert_eq!(parse_query("abc", Mode::Hex), Err(QueryError::OddDigits { at: 0 }));
        // Digits are never joined across a space: "0 0" is not the byte 00.
        assert_eq!(parse_query("0 0", Mode::Hex), Err(QueryError::OddDigits { at: 0 }));
        assert_eq!(parse_query("de a d", Mode::Hex), Err(QueryError::OddDigits { at: 3 }));
        assert_eq!(
            parse_query("de a d", Mode::Hex).unwrap_err().to_string(),
            "the hex digits from character 4 are an odd number: each byte is two digits, such as de ad be ef"
        );
        assert_eq!(parse_query(" de  ad\tbeef ", Mode::Hex), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        let e = parse_query("de\u{202e}ad", Mode::Hex).unwrap_err();
        assert_eq!(e, QueryError::NotHex { at: 2, found: '\u{202e}' });
        assert_eq!(e.to_string(), "character 3 (\\u{202e}) is not a hex digit: type bytes as pairs of 0-9 and a-f, such as de ad be ef");
        assert_eq!(parse_query(&"x".repeat(257), Mode::Text), Err(QueryError::TooLong { bytes: 257 }));
        assert_eq!(
            parse_query(&"ab".repeat(10_000), Mode::Hex),
            Err(QueryError::TooLong { bytes: 10_000 }),
            "counted whole, not where the count stopped"
        );
        assert_eq!(parse_query(&"00 ".repeat(257), Mode::Hex), Err(QueryError::TooLong { bytes: 257 }));
        assert_eq!(parse_query(&"00".repeat(256), Mode::Hex).map(|n| n.len()), Ok(256));
    }

    /// Records met in file order, each when the bytes up to its end were
    /// fed (as the scanner emits them), and matches as the matcher finds
    /// them: every match is placed in the record holding its first byte,
    /// whatever the chunking — also when a match ends past its record.
    #[test]
    fn the_locator_names_the_record_holding_each_match_whatever_the_chunking() {
        // Records of 30 bytes from byte 32, offsets 100.., a gap at 182..212.
        let spans: Vec<(u64, u64, u64)> =
            (0..10u64).map(|i| 32 + i * 30).filter(|s| *s != 182).map(|s| (s, s + 30, 100 + (s - 32) / 30)).collect();
        let size = 332u64;
        let matches: Vec<u64> = vec![0, 31, 32, 61, 62, 150, 185, 211, 212, 300, 324];
        let want: Vec<Found> =
            matches.iter().map(|&p| Found { position: p, record: spans.iter().find(|(s, e, _)| *s <= p && p < *e).map(|x| x.2) }).collect();
        for step in [1u64, 7, 29, 64, 400] {
            let mut loc = Locator::new(MAX_LISTED);
            let (mut fed, mut next_span, mut next_match) = (0u64, 0, 0);
            while fed < size {
                fed = (fed + step).min(size);
                // A match (needle of 8 bytes) is found once its last byte was fed; then the records that ended are met.
                while next_match < matches.len() && matches[next_match] + 8 <= fed {
                    loc.on_match(matches[next_match]);
                    next_match += 1;
                }
                while next_span < spans.len() && spans[next_span].1 <= fed {
                    let (s, e, o) = spans[next_span];
                    loc.on_record(s, e, o);
                    next_span += 1;
                }
            }
            assert_eq!(loc.finish(), (want.clone(), matches.len() as u64), "step {step}");
        }
        let mut loc = Locator::new(2);
        for p in [1, 2, 3] {
            loc.on_match(p);
        }
        assert_eq!(loc.finish().1, 3, "counted past the room");
    }

    #[test]
    fn a_known_payload_is_found_in_the_sample_shard_in_its_record() {
        let files = crate::model::sample::files();
        let (path, bytes) = files.iter().find(|(p, _)| p.ends_with("00000000000000000000.log")).unwrap();
        let needle = br#""customer":"c-7919""#;
        let want = naive(bytes, needle);
        assert!(!want.is_empty());
        for chunk in [1usize, 13, 4096, bytes.len()] {
            let mut f = FileFind::new(needle, path, MAX_LISTED);
            for c in bytes.chunks(chunk) {
                f.feed(c);
            }
            let (found, total) = f.finish();
            assert_eq!(found.iter().map(|f| f.position).collect::<Vec<_>>(), want, "chunk {chunk}");
            assert_eq!(total, want.len() as u64);
            assert!(found.iter().all(|f| f.record.is_some()), "a payload is in a record: {found:?}");
        }
    }

    #[test]
    fn results_step_both_ways_wrap_and_cap_the_list() {
        let f = |p| Found { position: p, record: None };
        let mut r = Results::default();
        assert_eq!(r.step(true), None);
        r.add(1, &[f(5), f(9)], 2);
        r.add(2, &[f(3)], 1);
        assert_eq!(r.summary(true), "3 matches in 2 files");
        assert_eq!(r.step(false), Some((2, f(3))), "the first step back selects the last");
        assert_eq!(r.step(true), Some((1, f(5))), "wraps");
        assert_eq!(r.step(true), Some((1, f(9))));
        let many: Vec<Found> = (0..MAX_LISTED as u64 + 5).map(f).collect();
        r.add(3, &many, 5000);
        assert_eq!(r.items.len(), MAX_LISTED);
        assert_eq!(r.unlisted(), 5003 - MAX_LISTED as u64);
        assert_eq!(r.summary(false), format!("5003 matches so far (searching…): the first {MAX_LISTED} are listed, 4003 more are not"));
        assert_eq!(Results::default().summary(true), "no match");
        r.current = Some(MAX_LISTED - 1);
        assert_eq!(r.visible(100), MAX_LISTED - 100..MAX_LISTED);
        r.current = Some(3);
        assert_eq!(r.visible(100), 0..100);
        assert_eq!(
            r.drawn(&r.visible(100)).as_deref(),
            Some("drawn here: matches 1 to 100 of the 1000 listed (900 not drawn; next and previous step to them)")
        );
        r.current = Some(500);
        assert_eq!(
            r.drawn(&r.visible(100)).as_deref(),
            Some("drawn here: matches 451 to 550 of the 1000 listed (900 not drawn; next and previous step to them)")
        );
        r.items.truncate(100);
        assert_eq!(r.drawn(&r.visible(100)), None, "every listed match drawn: nothing to say");
    }

    #[test]
    fn a_search_takes_only_its_own_messages_and_selects_the_needles_bytes() {
        use crate::worker::protocol::ToPage;
        let mut s = Search::new(2, 4);
        let on = |s: &mut Search, id: u64, msg: ToPage| s.on_message(id, msg.for_find().unwrap());
        on(&mut s, 1, ToPage::Found { file: 9, total: 1, matches: vec![Found { position: 1, record: None }] });
        assert_eq!(s.results.total, 0, "an older search's message");
        on(
            &mut s,
            2,
            ToPage::Found {
                file: 7,
                total: 2,
                matches: vec![Found { position: 40, record: Some(3) }, Found { position: 90, record: None }],
            },
        );
        assert_eq!(s.selection(), None);
        s.results.step(true);
        assert_eq!(s.selection(), Some((7, 40, 44)));
        on(&mut s, 2, ToPage::Done { ms: 1.0 });
        assert!(s.done);
        on(&mut s, 2, ToPage::Found { file: 8, total: 5, matches: Vec::new() });
        assert_eq!(s.results.total, 2, "nothing after the end");
        let mut e = Search::new(3, 1);
        on(&mut e, 3, ToPage::Error { message: "x.log: reading from byte 0: gone".into() });
        assert_eq!((e.done, e.error.as_deref()), (true, Some("x.log: reading from byte 0: gone")));
    }
}
