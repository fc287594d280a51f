//! Big-endian field access that never panics.
//!
//! Every on-disk integer is big-endian. These helpers read a field at a
//! constant position from a slice whose length the caller has already
//! checked; on a short slice they read the missing bytes as zero instead of
//! panicking (callers check the length first, so that path is never taken on
//! a decode that succeeds).

/// The `N` bytes at `at`, zero-filled where the slice is short.
#[must_use]
#[inline]
pub fn array<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(src) = at.checked_add(N).and_then(|end| bytes.get(at..end)) {
        out.copy_from_slice(src);
    }
    out
}

/// Big-endian `u16` at `at`.
#[must_use]
#[inline]
pub fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(array(bytes, at))
}

/// Big-endian `u32` at `at`.
#[must_use]
#[inline]
pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(array(bytes, at))
}

/// Big-endian `u64` at `at`.
#[must_use]
#[inline]
pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(array(bytes, at))
}

/// Writes `value` big-endian into `out` at `at` (no-op where `out` is short).
#[inline]
pub fn put(out: &mut [u8], at: usize, value: &[u8]) {
    if let Some(dst) = at.checked_add(value.len()).and_then(|end| out.get_mut(at..end)) {
        dst.copy_from_slice(value);
    }
}

/// CRC-32 (IEEE) of `bytes`.
#[must_use]
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(bytes);
    h.finalize()
}

/// A slice of `bytes`, empty where the range falls outside it.
#[must_use]
#[inline]
pub fn slice(bytes: &[u8], start: usize, end: usize) -> &[u8] {
    bytes.get(start..end).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_and_zero_fills_short_slices() {
        assert_eq!(u16_at(&[1, 2], 0), 0x0102);
        assert_eq!(u32_at(&[0, 0, 1, 2], 0), 0x0102);
        assert_eq!(u64_at(&[1], 0), 0, "short slice reads as zero, never panics");
        assert_eq!(u64_at(&[], usize::MAX), 0);
    }
}
