//! The run-wide policies that decide what a figure means: cache state, sync, and data.
//!
//! They are applied by the runner and the phase context, recorded in every result and named
//! in every report, because the seed articles' tables were argued about precisely on these
//! three points (page-cache hits, unsynced writes, zeros that compress).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What happens to caches before each phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CachePolicy {
    /// sync, drop page/dentry/inode caches, and remount loop targets before every phase.
    Cold,
    /// Run read-only phases once unmeasured first; never drop caches.
    Warm,
    /// Do nothing between phases.
    Keep,
}

/// When written data is forced to stable storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SyncPolicy {
    /// Each writing phase ends with fsync/syncfs inside its timed region.
    End,
    /// No sync at all (classic Bonnie); reports flag such results `not-synced`.
    None,
    /// fsync after every write, and the directory after create/delete (bonnie++ `-b`).
    Each,
}

/// The content written to files.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase", tag = "kind", content = "pct")]
pub enum DataPolicy {
    /// Incompressible pseudo-random bytes (default).
    Random,
    /// All zeros: compresses to nothing on btrfs with compression.
    Zeros,
    /// Text that compresses about as well as source code.
    Text,
    /// Random data of which this percentage (0–100) of every 4 KiB block is zeros.
    Compress(u8),
}

macro_rules! simple_enum_text {
    ($ty:ty, $($variant:ident => $text:literal),+) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self { $(Self::$variant => $text),+ })
            }
        }
        impl FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s { $($text => Ok(Self::$variant),)+
                    _ => Err(format!("'{s}' is not one of: {}", [$($text),+].join(", "))) }
            }
        }
    };
}
simple_enum_text!(CachePolicy, Cold => "cold", Warm => "warm", Keep => "keep");
simple_enum_text!(SyncPolicy, End => "end", None => "none", Each => "each");

impl fmt::Display for DataPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Random => f.write_str("random"),
            Self::Zeros => f.write_str("zeros"),
            Self::Text => f.write_str("text"),
            Self::Compress(p) => write!(f, "compress:{p}"),
        }
    }
}

impl FromStr for DataPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "random" => Ok(Self::Random),
            "zeros" => Ok(Self::Zeros),
            "text" => Ok(Self::Text),
            _ => match s.strip_prefix("compress:").map(str::parse::<u8>) {
                Some(Ok(p)) if p <= 100 => Ok(Self::Compress(p)),
                _ => Err(format!(
                    "'{s}' is not one of: random, zeros, text, compress:PCT (PCT 0-100)"
                )),
            },
        }
    }
}

/// The three policies plus repetitions and seed, as recorded in results.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Policy {
    pub cache: CachePolicy,
    pub sync: SyncPolicy,
    pub data: DataPolicy,
    pub reps: u32,
    pub seed: u64,
    /// `--reps auto`: how the number of repetitions was decided; absent for a number
    /// given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_reps: Option<Decided>,
    /// The verdict's equivalence margin in percent (`--margin`): a pair whose interval lies
    /// within ±this reads "as fast"; absent: the default, 3%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_pct: Option<f64>,
    /// The device profiles each phase is priced on (`--price-on`: `nvme`, `measured`, …);
    /// the predictions are derived from the stored figures when reported, never stored as
    /// measurements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub price_on: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            cache: CachePolicy::Cold,
            sync: SyncPolicy::End,
            data: DataPolicy::Random,
            reps: 3,
            seed: 42,
            auto_reps: None,
            margin_pct: None,
            price_on: Vec::new(),
        }
    }
}

/// What `--reps auto` decided, as recorded in the run's policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decided {
    /// The wanted half-width of each headline figure's 95% interval, in percent.
    pub precision_pct: f64,
    pub max_reps: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// `--reps-for PCT`: repeated until a difference of PCT percent could be seen (at 80%
    /// power) in every phase, instead of for `precision_pct`, which is then not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps_for_pct: Option<f64>,
    /// The lines that say how many repetitions ran, why they stopped, and each phase that
    /// did not reach the precision; empty while the run goes on.
    pub outcome: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        for s in ["cold", "warm", "keep"] {
            assert_eq!(s.parse::<CachePolicy>().unwrap().to_string(), s);
        }
        for s in ["end", "none", "each"] {
            assert_eq!(s.parse::<SyncPolicy>().unwrap().to_string(), s);
        }
        for s in ["random", "zeros", "text", "compress:50", "compress:0"] {
            assert_eq!(s.parse::<DataPolicy>().unwrap().to_string(), s);
        }
        assert!("compress:101".parse::<DataPolicy>().is_err());
        assert!("hot"
            .parse::<CachePolicy>()
            .unwrap_err()
            .contains("cold, warm, keep"));
    }
}
