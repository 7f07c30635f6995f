//! The `wpd` command line: `wpd summarize`, `wpd dump`.

use clap::{Parser, Subcommand};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use wpd::error::{Error, Result};
use wpd::timing::Timings;
use wpd_summary::{Kind, ModuleSummary};

#[derive(Parser)]
#[command(name = "wpd", version, about = "Link-time whole-program devirtualizer for C++ (clang ThinLTO)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize bitcode objects and archives into `.wpds` files.
    Summarize {
        /// Bitcode objects (`-flto=thin`) or archives of them.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output folder (default: beside each input).
        #[arg(short = 'o', long = "output-dir")]
        out_dir: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(short = 'j', long = "jobs")]
        jobs: Option<usize>,
        /// Print per-phase wall times on stderr.
        #[arg(long)]
        time: bool,
    },
    /// Print a `.wpds` summary as canonical JSON.
    Dump {
        /// The file to print.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wpd: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Summarize { inputs, out_dir, jobs, time } => summarize(&inputs, out_dir, jobs, time),
        Command::Dump { file } => dump(&file),
    }
}

fn summarize(inputs: &[PathBuf], out_dir: Option<PathBuf>, jobs: Option<usize>, time: bool) -> Result<()> {
    let mut timings = Timings::default();
    if let Some(dir) = &out_dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::at(dir.display().to_string(), e.to_string()))?;
    }
    let summaries = wpd::summarize_inputs(inputs, jobs, &mut timings)?;
    // Nothing is written until every input has been summarized, so a failed
    // run leaves no summary behind; each file is written atomically.
    let paths: Vec<PathBuf> = summaries.iter().map(|s| wpd::summary_path(s, out_dir.as_deref())).collect();
    let mut seen = HashSet::new();
    for (p, s) in paths.iter().zip(&summaries) {
        if !seen.insert(p.clone()) {
            return Err(Error::at(
                &s.module.name,
                format!("another input also maps to {}; use separate -o folders", p.display()),
            ));
        }
    }
    timings.phase("write", || -> Result<()> {
        for (p, s) in paths.iter().zip(&summaries) {
            wpd_summary::write_file_atomic(Kind::Summary, s, p)?;
        }
        Ok(())
    })?;
    if time {
        eprint!("{}", timings.render());
    }
    Ok(())
}

fn dump(file: &std::path::Path) -> Result<()> {
    let summary: ModuleSummary = wpd_summary::read_file(Kind::Summary, file)?;
    let text = serde_json::to_string_pretty(&summary.to_json()).map_err(|e| Error::msg(e.to_string()))?;
    println!("{text}");
    Ok(())
}
