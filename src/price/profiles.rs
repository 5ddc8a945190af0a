//! The device profiles fsarena ships (`--price-on NAME`), each figure with its source, and
//! the `measured` profile: the target's own device as the probe at the start of the run
//! found it ([`crate::result::DeviceProbe`]).
//!
//! Data sheets give a drive's best case (an empty drive, its write cache on, a short
//! burst), so a profile is a *typical* device of its class, not a promise about any one
//! drive. Where no data sheet gives a figure (flush latency, mostly), the profile says
//! what it assumes instead.

use super::{Cap, Profile};
use crate::result::DeviceProbe;

/// The profile names `--price-on` takes: the shipped ones and `measured`.
pub const MEASURED: &str = "measured";

/// The shipped profiles, in the order reports show them.
pub fn shipped() -> Vec<Profile> {
    vec![nvme(), sata_ssd(), hdd(), cloud_3000()]
}

/// The shipped profile named `name`.
pub fn find(name: &str) -> Option<Profile> {
    shipped().into_iter().find(|p| p.name == name)
}

/// The profile `spec` names other than `measured`: a shipped one, or a file `*.json`
/// holding one (a [`Profile`]'s fields: a device of one's own, a cloud volume's caps).
pub fn resolve(spec: &str) -> Result<Profile, String> {
    if let Some(p) = find(spec) {
        return Ok(p);
    }
    if spec.ends_with(".json") {
        let text = std::fs::read_to_string(spec).map_err(|e| format!("reading {spec}: {e}"))?;
        let p: Profile =
            serde_json::from_str(&text).map_err(|e| format!("the profile in {spec}: {e}"))?;
        let figures = [
            p.read_4k_us,
            p.write_4k_us,
            p.flush_us,
            p.read_mb_per_s,
            p.write_mb_per_s,
            p.parallelism,
        ];
        let caps = p.cap.as_ref().map_or(vec![], |c| vec![c.iops, c.mb_per_s]);
        if figures
            .iter()
            .chain(&caps)
            .any(|v| !(v.is_finite() && *v > 0.0))
        {
            return Err(format!(
                "the profile in {spec}: every figure must be above 0"
            ));
        }
        return Ok(p);
    }
    let known: Vec<String> = shipped().into_iter().map(|p| p.name).collect();
    Err(format!(
        "no device profile '{spec}'; known: {}, {MEASURED}, or a FILE.json",
        known.join(", ")
    ))
}

/// A PCIe 4.0 consumer NVMe SSD.
fn nvme() -> Profile {
    Profile {
        name: "nvme".into(),
        about: "NVMe SSD (PCIe 4.0, consumer TLC; typical)".into(),
        // 20,176 IOPS at queue depth 1, one thread: KitGuru's measurement of a Lexar
        // NM790 4 TB (CrystalDiskMark 8, 4 KiB random read).
        read_4k_us: 50.0,
        // 60,000 IOPS at queue depth 1: Samsung's rating of the 970 EVO Plus 1 TB
        // (KitGuru's review quotes it and measured more); 57,109 on the NM790.
        write_4k_us: 16.7,
        // No data sheet gives it. Assumed: one 4 KiB write's time, what a drive with
        // power-loss protection takes; a consumer drive without it may take milliseconds.
        flush_us: 16.7,
        // Samsung 980 PRO 1 TB data sheet: 7,000 MB/s read, 5,000 MB/s write.
        read_mb_per_s: 7000.0,
        write_mb_per_s: 5000.0,
        // 1,000,000 random read IOPS at depth (980 PRO data sheet) × 50 µs a request:
        // about 50 requests served at once; a workload rarely keeps that many in flight.
        parallelism: 50.0,
        cap: None,
        source: "Samsung 980 PRO and 970 EVO Plus data sheets; KitGuru's Lexar NM790 \
                 review (queue depth 1 reads)"
            .into(),
    }
}

/// A SATA SSD.
fn sata_ssd() -> Profile {
    Profile {
        name: "sata-ssd".into(),
        about: "SATA SSD (consumer TLC; typical)".into(),
        // Samsung 870 EVO data sheet: 13,000 IOPS 4 KiB random read at queue depth 1.
        read_4k_us: 76.9,
        // Same sheet: 36,000 IOPS 4 KiB random write at queue depth 1.
        write_4k_us: 27.8,
        // Not on the sheet; assumed one QD1 write's time (see `nvme`).
        flush_us: 27.8,
        // Same sheet: 560 MB/s read, 530 MB/s write.
        read_mb_per_s: 560.0,
        write_mb_per_s: 530.0,
        // 98,000 IOPS at queue depth 32 × 76.9 µs: about 7.5 requests at once.
        parallelism: 7.5,
        cap: None,
        source: "Samsung 870 EVO data sheet (as quoted in KitGuru's and Tom's Hardware's \
                 reviews)"
            .into(),
    }
}

/// A 7200 rpm disk.
fn hdd() -> Profile {
    Profile {
        name: "hdd".into(),
        about: "7200 rpm disk (3.5\", enterprise SATA/SAS; typical)".into(),
        // HGST Ultrastar 7K4000 specification: average seek 8.2 ms (read and write),
        // plus half a revolution at 7200 rpm, 4.17 ms.
        read_4k_us: 12_370.0,
        // Written through: a random write waits for the platter like a read (the write
        // cache only defers the wait to the flush).
        write_4k_us: 12_370.0,
        // Assumed: half a revolution, the cache's last write landing.
        flush_us: 4_170.0,
        // 171 MB/s: the 7K4000's sustained rate as HGST's product brief gives it (not
        // re-checked against the specification's table); outer tracks, inner ones about
        // half. Typical of 3.5" 7200 rpm drives of its generation.
        read_mb_per_s: 171.0,
        write_mb_per_s: 171.0,
        // One head assembly: one request at a time (command queueing reorders, it does
        // not overlap).
        parallelism: 1.0,
        cap: None,
        source: "HGST Ultrastar 7K4000 specification (seek 8.2 ms) and product brief \
                 (171 MB/s); 7200 rpm half-revolution 4.17 ms"
            .into(),
    }
}

/// A cloud volume at AWS gp3's baseline.
fn cloud_3000() -> Profile {
    Profile {
        name: "cloud-3000".into(),
        about: "cloud volume capped at 3000 IOPS and 125 MiB/s (AWS gp3 baseline)".into(),
        // AWS documents gp3 as "single-digit millisecond" latency; assumed 1 ms for a
        // read, a write and a flush.
        read_4k_us: 1000.0,
        write_4k_us: 1000.0,
        flush_us: 1000.0,
        // The caps bind first: the volume's own transfer rate is taken as the cap's.
        read_mb_per_s: 131.072,
        write_mb_per_s: 131.072,
        // Assumed: the network volume serves many requests at once; 3000 IOPS at 1 ms
        // needs 3 in flight.
        parallelism: 64.0,
        cap: Some(Cap {
            // AWS EBS user guide: gp3 baseline 3,000 IOPS and 125 MiB/s, for reads and
            // writes together; an SSD volume counts I/O in units of up to 256 KiB.
            iops: 3000.0,
            mb_per_s: 131.072,
            io_unit_bytes: 256 << 10,
            per_direction: false,
            // EBS merges small sequential I/O itself, as the guest's block layer does.
            before_merge: false,
        }),
        source: "Amazon EBS user guide: gp3 volumes (3,000 IOPS, 125 MiB/s baseline) and \
                 I/O characteristics (256 KiB I/O size for SSD volumes)"
            .into(),
    }
}

/// The profile of a target's own device as probed: its medians and rates, no cap (a cap
/// shows in them: a capped device serves requests slower and fewer at once).
pub fn from_probe(p: &DeviceProbe) -> Profile {
    Profile {
        name: MEASURED.into(),
        about: "the target's own device, probed at the start of the run".into(),
        read_4k_us: p.read_4k_us,
        write_4k_us: p.write_4k_us,
        flush_us: p.flush_us,
        read_mb_per_s: p.seq_read_mb_per_s,
        write_mb_per_s: p.seq_write_mb_per_s,
        parallelism: p.parallelism(),
        cap: None,
        source: "fsarena's device probe".into(),
    }
}
