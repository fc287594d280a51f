//! File names inside a shard directory.
//!
//! ```text
//! 00000000000000000042.log     segment 42 (20 zero-padded decimal digits)
//! 00000000000000000042.index   its sparse index
//! epochs                       the generation history
//! ```
//!
//! A file name is a segment *id*, not an offset: the base offset is read from
//! the segment's header. Names are zero-padded so lexicographic and numeric
//! order agree, but readers parse the number and sort on it.

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

/// The kind of a file in a shard directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
            Some(m) if m == crate::segment_header::SEGMENT_MAGIC => Self::Segment,
            Some(m) if m == crate::index::INDEX_MAGIC => Self::Index,
            Some(m) if m == crate::epochs::EPOCHS_MAGIC => Self::Epochs,
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn kind_comes_from_the_name_first_then_the_magic() {
        assert_eq!(FileKind::classify("a.log", b"FLSI"), FileKind::Segment);
        assert_eq!(FileKind::classify("blob", b"FLSI...."), FileKind::Index);
        assert_eq!(FileKind::classify("blob", b"FLEP"), FileKind::Epochs);
        assert_eq!(FileKind::classify("blob", b"FL"), FileKind::Unknown);
        assert_eq!(FileKind::classify(".log", b"FLSG"), FileKind::Segment);
    }
}
