//! Page behaviour below the components, tested natively: what keys mean,
//! virtual scrolling, which answer in flight is still wanted, and messages
//! that quote outside names safely; and the hooks the components share
//! over them (`hooks`, browser only).

pub mod hooks;
pub mod keys;
pub mod latest;
pub mod message;
pub mod scroll;
