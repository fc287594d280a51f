//! The BLAKE3 identity of a large file, computed as independent subtrees.
//!
//! BLAKE3 is a tree hash: a file splits into subtrees whose chaining values
//! merge into the same root a single pass gives. So one large file's hash
//! becomes several jobs, on as many workers as there are, and `inspect
//! --json` of one big segment no longer waits on one thread hashing every
//! byte. The split follows the tree (`left_subtree_len`, recursively, down
//! to [`PIECE_BYTES`]); the hash is the same for any piece size, so the
//! report stays byte-identical for any number of workers.

use std::collections::BTreeMap;
use std::path::Path;

use blake3::hazmat::{left_subtree_len, merge_subtrees_non_root, merge_subtrees_root, ChainingValue, HasherExt, Mode};

use crate::shard::walk::ReadBuf;
use crate::tools::read::{End, Opened};
use crate::tools::ToolError;

/// Files larger than this are hashed in subtrees of at most this many bytes.
pub(super) const PIECE_BYTES: u64 = 16 << 20;

/// The subtrees `(offset, len)` a file of `size` bytes is hashed in, left to
/// right, each at most `piece` bytes; empty when the file is hashed whole (it
/// is at most `piece` long). `piece` is at least a BLAKE3 chunk.
pub(super) fn pieces(size: u64, piece: u64) -> Vec<(u64, u64)> {
    fn split(offset: u64, len: u64, piece: u64, out: &mut Vec<(u64, u64)>) {
        if len <= piece {
            out.push((offset, len));
        } else {
            let left = left_subtree_len(len);
            split(offset, left, piece, out);
            split(offset + left, len - left, piece, out);
        }
    }
    let mut out = Vec::new();
    if size > piece.max(blake3::CHUNK_LEN as u64) {
        split(0, size, piece.max(blake3::CHUNK_LEN as u64), &mut out);
    }
    out
}

/// The chaining value of bytes `offset..offset + len` of `file` (one of
/// [`pieces`]), read through the tools' read loop into `buf`; `None` when
/// the file ends before (it shrank since its size was taken) or `file` is
/// `None` (the file opened is not the one stamped: another put at its path).
pub(super) fn hash_piece(
    file: Option<Opened<'_>>,
    offset: u64,
    len: u64,
    buf: &mut ReadBuf,
    on_bytes: &mut dyn FnMut(&Path, u64),
) -> Result<Option<ChainingValue>, ToolError> {
    let Some(file) = file else { return Ok(None) };
    let mut hasher = blake3::Hasher::new();
    hasher.set_input_offset(offset);
    let (_, end) = file.read_chunks(offset, len, buf, |chunk| {
        hasher.update(chunk);
        on_bytes(file.path(), chunk.len() as u64);
        Ok(true)
    })?;
    Ok((end == End::Range).then(|| hasher.finalize_non_root()))
}

/// The root hash of a file of `size` bytes from the chaining values of its
/// [`pieces`] (by offset); `None` when one is missing.
pub(super) fn root(size: u64, piece: u64, cvs: &BTreeMap<u64, ChainingValue>) -> Option<blake3::Hash> {
    fn merge(offset: u64, len: u64, piece: u64, cvs: &BTreeMap<u64, ChainingValue>) -> Option<ChainingValue> {
        if len <= piece {
            return cvs.get(&offset).copied();
        }
        let left = left_subtree_len(len);
        Some(merge_subtrees_non_root(&merge(offset, left, piece, cvs)?, &merge(offset + left, len - left, piece, cvs)?, Mode::Hash))
    }
    let piece = piece.max(blake3::CHUNK_LEN as u64);
    if size <= piece {
        return None;
    }
    let left = left_subtree_len(size);
    Some(merge_subtrees_root(&merge(0, left, piece, cvs)?, &merge(left, size - left, piece, cvs)?, Mode::Hash))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// Every split of every awkward size gives the hash a single pass gives.
    #[test]
    fn subtrees_merge_into_the_one_pass_hash() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("00000000000000000000.log");
        for size in [1025u64, 2047, 2048, 2049, 4096, 5000, 65_536, 65_537, 131_071, 299_999, 300_000] {
            std::fs::write(&path, &data[..size as usize]).unwrap();
            for piece in [1024u64, 2048, 4096, 16_384, 65_536] {
                let parts = pieces(size, piece);
                if size <= piece {
                    assert!(parts.is_empty(), "size {size} piece {piece}: hashed whole");
                    continue;
                }
                assert!(parts.len() >= 2, "size {size} piece {piece}");
                assert_eq!(parts.iter().map(|p| p.1).sum::<u64>(), size);
                assert!(parts.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0), "contiguous, left to right");
                let mut cvs = BTreeMap::new();
                let (mut buf, mut seen, io) = (ReadBuf::new(), 0u64, crate::io::OsIo::new());
                for &(offset, len) in &parts {
                    assert!(len <= piece && len > 0);
                    let cv =
                        hash_piece(Opened::open(&io, &path, None).unwrap(), offset, len, &mut buf, &mut |_, n| seen += n).unwrap().unwrap();
                    cvs.insert(offset, cv);
                }
                assert_eq!(seen, size);
                assert_eq!(root(size, piece, &cvs), Some(blake3::hash(&data[..size as usize])), "size {size} piece {piece}");
                // One piece missing: no root (the caller hashes the file in one pass instead).
                cvs.remove(&parts[parts.len() / 2].0);
                assert_eq!(root(size, piece, &cvs), None);
            }
        }
    }

    /// A file no larger than a piece is hashed whole: no pieces, no root from pieces.
    #[test]
    fn a_file_within_one_piece_is_hashed_whole() {
        for size in [0u64, 1, 1024, PIECE_BYTES] {
            assert!(pieces(size, PIECE_BYTES).is_empty());
            assert_eq!(root(size, PIECE_BYTES, &BTreeMap::new()), None);
        }
        assert_eq!(pieces(PIECE_BYTES + 1, PIECE_BYTES), vec![(0, PIECE_BYTES), (PIECE_BYTES, 1)]);
    }

    /// A file that shrank after its size was taken: the piece past its end says so.
    #[test]
    fn a_piece_past_the_end_of_a_shrunk_file_is_none() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("00000000000000000000.log");
        std::fs::write(&path, vec![7u8; 4096]).unwrap();
        let (mut buf, io) = (ReadBuf::new(), crate::io::OsIo::new());
        let open = || Opened::open(&io, &path, None).unwrap();
        assert!(hash_piece(open(), 2048, 2048, &mut buf, &mut |_, _| {}).unwrap().is_some());
        assert_eq!(hash_piece(open(), 4096, 2048, &mut buf, &mut |_, _| {}).unwrap(), None);
        // Ends inside the piece.
        assert_eq!(hash_piece(open(), 3072, 2048, &mut buf, &mut |_, _| {}).unwrap(), None);
        // Another file than the one stamped.
        assert_eq!(hash_piece(None, 0, 2048, &mut buf, &mut |_, _| {}).unwrap(), None);
    }
}
