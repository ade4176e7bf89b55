//! Harness benchmark helper (see `scripts/figures/harness-bench.sh` and `bench_lance::harness`):
//! the same commits straight through `DirectoryNamespace` in one process, and golden
//! bootstrap speed and memory.
//!
//!   harness direct DIR ROWS OPS INLINE [counted]
//!   harness golden DIR ROWS

fn main() {
    bench_lance::harness::main();
}
