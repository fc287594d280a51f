//! Reading a shard back whole through `Shard::read`, for the engine's tests.

use felix_engine::{Shard, StoredRecord};

/// Every visible record of `shard`, oldest first, as `keep` makes it.
#[allow(dead_code)]
pub fn visible<T>(shard: &Shard, keep: impl Fn(&StoredRecord) -> T) -> Vec<T> {
    let mut out = Vec::new();
    let mut at = shard.first_offset();
    loop {
        let batch = shard.read(at, 1 << 20).unwrap();
        let Some(last) = batch.last() else { return out };
        at = last.offset + 1;
        out.extend(batch.iter().map(&keep));
    }
}

/// Every visible record of `shard`, oldest first: `(offset, payload)`.
#[allow(dead_code)]
pub fn read_all(shard: &Shard) -> Vec<(u64, Vec<u8>)> {
    visible(shard, |r| (r.offset, r.payload.to_vec()))
}
