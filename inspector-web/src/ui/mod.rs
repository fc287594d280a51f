//! Page behaviour below the components, tested natively: what keys mean,
//! virtual scrolling, which answer in flight is still wanted, and messages
//! that quote outside names safely.

pub mod keys;
pub mod latest;
pub mod message;
pub mod scroll;
