//! The command line as the shell and `man` see it: [`command`] is clap's definition of
//! [`Cli`] with the values fsarena knows at run time (workloads and their parameters from
//! the registry, filesystems, suites, policies) attached, so that `--help`, the shell
//! completions (`fsarena completions bash|zsh|fish`, clap_complete) and the manual page
//! (`fsarena man`, clap_mangen) all come from one definition and cannot drift apart.

use crate::cli::Cli;
use anyhow::{Context, Result};
use clap::builder::{PossibleValue, TypedValueParser};
use clap::CommandFactory;
use std::ffi::OsStr;
use std::path::Path;

/// A parser that accepts any UTF-8 text but offers `values` to help and completions:
/// fsarena checks these arguments itself (a workload string carries parameters, `--fs` a
/// list), with messages that say what is valid.
#[derive(Clone)]
struct Offered(&'static [&'static str]);

impl TypedValueParser for Offered {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        value
            .to_str()
            .map(str::to_owned)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8).with_cmd(cmd))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.0.iter().map(|v| PossibleValue::new(*v))))
    }
}

/// Every workload name, then every `NAME:PARAM=` prefix, in registry order.
fn workload_words() -> &'static [&'static str] {
    static WORDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        let reg = crate::workload::registry();
        let names = reg.iter().map(|w| w.name);
        let params = reg.iter().flat_map(|w| {
            w.params
                .iter()
                .map(move |p| &*format!("{}:{}=", w.name, p.name).leak())
        });
        names.chain(params).collect()
    })
}

/// Filesystem names `--fs` takes.
fn fs_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let fs = crate::provision::fs::FsType::ALL.iter().map(|f| f.name());
        fs.chain(["tmpfs"]).collect()
    })
}

/// Suite names `--suite` takes.
fn suite_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(crate::suite::names)
}

/// clap's definition of the command line, with the values fsarena knows attached.
pub fn command() -> clap::Command {
    decorated(true)
}

/// [`command`], its offered values hidden from `--help` (where the text lists them
/// shorter) when `hide`; completion scripts are made with them shown, as some shells'
/// generators leave hidden values out.
fn decorated(hide: bool) -> clap::Command {
    let names: Vec<&str> = crate::workload::registry().iter().map(|w| w.name).collect();
    let workloads_help = format!(
        "Workloads, each as NAME or NAME:key=value,... (see `fsarena list` for their \
         parameters). NAME is one of: {}.",
        names.join(", ")
    );
    let cmd = Cli::command().mut_subcommand("setup", |setup| {
        setup.mut_arg("fs", |a| {
            a.value_parser(Offered(fs_names()))
                .hide_possible_values(hide)
        })
    });
    cmd.mut_subcommand("run", |run| {
        run.mut_arg("workloads", |a| {
            a.value_parser(Offered(workload_words()))
                .hide_possible_values(hide)
                .help(workloads_help)
        })
        .mut_arg("fs", |a| {
            a.value_parser(Offered(fs_names()))
                .hide_possible_values(hide)
        })
        .mut_arg("suite", |a| {
            a.value_parser(Offered(suite_names()))
                .hide_possible_values(hide)
        })
        .mut_arg("cache", |a| {
            a.value_parser(Offered(&["cold", "warm", "keep"]))
                .hide_possible_values(hide)
        })
        .mut_arg("sync", |a| {
            a.value_parser(Offered(&["end", "none", "each"]))
                .hide_possible_values(hide)
        })
        .mut_arg("data", |a| {
            a.value_parser(Offered(&["random", "zeros", "text", "compress:"]))
                .hide_possible_values(hide)
        })
        .mut_arg("mpi", |a| {
            a.value_parser(Offered(&["shared", "fleet"]))
                .hide_possible_values(hide)
        })
    })
}

/// The completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut decorated(false), "fsarena", &mut out);
    if shell == clap_complete::Shell::Fish {
        // clap_complete's fish generator completes options only; the workloads are
        // `run`'s positional arguments.
        let words = workload_words().join(" ");
        out.extend(
            format!(
                "complete -c fsarena -n \"__fish_fsarena_using_subcommand run\" -f -a \"{words}\"\n"
            )
            .bytes(),
        );
    }
    out
}

/// The manual page `fsarena.1` (roff), which lists every subcommand.
pub fn man_page() -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command()).render(&mut out)?;
    Ok(out)
}

/// Writes `fsarena.1` and one `fsarena-SUBCOMMAND.1` per subcommand into `dir`; returns
/// the files written.
pub fn write_man_pages(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let cmd = command();
    let mut written = Vec::new();
    let mut write = |name: String, page: clap::Command| -> Result<()> {
        let mut out = Vec::new();
        clap_mangen::Man::new(page).render(&mut out)?;
        let path = dir.join(format!("{name}.1"));
        crate::output::write(&path, &out).with_context(|| path.display().to_string())?;
        written.push(path);
        Ok(())
    };
    write("fsarena".into(), cmd.clone())?;
    // Hidden subcommands (the recorder's daemon) are fsarena's own, not the user's.
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("fsarena-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("fsarena {}", sub.get_name()))
            .version(env!("CARGO_PKG_VERSION"));
        write(name, page)?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_valid_and_offers_every_workload_and_parameter() {
        command().debug_assert();
        let words = workload_words();
        for w in crate::workload::registry() {
            assert!(words.contains(&w.name), "{}", w.name);
            for p in w.params {
                let prefix = format!("{}:{}=", w.name, p.name);
                assert!(words.iter().any(|x| *x == prefix), "{prefix}");
            }
        }
    }

    #[test]
    fn help_lists_the_workloads_and_accepts_parameters() {
        let mut cmd = command();
        let run = cmd.find_subcommand_mut("run").unwrap();
        let help = run.render_long_help().to_string();
        for w in crate::workload::registry() {
            assert!(help.contains(w.name), "{} not in run --help", w.name);
        }
        // The offered values guide; they do not refuse a workload with parameters.
        let m = command()
            .try_get_matches_from(["fsarena", "run", "smallfiles:files=10", "--fs", "ext4,xfs"])
            .unwrap();
        let (_, run) = m.subcommand().unwrap();
        let w: Vec<&String> = run.get_many("workloads").unwrap().collect();
        assert_eq!(w, ["smallfiles:files=10"]);
    }

    #[test]
    fn the_man_page_names_every_subcommand() {
        let page = String::from_utf8(man_page().unwrap()).unwrap();
        for sub in command().get_subcommands().filter(|s| !s.is_hide_set()) {
            assert!(
                page.contains(&format!("fsarena\\-{}", sub.get_name()))
                    || page.contains(&format!("fsarena-{}", sub.get_name())),
                "{} missing from the man page",
                sub.get_name()
            );
        }
    }
}
