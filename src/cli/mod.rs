//! Command-line definitions (clap). Nothing outside `main` and `plan` sees these types. The
//! output flags of `export`, `report` and `run` are made from [`crate::report::exporters`].

mod outputs;

use clap::{Args, Parser, Subcommand};
pub use outputs::{ExportFormat, PriceOn, ReportOutputs, RunOutputs};
use std::path::PathBuf;

/// Default directory for loop images, mount points and state files.
pub const DEFAULT_IMAGE_DIR: &str = "/var/tmp/fsarena";

/// fsarena: provision real filesystems, run classic and modern workloads on them, repeat,
/// and report honestly.
#[derive(Debug, Parser)]
#[command(
    name = "fsarena",
    version,
    about,
    max_term_width = 100,
    after_help = "Exit status:
  0    success
  1    a trial or command failed
  2    bad usage or input (nothing was touched)
  3    compare --fail-if-slower found a regression
  4    compare --fail-if-slower could not judge a gated figure (and found no regression)
  5    compare --fail-if-slower could not have seen a PCT slowdown (and found none)
  130  interrupted (SIGINT/SIGTERM), after teardown
  141  (SIGPIPE) a reading command's reader went away"
)]
pub struct Cli {
    /// The result database (SQLite). `run` stores every trial in it; `history`, `show`,
    /// `compare` and `export` read it.
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Colour in the progress display (on stderr; tables and exports never hold colour or
    /// other escape sequences): auto (when stderr is a terminal and NO_COLOR is unset),
    /// always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    #[command(subcommand)]
    pub command: Command,
}

/// `--reps`: a number, or `auto` ([`crate::reps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reps {
    Fixed(u32),
    Auto,
}

impl Reps {
    /// The number given, if one was.
    pub fn fixed(self) -> Option<u32> {
        match self {
            Self::Fixed(n) => Some(n),
            Self::Auto => None,
        }
    }
}

fn parse_reps(s: &str) -> Result<Reps, String> {
    if s == "auto" {
        return Ok(Reps::Auto);
    }
    s.parse()
        .map(Reps::Fixed)
        .map_err(|_| "give a whole number of repetitions, or auto".to_string())
}

/// When the progress display may use colour (`--color`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run workloads on filesystems (with no workload: the quick suite on ext4, xfs, btrfs
    /// and tmpfs).
    Run(Box<RunArgs>),
    /// List workloads with their parameters, and filesystems this machine can make.
    List(ListArgs),
    /// Store a run's journal (`<image-dir>/journal/RUN.jsonl`, kept when trials could not
    /// reach the database) or a `run --json` document into the database; importing twice
    /// changes nothing.
    Import(ImportArgs),
    /// Install, with apt-get as root, the programs fsarena drives for some filesystems
    /// (default: the quick suite's ext4, xfs, btrfs and tmpfs): mkfs and checker, losetup,
    /// mount. Installs only what is missing; elsewhere prints the packages to install.
    Setup(SetupArgs),
    /// Undo what a killed run left behind (mounts, loop devices, images, work directories).
    Cleanup(CleanupArgs),
    /// Check this machine for the default run (root, loop devices, mkfs tools, space) and
    /// for what makes figures noisy (governor, load, swap, dirty limits); exit 1 if the
    /// default run cannot work.
    Doctor(DoctorArgs),
    /// List the stored runs: id, date, host, targets, workloads, status.
    History,
    /// Print the tables of a stored run.
    Show(ShowArgs),
    /// Compare two runs, or two targets: medians, ratio B/A with its 95% confidence
    /// interval, and a verdict only where the difference is significant. With one run: all
    /// its targets ranked, phase by phase; with three sides or more: those ranked together.
    Compare(CompareArgs),
    /// Export a stored run as JSON, tidy CSV or Bonnie++ CSV.
    Export(ExportArgs),
    /// Write a stored run's HTML report, and its charts as SVG or PNG files for slides.
    Report(ReportArgs),
    /// Plan files (TOML): `fsarena plan check FILE` validates one and prints what it would
    /// run. See docs/plans.md.
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Print a shell completion script (workloads with their parameters, filesystems,
    /// suites and policies complete): e.g. `fsarena completions bash >
    /// /etc/bash_completion.d/fsarena`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to standard output, e.g. `fsarena man | man -l -`; with
    /// --dir, write fsarena.1 and one fsarena-SUBCOMMAND.1 per subcommand there.
    Man(ManArgs),
    /// The write recorder's FUSE daemon, which fsarena starts itself for a recorded
    /// target (src/provision/recorded/daemon.rs).
    #[command(name = "record-serve", hide = true)]
    RecordServe(RecordServeArgs),
}

#[derive(Debug, Args)]
pub struct RecordServeArgs {
    /// The live image to serve (a path fsarena gives, `/proc/self/fd/N`).
    #[arg(long, value_name = "PATH")]
    pub image: PathBuf,
    /// The new, empty write log.
    #[arg(long, value_name = "PATH")]
    pub log: PathBuf,
    /// Where to mount.
    #[arg(long, value_name = "DIR")]
    pub mountpoint: PathBuf,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write the pages into DIR (e.g. /usr/local/share/man/man1) instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The journal (.jsonl) or JSON document.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// The filesystems to install programs for, comma-separated (e.g. `jfs,f2fs`).
    #[arg(long, value_name = "LIST")]
    pub fs: Option<String>,
    /// The workloads to install programs for, comma-separated (`pgbench`, `db_bench`, or
    /// a suite's name such as `database`): their engines' packages, not the filesystems'.
    #[arg(long, value_name = "LIST")]
    pub workload: Option<String>,
    /// Only say what would be installed.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Validate a plan file and print its expanded matrix (every target with its filesystem,
    /// mkfs and mount options and size), its workloads, an estimated duration from this
    /// host's stored trials, and every command the plan runs as root and every program
    /// fsarena runs for it. Touches no disk; exit status 2 when the plan is invalid.
    Check(PlanCheckArgs),
}

#[derive(Debug, Args)]
pub struct PlanCheckArgs {
    /// The plan file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print JSON instead: `{"valid": true, "commands": [...], "programs": [...]}`, the
    /// plan's own commands (which run as root) and fsarena's programs it will run.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(after_long_help = "\
Method: for each workload, phase and metric that both sides measured (successful repetitions \
only), B/A is the ratio of the geometric means over the repetitions and its 95% confidence \
interval is Welch's t on the logarithms: exp(mean ln B - mean ln A +/- t(0.975, df) * se), \
se = sqrt(s_A^2/n_A + s_B^2/n_B) of the logs (Welch's t), df = min(n_A, n_B) - 1 (Hsu's, which \
keeps the error rate whatever the two spreads). The verdict names a \
direction (faster/slower for rates and times, better/worse for write amplification, more/less \
for CPU% and other figures without a better side) only when the interval excludes 1; with one \
repetition on a side it cannot judge. Figures with zero values have no logarithm: n/a, or \
equal when all are zero. The headline figures (each phase's, the one `show` prints) are \
judged together as one family: Benjamini-Hochberg at a 5% false discovery rate, each headline's \
interval at the family's level; `within +/-X%` (--margin) is a family of its own: two one-sided \
tests of the margin per headline, Benjamini-Hochberg at 5% over them. See docs/compare.md.

Examples:
  fsarena compare last:ext4 last:xfs                  two targets of the last run
  fsarena compare 20261123-0254 last                  two runs, targets matched by name
  fsarena compare BASELINE last --fail-if-slower 10   in CI: exit 3 on a regression
  fsarena compare last                                all targets of the last run, ranked
  fsarena compare RUN1 RUN2 RUN3                      three runs ranked, target by target
  fsarena compare last:ext4 last:xfs 12:ext4          three targets ranked together

Three sides or more are ranked phase by phase on each phase's headline figure, as a run's \
verdict: best first, sides that share a letter not told apart, each other side's ratio to the \
best with its interval; every pair of sides of every phase is one family (Benjamini-Hochberg, \
5% false discovery rate).")]
#[command(after_help = "\
The 95% interval is Welch's t on the logarithms of the repetitions' values (Hsu's degrees of \
freedom, min(n_A, n_B) - 1); see --help for the method.")]
pub struct CompareArgs {
    /// The sides: each a run (id, unique id prefix, or `last`) or RUN:TARGET (`last:ext4`).
    /// Two sides A B: B against A, metric by metric; whole runs are compared target by
    /// target, matched by name, and a target on one side only meets the other run's target
    /// of that name, or its only target. One run: all its targets ranked, phase by phase
    /// (the verdict `run` ends with). Three or more: ranked together phase by phase —
    /// whole runs for each target name they all have, RUN:TARGET sides in one ranking —
    /// each side labelled by its run id's last part or its target, with what sets it apart
    /// (kernel, host, mount options, …) in brackets. A side may be several runs of one
    /// plan joined by `+` (R1+R2+R3, or R1+R2+R3:TARGET): runs as the unit, each run one
    /// repetition worth the geometric mean of its own, so that day-to-day variance is in
    /// the intervals (every side so, at least 2 runs a side, 3 with --fail-if-slower).
    #[arg(value_name = "SIDE", required = true, num_args = 1..)]
    pub sides: Vec<String>,
    /// The CI gate; needs exactly two sides. Each gated figure — each phase's headline, and
    /// scores a workload declares (io500's score_total) — gets an interval of B's loss
    /// ((1 - B/A)·100 for rates, (1 - A/B)·100 for times) at 1 - 2·0.05/k for k gated
    /// figures. Exit 3 when some interval is all loss and reaches PCT (0 ≤ PCT < 100): a
    /// PCT loss is not ruled out; an unchanged B fails so at most 5% of the time. Exit 4
    /// when, without a regression, some gated figure could not be judged (fewer than 3
    /// repetitions a side, a zero or NaN, no successful trial in B, the target set up
    /// differently). Exit 5 when some interval holds both no loss and a PCT loss (cannot
    /// tell); the output names the repetitions per side at which an unchanged B would pass
    /// and a true PCT loss fail 95% of the time. Exit 0 only when every interval rules out
    /// a PCT loss: a B that truly lost PCT passes at most 5% of the time.
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
    /// With --fail-if-slower: gate only this phase's headline figure (WORKLOAD:PHASE, as
    /// the table names them, e.g. job:run; repeat for more), declared before looking at
    /// the results; the other figures are shown at 95% each, to explore. A name that
    /// matches no figure is a usage error.
    #[arg(
        long = "gate-phase",
        value_name = "WORKLOAD:PHASE",
        requires = "fail_if_slower"
    )]
    pub gate_phase: Vec<String>,
    /// The equivalence margin of a ranking, in percent (default 3): a side whose interval
    /// against another lies within ±PCT reads "as fast (within ±PCT%)"; one told apart
    /// reads "n× slower"; the rest "cannot tell".
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run: its id, a unique prefix of it, or `last`.
    #[arg(value_name = "RUN")]
    pub run: String,
    // --json, --csv, --bonnie-csv: the exporters `export` offers, exactly one given.
    #[command(flatten)]
    pub format: ExportFormat,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub price: PriceOn,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run: its id, a unique prefix of it, or `last`.
    #[arg(value_name = "RUN")]
    pub run: String,
    // --html FILE, --png DIR, --svg DIR: the exporters `report` offers, one or more given.
    #[command(flatten)]
    pub outputs: ReportOutputs,
    /// The equivalence margin of the verdict, in percent (default 3): a target whose
    /// interval against the best lies within ±PCT reads "as fast (within ±PCT%)"
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: its id, a unique prefix of it, or `last`.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The equivalence margin of the verdict, in percent (default 3): a target whose
    /// interval against the best lies within ±PCT reads "as fast (within ±PCT%)"
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
    #[command(flatten)]
    pub price: PriceOn,
}

/// Size of loop images and tmpfs when neither `--size` nor the suite gives one.
pub const DEFAULT_SIZE: &str = "4GiB";
/// Repetitions when neither `--reps` nor a plan gives them.
pub const DEFAULT_REPS: u32 = 3;
/// Cache policy when neither `--cache` nor a plan gives one.
pub const DEFAULT_CACHE: &str = "cold";
/// Sync policy when neither `--sync` nor a plan gives one.
pub const DEFAULT_SYNC: &str = "end";
/// Data policy when neither `--data` nor a plan gives one.
pub const DEFAULT_DATA: &str = "random";
/// Seed when neither `--seed` nor a plan gives one.
pub const DEFAULT_SEED: u64 = 42;

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// Workloads, each as NAME or NAME:key=value,... (see `fsarena list`).
    #[arg(value_name = "WORKLOAD")]
    pub workloads: Vec<String>,
    /// Run the plan in FILE (TOML: targets, option matrices, workloads, defaults; see
    /// docs/plans.md). --size, --image-dir, --reps, --cache, --sync, --data and --seed given
    /// here override the plan's `[defaults]`; workloads, --suite, --fs, --dir, --device,
    /// --net, --mkfs-opt and --mount-opt cannot be combined with a plan (the plan names
    /// them).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["workloads", "suite", "fs", "dir", "mkfs_opt", "mount_opt", "device", "net"])]
    pub plan: Option<PathBuf>,
    /// Run the jobs of fio job file FILE (fio's INI format, see docs/fio.md): each group of
    /// jobs fio runs at once (between stonewalls) becomes a `job` workload, in file order.
    /// What fsarena cannot run as fio would is refused, all options at once. The workload
    /// `job:fio=FILE` does the same.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["workloads", "suite", "plan"])]
    pub fio: Option<PathBuf>,
    /// With --fio: run without the options fsarena cannot run as fio would (or as each
    /// refusal says, e.g. random offsets drawn with replacement), and list
    /// them.
    #[arg(long)]
    pub fio_lenient: bool,
    /// With --fio: set fio option OPT (`size=64m`, `runtime=5s`, `norandommap`) in every
    /// job of the file, over what the file says; repeat for more options.
    #[arg(long, value_name = "OPT")]
    pub fio_set: Vec<String>,
    /// With --fio: run only the job section NAME of the file (its global options still
    /// apply), as fio's --section; repeat for more sections.
    #[arg(long, value_name = "NAME")]
    pub fio_section: Vec<String>,
    /// Continue stored run RUN of the same plan: run only the trials it lacks (failed and
    /// interrupted trials again, successful ones are kept). Refused when the expanded plan
    /// differs from the one the run was started with.
    #[arg(long, value_name = "RUN", requires = "plan")]
    pub resume: Option<String>,
    /// Filesystems to make on loop images, comma-separated (ext2,ext3,ext4,xfs,btrfs,tmpfs;
    /// also f2fs,jfs,reiserfs,vfat,exfat,ntfs,nilfs2,bcachefs where `fsarena list` says
    /// this machine can). Default: ext2, ext3, ext4, xfs, btrfs and tmpfs, those this
    /// machine can make (none when only --dir or --net is given).
    #[arg(long, value_name = "LIST")]
    pub fs: Option<String>,
    /// Also run in an existing directory (fsarena works in a fresh subdirectory of it).
    #[arg(long, value_name = "PATH")]
    pub dir: Vec<PathBuf>,
    /// Format and use a real disk or partition (comma-separated for several) with the one
    /// filesystem --fs names, instead of loop images: `--device /dev/sdb --fs xfs` is the
    /// target xfs@sdb. DESTROYS EVERYTHING ON IT; needs --destroy-data-on naming the same
    /// device, and is refused when it is mounted, swap, in use, or holds a filesystem (see
    /// --force). docs/devices.md.
    #[arg(long, value_name = "DEV[,DEV]", value_delimiter = ',')]
    pub device: Vec<PathBuf>,
    /// Confirms that everything on DEV may be destroyed; must name every --device, or every
    /// device target of the --plan (symlinks such as /dev/disk/by-id/… are resolved).
    #[arg(long = "destroy-data-on", value_name = "DEV", value_delimiter = ',')]
    pub destroy_data_on: Vec<PathBuf>,
    /// With --device (or a plan's device targets): format it even when it holds a filesystem
    /// or partition table. Overrides
    /// nothing else (a mounted or busy device is always refused).
    #[arg(long)]
    pub force: bool,
    /// Also run on a network filesystem fsarena mounts and unmounts again, working in a
    /// fresh subdirectory: nfs=server:/export, cifs=//server/share or
    /// sshfs=user@host:/path, each optionally followed by ,OPTS (as for mount -o, or for
    /// sshfs and ssh -o).
    #[arg(long, value_name = "KIND=SOURCE[,OPTS]")]
    pub net: Vec<String>,
    /// Let --net pass sshfs and ssh options that run a program as root (ProxyCommand,
    /// ProxyJump, LocalCommand, ssh_command, sftp_server=PATH, Match, Include, ...;
    /// docs/security.md). Without it they are refused. Only for options you trust.
    #[arg(long)]
    pub allow_ssh_commands: bool,
    /// Size of each loop image and tmpfs (K M G T = powers of 1024, KB MB GB TB = of 1000).
    /// Default: the suite's size (quick: 1GiB), else 4GiB.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Run a suite of workloads for a use case: quick (what `fsarena run` alone runs),
    /// classic, kernel-build, web-cache, mail-server, database, desktop, io500 (the IO500's
    /// phases and scores, 300 s write phases), io500-quick, aged (each filesystem fresh and
    /// aged: --age both unless --age is given), full. `fsarena list` shows their
    /// workloads and how long they take here.
    #[arg(long, value_name = "NAME", conflicts_with = "workloads")]
    pub suite: Option<String>,
    /// Directory for loop images, mount points and the state file [default: /var/tmp/fsarena].
    #[arg(long, value_name = "DIR")]
    pub image_dir: Option<PathBuf>,
    /// Extra mkfs options for one filesystem, e.g. --mkfs-opt 'xfs=-d agcount=120'.
    #[arg(long = "mkfs-opt", value_name = "FS=OPTS")]
    pub mkfs_opt: Vec<String>,
    /// Mount options for one filesystem, e.g. --mount-opt ext4=data=writeback,noatime.
    #[arg(long = "mount-opt", value_name = "FS=OPTS")]
    pub mount_opt: Vec<String>,
    /// Age each loop filesystem before every trial: fill it to PCT% (default 75) and write
    /// X times its capacity in all (default 2) with the profile's creates, changes and
    /// deletes (desktop, source-tree, maildir, database, web-cache; docs/aging.md). All
    /// repetitions start from one aged state; `independent` ages each repetition from its
    /// own seed (recorded), so that the results vary with the aging too, at the cost of
    /// aging once per repetition. `fresh` runs it fresh too; `both` is `fresh` and
    /// `desktop`. Repeatable.
    #[arg(long, value_name = "PROFILE[:fill=PCT,churn=X,independent]|fresh|both")]
    pub age: Vec<String>,
    /// With --age: `on` keeps each aged image (in IMAGE_DIR/aged/) and starts every later
    /// trial from a copy of it; `off` ages every trial anew. `fsarena cleanup --aged`
    /// removes kept images.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    pub age_cache: String,
    /// Repetitions of every workload on every target (each on a freshly made filesystem),
    /// or `auto`: at least 3, then more until every phase's headline figure is known
    /// within --precision on every target or its ranking is decided, up to --max-reps and
    /// within --budget. [default: auto for a suite (and for `fsarena run` alone), with the
    /// suite's budget that `fsarena list` shows; 3 for named workloads and with --mpi]
    #[arg(long, value_name = "N|auto", value_parser = parse_reps)]
    pub reps: Option<Reps>,
    /// With --reps auto: the wanted half-width of each headline figure's 95% interval, in
    /// percent. [default: 5]
    #[arg(long, value_name = "PCT")]
    pub precision: Option<f64>,
    /// Repeat until a difference of PCT percent in any phase's headline figure could be
    /// seen (80% power): between two targets of this run, or by `compare
    /// --fail-if-slower PCT` against another run made the same way. The first 6
    /// repetitions fix how many (at least 12); up to --max-reps, within --budget.
    #[arg(long = "reps-for", value_name = "PCT", conflicts_with_all = ["reps", "precision"])]
    pub reps_for: Option<f64>,
    /// With --reps auto: the most repetitions to run. [default: 10; 30 with --reps-for, which
    /// needs 12 or more]
    #[arg(long = "max-reps", value_name = "N")]
    pub max_reps: Option<u32>,
    /// With --reps auto: the whole run's time, from its start (300s, 10m, 2h): no
    /// repetition starts that would end after it, judged at the pace of the repetitions so
    /// far; never before the third (a run whose three cannot fit says so after the first).
    /// [default: none; a suite's own, e.g. 4m for quick]
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// The equivalence margin of the run's verdict, in percent: a target whose interval
    /// against the best lies within ±PCT reads "as fast (within ±PCT%)"; recorded with
    /// the run, so `show` and `report` judge with it too. [default: 3]
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
    #[command(flatten)]
    pub price: PriceOn,
    /// Scale the workloads so that each phase lasts at least DURATION (0.5s, 2s) on every
    /// target: the parameters their work grows with (files, number, transactions, scale,
    /// cycles, seeks) are raised, the same on every target, from this host's stored trials
    /// of the same workloads; what changed and why is said before the run starts.
    #[arg(long = "phase-time", value_name = "DURATION", conflicts_with_all = ["plan", "mpi"])]
    pub phase_time: Option<String>,
    /// Cache state before each phase: cold (sync and remount; the machine's caches are
    /// dropped too unless the remount empties the target's), warm (read phases run once
    /// unmeasured first), keep (nothing). [default: cold]
    #[arg(long, value_name = "cold|warm|keep")]
    pub cache: Option<String>,
    /// When writes are synced: end (fsync/syncfs inside the timing), none (old Bonnie,
    /// flagged not-synced), each (fsync after every write, like bonnie++ -b). [default: end]
    #[arg(long, value_name = "end|none|each")]
    pub sync: Option<String>,
    /// Data written: random (incompressible), zeros, text (compresses like source code),
    /// compress:PCT. [default: random]
    #[arg(long, value_name = "random|zeros|text|compress:PCT")]
    pub data: Option<String>,
    /// Crash states checked per pattern and trial by the `crash` workload, at most (its
    /// `states=`, which wins where given; in a plan, `states = N`). [default: 40]
    #[arg(long = "crash-states", value_name = "N", conflicts_with = "plan")]
    pub crash_states: Option<u64>,
    /// Seed of every random choice (the same in every repetition). [default: 42]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    // --json PATH, --html PATH: the exporters `run` offers.
    #[command(flatten)]
    pub outputs: RunOutputs,
    /// No progress lines; only the result tables.
    #[arg(long)]
    pub quiet: bool,
    /// Run as one of several MPI ranks, started with `mpirun -np N fsarena run --mpi MODE
    /// …`: shared (all ranks work in one directory every rank sees: a --dir on a shared
    /// filesystem) or fleet (each rank makes its own target on its own node; the report
    /// compares the nodes). Needs fsarena built with `--features mpi`; docs/distributed.md.
    #[arg(long, value_name = "shared|fleet")]
    pub mpi: Option<String>,
    /// With --mpi: also report each phase's figures at the moment its first rank finished
    /// (stonewall figures, as IOR and elbencho report them).
    #[arg(long)]
    pub stonewall: bool,
    /// With --mpi: a rank not heard from for this long is lost (it died, or its host
    /// cannot be reached), and a rank interrupted waits this long for the others before
    /// it tears down alone.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0,
          value_parser = parse_mpi_timeout)]
    pub mpi_timeout: f64,
    /// Run the targets inside a guest booted from KERNEL (a vmlinuz path, or a release
    /// under /boot such as 6.1.0-56-amd64) with virtme-ng, on a scratch disk the host
    /// provides; given twice, every filesystem runs under each kernel (`ext4@6.1.0-56`).
    /// Under emulation (no working KVM) every figure is marked emulated;
    /// docs/guest-kernels.md.
    #[arg(long, value_name = "KERNEL", conflicts_with_all = ["mpi", "resume", "dir", "device", "net"])]
    pub kernel: Vec<String>,
    /// With --kernel (or kernel = "…" in a plan): the guest's vCPUs. [default: the
    /// host's CPUs]
    #[arg(long = "guest-cpus", value_name = "N")]
    pub guest_cpus: Option<u32>,
    /// With --kernel (or kernel = "…" in a plan): the guest's memory (2GiB, 3G).
    /// [default: 2GiB]
    #[arg(long = "guest-memory", value_name = "SIZE")]
    pub guest_memory: Option<String>,
    /// With --kernel (or kernel = "…" in a plan): how long a guest may go without a
    /// line on its console before it counts as hung, is stopped and its unfinished
    /// trials fail (30s, 10m). [default: 30m]
    #[arg(long = "guest-timeout", value_name = "DURATION")]
    pub guest_timeout: Option<String>,
    /// Set by fsarena on the command it runs in a guest: load the modules, make the
    /// scratch disk with serial SERIAL an ext4 image directory, then run.
    #[arg(long = "in-guest", value_name = "SERIAL", hide = true)]
    pub in_guest: Option<String>,
    /// Set by fsarena on the command it runs in a guest: journal each finished trial in
    /// DIR (the directory the guest shares with the host) and keep the journal, so that
    /// the host keeps what a guest finished before it hung or crashed.
    #[arg(long = "journal-dir", value_name = "DIR", hide = true)]
    pub journal_dir: Option<std::path::PathBuf>,
    /// Set by fsarena on the command it runs in a guest for a plan whose targets name
    /// their kernels: the positions (from 0) of the plan's targets this guest runs.
    #[arg(
        long = "guest-targets",
        value_name = "LIST",
        hide = true,
        requires = "in_guest",
        value_delimiter = ','
    )]
    pub guest_targets: Vec<usize>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only the filesystems a guest booted from KERNEL (a vmlinuz path, or a release
    /// under /boot) can make, as `run --kernel KERNEL` would boot it.
    #[arg(long, value_name = "KERNEL")]
    pub kernel: Option<String>,
}

fn parse_mpi_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (1.0..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds from 1 to 3600")),
    }
}

#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// The image directory the runs used.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_IMAGE_DIR)]
    pub image_dir: PathBuf,
    /// Also removes the aged images kept for later trials (`run --age`, in DIR/aged/).
    #[arg(long, conflicts_with = "run")]
    pub aged: bool,
    /// Only the records of this run (no sweep of the image directory).
    #[arg(long, value_name = "RUN", hide = true)]
    pub run: Option<String>,
    /// Waits until standard input closes first: an MPI rank's guardian, which undoes what
    /// the rank recorded when the rank is killed (mpirun's SIGKILL, `kill -9`).
    #[arg(long, hide = true, requires = "run")]
    pub when_stdin_closes: bool,
    /// With --when-stdin-closes: run RUN of the result database (--db), still recorded as
    /// running, is ended as interrupted (rank 0 was killed before it could say so).
    #[arg(long, value_name = "RUN", hide = true, requires = "when_stdin_closes")]
    pub end_run: Option<String>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The image directory a run would use (its free space is checked).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_IMAGE_DIR)]
    pub image_dir: PathBuf,
}
