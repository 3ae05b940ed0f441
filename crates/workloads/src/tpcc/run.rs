//! Terminals over the load engine's phases (connect, warm up, measure; see `driver`).
//!
//! Terminal `i` (one connection each) has home warehouse `i % W + 1` and Stock-Level
//! district `(i / W) % 10 + 1`. It draws each transaction's kind from its own shuffled
//! deck of 100 cards holding each kind as often as the mix weighs it (clause 5.2.4.2),
//! then the inputs. With `Think::Spec` it waits the kind's keying time before the
//! transaction and a think time after it (clause 5.2.5: -ln(r) x mean, at most 10 x
//! mean), in sleeps that the run's end or a cancel cuts short at once; with
//! `Think::None` it runs transactions back to back.
//!
//! Client threads, their connections as tasks and per-thread recording are oltp's
//! (`driver`): nothing is shared on the hot path but the op counter of `Measure::Ops`.
//! A response time runs from the transaction's first statement to its commit, retries
//! included; keying and think times are not in it.

use super::random::Constants;
use super::txn::{self, Home, Input, Outcome, Report, Session};
use super::{Kind, KindResult, Mix, Think, TpccConfig, TpccRecord};
use bakeoff_engine::rng::{mix, Rng};
use bakeoff_engine::{percentiles, KindStats, LoadError, Phase, RunRecord};
use bakeoff_sqlclient::driver::{self, Drive, ThreadRec, Window};
use bakeoff_sqlclient::Db;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const KINDS: usize = Kind::ALL.len();
/// Counters per kind, at `kind * PER_KIND + ...`.
const ROLLBACKS: usize = 0;
const RETRIES: usize = 1;
const ERRORS: usize = 2;
const PER_KIND: usize = 3;
/// Delivery's skipped districts, after the per-kind counters.
const SKIPPED: usize = KINDS * PER_KIND;
const COUNTERS: usize = SKIPPED + 1;

/// What every terminal reads: the settings and the run's NURand constants.
struct Plan {
    cfg: TpccConfig,
    constants: Constants,
}

/// Runs the tpcc terminals against `db` (loaded by `tpcc::load` with the same
/// warehouses): connect every terminal, warm up, measure. The load engine's record (ops
/// = transactions completed in the measured window, `kinds` per transaction kind,
/// `by_command` too plus `delivery_skipped`, the districts Delivery found nothing to
/// deliver in) and tpcc's (per-kind results, NOTPM, TPM).
pub fn run(
    db: &Db,
    cfg: &TpccConfig,
    seed: u64,
    d: &Drive,
) -> Result<(RunRecord, TpccRecord), LoadError> {
    check_settings(cfg)?;
    let threads = driver::client_threads_for(
        cfg.client_threads,
        cfg.connections,
        bakeoff_os::cpus::unpinned_load_cpus(),
    );
    let plan = Arc::new(Plan {
        cfg: cfg.clone(),
        constants: Constants::for_run(seed),
    });
    let w = driver::drive_lanes(
        cfg.connections,
        threads,
        d,
        db,
        &plan,
        |_| ThreadRec::new(KINDS, KINDS, COUNTERS),
        |i, lane| {
            let seed = mix(seed ^ mix(0x7e2c ^ (i as u64 + 1)));
            async move { terminal(i, &lane, seed).await }
        },
    )?;
    let end = w.end;
    let (r, tpcc) = summarize(w, threads);
    d.live.set_progress(r.ops, end);
    Ok((r, tpcc))
}

fn check_settings(cfg: &TpccConfig) -> Result<(), LoadError> {
    if cfg.warehouses == 0 {
        return Err(LoadError::Settings(
            "tpcc needs at least 1 warehouse".into(),
        ));
    }
    let total: u32 = Kind::ALL.iter().map(|&k| cfg.mix.weight(k)).sum();
    if total == 0 {
        return Err(LoadError::Settings(
            "the tpcc mix weighs every transaction 0; give the kinds weights that add up to 100"
                .into(),
        ));
    }
    Ok(())
}

type Lane = driver::Lane<Plan>;

/// Terminal `i`: opens its connection, then runs transactions until the run is over.
async fn terminal(i: usize, lane: &Lane, seed: u64) {
    let (sh, cfg) = (&*lane.sh, &lane.work.cfg);
    let opened = lane.open(i, cfg.connections, 0, false).await;
    let Some(client) = opened else {
        return;
    };
    let mut s = Session::new(client);
    let home = home_of(i, cfg.warehouses);
    let mut rng = Rng::new(seed);
    let mut deck = Deck::new(&cfg.mix);
    let spec = cfg.think == Think::Spec;
    while !sh.stopped() {
        if lane.blocking {
            lane.tick();
        }
        let kind = deck.draw(&mut rng);
        let input = Input::draw(kind, &mut rng, &home, &lane.work.constants);
        let (keying_s, think_mean_s) = kind.keying_and_think_s();
        if spec && !sh.sleep(Duration::from_secs_f64(keying_s)).await {
            break;
        }
        if !transaction(i, lane, &mut s, &input).await {
            break;
        }
        if spec {
            let think = think_time_s(&mut rng, think_mean_s);
            if !sh.sleep(Duration::from_secs_f64(think)).await {
                break;
            }
        }
    }
    lane.close(s.client).await;
}

/// Runs one transaction and records it if it fell in the measured window; false (and
/// the run failed) if the connection was lost.
async fn transaction(i: usize, lane: &Lane, s: &mut Session, input: &Input) -> bool {
    let (sh, st) = (&*lane.sh, &*lane.st);
    let measuring = st.borrow().measuring;
    let sent = s.statements;
    let started = Instant::now();
    let report = txn::execute(s, input, lane.work.cfg.max_retries).await;
    let ns = started.elapsed().as_nanos() as u64;
    if let Err(e) = &report.result {
        if e.kind == "lost_connection" {
            if !sh.stopped() {
                sh.fail(format!(
                    "tpcc terminal {} lost its connection during {}: {}",
                    i + 1,
                    input.kind().name(),
                    e.message
                ));
            }
            return false;
        }
    }
    if measuring && st.borrow().measuring && sh.phase() == Phase::Measure {
        let queries = s.statements - sent;
        if record(&mut st.borrow_mut(), input.kind(), &report, ns, queries) {
            sh.measured.fetch_add(1, Ordering::Relaxed);
        }
    }
    true
}

/// Terminal `i`'s home warehouse and Stock-Level district among `warehouses`.
fn home_of(i: usize, warehouses: u32) -> Home {
    let (i, w) = (i as u64, u64::from(warehouses.max(1)));
    Home {
        warehouses: w as u32,
        w_id: (i % w + 1) as u32,
        d_id: ((i / w) % 10 + 1) as u32,
    }
}

/// Records one business transaction of the measured window; true if it completed
/// (committed, or rolled back as planned).
fn record(s: &mut ThreadRec, kind: Kind, report: &Report, ns: u64, queries: u64) -> bool {
    let k = kind as usize;
    s.queries += queries;
    for &f in &report.failures {
        s.rec.error(f);
    }
    s.counters[k * PER_KIND + RETRIES] += u64::from(report.retries);
    match report.result {
        Ok(outcome) => {
            s.rec.record(k as u8, ns, ns);
            s.kinds[k].saturating_record(ns.max(1));
            if outcome == Outcome::RolledBack {
                s.counters[k * PER_KIND + ROLLBACKS] += 1;
            }
            s.counters[SKIPPED] += u64::from(report.skipped);
            true
        }
        Err(_) => {
            s.counters[k * PER_KIND + ERRORS] += 1;
            false
        }
    }
}

/// A think time with mean `mean_s` (clause 5.2.5): -ln(r) x mean for r uniform in
/// (0, 1], truncated at 10 x mean.
pub(crate) fn think_time_s(rng: &mut Rng, mean_s: f64) -> f64 {
    let r = 1.0 - rng.unit();
    (-r.ln() * mean_s).min(10.0 * mean_s)
}

/// A terminal's deck of cards (clause 5.2.4.2): each kind as many times as the mix weighs
/// it (100 cards for a mix that adds up to 100), dealt in a random order, shuffled anew
/// once all are dealt.
pub(crate) struct Deck {
    cards: Vec<Kind>,
    next: usize,
}

impl Deck {
    pub fn new(mix: &Mix) -> Deck {
        let cards: Vec<Kind> = Kind::ALL
            .iter()
            .flat_map(|&k| std::iter::repeat_n(k, mix.weight(k) as usize))
            .collect();
        Deck {
            next: cards.len(),
            cards,
        }
    }

    /// The next card (the deck must not be empty).
    pub fn draw(&mut self, rng: &mut Rng) -> Kind {
        if self.next >= self.cards.len() {
            for i in (1..self.cards.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.cards.swap(i, j);
            }
            self.next = 0;
        }
        let k = self.cards[self.next];
        self.next += 1;
        k
    }
}

/// The run's records from the threads' measurements over the measured window.
fn summarize(w: Window, threads: usize) -> (RunRecord, TpccRecord) {
    let (mut r, hists, counters) =
        driver::merge(w.outs, (w.start, w.end), threads, KINDS, COUNTERS);
    let mut t = TpccRecord::default();
    for k in Kind::ALL {
        let h = &hists[k as usize];
        let c = &counters[k as usize * PER_KIND..][..PER_KIND];
        let latency_us = percentiles(h);
        r.by_command.insert(k.name().into(), h.len());
        r.kinds.insert(
            k.name().into(),
            KindStats {
                count: h.len(),
                latency_us: latency_us.clone(),
                hist: bakeoff_engine::serialize_histogram(h),
            },
        );
        t.kinds.insert(
            k,
            KindResult {
                count: h.len(),
                latency_us,
                rollbacks: c[ROLLBACKS],
                retries: c[RETRIES],
                errors: c[ERRORS],
            },
        );
    }
    r.by_command
        .insert("delivery_skipped".into(), counters[SKIPPED]);
    let new_orders = t
        .kinds
        .get(&Kind::NewOrder)
        .map_or(0, |n| n.count - n.rollbacks);
    t.notpm = new_orders as f64 * 60.0 / r.elapsed_s;
    t.tpm = r.ops as f64 * 60.0 / r.elapsed_s;
    (r, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_deals_the_mix_exactly_per_hundred() {
        let mix = Mix::default();
        let mut deck = Deck::new(&mix);
        let mut rng = Rng::new(11);
        let mut firsts = Vec::new();
        for round in 0..5 {
            let mut counts = [0u32; KINDS];
            for _ in 0..100 {
                counts[deck.draw(&mut rng) as usize] += 1;
            }
            for k in Kind::ALL {
                assert_eq!(counts[k as usize], mix.weight(k), "round {round}, {k:?}");
            }
            firsts.push(deck.cards.clone());
        }
        assert!(firsts.windows(2).any(|p| p[0] != p[1]), "reshuffled");
        let odd = Mix {
            new_order: 1,
            payment: 0,
            order_status: 0,
            delivery: 2,
            stock_level: 0,
        };
        let mut deck = Deck::new(&odd);
        let dealt: Vec<Kind> = (0..3).map(|_| deck.draw(&mut rng)).collect();
        assert_eq!(dealt.iter().filter(|&&k| k == Kind::Delivery).count(), 2);
    }

    #[test]
    fn think_times_are_exponential_and_truncated_at_ten_means() {
        let mut rng = Rng::new(3);
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| think_time_s(&mut rng, 12.0)).collect();
        assert!(draws.iter().all(|&t| (0.0..=120.0).contains(&t)));
        let mean = draws.iter().sum::<f64>() / n as f64;
        // The truncation takes e^-10 of the mass: the mean stays about 12.
        assert!((11.8..12.2).contains(&mean), "mean {mean}");
        assert!(draws.iter().any(|&t| t > 100.0), "a long tail");
        let mut zero = Rng::new(0);
        assert!(think_time_s(&mut zero, 0.0) == 0.0);
    }

    #[test]
    fn terminals_spread_over_warehouses_then_districts() {
        let h = |i| home_of(i, 3);
        assert_eq!((h(0).w_id, h(0).d_id), (1, 1));
        assert_eq!((h(2).w_id, h(2).d_id), (3, 1));
        assert_eq!((h(3).w_id, h(3).d_id), (1, 2));
        assert_eq!((h(29).w_id, h(29).d_id), (3, 10));
        assert_eq!((h(30).w_id, h(30).d_id), (1, 1));
    }

    #[test]
    fn bad_settings_are_refused() {
        let cfg = TpccConfig {
            warehouses: 0,
            ..TpccConfig::default()
        };
        assert!(check_settings(&cfg).is_err());
        let cfg = TpccConfig {
            mix: Mix {
                new_order: 0,
                payment: 0,
                order_status: 0,
                delivery: 0,
                stock_level: 0,
            },
            ..TpccConfig::default()
        };
        assert!(check_settings(&cfg).is_err());
        assert!(check_settings(&TpccConfig::default()).is_ok());
    }
}
