//! The `fsarena` binary: parse the command line, call the library, map errors to exit codes.

use clap::FromArgMatches;
use fsarena::cli::{Cli, Command, PlanCommand};
use fsarena::error::{exit, exit_code};
use fsarena::report::Writes;
use fsarena::secret::redact;
use fsarena::store::Store;
use fsarena::{plan::Plan, report, run};

/// `println!` that never panics: `run` must finish or tear down whatever happens to its
/// output (a reader gone away, `| head`), so its lines are written and errors dropped.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `eprintln!` that never panics (see [`say`]), and writes each line with one `write`.
macro_rules! warn {
    ($($t:tt)*) => {{
        fsarena::progress::stderr_line(&format!($($t)*));
    }};
}

fn main() {
    let matches = fsarena::shell::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    fsarena::progress::set_colour(cli.color);
    if !matches!(cli.command, Command::Run(_)) {
        // The reading commands stop quietly when their reader goes away, as coreutils do
        // (killed by SIGPIPE, exit status 141 in the shell); `run` keeps SIGPIPE ignored
        // and drops output nobody reads, so a closed pipe never stops it between a mount
        // and its teardown.
        // SAFETY: signal(2) with the default disposition, before any thread starts.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            warn!("fsarena: error: {}", redact(&format!("{e:#}")));
            exit_code(&e)
        }
    };
    std::process::exit(code);
}

/// The database `--db` names, or the default one.
fn db_path(cli_db: &Option<std::path::PathBuf>) -> std::path::PathBuf {
    cli_db
        .clone()
        .unwrap_or_else(|| fsarena::store::DEFAULT_DB.into())
}

/// Writes an output file whole (temporary file renamed into place).
fn write_file(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    fsarena::output::write(path, bytes)
}

/// Writes `bytes` to standard output; a reader that stops early (`| head`) is not an error.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// `--price-on` of `show` and `export`: the device profiles `run` is priced on for this
/// report (instead of those it was run with, if any were given).
fn price_on(run: &mut fsarena::result::RunResult, specs: &[String]) -> anyhow::Result<()> {
    if !specs.is_empty() {
        fsarena::price::check(specs).map_err(fsarena::error::usage)?;
        run.policy.price_on = specs.to_vec();
    }
    Ok(())
}

/// The predictions of `run` on its `--price-on` profiles, after its measured report.
fn print_predictions(run: &fsarena::result::RunResult) {
    let text = fsarena::price::render(run);
    if !text.is_empty() {
        say!("\n{}", text.trim_end_matches('\n'));
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::RecordServe(a) => {
            fsarena::provision::recorded::daemon::serve(&a.image, &a.log, &a.mountpoint)?;
            Ok(exit::OK)
        }
        Command::History => {
            let store = Store::open_existing(&db_path(&cli.db))?;
            print!("{}", fsarena::report::history::render(&store.history()?));
            Ok(exit::OK)
        }
        Command::Show(a) => {
            let store = Store::open_existing(&db_path(&cli.db))?;
            let mut run = store.load(&a.run)?;
            if a.margin.is_some() {
                run.policy.margin_pct = Some(fsarena::compare::family::margin(a.margin)? * 100.0);
            }
            price_on(&mut run, &a.price.price_on)?;
            print!("{}", report::terminal::render(&run));
            print_predictions(&run);
            Ok(exit::OK)
        }
        Command::Compare(a) => {
            let store = Store::open_existing(&db_path(&cli.db))?;
            let margin = fsarena::compare::family::margin(a.margin)?;
            let (text, code) = fsarena::compare::nway::command(
                &store,
                &a.sides,
                a.fail_if_slower,
                margin,
                &a.gate_phase,
            )?;
            print!("{text}");
            Ok(code)
        }
        Command::Export(a) => {
            if let Some(path) = &a.output {
                fsarena::output::check(path, "-o", &db_path(&cli.db))?;
            }
            let store = Store::open_existing(&db_path(&cli.db))?;
            let mut run = store.load(&a.run)?;
            price_on(&mut run, &a.price.price_on)?;
            let bytes = a.format.0.bytes(&run)?;
            match &a.output {
                Some(path) => write_file(path, &bytes)?,
                None => write_stdout(&bytes)?,
            }
            Ok(exit::OK)
        }
        Command::Report(a) => {
            let outputs = &a.outputs.0;
            for o in outputs
                .iter()
                .filter(|o| matches!(o.exporter.writes, Writes::Bytes(_)))
            {
                fsarena::output::check(&o.path, &o.exporter.option(), &db_path(&cli.db))?;
            }
            let store = Store::open_existing(&db_path(&cli.db))?;
            let mut run = store.load(&a.run)?;
            if a.margin.is_some() {
                run.policy.margin_pct = Some(fsarena::compare::family::margin(a.margin)? * 100.0);
            }
            let mut charts = 0;
            for o in outputs {
                match o.exporter.writes {
                    Writes::Bytes(render) => {
                        write_file(&o.path, &render(&run)?)?;
                        println!("wrote {}", o.path.display());
                    }
                    Writes::Files(write) => charts += write(&run, &o.path)?.len(),
                }
            }
            if charts > 0 {
                println!("wrote {charts} chart files");
            }
            Ok(exit::OK)
        }
        Command::List(a) if a.kernel.is_some() => {
            print!(
                "{}",
                fsarena::list::render_guest(a.kernel.as_deref().unwrap_or(""))?
            );
            Ok(exit::OK)
        }
        Command::List(_) => {
            print!("{}", fsarena::list::render());
            // Estimates come from this host's stored trials; a missing database is not made.
            let path = db_path(&cli.db);
            let host = fsarena::host::host_info().hostname;
            let times = Store::open_read_only(&path)
                .and_then(|s| s.trial_times(&host))
                .unwrap_or_default();
            print!("{}", fsarena::suite::render(&times, 3));
            Ok(exit::OK)
        }
        Command::Import(a) => {
            let run = fsarena::journal::read(&a.file)?;
            let path = db_path(&cli.db);
            let mut store = Store::open(&path)?;
            store.import(&run)?;
            println!(
                "run {} ({} trial(s), {}) stored in {}",
                run.run_id,
                run.trials.len(),
                run.status,
                path.display()
            );
            Ok(exit::OK)
        }
        Command::Completions(a) => {
            write_stdout(&fsarena::shell::completions(a.shell))?;
            Ok(exit::OK)
        }
        Command::Man(a) => {
            match &a.dir {
                Some(dir) => {
                    for path in fsarena::shell::write_man_pages(dir)? {
                        println!("wrote {}", path.display());
                    }
                }
                None => write_stdout(&fsarena::shell::man_page()?)?,
            }
            Ok(exit::OK)
        }
        Command::Setup(a) => {
            fsarena::setup::command(a.fs.as_deref(), a.workload.as_deref(), a.dry_run)
        }
        Command::Doctor(a) => {
            let image_dir = fsarena::plan::imagedir::resolve(&a.image_dir)?;
            let checks = fsarena::doctor::checks(&fsarena::doctor::gather(&image_dir));
            print!("{}", fsarena::doctor::render(&checks));
            Ok(fsarena::doctor::exit_code(&checks))
        }
        Command::Plan(PlanCommand::Check(a)) => {
            let file = fsarena::plan::file::load(&a.file)?;
            let built = fsarena::plan::build::build(&file, &Default::default())?;
            let programs = fsarena::plan::programs::of(&built.plan);
            if a.json {
                let json = fsarena::plan::programs::json(&programs);
                println!("{}", redact(&serde_json::to_string_pretty(&json)?));
                return Ok(exit::OK);
            }
            let width = fsarena::report::fit::width();
            let fits = |line: &str| fsarena::report::fit::wrap(line, width, 4);
            print!("{}", built.plan.describe(width));
            println!();
            for p in &built.host_problems {
                let p_text = redact(&format!("{p:#}"));
                println!(
                    "{}",
                    fits(&format!(
                        "warning: this host cannot run it as it is: {p_text}"
                    ))
                );
            }
            // Estimates come from this host's stored trials; a missing database is not made.
            let path = db_path(&cli.db);
            let store = Store::open_read_only(&path).ok();
            let host = fsarena::host::host_info().hostname;
            let times = store
                .and_then(|s| s.trial_times(&host).ok())
                .unwrap_or_default();
            println!(
                "{}",
                fits(&fsarena::plan::canon::estimate_line(&built.plan, &times))
            );
            println!();
            print!(
                "{}",
                redact(&fsarena::plan::programs::describe(&programs, width))
            );
            println!("{}", fits(&format!("plan {} is valid", a.file.display())));
            Ok(exit::OK)
        }
        Command::Cleanup(a) if a.when_stdin_closes => {
            // An MPI rank's guardian: its rank holds the other end of stdin.
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            let run = a.run.unwrap_or_default();
            // The rank's pipe may close a moment before its lock is released; a trial
            // directory on a shared filesystem may still be written by ranks on other
            // hosts for the seconds mpirun takes to kill them (it keeps its marker until
            // it is empty, so the next try can finish it).
            let since = std::time::Instant::now();
            let mut said = Vec::new();
            let lines = loop {
                let lines = fsarena::state::cleanup_run(&a.image_dir, &run);
                let live = lines.iter().any(|l| l.contains("is still running"));
                let failed = lines.iter().any(|l| l.starts_with("could not"));
                if !(live || failed) || since.elapsed() > std::time::Duration::from_secs(10) {
                    break lines;
                }
                said.extend(lines.into_iter().filter(|l| l.starts_with("undid")));
                std::thread::sleep(std::time::Duration::from_millis(100));
            };
            let lines: Vec<String> = said.into_iter().chain(lines).collect();
            for l in lines {
                warn!("fsarena (guardian of {run}): {l}");
            }
            if let (Some(end), Some(db)) = (&a.end_run, &cli.db) {
                match Store::open_existing(db).and_then(|s| s.end_unfinished(end, "interrupted")) {
                    Ok(true) => warn!(
                        "fsarena (guardian of {run}): rank 0 was killed: run {end} is stored as \
                         interrupted with the trials it finished"
                    ),
                    Ok(false) => {}
                    Err(e) => warn!("fsarena (guardian of {run}): {e:#}"),
                }
            }
            Ok(exit::OK)
        }
        Command::Cleanup(a) => {
            let image_dir = fsarena::plan::imagedir::resolve(&a.image_dir)?;
            let mut lines = match &a.run {
                Some(run) => fsarena::state::cleanup_run(&image_dir, run),
                None => fsarena::state::cleanup(&image_dir)?,
            };
            if a.aged {
                lines.extend(fsarena::state::remove_kept(&image_dir));
            }
            if lines.is_empty() {
                println!("nothing to clean up in {}", image_dir.display());
            }
            lines.iter().for_each(|l| println!("{l}"));
            Ok(if lines.iter().any(|l| l.starts_with("could not")) {
                exit::FAILURE
            } else {
                exit::OK
            })
        }
        Command::Run(a) => {
            let mut a = *a;
            let mut db = cli.db.clone();
            if let Some(serial) = &a.in_guest {
                // In a guest fsarena booted: its scratch disk holds images and database.
                let img = fsarena::guest::inside::prepare_scratch(serial)?;
                fsarena::provision::served::set_in_guest();
                db = img.parent().map(|p| p.join("fsarena.db"));
                a.image_dir = Some(img);
            }
            let args: Vec<String> = std::env::args().collect();
            if fsarena::secret::redact_argv(&args) != args {
                warn!(
                    "fsarena: warning: a secret on fsarena's command line is visible to every \
                     local user in `ps` while it runs (fsarena itself stores and shows it as \
                     ***); a CIFS credentials=FILE or a plan file of mode 0600 keeps it off"
                );
            }
            let mut dist = fsarena::mpi::Dist::start(a.mpi.as_deref(), a.stonewall, a.mpi_timeout)?;
            let plan = Plan::from_args(&a);
            let hash = plan
                .as_ref()
                .map(|p| p.hash())
                .map_err(|e| format!("{e:#}"));
            if let Err(e) = dist.handshake(hash) {
                // Every rank knows the same: rank 0 says it for all, and every rank waits
                // until it has.
                if dist.rank() == 0 {
                    warn!("fsarena: error: {}", redact(&format!("{e:#}")));
                }
                dist.barrier();
                return Ok(exit_code(&e));
            }
            let plan = plan?;
            if a.in_guest.is_some() {
                for line in fsarena::guest::inside::load_modules(&plan)? {
                    warn!("fsarena: warning: {line}");
                }
            }
            let code = match run_command(plan, &db, &dist) {
                Ok(code) => code,
                Err(e) if dist.mode().is_some() => {
                    let e_text = redact(&format!("{e:#}"));
                    warn!("fsarena (rank {}): error: {e_text}", dist.rank());
                    exit_code(&e)
                }
                Err(e) => return Err(e),
            };
            let code = dist.finish(code);
            if dist.must_skip_finalize(code) {
                use std::io::Write;
                let _ = std::io::stdout().flush();
                let _ = std::io::stderr().flush();
                std::process::exit(code);
            }
            Ok(code)
        }
    }
}

/// `--phase-time`: the plan's workloads scaled from this host's stored trials, and what
/// changed said on stderr.
fn scale_to_phase_time(plan: &mut Plan, store: Option<&Store>, goal_s: f64) -> anyhow::Result<()> {
    let host = fsarena::host::host_info().hostname;
    let times = match store {
        Some(s) => s.phase_times(&host)?,
        None => Vec::new(),
    };
    let goal = format!("{goal_s}s");
    for line in fsarena::phase_time::apply(plan, &times, goal_s)? {
        fsarena::progress::stderr_note(&format!("fsarena: --phase-time {goal}: {line}"));
    }
    Ok(())
}

/// `fsarena run` once the plan is built: every rank runs it; only rank 0 stores and
/// prints (under `--mpi`, the other ranks' figures reach it through `dist`).
fn run_command(
    mut plan: Plan,
    cli_db: &Option<std::path::PathBuf>,
    dist: &fsarena::mpi::Dist,
) -> anyhow::Result<i32> {
    let lead = dist.rank() == 0;
    let path = db_path(cli_db);
    let mut store = dist.agree((|| {
        plan.protect_database(&path)?;
        if lead {
            for o in &plan.outputs {
                fsarena::output::check(&o.path, &o.exporter.option(), &path)?;
            }
        }
        fsarena::signals::install()?;
        Ok(match lead.then(|| Store::open(&path)) {
            None => None,
            Some(Ok(s)) => Some(s),
            // The default database is a convenience: without it the run still reports.
            Some(Err(e)) if cli_db.is_none() => {
                let e_text = redact(&format!("{e:#}"));
                warn!("fsarena: warning: results will not be stored: {e_text}");
                None
            }
            Some(Err(e)) => return Err(e),
        })
    })())?;
    if let Some(goal) = plan.phase_time_s {
        scale_to_phase_time(&mut plan, store.as_ref(), goal)?;
    }
    let progress = fsarena::progress::for_stderr(plan.quiet || !lead);
    let result = match &plan.guest {
        Some(guest) => fsarena::guest::execute(
            &plan,
            guest,
            std::env::args().collect(),
            progress.as_ref(),
            store.as_mut(),
            dist,
        ),
        None => run::execute(
            &plan,
            std::env::args().collect(),
            progress.as_ref(),
            store.as_mut(),
            dist,
        ),
    };
    progress.finish();
    let (result, kept) = result?;
    if !lead {
        return Ok(run_exit_code(&result.status));
    }
    say!(
        "{}",
        report::terminal::render(&result).trim_end_matches('\n')
    );
    print_predictions(&result);
    let stored = store.is_some() && kept.store_error.is_none();
    if stored {
        say!("run {} stored in {}", result.run_id, path.display());
    }
    write_outputs(&plan.outputs, &result, store.as_ref())?;
    if let Some(why) = &kept.store_error {
        let recover = match &kept.journal {
            Some(j) => format!(
                "; every trial is in {}: recover with `fsarena --db {} import {}`",
                j.display(),
                path.display(),
                j.display()
            ),
            None => String::new(),
        };
        let what = match kept.unstored.min(result.trials.len()) {
            0 => "its trials are stored, but the run's record is incomplete".to_string(),
            n => format!(
                "{n} of {} trial(s) did not reach the database",
                result.trials.len()
            ),
        };
        warn!(
            "fsarena: error: run {}: {what}: {why}{recover}",
            result.run_id
        );
        return Ok(exit::FAILURE);
    }
    let bad = result.trials.iter().filter(|t| t.status != "ok").count();
    if bad > 0 {
        fsarena::progress::stderr_note(&format!(
            "fsarena: {bad} of {} trial(s) did not succeed (listed at the end of the \
             report); the others were measured",
            result.trials.len()
        ));
    }
    Ok(run_exit_code(&result.status))
}

/// Writes the exporters `run` was given (`--json PATH`, `--html PATH`), in registry order.
fn write_outputs(
    outputs: &[report::Output],
    result: &fsarena::result::RunResult,
    store: Option<&Store>,
) -> anyhow::Result<()> {
    let mut stored = None;
    for o in outputs {
        let after = o.exporter.run.as_ref();
        let run = match (after.is_some_and(|r| r.stored), store) {
            // The stored run when there is one, so a report is the one `report` makes.
            (true, Some(s)) => match &mut stored {
                Some(run) => &*run,
                None => &*stored.insert(s.load(&result.run_id)?),
            },
            _ => result,
        };
        write_file(&o.path, &o.exporter.bytes(run)?)?;
        if after.is_some_and(|r| r.says) {
            say!("report written to {}", o.path.display());
        }
    }
    Ok(())
}

/// The exit code of a run that ended with `status`.
fn run_exit_code(status: &str) -> i32 {
    match status {
        "complete" => exit::OK,
        "interrupted" => exit::INTERRUPTED,
        _ => exit::FAILURE,
    }
}
