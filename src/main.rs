//! The `aegis-gitea-mcp` binary: parses the command line and runs one subcommand.
//!
//! Exit codes live here only: 0 success, 1 failure (or an error result), 2 usage errors.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    cli::init_tracing(&args);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(code) => code.into(),
        Err(e) => {
            eprintln!("error: {e:#}");
            cli::Exit::from_error(&e).into()
        }
    }
}
