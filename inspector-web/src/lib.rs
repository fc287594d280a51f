//! # felix-inspector
//!
//! The browser inspector: a thin Yew shell ([`app`], [`components`],
//! [`web`], the worker's driver and runner in [`worker`]) over plain state
//! ([`state`]) and pure logic ([`model`], [`share`], [`ui`], the worker's
//! protocol), all tested natively. Files are read in the page with
//! `Blob.slice`, in chunks, and fed to `felix-codec`'s incremental scanners;
//! nothing is uploaded anywhere.

// Yew props hold callbacks, which have no useful Debug.
#![allow(missing_debug_implementations)]

pub mod app;
pub mod components;
pub mod model;
pub mod share;
pub mod state;
pub mod ui;
pub mod web;
pub mod worker;
