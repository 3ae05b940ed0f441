//! The search against simulated candidates: known main effects on log throughput, noise
//! per run and a shared baseline run per round, stages of a fixed number of rounds.

use super::*;

// splitmix64, with normal deviates by Box-Muller.
use bakeoff_testkit::noise::SplitMix64 as Rng;

fn space() -> Space {
    Space {
        compiler: vec!["gcc-12".into(), "clang-16".into()],
        opt: vec!["-O0".into(), "-O1".into(), "-O2".into()],
        lto: vec![Lto::None, Lto::Thin, Lto::Full],
        pgo: vec![false, true],
        train: Some("kv".into()),
        ..Space::default()
    }
}

/// The true log effect of each level (0 for reference levels).
fn truth(factor: &str, level: &str) -> f64 {
    match (factor, level) {
        ("compiler", "clang-16") => 0.03,
        ("opt", "-O1") => 0.30,
        ("opt", "-O2") => 0.40,
        ("lto", "thin") => 0.02,
        ("lto", "full") => 0.04,
        ("pgo", "true") => 0.08,
        _ => 0.0,
    }
}

fn true_log(r: &Recipe) -> f64 {
    FACTORS.iter().map(|f| truth(f, &r.level(f))).sum()
}

/// Per-run noise (log), the baseline's noise shared by a round, rounds per stage, most
/// stages.
struct Sim {
    run_sd: f64,
    rounds: usize,
    stages: usize,
}

/// Races the space; returns the race and its conclusion.
fn simulate(seed: u64, sim: &Sim) -> (Race, Conclusion) {
    let (cands, _) = space().candidates(|_| None);
    let mut race = Race::new(cands, Settings::default());
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x1234_5678);
    loop {
        let names = match race.next() {
            Next::Done(c) => return (race, c),
            Next::Stage(names) => names,
        };
        if race.stages.len() == sim.stages {
            race.stop("the budget is spent");
            continue;
        }
        let mut data = StageData::default();
        let base: Vec<f64> = (0..sim.rounds).map(|_| sim.run_sd * rng.normal()).collect();
        for n in names {
            let e = race.entries.iter().find(|e| e.name == n).unwrap();
            let mu = true_log(&e.recipe);
            let ratios = (0..sim.rounds)
                .map(|r| (r, (mu + sim.run_sd * rng.normal() - base[r]).exp()))
                .collect();
            data.ratios.push((n, ratios));
        }
        race.feed(Signal::Throughput, data);
    }
}

const SIM: Sim = Sim {
    run_sd: 0.03,
    rounds: 6,
    stages: 6,
};

fn best() -> String {
    let (cands, _) = space().candidates(|_| None);
    cands
        .iter()
        .max_by(|a, b| true_log(&a.recipe).total_cmp(&true_log(&b.recipe)))
        .unwrap()
        .name
        .clone()
}

#[test]
fn the_space_leaves_out_what_cannot_be_built_and_says_why() {
    let mut s = space();
    s.bolt = vec![false, true];
    let (ok, out) = s.candidates(|r| r.bolt.then(|| "no llvm-bolt here".to_string()));
    assert_eq!(ok.len() + out.len(), s.size());
    assert_eq!(s.size(), 2 * 3 * 3 * 2 * 2);
    // gcc with thin LTO: 3 opts x 2 pgo x 2 bolt.
    assert_eq!(
        out.iter().filter(|x| x.reason.contains("thin LTO")).count(),
        12
    );
    assert!(out
        .iter()
        .all(|x| x.recipe.bolt || x.recipe.lto == Lto::Thin));
    assert!(ok.iter().all(|c| !c.recipe.bolt));
    let mut names: Vec<&str> = ok.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), ok.len(), "names are unique");
    assert!(names.contains(&"clang-16.O2.lto-thin.pgo"));

    let mut untrained = space();
    untrained.train = None;
    let (ok, out) = untrained.candidates(|_| None);
    assert!(ok.iter().all(|c| !c.recipe.pgo));
    assert!(out
        .iter()
        .any(|x| x.recipe.pgo && x.reason.contains("[tune] train")));
}

#[test]
fn a_recipe_gives_its_flags_and_flag_groups_their_own_names() {
    let s = Space {
        march: vec![String::new(), "-march=native".into()],
        flags: vec![
            String::new(),
            "-fno-plt".into(),
            "-fomit-frame-pointer -fno-semantic-interposition".into(),
        ],
        ..Space::default()
    };
    let (ok, _) = s.candidates(|_| None);
    assert_eq!(ok.len(), 6);
    let c = ok.iter().find(|c| c.name == "gcc.O2.native.f3").unwrap();
    assert_eq!(
        c.recipe.cflags(),
        "-O2 -march=native -fomit-frame-pointer -fno-semantic-interposition"
    );
    assert!(ok.iter().any(|c| c.name == "gcc.O2"));
    assert_eq!(s.factors().len(), 2);
}

#[test]
fn the_race_finds_the_best_candidate() {
    let want = best();
    let mut found = 0;
    for seed in 0..50 {
        let (race, c) = simulate(seed, &SIM);
        let w = c.winner.expect("a winner");
        if w == want {
            found += 1;
        }
        let best = race.entries.iter().find(|e| e.name == want).unwrap();
        assert_eq!(
            best.status,
            Status::Alive,
            "seed {seed}: the best was dropped"
        );
        // Every -O0 candidate is decided below the winner.
        for e in race.entries.iter().filter(|e| e.recipe.opt == "-O0") {
            assert!(
                matches!(e.status, Status::Dropped { stage: 1, .. }),
                "seed {seed}: {} {:?}",
                e.name,
                e.status
            );
        }
    }
    assert!(found >= 45, "the best won {found} of 50");
}

#[test]
fn no_candidate_better_than_the_winner_by_more_than_its_interval_is_dropped() {
    for seed in 0..200 {
        let (race, c) = simulate(seed, &SIM);
        let rows = race.standings();
        let w = rows
            .iter()
            .find(|s| Some(&s.name) == c.winner.as_ref())
            .unwrap();
        let [lo, hi] = w.interval.unwrap();
        let half = (hi / lo).ln() / 2.0;
        let tw = true_log(&w.recipe);
        for e in &race.entries {
            if matches!(e.status, Status::Dropped { .. }) {
                assert!(
                    true_log(&e.recipe) <= tw + half,
                    "seed {seed}: {} dropped, {:.3} above the winner {} (half-width {half:.3})",
                    e.name,
                    true_log(&e.recipe) - tw,
                    w.name
                );
            }
        }
    }
}

#[test]
fn the_effects_intervals_cover_the_true_effects_at_their_level() {
    let seeds = 1000;
    let mut covered: std::collections::BTreeMap<(String, String), usize> = Default::default();
    let s = space();
    let factors = s.factors();
    for seed in 0..seeds {
        let (race, _) = simulate(seed, &SIM);
        let effects = race.effects(&factors, 0.95);
        assert_eq!(effects.len(), 6, "seed {seed}: {effects:?}");
        for e in effects {
            let t = truth(&e.factor, &e.level);
            let hit = e.interval[0].ln() <= t && t <= e.interval[1].ln();
            *covered.entry((e.factor, e.level)).or_default() += usize::from(hit);
        }
    }
    let se = (0.95f64 * 0.05 / seeds as f64).sqrt();
    for ((f, l), n) in covered {
        let rate = n as f64 / seeds as f64;
        eprintln!("{f} = {l}: covered {n} of {seeds}");
        assert!(
            rate >= 0.95 - 3.0 * se,
            "{f} = {l}: covered {n} of {seeds} ({rate:.3})"
        );
    }
}

#[test]
fn a_decided_race_ends_before_the_budget_and_says_why() {
    // One clear winner, little noise: decided early.
    let quiet = Sim {
        run_sd: 0.005,
        rounds: 6,
        stages: 20,
    };
    let (race, c) = simulate(7, &quiet);
    assert!(c.decided, "{c:?}");
    assert!(race.stages.len() < 20);
    assert!(c.why.contains("decided against the baseline"), "{}", c.why);
    // No stages: the budget says so.
    let none = Sim {
        run_sd: 0.03,
        rounds: 6,
        stages: 0,
    };
    let (_, c) = simulate(7, &none);
    assert!(!c.decided && c.why.contains("budget"), "{c:?}");
}

#[test]
fn failed_candidates_are_out_with_the_reason() {
    let s = Space {
        opt: vec!["-O1".into(), "-O2".into()],
        ..Space::default()
    };
    let (cands, _) = s.candidates(|_| None);
    let mut race = Race::new(cands, Settings::default());
    race.out("gcc.O1", "does not build: cc1: error");
    let Next::Stage(names) = race.next() else {
        panic!()
    };
    assert_eq!(names, vec!["gcc.O2".to_string()]);
    race.feed(
        Signal::Throughput,
        StageData {
            ratios: vec![],
            failed: vec![("gcc.O2".into(), "crashed in round 2".into())],
        },
    );
    let Next::Done(c) = race.next() else { panic!() };
    assert_eq!(c.winner, None);
    let rows = race.standings();
    assert!(rows
        .iter()
        .all(|r| matches!(&r.status, Status::Out { reason, .. } if !reason.is_empty())));
}

#[test]
fn the_screen_drops_only_beyond_its_margin() {
    let s = Space {
        opt: vec!["-O0".into(), "-O1".into(), "-O2".into()],
        ..Space::default()
    };
    let (cands, _) = s.candidates(|_| None);
    let mut race = Race::new(cands, Settings::default());
    let mut rng = Rng(3);
    // Instructions over the baseline's: -O0 3x, -O1 1.03x the -O2's.
    let mut data = StageData::default();
    for (name, instr) in [("gcc.O0", 3.0), ("gcc.O1", 1.03), ("gcc.O2", 1.0)] {
        let r = (0..4)
            .map(|i| (i, instr * (1.0 + 0.002 * rng.normal())))
            .collect();
        data.ratios.push((name.to_string(), r));
    }
    let st = race.feed(Signal::Instructions, data).clone();
    assert_eq!(st.leader.as_deref(), Some("gcc.O2"));
    assert_eq!(st.dropped, vec!["gcc.O0".to_string()]);
    assert_eq!(race.alive().len(), 2);
}
