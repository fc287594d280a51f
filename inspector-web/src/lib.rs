//! # felix-inspector
//!
//! The browser inspector: a thin Yew shell ([`app`], [`components`],
//! [`runner`], [`web`]) over plain state ([`state`]) and pure logic
//! ([`logic`]), both tested natively. Files are read in the page with
//! `Blob.slice`, in chunks, and fed to `felix-codec`'s incremental scanners;
//! nothing is uploaded anywhere.

// Yew props hold callbacks, which have no useful Debug.
#![allow(missing_debug_implementations)]

pub mod app;
pub mod components;
pub mod driver;
pub mod logic;
pub mod runner;
pub mod state;
pub mod web;
