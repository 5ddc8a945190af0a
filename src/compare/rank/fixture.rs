//! The fixture run's verdict end to end, and guests ranked apart from the host.

#[test]
fn the_fixture_run_has_a_verdict_for_every_phase() {
    let run: crate::result::RunResult =
        serde_json::from_str(include_str!("../../../tests/fixtures/run.json")).unwrap();
    let v = super::verdicts(&run);
    let text = super::render(&v, run.policy.reps, 80);
    println!("{text}");
    for t in &run.trials {
        for p in &t.phases {
            assert!(
                v.iter().any(|v| v.workload == t.label && v.phase == p.name),
                "{} {} has no verdict",
                t.label,
                p.name
            );
        }
    }
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(v.iter().all(|v| v.among.is_none()));
}

#[test]
fn host_and_guest_targets_of_one_run_are_ranked_apart() {
    let mut run: crate::result::RunResult =
        serde_json::from_str(include_str!("../../../tests/fixtures/run.json")).unwrap();
    // The same figures again, as if measured in an emulated guest (a plan whose
    // targets name kernels beside targets that run on the host).
    let guest = crate::result::GuestInfo {
        kernel: "6.1.0-56-amd64".into(),
        accel: "tcg".into(),
        vcpus: 2,
        memory_bytes: 2 << 30,
        disk_cache: "none".into(),
    };
    for mut t in run.targets.clone() {
        t.name = format!("{}@6.1.0-56", t.name);
        t.guest = Some(guest.clone());
        run.targets.push(t);
    }
    for mut t in run.trials.clone() {
        t.target = format!("{}@6.1.0-56", t.target);
        run.trials.push(t);
    }
    let v = super::verdicts(&run);
    let host: Vec<_> = v
        .iter()
        .filter(|v| v.among.as_deref() == Some("on the host"))
        .collect();
    let tcg: Vec<_> = v
        .iter()
        .filter(|v| v.among.as_deref() == Some("in tcg guests"))
        .collect();
    assert_eq!(host.len() + tcg.len(), v.len());
    assert_eq!(host.len(), tcg.len());
    for v in &host {
        assert!(v.places.iter().all(|p| !p.target.contains('@')), "{v:?}");
    }
    for v in &tcg {
        assert!(
            v.places.iter().all(|p| p.target.ends_with("@6.1.0-56")),
            "{v:?}"
        );
    }
    let text = super::render(&v, run.policy.reps, 80);
    assert!(text.contains("postmark (on the host)\n"), "{text}");
    assert!(text.contains("postmark (in tcg guests)\n"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}
