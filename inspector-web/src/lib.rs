//! # felix-inspector
//!
//! The browser inspector: a thin Yew shell ([`app`], [`components`]) over
//! pure logic ([`logic`]) tested natively. Files are read in the page with
//! `Blob.slice`, in chunks, and fed to `felix-codec`'s incremental scanners;
//! nothing is uploaded anywhere.

// Yew props hold callbacks and dispatchers, which have no useful Debug.
#![allow(missing_debug_implementations)]

pub mod app;
pub mod components;
pub mod driver;
pub mod logic;
pub mod web;
