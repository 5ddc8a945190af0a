//! Which database engine each workload ran, for the reports: its version, profile and
//! every setting that is not the engine's default, and "NOT DURABLE" when a setting turned
//! durability off (docs/databases.md says how to read it).

use crate::result::RunResult;

/// An engine's description and the targets whose trials recorded it.
type Described<'a> = (String, Vec<&'a str>);

/// One line per workload and engine as its trials recorded it: `pgbench: PostgreSQL 15.10;
/// set max_connections=110`, or `pgbench on ext4, xfs: …` when the targets' differ (an
/// engine in a guest, another version). Trials that recorded none are left out.
pub fn lines(run: &RunResult) -> Vec<String> {
    // label → (description → targets), in the order trials ran.
    let mut by_label: Vec<(&str, Vec<Described>)> = Vec::new();
    for t in &run.trials {
        let Some(e) = &t.engine else { continue };
        let described = e.describe();
        let at = match by_label.iter().position(|(l, _)| *l == t.label) {
            Some(i) => i,
            None => {
                by_label.push((&t.label, Vec::new()));
                by_label.len() - 1
            }
        };
        let groups = &mut by_label[at].1;
        match groups.iter_mut().find(|(d, _)| *d == described) {
            Some((_, targets)) if targets.contains(&t.target.as_str()) => {}
            Some((_, targets)) => targets.push(&t.target),
            None => groups.push((described, vec![&t.target])),
        }
    }
    let mut out = Vec::new();
    for (label, groups) in by_label {
        if let [(described, _)] = groups.as_slice() {
            out.push(format!("{label}: {described}"));
            continue;
        }
        for (described, targets) in groups {
            out.push(format!("{label} on {}: {described}", targets.join(", ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Engine;

    #[test]
    fn one_line_per_workload_unless_the_targets_differ() {
        let mut run = crate::report::fixture_with(Vec::new());
        let pg = |v: &str| Engine {
            name: "PostgreSQL".into(),
            version: v.into(),
            ..Engine::default()
        };
        for (target, version) in [("ext4", "15.10"), ("xfs", "15.10"), ("ext4", "15.10")] {
            let mut t =
                crate::result::Trial::new(target, "pgbench", "pgbench", Default::default(), 1);
            t.engine = Some(pg(version));
            run.trials.push(t);
        }
        run.trials.push(crate::result::Trial::new(
            "ext4",
            "bonnie",
            "bonnie",
            Default::default(),
            1,
        ));
        assert_eq!(lines(&run), ["pgbench: PostgreSQL 15.10; default settings"]);
        let mut t = crate::result::Trial::new("btrfs", "pgbench", "pgbench", Default::default(), 1);
        t.engine = Some(pg("16.4"));
        run.trials.push(t);
        assert_eq!(
            lines(&run),
            [
                "pgbench on ext4, xfs: PostgreSQL 15.10; default settings",
                "pgbench on btrfs: PostgreSQL 16.4; default settings"
            ]
        );
    }
}
