//! What is wrong and what may be done about it: the one [`Finding`] shape
//! (a kind and the byte site it was seen at) and the repair verdict on each,
//! with upstream's repairable-tail rule.

pub mod corruption;
pub mod repair;

pub use corruption::{CorruptionKind, CorruptionSite, Finding, Repair};
pub use repair::{is_repairable_tail, repair_verdict, Place, RepairOptions};
