use clap::Parser;

fn main() -> std::process::ExitCode {
    bench::main(bench::cli::Cli::parse())
}
