use clap::Parser;

fn main() -> std::process::ExitCode {
    bench_lance::started();
    match bench_lance::cli::Cli::try_parse() {
        Ok(cli) => bench_lance::main(cli),
        Err(e) => bench_lance::usage_error(e),
    }
}
