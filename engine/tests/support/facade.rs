//! Reading a broker log back whole, for the facade's tests.

use felix_engine::broker::{AppendOnlyLog, DiskLog, ReadRange};

/// Every record of `log`, oldest first: `(offset, payload as text)`.
pub async fn read_all(log: &DiskLog) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut at = log.base_offset();
    loop {
        let batch = log.read_range(ReadRange { start: at, max_bytes: 1 << 20 }).await.unwrap();
        let Some(last) = batch.last() else { return out };
        at = last.offset + 1;
        out.extend(batch.into_iter().map(|r| (r.offset, String::from_utf8(r.payload.to_vec()).unwrap())));
    }
}
