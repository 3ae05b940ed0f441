//! Lookups by name, built once per report: the cell of a (workload, variant,
//! connections), its headline comparison and the instruction-count record beside it, and
//! each variant's palette index. A results folder can hold thousands of variants, so a
//! loop over cells must never scan the cells (or the comparisons) again for each one: it
//! asks an [`Index`] (or a [`Palette`]) built before the loop, and the report stays linear
//! in what it reads.

pub use crate::model::headline;
use crate::model::{comp_key, Cell, CompKey, ComparisonRecord, Results};
use std::collections::{HashMap, HashSet};

/// A cell's key: workload, variant, connections.
type Key<'a> = (&'a str, &'a str, usize);

/// Cells and comparisons by key, each the first in results order (as a scan would find).
pub struct Index<'a> {
    cells: HashMap<Key<'a>, &'a Cell>,
    headline: HashMap<Key<'a>, &'a ComparisonRecord>,
    beside: HashMap<CompKey<'a>, &'a ComparisonRecord>,
    throughput: HashSet<CompKey<'a>>,
}

impl<'a> Index<'a> {
    pub fn new(r: &'a Results) -> Index<'a> {
        let mut cells = HashMap::with_capacity(r.cells.len());
        for c in &r.cells {
            cells
                .entry((c.workload.as_str(), c.variant.as_str(), c.connections))
                .or_insert(c);
        }
        let mut headline = HashMap::with_capacity(r.comparisons.len());
        for k in self::headline(&r.comparisons) {
            headline
                .entry((k.workload.as_str(), k.variant.as_str(), k.connections))
                .or_insert(k);
        }
        let mut beside = HashMap::new();
        for k in r.comparisons.iter().filter(|k| k.is_instructions()) {
            beside.entry(comp_key(k)).or_insert(k);
        }
        let throughput = r
            .comparisons
            .iter()
            .filter(|k| !k.is_instructions())
            .map(comp_key)
            .collect();
        Index {
            cells,
            headline,
            beside,
            throughput,
        }
    }

    /// [`Results::cell`] without a scan.
    pub fn cell(&self, workload: &str, variant: &str, connections: usize) -> Option<&'a Cell> {
        self.cells.get(&(workload, variant, connections)).copied()
    }

    /// [`Results::comparison`] without a scan.
    pub fn comparison(
        &self,
        workload: &str,
        variant: &str,
        connections: usize,
    ) -> Option<&'a ComparisonRecord> {
        self.headline
            .get(&(workload, variant, connections))
            .copied()
    }

    /// [`Results::instructions_beside`] without a scan.
    pub fn instructions_beside(&self, k: &ComparisonRecord) -> Option<&'a ComparisonRecord> {
        if k.is_instructions() {
            return None;
        }
        self.beside.get(&comp_key(k)).copied()
    }

    /// Whether an instruction-count record `k` has a throughput record beside it (mode
    /// both), i.e. it is not a headline comparison of its own.
    pub fn is_beside(&self, k: &ComparisonRecord) -> bool {
        k.is_instructions() && self.throughput.contains(&comp_key(k))
    }
}

/// Each variant's palette index, from an order of names (the first place a name has).
#[derive(Debug, Clone, Default)]
pub struct Palette(HashMap<String, usize>);

impl Palette {
    pub fn new<S: AsRef<str>>(order: &[S]) -> Palette {
        let mut m = HashMap::with_capacity(order.len());
        for (i, v) in order.iter().enumerate() {
            m.entry(v.as_ref().to_string()).or_insert(i);
        }
        Palette(m)
    }

    /// The results' colour order ([`crate::document::variant_order`]).
    pub fn of(r: &Results) -> Palette {
        Palette::new(&crate::document::variant_order(r))
    }

    /// A variant's palette index (0 for a name no variant has).
    pub fn color(&self, v: &str) -> usize {
        self.0.get(v).copied().unwrap_or(0)
    }
}
