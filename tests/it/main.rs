//! Integration tests: the real `bench` binary and the real lance on temp dirs.

#[macro_use]
mod common;
mod campaign;
mod catalog_ops;
mod catalogs;
mod coordinator;
mod cost;
mod counts;
mod faults;
mod findings;
mod history;
mod lance_style;
mod local;
mod network;
mod numbers;
mod order;
mod publish;
mod readme;
mod recovery;
mod report;
mod rest;
mod roles;
mod s3;
mod secrets;
mod shards;
mod slurm;
mod soak;
mod units;
mod variants;
