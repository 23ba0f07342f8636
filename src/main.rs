//! The `aegis-gitea-mcp` binary: parses the command line and runs one subcommand.
//!
//! Exit codes live here only: 0 success, 1 failure (or an error result), 2 usage errors.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let args = cli::parse();
    if let Err(e) = cli::init_tracing(&args) {
        eprintln!("error: {e}");
        return cli::Exit::Usage.into();
    }
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
            eprintln!("error: {}", cli::error_text(&e));
            cli::Exit::from_error(&e).into()
        }
    }
}

/// `aegis-gitea-mcp catalog | head -1`: when the reader of standard output goes away, the
/// command has simply ended. Rust's `println!` panics on a closed pipe (the runtime ignores
/// SIGPIPE); this turns exactly that panic into a normal exit, every other panic is reported as
/// usual.
fn end_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        // EPIPE is 32 on Linux and macOS; the message is `failed printing to stdout: …`.
        if payload.starts_with("failed printing to std") && payload.contains("(os error 32)") {
            std::process::exit(0);
        }
        default(info);
    }));
}
