//! Harness benchmark helper (see `scripts/figures/harness-bench.sh` and `bench::harness`):
//! the same commits straight through `DirectoryNamespace` in one process, and golden
//! bootstrap speed and memory.
//!
//!   harness direct DIR ROWS OPS INLINE [counted]
//!   harness golden DIR ROWS

fn main() {
    bench::harness::main();
}
