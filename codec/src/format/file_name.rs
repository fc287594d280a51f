//! File names inside a shard directory.
//!
//! ```text
//! 00000000000000000042.log     segment 42 (20 zero-padded decimal digits)
//! 00000000000000000042.index   its sparse index
//! epochs                       the generation history
//!
//! the engine's own, beside them:
//! writer.lock                               the single writer's lock (flock), holding its pid
//! <any name above>.tmp                      a file being written (temp → fsync → rename)
//! 00000000000000000042.log.cut-1064         evidence: the bytes recovery cut at byte 1064
//! 00000000000000000042.log.cut-1064.json    why they were cut
//! 00000000000000000042.log.cut-1064-2       a second cut at the same byte (never replaced)
//! ```
//!
//! A file name is a segment *id*, not an offset: the base offset is read from
//! the segment's header. Names are zero-padded so lexicographic and numeric
//! order agree, but readers parse the number and sort on it.
//!
//! [`classify`] is the one decision about a directory entry's name: the
//! engine touches only names it classifies as its own, and everything else
//! is "not a Felix file", never read by the engine and never changed.
//!
//! # Example
//!
//! ```
//! use felix_codec::format::file_name::{classify, parse_file_name, segment_file_name, EntryName, FileKind};
//! assert_eq!(segment_file_name(42), "00000000000000000042.log");
//! assert_eq!(parse_file_name("00000000000000000042.index"), Some((42, FileKind::Index)));
//! assert_eq!(classify("writer.lock"), EntryName::Lock);
//! assert_eq!(classify("notes.txt"), EntryName::Foreign);
//! ```

use alloc::format;
use alloc::string::String;

/// Digits in a segment id.
pub const ID_DIGITS: usize = 20;
/// Extension of segment files.
pub const SEGMENT_EXT: &str = "log";
/// Extension of index files.
pub const INDEX_EXT: &str = "index";
/// Name of the epochs file.
pub const EPOCHS_FILE_NAME: &str = "epochs";
/// Name of the writer's lock file in a shard directory.
pub const LOCK_FILE_NAME: &str = "writer.lock";
/// Suffix of the engine's temporary files (`<final name>.tmp`).
pub const TEMPORARY_SUFFIX: &str = ".tmp";
/// Marker between a segment's name and the cut position in an evidence file.
pub const EVIDENCE_MARKER: &str = ".cut-";
/// The name a damaged epochs file is kept under when the engine writes a new
/// one (`epochs.damaged`, then `epochs.damaged-2`, …).
pub const DAMAGED_EPOCHS_NAME: &str = "epochs.damaged";
/// Suffix of an evidence file's note.
pub const EVIDENCE_NOTE_SUFFIX: &str = ".json";

/// The kind of a file in a shard directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum FileKind {
    /// `*.log`, magic `FLSG`.
    Segment,
    /// `*.index`, magic `FLSI`.
    Index,
    /// `epochs`, magic `FLEP`.
    Epochs,
    /// Anything else.
    Unknown,
}

impl FileKind {
    /// `"segment"`, `"index"`, `"epochs"` or `"unknown"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Segment => "segment",
            Self::Index => "index",
            Self::Epochs => "epochs",
            Self::Unknown => "unknown",
        }
    }

    /// The kind a conventional file name announces (`*.log`, `*.index`, `epochs`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        if name == EPOCHS_FILE_NAME {
            Some(Self::Epochs)
        } else if name.strip_suffix(".log").is_some_and(|s| !s.is_empty()) {
            Some(Self::Segment)
        } else if name.strip_suffix(".index").is_some_and(|s| !s.is_empty()) {
            Some(Self::Index)
        } else {
            None
        }
    }

    /// The kind the first bytes announce.
    #[must_use]
    pub fn from_magic(first: &[u8]) -> Self {
        match first.get(..4) {
            Some(m) if m == crate::format::segment_header::SEGMENT_MAGIC => Self::Segment,
            Some(m) if m == crate::format::index::INDEX_MAGIC => Self::Index,
            Some(m) if m == crate::format::epochs::EPOCHS_MAGIC => Self::Epochs,
            _ => Self::Unknown,
        }
    }

    /// The decision the CLI and the browser share: the conventional name
    /// first, the magic otherwise.
    #[must_use]
    pub fn classify(name: &str, first: &[u8]) -> Self {
        Self::from_name(name).unwrap_or_else(|| Self::from_magic(first))
    }
}

/// What the first bytes of a file look like, for notes such as
/// "these bytes look like an index file".
#[must_use]
pub fn describe_magic(first: &[u8]) -> &'static str {
    match FileKind::from_magic(first) {
        FileKind::Segment => "a Felix segment (FLSG)",
        FileKind::Index => "a Felix index (FLSI)",
        FileKind::Epochs => "a Felix epochs file (FLEP)",
        FileKind::Unknown if first.get(..4) == Some(&crate::WIRE_MAGIC[..]) => "a felix-wire network frame (FLX1)",
        FileKind::Unknown if first.iter().all(|b| *b == 0) => "zeros",
        FileKind::Unknown => "nothing Felix knows (no FLSG, FLSI, FLEP or FLX1 magic)",
    }
}

/// `00000000000000000042.log`.
#[must_use]
pub fn segment_file_name(id: u64) -> String {
    format!("{id:020}.{SEGMENT_EXT}")
}

/// `00000000000000000042.index`.
#[must_use]
pub fn index_file_name(id: u64) -> String {
    format!("{id:020}.{INDEX_EXT}")
}

/// Parses a segment or index file name back to its id and kind. Only the
/// canonical form is accepted: exactly 20 ASCII digits and the extension.
#[must_use]
pub fn parse_file_name(name: &str) -> Option<(u64, FileKind)> {
    let (stem, kind) = if let Some(stem) = name.strip_suffix(".log") {
        (stem, FileKind::Segment)
    } else if let Some(stem) = name.strip_suffix(".index") {
        (stem, FileKind::Index)
    } else {
        return None;
    };
    if stem.len() != ID_DIGITS || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse::<u64>().ok().map(|id| (id, kind))
}

/// What a directory entry's name makes it, as far as the engine is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryName {
    /// `NNN.log`.
    Segment(u64),
    /// `NNN.index`.
    Index(u64),
    /// `epochs`.
    Epochs,
    /// `writer.lock`.
    Lock,
    /// A temporary the engine writes (`<one of its names>.tmp`); recovery removes it.
    Temporary,
    /// Evidence recovery keeps: the bytes it cut (`NNN.log.cut-P[-K]`) or their note (`….json`).
    Evidence {
        /// The segment the bytes were cut from.
        segment_id: u64,
        /// The byte position they were cut at.
        position: u64,
    },
    /// A damaged epochs file the engine replaced, kept as evidence
    /// (`epochs.damaged[-K]`): never read as the history, never replaced.
    DamagedEpochs,
    /// Any other name: not a Felix file. The engine never reads, changes or removes it.
    Foreign,
}

/// Classifies a directory entry's name. Only the canonical forms count.
#[must_use]
pub fn classify(name: &str) -> EntryName {
    if name == EPOCHS_FILE_NAME {
        return EntryName::Epochs;
    }
    if name == LOCK_FILE_NAME {
        return EntryName::Lock;
    }
    if let Some((id, kind)) = parse_file_name(name) {
        return match kind {
            FileKind::Index => EntryName::Index(id),
            _ => EntryName::Segment(id),
        };
    }
    if let Some((segment_id, position)) = parse_evidence_name(name) {
        return EntryName::Evidence { segment_id, position };
    }
    if let Some(rest) = name.strip_prefix(DAMAGED_EPOCHS_NAME) {
        let attempt = rest.strip_prefix('-');
        let canonical = |a: &str| {
            a.len() <= 10 && !a.starts_with('0') && a.bytes().all(|b| b.is_ascii_digit()) && a.parse::<u32>().is_ok_and(|n| n >= 2)
        };
        if rest.is_empty() || attempt.is_some_and(canonical) {
            return EntryName::DamagedEpochs;
        }
    }
    if let Some(target) = name.strip_suffix(TEMPORARY_SUFFIX) {
        let ours = matches!(classify(target), EntryName::Segment(_) | EntryName::Index(_) | EntryName::Epochs | EntryName::Evidence { .. });
        if ours && !target.ends_with(TEMPORARY_SUFFIX) {
            return EntryName::Temporary;
        }
    }
    EntryName::Foreign
}

/// The temporary a file is written through: `<name>.tmp`.
#[must_use]
pub fn temporary_name(name: &str) -> String {
    format!("{name}{TEMPORARY_SUFFIX}")
}

/// How many names (`-K` suffixes) recovery tries for one piece of evidence
/// before it gives up: evidence is never replaced.
pub const MAX_EVIDENCE_ATTEMPTS: u32 = 10_000;

/// The name recovery keeps a piece of evidence under: the first of
/// `name_for(1)`, `name_for(2)`, … `name_for(MAX_EVIDENCE_ATTEMPTS)` that is
/// not `taken` in the directory (the evidence names present there), nor its
/// note's name (as the engine picks it when it keeps the bytes), so a plan
/// made from a listing names the file the run writes. `None` when every
/// one of them (or its note) is taken: evidence is never replaced, so the
/// plan refuses the shard (`evidence-names-exhausted`), as the run would.
#[must_use]
pub fn first_free_evidence_name(name_for: impl Fn(u32) -> String, taken: &alloc::collections::BTreeSet<&str>) -> Option<String> {
    if taken.is_empty() {
        return Some(name_for(1));
    }
    (1..=MAX_EVIDENCE_ATTEMPTS)
        .map(&name_for)
        .find(|name| !taken.contains(name.as_str()) && !taken.contains(evidence_note_name(name).as_str()))
}

/// The evidence file for bytes cut from segment `id` at `position`;
/// `attempt` 1 is the plain name, later attempts (when that name is taken:
/// evidence is never replaced) add `-attempt`.
#[must_use]
pub fn evidence_name(id: u64, position: u64, attempt: u32) -> String {
    if attempt <= 1 {
        format!("{}{EVIDENCE_MARKER}{position}", segment_file_name(id))
    } else {
        format!("{}{EVIDENCE_MARKER}{position}-{attempt}", segment_file_name(id))
    }
}

/// The name an orphaned index's bytes are kept under when recovery removes
/// it: `NNN.index.cut-0` for `attempt` 1, `NNN.index.cut-0-<attempt>` when
/// that is taken.
#[must_use]
pub fn index_evidence_name(id: u64, attempt: u32) -> String {
    if attempt <= 1 {
        format!("{}{EVIDENCE_MARKER}0", index_file_name(id))
    } else {
        format!("{}{EVIDENCE_MARKER}0-{attempt}", index_file_name(id))
    }
}

/// The name a damaged epochs file is kept under: `epochs.damaged` for
/// `attempt` 1, `epochs.damaged-<attempt>` when that is taken.
#[must_use]
pub fn damaged_epochs_name(attempt: u32) -> String {
    if attempt <= 1 {
        DAMAGED_EPOCHS_NAME.into()
    } else {
        format!("{DAMAGED_EPOCHS_NAME}-{attempt}")
    }
}

/// The note beside an evidence file: `<evidence>.json`.
#[must_use]
pub fn evidence_note_name(evidence: &str) -> String {
    format!("{evidence}{EVIDENCE_NOTE_SUFFIX}")
}

/// Parses an evidence file's (or its note's) name back to the segment id
/// and position: bytes cut from a segment (`NNN.log.cut-P[-K]`) or an
/// orphaned index kept whole (`NNN.index.cut-0[-K]`).
#[must_use]
pub fn parse_evidence_name(name: &str) -> Option<(u64, u64)> {
    let name = name.strip_suffix(EVIDENCE_NOTE_SUFFIX).unwrap_or(name);
    let (file, rest) = name.split_once(EVIDENCE_MARKER)?;
    let (id, kind) = parse_file_name(file)?;
    if kind == FileKind::Index && !(rest == "0" || rest.starts_with("0-")) {
        return None;
    }
    let (position, attempt) = match rest.split_once('-') {
        Some((p, a)) => (p, Some(a)),
        None => (rest, None),
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(position) || attempt.is_some_and(|a| !digits(a)) {
        return None;
    }
    Some((id, position.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn the_first_free_evidence_name_skips_names_and_notes_already_present() {
        let name_for = |k| evidence_name(7, 94, k);
        let set = |names: &[&'static str]| names.iter().copied().collect::<alloc::collections::BTreeSet<&str>>();
        let first = |name_for: &dyn Fn(u32) -> String, taken| first_free_evidence_name(name_for, taken);
        let none = set(&[]);
        assert_eq!(first(&name_for, &none).as_deref(), Some("00000000000000000007.log.cut-94"));
        let present = set(&["00000000000000000007.log.cut-94", "00000000000000000007.log.cut-94-2.json"]);
        assert_eq!(first(&name_for, &present).as_deref(), Some("00000000000000000007.log.cut-94-3"), "a note alone takes its name too");
        let other = set(&["00000000000000000007.log.cut-95"]);
        assert_eq!(first(&name_for, &other).as_deref(), Some("00000000000000000007.log.cut-94"));
        let index = set(&["00000000000000000003.index.cut-0"]);
        assert_eq!(first(&|k| index_evidence_name(3, k), &index).as_deref(), Some("00000000000000000003.index.cut-0-2"));
    }

    #[test]
    fn no_name_is_given_when_every_name_or_its_note_is_taken() {
        let name_for = |k| evidence_name(7, 94, k);
        let names: Vec<String> = (1..=MAX_EVIDENCE_ATTEMPTS).map(name_for).collect();
        let notes: Vec<String> = names.iter().map(|n| evidence_note_name(n)).collect();
        for taken in [&names, &notes] {
            let set: alloc::collections::BTreeSet<&str> = taken.iter().map(String::as_str).collect();
            assert_eq!(first_free_evidence_name(name_for, &set), None, "never a taken name");
            // One name freed (the last one tried): that one, never the first.
            let mut one_free = set.clone();
            one_free.remove(taken.last().map(String::as_str).unwrap_or_default());
            assert_eq!(first_free_evidence_name(name_for, &one_free).as_deref(), Some("00000000000000000007.log.cut-94-10000"));
        }
    }

    #[test]
    fn names_round_trip_and_sort_numerically() {
        assert_eq!(segment_file_name(42), "00000000000000000042.log");
        assert_eq!(parse_file_name(&segment_file_name(u64::MAX)), Some((u64::MAX, FileKind::Segment)));
        assert_eq!(parse_file_name(&index_file_name(7)), Some((7, FileKind::Index)));
        assert!(segment_file_name(9) < segment_file_name(10));
    }

    #[test]
    fn non_canonical_names_are_refused() {
        for name in ["42.log", "0000000000000000004a.log", "99999999999999999999.log", "x.index", "epochs", "+0000000000000000042.log"] {
            assert_eq!(parse_file_name(name), None, "{name}");
        }
    }

    #[test]
    fn only_the_engines_own_names_are_its_own() {
        use EntryName as E;
        let cases: [(&str, EntryName); 26] = [
            ("00000000000000000007.log", E::Segment(7)),
            ("00000000000000000007.index", E::Index(7)),
            ("epochs", E::Epochs),
            ("writer.lock", E::Lock),
            ("00000000000000000007.log.tmp", E::Temporary),
            ("00000000000000000007.index.tmp", E::Temporary),
            ("epochs.tmp", E::Temporary),
            ("00000000000000000007.log.cut-94", E::Evidence { segment_id: 7, position: 94 }),
            ("00000000000000000007.log.cut-94.json", E::Evidence { segment_id: 7, position: 94 }),
            ("00000000000000000007.log.cut-94-3", E::Evidence { segment_id: 7, position: 94 }),
            ("00000000000000000007.log.cut-94.tmp", E::Temporary),
            ("00000000000000000007.index.cut-0", E::Evidence { segment_id: 7, position: 0 }),
            ("00000000000000000007.index.cut-0-2.json", E::Evidence { segment_id: 7, position: 0 }),
            ("00000000000000000007.index.cut-0.tmp", E::Temporary),
            ("00000000000000000007.index.cut-5", E::Foreign),
            ("00000000000000000007.index.cut-00", E::Foreign),
            ("notes.tmp", E::Foreign),
            ("server.log", E::Foreign),
            ("00000000000000000007.log.tmp.tmp", E::Foreign),
            ("00000000000000000007.log.cut-x", E::Foreign),
            ("7.log.cut-94", E::Foreign),
            ("epochs.damaged", E::DamagedEpochs),
            ("epochs.damaged-2", E::DamagedEpochs),
            ("epochs.damaged-1", E::Foreign),
            ("epochs.damaged-02", E::Foreign),
            ("epochs.damaged.tmp", E::Foreign),
        ];
        for (name, want) in cases {
            assert_eq!(classify(name), want, "{name}");
        }
        assert_eq!(evidence_name(7, 94, 1), "00000000000000000007.log.cut-94");
        assert_eq!(evidence_name(7, 94, 2), "00000000000000000007.log.cut-94-2");
        assert_eq!(evidence_note_name("a"), "a.json");
        assert_eq!(
            (index_evidence_name(7, 1).as_str(), index_evidence_name(7, 2).as_str()),
            ("00000000000000000007.index.cut-0", "00000000000000000007.index.cut-0-2")
        );
        assert_eq!(temporary_name("epochs"), "epochs.tmp");
        assert_eq!((damaged_epochs_name(1).as_str(), damaged_epochs_name(3).as_str()), ("epochs.damaged", "epochs.damaged-3"));
    }

    #[test]
    fn kind_comes_from_the_name_first_then_the_magic() {
        assert_eq!(FileKind::classify("a.log", b"FLSI"), FileKind::Segment);
        assert_eq!(FileKind::classify("blob", b"FLSI...."), FileKind::Index);
        assert_eq!(FileKind::classify("blob", b"FLEP"), FileKind::Epochs);
        assert_eq!(FileKind::classify("blob", b"FL"), FileKind::Unknown);
        assert_eq!(FileKind::classify(".log", b"FLSG"), FileKind::Segment);
    }
}
