//! The simulators' seeded generator: SplitMix64 (Steele, Lea & Flood, 2014).
//! Ten lines, so no crate: a seed must mean the same schedule forever, and
//! no dependency bump may change what it draws.

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// In `lo..=hi`.
    #[allow(dead_code)]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True `percent` times in 100.
    #[allow(dead_code)]
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}
