//! The report's file identity, computed in the page exactly as
//! `felix-storage inspect --json` computes it: BLAKE3 of the whole file
//! (the `blake3` crate, its wasm32 SIMD path in the browser), and SHA-256
//! too when asked (a shared report that names only a `sha256`, from before
//! the `hash` field, is checked with it). The scan never waits for it: the
//! hash runs in a worker of its own and arrives after the verdict.

use felix_codec::doc::report::{FileHash, FileReport, HashAlgorithm};
use sha2::{Digest, Sha256};

/// A file's hashes, as the report carries them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hashed {
    /// The identity (`hash`): BLAKE3.
    pub hash: FileHash,
    /// SHA-256, when asked for (`sha256`).
    pub sha256: Option<String>,
}

impl Hashed {
    /// Writes the hashes into `report` (its `hash` and `sha256` fields).
    pub fn fill(&self, report: &mut FileReport) {
        report.hash = Some(self.hash.clone());
        report.sha256.clone_from(&self.sha256);
    }
}

/// One file being hashed, fed its bytes in order.
#[derive(Debug, Clone)]
pub struct FileHasher {
    blake3: blake3::Hasher,
    sha256: Option<Sha256>,
    done: u64,
}

impl FileHasher {
    /// A hasher for BLAKE3, and SHA-256 too when `sha256`.
    #[must_use]
    pub fn new(sha256: bool) -> Self {
        Self { blake3: blake3::Hasher::new(), sha256: sha256.then(Sha256::new), done: 0 }
    }

    /// The next bytes of the file.
    pub fn update(&mut self, bytes: &[u8]) {
        self.blake3.update(bytes);
        if let Some(s) = &mut self.sha256 {
            s.update(bytes);
        }
        self.done += bytes.len() as u64;
    }

    /// Bytes hashed so far (where the next ones start).
    #[must_use]
    pub fn bytes_done(&self) -> u64 {
        self.done
    }

    /// The hashes of everything fed.
    #[must_use]
    pub fn finish(self) -> Hashed {
        Hashed {
            hash: FileHash::new(HashAlgorithm::Blake3, self.blake3.finalize().as_bytes()),
            sha256: self.sha256.map(|s| felix_codec::doc::report::hex(&s.finalize())),
        }
    }
}

/// The hashes of `bytes` at once (tests, and the built-in sample).
#[must_use]
pub fn hash_bytes(bytes: &[u8], sha256: bool) -> Hashed {
    let mut h = FileHasher::new(sha256);
    h.update(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashes_are_the_published_ones() {
        // BLAKE3's and SHA-256's published values for "abc", so the page and
        // `inspect --json` (which uses the same crates) cannot disagree on format.
        let h = hash_bytes(b"abc", true);
        assert_eq!(h.hash.algorithm, HashAlgorithm::Blake3);
        assert_eq!(h.hash.value, "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85");
        assert_eq!(h.sha256.as_deref(), Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        assert_eq!(hash_bytes(b"abc", false).sha256, None);
    }

    #[test]
    fn any_chunking_gives_the_same_hashes() {
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        let whole = hash_bytes(&bytes, true);
        for size in [1, 63, 1024, 4096 + 7, 65_536, 299_999] {
            let mut h = FileHasher::new(true);
            for c in bytes.chunks(size) {
                h.update(c);
            }
            assert_eq!(h.bytes_done(), bytes.len() as u64);
            assert_eq!(h.finish(), whole, "chunks of {size}");
        }
    }
}
