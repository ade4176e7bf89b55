use clap::Parser;

fn main() -> std::process::ExitCode {
    bench::started();
    bench::main(bench::cli::Cli::parse())
}
