//! The `fsarena` binary: parse the command line, call the library, map errors to exit codes.

use clap::Parser;
use fsarena::cli::{Cli, Command};
use fsarena::error::{exit, exit_code};
use fsarena::{plan::Plan, report, run};

fn main() {
    let cli = Cli::parse();
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fsarena: error: {e:#}");
            exit_code(&e)
        }
    };
    std::process::exit(code);
}

fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::List => {
            print!("{}", fsarena::list::render());
            Ok(exit::OK)
        }
        Command::Cleanup(a) => {
            let lines = fsarena::state::cleanup(&a.image_dir)?;
            if lines.is_empty() {
                println!("nothing to clean up in {}", a.image_dir.display());
            }
            lines.iter().for_each(|l| println!("{l}"));
            Ok(if lines.iter().any(|l| l.starts_with("could not")) {
                exit::FAILURE
            } else {
                exit::OK
            })
        }
        Command::Run(a) => {
            let a = *a;
            let plan = Plan::from_args(&a)?;
            fsarena::signals::install()?;
            let progress: &dyn run::Progress = if plan.quiet {
                &run::Silent
            } else {
                &run::StderrProgress
            };
            let result = run::execute(&plan, std::env::args().collect(), progress)?;
            print!("{}", report::terminal::render(&result));
            if let Some(path) = &plan.json {
                std::fs::write(path, report::json::export(&result)?)
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            }
            Ok(match result.status.as_str() {
                "complete" => exit::OK,
                "interrupted" => exit::INTERRUPTED,
                _ => exit::FAILURE,
            })
        }
    }
}
