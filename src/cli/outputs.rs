//! The output flags of `export`, `report` and `run`, made from the exporter registry
//! ([`crate::report::exporters`]): one flag per format, its help per subcommand, and the
//! outputs given, in registry order.

use crate::report::{exporters, Exporter, Output, Writes};
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Args, FromArgMatches};
use std::path::PathBuf;

/// The subcommands that offer exporters as flags.
#[derive(Clone, Copy)]
enum Offer {
    Export,
    Report,
    Run,
}

/// The exporters `offer` offers, with their help there, in registry order.
fn offered(offer: Offer) -> impl Iterator<Item = (&'static Exporter, &'static str)> {
    exporters().iter().filter_map(move |&e| {
        let help = match offer {
            Offer::Export => e.export,
            Offer::Report => e.report,
            Offer::Run => e.run.as_ref().map(|r| r.help),
        };
        help.map(|h| (e, h))
    })
}

/// The id of an exporter's argument: its flag with `_` for `-` (`bonnie_csv`).
fn arg_id(e: &Exporter) -> String {
    e.flag.replace('-', "_")
}

/// `--FLAG VALUE_NAME` arguments for the exporters `offer` offers, in a group `group`
/// when one is given (`required`, and `multiple` when `value_name` is given).
fn exporter_args(
    cmd: clap::Command,
    offer: Offer,
    value_name: Option<fn(&Exporter) -> &'static str>,
    group: Option<&'static str>,
) -> clap::Command {
    let mut ids = Vec::new();
    let mut cmd = cmd;
    for (e, help) in offered(offer) {
        let arg = Arg::new(arg_id(e)).long(e.flag).help(help);
        let arg = match value_name {
            Some(name) => arg
                .value_name(name(e))
                .value_parser(clap::value_parser!(PathBuf))
                .action(ArgAction::Set),
            None => arg.action(ArgAction::SetTrue),
        };
        ids.push(arg_id(e));
        cmd = cmd.arg(arg);
    }
    match group {
        Some(g) => cmd.group(
            ArgGroup::new(g)
                .required(true)
                .multiple(value_name.is_some())
                .args(ids),
        ),
        None => cmd,
    }
}

/// The exporters `offer` offers that `m` gives, with their paths.
fn given_outputs(offer: Offer, m: &ArgMatches) -> Vec<Output> {
    offered(offer)
        .filter_map(|(exporter, _)| {
            let path = m.get_one::<PathBuf>(&arg_id(exporter))?;
            Some(Output {
                exporter,
                path: path.clone(),
            })
        })
        .collect()
}

/// `export`'s format: one flag per exporter that offers `export` ([`crate::report::Exporter::export`]),
/// exactly one given.
#[derive(Clone, Copy, Debug)]
pub struct ExportFormat(pub &'static Exporter);

impl FromArgMatches for ExportFormat {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        offered(Offer::Export)
            .find(|(e, _)| m.get_flag(&arg_id(e)))
            .map(|(e, _)| ExportFormat(e))
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingRequiredArgument))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for ExportFormat {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        exporter_args(cmd, Offer::Export, None, Some("format"))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `report`'s outputs: `--FLAG FILE` (or `DIR` for an exporter that writes files in a
/// directory) per exporter that offers `report`, one or more given.
#[derive(Clone, Debug)]
pub struct ReportOutputs(pub Vec<Output>);

impl FromArgMatches for ReportOutputs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(given_outputs(Offer::Report, m)))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for ReportOutputs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let value_name = |e: &Exporter| match e.writes {
            Writes::Bytes(_) => "FILE",
            Writes::Files(_) => "DIR",
        };
        exporter_args(cmd, Offer::Report, Some(value_name), Some("output"))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `run`'s outputs: `--FLAG PATH` per exporter that offers `run`, written once the run is
/// over.
#[derive(Clone, Debug, Default)]
pub struct RunOutputs(pub Vec<Output>);

impl FromArgMatches for RunOutputs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(given_outputs(Offer::Run, m)))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for RunOutputs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        exporter_args(cmd, Offer::Run, Some(|_| "PATH"), None)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `--price-on` of `run`, `show` and `export`: the device profiles each phase is priced on.
#[derive(Clone, Debug, Default, Args)]
pub struct PriceOn {
    /// Also predict each phase's time on device profiles (comma-separated): nvme,
    /// sata-ssd, hdd, cloud-3000, measured (the target's own device as probed at the start
    /// of the run) or a FILE.json of one's own. Predictions from the phase's measured
    /// device work and CPU time, shown apart from the measurements (docs/pricing.md)
    #[arg(
        long = "price-on",
        value_name = "PROFILE[,PROFILE]",
        value_delimiter = ','
    )]
    pub price_on: Vec<String>,
}
