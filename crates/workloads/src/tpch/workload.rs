//! The TPC-H-derived kind as a [`Workload`]: the eight tables loaded once per variant at
//! the scale ([`Data`]) and every run on a copy; a run is the power run (or the
//! throughput run), its headline the geometric mean; the first round's runs save their
//! plans. As a verification query set the chosen queries run at the specification's
//! validation parameters and each answer is compared with the first variant's (the
//! baseline's: verification asks it first) within the specification's precision
//! ([`super::answers`]); a different answer is a verification difference naming the
//! query, the column and the first differing row.

use super::answers;
use super::kind::{ParamsFrom, TpchKeys, SCALE, TIMEOUT_S};
use super::records::{QueryRecord, TpchCell, TpchRun};
use super::run::{self, RunSpec};
use crate::verify;
use crate::workload::{Cells, Outcome, QuerySet, RunContext, Tables, Workload};
use bakeoff_engine::RunRecord;
use bakeoff_report::figures::{CellFigures, RunFigures};
use bakeoff_report::model::Cell;
use bakeoff_sqlclient::{Db, DbError, Rows};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// The first answers verification saw, shared by the workloads one `[[workload]]`
/// becomes (one per kind of server in the experiment).
pub type Reference = Arc<Mutex<Option<Vec<Answer>>>>;

/// One query's answer; None: it ran past the verification's limit.
pub type Answer = Option<Rows>;

/// The reference of `[[workload]]` `i` of the experiment `l`: the same for every kind's
/// workload made from it (the runner makes them from a copy of the experiment per kind
/// of server, so it is found by the file, its text and the workload's keys) while any of
/// them lives.
pub fn shared_reference(l: &bakeoff_plan::Loaded, i: usize) -> Reference {
    use std::hash::{Hash, Hasher};
    type Slots = Vec<(u64, Weak<Mutex<Option<Vec<Answer>>>>)>;
    static SLOTS: Mutex<Slots> = Mutex::new(Vec::new());
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&l.path, &l.text, i).hash(&mut h);
    l.experiment.workloads[i]
        .keys
        .to_json()
        .to_string()
        .hash(&mut h);
    let key = h.finish();
    let mut slots = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
    slots.retain(|(_, w)| w.strong_count() > 0);
    if let Some(r) = slots
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, w)| w.upgrade())
    {
        return r;
    }
    let r: Reference = Arc::new(Mutex::new(None));
    slots.push((key, Arc::downgrade(&r)));
    r
}

/// How long a query may run when its answer is verified: as long as any statement of a
/// verification (`verify.rs`), or the run's own limit where that is longer.
const VERIFY_LIMIT: Duration = Duration::from_secs(600);

/// A tpch workload of the experiment.
pub struct Tpch {
    cells: Cells,
    spec: RunSpec,
    params: ParamsFrom,
    reference: Reference,
}

impl Tpch {
    /// The workload named `name` from its keys (checked already).
    pub fn new(name: String, k: &TpchKeys, reference: Reference) -> Tpch {
        let streams = k.streams.unwrap_or(1);
        let params = k.params.unwrap_or_default();
        Tpch {
            cells: Cells {
                name,
                connections: vec![streams],
            },
            spec: RunSpec {
                scale: k.scale.unwrap_or(SCALE),
                queries: k.chosen(),
                streams,
                validation: params == ParamsFrom::Validation,
                timeout: Duration::from_secs_f64(k.timeout.unwrap_or(TIMEOUT_S)),
            },
            params,
            reference,
        }
    }

    pub fn spec(&self) -> &RunSpec {
        &self.spec
    }
}

/// The eight tables at a scale.
pub struct Data(pub f64);

impl Tables for Data {
    fn key(&self) -> String {
        format!("tpch-s{}", self.0)
    }

    fn describe(&self) -> String {
        format!("TPC-H-derived tables, scale {}", self.0)
    }

    /// About 1.1 GB of rows per unit of scale, with keys and indexes about twice that.
    fn bytes(&self) -> u64 {
        (self.0 * 2.5e9) as u64
    }

    fn load(&self, db: &Db) -> Result<(u64, f64), String> {
        let started = std::time::Instant::now();
        super::schema::load(db, self.0).map(|rows| (rows, started.elapsed().as_secs_f64()))
    }
}

impl Workload for Tpch {
    fn cells(&self) -> &Cells {
        &self.cells
    }

    fn tables(&self, _engine: Option<&str>) -> Option<Box<dyn Tables>> {
        Some(Box::new(Data(self.spec.scale)))
    }

    fn queries(&self) -> Option<Box<dyn QuerySet>> {
        Some(Box::new(Answers {
            spec: RunSpec {
                validation: true,
                streams: 1,
                // As long as any verified statement may take.
                timeout: self.spec.timeout.max(VERIFY_LIMIT),
                ..self.spec.clone()
            },
            reference: self.reference.clone(),
        }))
    }

    fn run(&self, ctx: &RunContext) -> Result<Outcome, String> {
        let db = ctx.server.db()?;
        ctx.hooks.measure_started();
        let got = run::run(&db, &self.spec, ctx.seed, false, ctx.cancel);
        ctx.hooks.measure_ended();
        let (done, wall) = got?;
        let plans = if ctx.round == 0 {
            run::plans(&db, &self.spec, ctx.seed)?
                .into_iter()
                .map(|(q, p)| (format!("Q{q}"), p))
                .collect()
        } else {
            Default::default()
        };
        Ok(outcome(&done, wall, self.spec.streams, plans))
    }

    fn plan_cell(&self, cell: &mut Cell) {
        TpchCell {
            workload: self.cells.name.clone(),
            scale: self.spec.scale,
            params: self.params.name().into(),
            streams: self.spec.streams,
            timeout_s: self.spec.timeout.as_secs_f64(),
            ..TpchCell::default()
        }
        .put(cell);
    }
}

/// The geometric mean of query times (a timed-out query at its timeout).
pub fn geomean(seconds: &[f64]) -> Option<f64> {
    if seconds.is_empty() {
        return None;
    }
    let logs: f64 = seconds.iter().map(|s| s.max(1e-6).ln()).sum();
    Some((logs / seconds.len() as f64).exp())
}

/// A run as a record: ops are the queries; a power run's rate is one over the geometric
/// mean (queries per second at the typical query's time), a throughput run's the
/// queries over its wall time.
fn outcome(
    done: &[run::Executed],
    wall: f64,
    streams: usize,
    plans: std::collections::BTreeMap<String, String>,
) -> Outcome {
    let seconds: Vec<f64> = done.iter().map(|e| e.seconds).collect();
    let geo = geomean(&seconds);
    let elapsed_s = if streams > 1 {
        wall
    } else {
        seconds.iter().sum()
    };
    let ops_per_s = if streams > 1 {
        done.len() as f64 / wall.max(1e-9)
    } else {
        geo.map_or(0.0, |g| 1.0 / g)
    };
    let rec = RunRecord {
        ops: done.len() as u64,
        elapsed_s,
        ops_per_s,
        queries: done.len() as u64,
        ..RunRecord::default()
    };
    let own = TpchRun {
        queries: done
            .iter()
            .map(|e| QueryRecord {
                query: e.query,
                seconds: e.seconds,
                rows: e.rows,
                timed_out: e.timed_out,
                stream: e.stream,
            })
            .collect(),
        geomean_s: geo,
        throughput_qph: (streams > 1).then(|| done.len() as f64 * 3600.0 / wall.max(1e-9)),
        plans,
    };
    Outcome {
        rec,
        extra: Box::new(move |run| own.put(run)),
    }
}

/// The queries at the validation parameters, each answer against the reference's.
struct Answers {
    spec: RunSpec,
    reference: Reference,
}

/// The name a query's answer is shown under.
fn label(q: u8) -> String {
    format!("TPC-H-derived Q{q} at the validation parameters (queries/q{q:02}.sql)")
}

impl QuerySet for Answers {
    fn count(&self) -> Option<usize> {
        Some(self.spec.queries.len())
    }

    fn run(&self, db: &Db, _engine: Option<&str>) -> Result<Vec<verify::Outcome>, String> {
        let (done, _) = run::run(db, &self.spec, 0, true, &AtomicBool::new(false))?;
        let mut queries: Vec<(u8, Answer)> =
            done.into_iter().map(|e| (e.query, e.answer)).collect();
        queries.sort_by_key(|(q, _)| *q);
        let mut reference = self.reference.lock().unwrap_or_else(|p| p.into_inner());
        let theirs =
            reference.get_or_insert_with(|| queries.iter().map(|(_, r)| r.clone()).collect());
        let limit = self.spec.timeout.as_secs_f64();
        Ok(queries
            .iter()
            .zip(theirs.iter())
            .map(|((q, mine), want)| {
                let (q, line) = (*q, usize::from(*q));
                match (mine, want) {
                    // Within precision: this variant's answer is the reference's.
                    (Some(mine), Some(want)) => match answers::compare(q, want, mine) {
                        None => verify::outcome(&label(q), line, &Ok(want.clone()), false),
                        Some(why) => verify::outcome(
                            &format!("{}: {why}", label(q)),
                            line,
                            &Ok(mine.clone()),
                            false,
                        ),
                    },
                    (Some(mine), None) => {
                        verify::outcome(&label(q), line, &Ok(mine.clone()), false)
                    }
                    (None, _) => verify::outcome(
                        &label(q),
                        line,
                        &Err(DbError {
                            kind: "timeout",
                            message: format!("no answer within {limit:.0} s"),
                        }),
                        false,
                    ),
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_server_shares_the_first_answers() {
        let text = "name = \"t\"\n[target]\nkind = \"sqlite\"\n[[variant]]\nname = \"a\"\nbinary = \"/bin/true\"\n[[variant]]\nname = \"b\"\nkind = \"postgres\"\nbinary = \"/bin/true\"\n[[workload]]\nkind = \"tpch\"\n[[workload]]\nkind = \"tpch\"\nname = \"other\"\nscale = 0.01\n";
        let l = bakeoff_plan::parse(std::path::Path::new("t.toml"), text.into(), &crate::KINDS)
            .unwrap();
        let a = shared_reference(&l, 0);
        let as_pg = shared_reference(&l.for_kind(bakeoff_plan::TargetKind::Postgres), 0);
        assert!(Arc::ptr_eq(&a, &as_pg));
        assert!(!Arc::ptr_eq(&a, &shared_reference(&l, 1)));
        *a.lock().unwrap() = Some(Vec::new());
        drop((a, as_pg));
        let again = shared_reference(&l, 0);
        assert!(
            again.lock().unwrap().is_none(),
            "a new experiment starts afresh"
        );
    }

    #[test]
    fn the_geometric_mean_is_the_headline_rate() {
        let e = |q, seconds| run::Executed {
            query: q,
            stream: 0,
            seconds,
            rows: 1,
            timed_out: false,
            answer: None,
        };
        let o = outcome(&[e(1, 0.5), e(6, 2.0)], 2.6, 1, Default::default());
        assert!((o.rec.ops_per_s - 1.0).abs() < 1e-9);
        assert!((o.rec.elapsed_s - 2.5).abs() < 1e-9);
        let mut run = bakeoff_report::model::Run::default();
        (o.extra)(&mut run);
        let t = TpchRun::of(&run);
        assert_eq!(t.geomean_s, Some(1.0));
        assert_eq!(t.queries.len(), 2);
        assert_eq!(geomean(&[]), None);
        // A throughput run: queries over its wall time.
        let o = outcome(&[e(1, 1.0), e(1, 1.0)], 2.0, 2, Default::default());
        assert!((o.rec.ops_per_s - 1.0).abs() < 1e-9);
        let mut run = bakeoff_report::model::Run::default();
        (o.extra)(&mut run);
        assert_eq!(TpchRun::of(&run).throughput_qph, Some(3600.0));
    }
}
