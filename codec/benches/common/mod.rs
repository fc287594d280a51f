//! What the codec's benches share.

use std::time::{Duration, Instant};

/// Best of `n` runs.
pub fn best(n: usize, mut f: impl FnMut()) -> Duration {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}
