use clap::Parser;

fn main() -> std::process::ExitCode {
    bench_lance::started();
    bench_lance::main(bench_lance::cli::Cli::parse())
}
