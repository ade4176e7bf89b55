//! The rules of a sweep over its cells, apart from running them: its checkpoint
//! ([`state`]), the one rule of which cells are done ([`resume`]), which cells a machine of
//! several runs ([`shard`]), in what order a cell's runs go ([`order`]), and what the work left costs in time ([`estimate`]) and in
//! S3 requests ([`requests`]).

pub mod estimate;
pub mod order;
pub mod requests;
pub mod resume;
pub mod shard;
pub mod state;
