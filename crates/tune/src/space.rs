//! The candidate space: the cartesian product of the `[tune]` lists, each candidate a
//! recipe (compiler, optimization level, `-march`, LTO kind, PGO, BOLT, an extra flag
//! group), with the combinations that cannot be built left out and listed with why.

use serde::{Deserialize, Serialize};

/// The most candidates a space may hold (`flags` trimmed or fewer choices beyond it).
pub const MAX_CANDIDATES: usize = 256;

/// Link-time optimization as `[tune] lto` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Lto {
    None,
    Thin,
    Full,
}

impl Lto {
    pub fn as_str(self) -> &'static str {
        match self {
            Lto::None => "none",
            Lto::Thin => "thin",
            Lto::Full => "full",
        }
    }

    /// `"none"`, `"thin"` or `"full"`.
    pub fn parse(s: &str) -> Option<Lto> {
        match s {
            "none" => Some(Lto::None),
            "thin" => Some(Lto::Thin),
            "full" => Some(Lto::Full),
            _ => None,
        }
    }
}

/// The space as `[tune]` gives it: each factor's choices, the first the reference level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Space {
    pub compiler: Vec<String>,
    pub opt: Vec<String>,
    pub march: Vec<String>,
    pub lto: Vec<Lto>,
    pub pgo: Vec<bool>,
    pub bolt: Vec<bool>,
    pub flags: Vec<String>,
    /// The workload PGO and BOLT train on (`[tune] train`).
    pub train: Option<String>,
}

impl Default for Space {
    /// One choice per factor: gcc -O2, nothing else.
    fn default() -> Self {
        Space {
            compiler: vec!["gcc".into()],
            opt: vec!["-O2".into()],
            march: vec![String::new()],
            lto: vec![Lto::None],
            pgo: vec![false],
            bolt: vec![false],
            flags: vec![String::new()],
            train: None,
        }
    }
}

/// One candidate build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipe {
    pub compiler: String,
    pub opt: String,
    pub march: String,
    pub lto: Lto,
    pub pgo: bool,
    pub bolt: bool,
    pub flags: String,
}

/// The factors, in the order names and tables list them.
pub const FACTORS: [&str; 7] = ["compiler", "opt", "march", "lto", "pgo", "bolt", "flags"];

impl Recipe {
    /// The recipe's level of a factor (one of [`FACTORS`]), as the space lists it.
    pub fn level(&self, factor: &str) -> String {
        match factor {
            "compiler" => self.compiler.clone(),
            "opt" => self.opt.clone(),
            "march" => self.march.clone(),
            "lto" => self.lto.as_str().into(),
            "pgo" => self.pgo.to_string(),
            "bolt" => self.bolt.to_string(),
            "flags" => self.flags.clone(),
            _ => String::new(),
        }
    }

    /// The compiler flags the recipe adds: opt, march and the flag group, in that order.
    pub fn cflags(&self) -> String {
        [&self.opt, &self.march, &self.flags]
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// True for gcc (gcc, gcc-N, cc): the compiler family without thin LTO.
    pub fn is_gcc(&self) -> bool {
        let base = self.compiler.rsplit('/').next().unwrap_or("");
        base == "cc" || base == "gcc" || base.starts_with("gcc-")
    }

    /// A short, unique name within its space: `gcc-12.O2.native.lto-full.pgo.bolt.f2`
    /// (`flag_index`: the flag group's position, 1-based, None for no group).
    pub fn name(&self, flag_index: Option<usize>) -> String {
        let word = |s: &str| {
            s.trim()
                .trim_start_matches('-')
                .trim_start_matches("march=")
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '+' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        };
        let compiler = self.compiler.rsplit('/').next().unwrap_or("cc");
        let mut parts = vec![word(compiler)];
        if !self.opt.trim().is_empty() {
            parts.push(word(&self.opt));
        }
        if !self.march.trim().is_empty() {
            parts.push(word(&self.march));
        }
        if self.lto != Lto::None {
            parts.push(format!("lto-{}", self.lto.as_str()));
        }
        if self.pgo {
            parts.push("pgo".into());
        }
        if self.bolt {
            parts.push("bolt".into());
        }
        if let Some(i) = flag_index {
            parts.push(format!("f{i}"));
        }
        parts.join(".")
    }
}

/// A candidate of the space.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    pub name: String,
    pub recipe: Recipe,
}

/// A combination left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excluded {
    pub name: String,
    pub recipe: Recipe,
    pub reason: String,
}

impl Space {
    /// How many combinations the lists make (before any is left out).
    pub fn size(&self) -> usize {
        [
            self.compiler.len(),
            self.opt.len(),
            self.march.len(),
            self.lto.len(),
            self.pgo.len(),
            self.bolt.len(),
            self.flags.len(),
        ]
        .iter()
        .product()
    }

    /// The factors with more than one choice, each with its levels (the first is the
    /// reference every effect is measured against).
    pub fn factors(&self) -> Vec<(&'static str, Vec<String>)> {
        let levels: [Vec<String>; 7] = [
            self.compiler.clone(),
            self.opt.clone(),
            self.march.clone(),
            self.lto.iter().map(|l| l.as_str().to_string()).collect(),
            self.pgo.iter().map(bool::to_string).collect(),
            self.bolt.iter().map(bool::to_string).collect(),
            self.flags.clone(),
        ];
        FACTORS
            .iter()
            .zip(levels)
            .filter(|(_, l)| l.len() > 1)
            .map(|(f, l)| (*f, l))
            .collect()
    }

    /// Every combination, split into candidates and those left out: thin LTO with gcc,
    /// PGO or BOLT without a `train` workload, and whatever `refuses` says of a recipe
    /// (the target or this machine's tools: BOLT where there is no llvm-bolt, LTO on a
    /// target that links nothing).
    pub fn candidates(
        &self,
        refuses: impl Fn(&Recipe) -> Option<String>,
    ) -> (Vec<Candidate>, Vec<Excluded>) {
        let (mut ok, mut out) = (Vec::new(), Vec::new());
        let flagged = self.flags.len() > 1 || self.flags.iter().any(|f| !f.trim().is_empty());
        for compiler in &self.compiler {
            for opt in &self.opt {
                for march in &self.march {
                    for &lto in &self.lto {
                        for &pgo in &self.pgo {
                            for &bolt in &self.bolt {
                                for (fi, flags) in self.flags.iter().enumerate() {
                                    let recipe = Recipe {
                                        compiler: compiler.clone(),
                                        opt: opt.clone(),
                                        march: march.clone(),
                                        lto,
                                        pgo,
                                        bolt,
                                        flags: flags.clone(),
                                    };
                                    let index =
                                        (flagged && !flags.trim().is_empty()).then_some(fi + 1);
                                    let name = recipe.name(index);
                                    match self.why_not(&recipe).or_else(|| refuses(&recipe)) {
                                        Some(reason) => out.push(Excluded {
                                            name,
                                            recipe,
                                            reason,
                                        }),
                                        None => ok.push(Candidate { name, recipe }),
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (ok, out)
    }

    /// The space's own reasons a recipe cannot be built.
    fn why_not(&self, r: &Recipe) -> Option<String> {
        if r.lto == Lto::Thin && r.is_gcc() {
            return Some(format!(
                "thin LTO is clang's; {} does full LTO only",
                r.compiler
            ));
        }
        if (r.pgo || r.bolt) && self.train.is_none() {
            return Some(format!(
                "{} needs a training workload: set [tune] train",
                if r.pgo { "PGO" } else { "BOLT" }
            ));
        }
        None
    }
}
