//! Code layouts: the same build with its functions in another order. Every function gets
//! its own section (`-ffunction-sections`) and the linker shuffles those sections with a
//! seed, so two layouts of one variant differ only in where its code sits: the
//! alignment and cache-set luck that can move a server by a few percent on its own
//! (Mytkowicz et al., ASPLOS 2009). gcc links with mold (it takes gcc's LTO plugin, which
//! lld cannot); clang with lld. Both shuffle code only among the sections that may move
//! (never `.init_array` and the like).

use crate::lto::{family, Family, Settings};

/// What a layout-seeded build adds to the variant's flags, or why it cannot be done.
pub fn settings(compiler: &str, seed: u64) -> Result<Settings, String> {
    let tool = |name: &str| -> Result<(), String> {
        match bakeoff_os::path::which(name) {
            Some(_) => Ok(()),
            None => Err(format!(
                "layouts need {name}, which is not installed; run scripts/setup.sh"
            )),
        }
    };
    // Function sections at the link too: with LTO the code is generated there.
    let sections = "-ffunction-sections".to_string();
    match family(compiler) {
        Some(Family::Gcc(_)) => {
            tool("ld.mold")?;
            Ok(Settings {
                cflags: sections.clone(),
                ldflags: format!("{sections} -fuse-ld=mold -Wl,--shuffle-sections={seed}"),
                env: Default::default(),
            })
        }
        Some(Family::Clang(v)) => {
            tool(&format!("ld.lld{v}"))?;
            Ok(Settings {
                cflags: sections.clone(),
                ldflags: format!(
                    "{sections} -fuse-ld=lld{v} -Wl,--shuffle-sections=.text.*={seed}"
                ),
                env: Default::default(),
            })
        }
        None => Err(format!(
            "layouts know gcc and clang (gcc-N, clang-N), not {compiler}: their linkers are the ones bakeoff shuffles with"
        )),
    }
}

/// The seed of each of `count` layouts under the experiment's seed: positive, below
/// 2^31, distinct, and never the values the linkers treat specially (0: a random seed,
/// -1: reversed).
pub fn seeds(plan_seed: u64, count: usize) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::with_capacity(count);
    let mut state = plan_seed ^ 0x6c61_796f_7574_7321;
    while out.len() < count {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let seed = 1 + z % ((1 << 31) - 2);
        if !out.contains(&seed) {
            out.push(seed);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_stable_distinct_and_in_range() {
        let a = seeds(42, 8);
        assert_eq!(a, seeds(42, 8));
        assert_eq!(
            &seeds(42, 3)[..],
            &a[..3],
            "more layouts keep the first ones"
        );
        assert_ne!(a, seeds(43, 8));
        let set: std::collections::BTreeSet<_> = a.iter().collect();
        assert_eq!(set.len(), 8);
        assert!(a.iter().all(|s| *s >= 1 && *s < (1 << 31)));
    }

    #[test]
    fn flags_per_compiler() {
        if bakeoff_os::path::which("ld.mold").is_some() {
            let s = settings("gcc-12", 7).unwrap();
            assert_eq!(s.cflags, "-ffunction-sections");
            assert!(s.ldflags.contains("-fuse-ld=mold -Wl,--shuffle-sections=7"));
        }
        if bakeoff_os::path::which("ld.lld-16").is_some() {
            let s = settings("clang-16", 7).unwrap();
            assert!(s
                .ldflags
                .contains("-fuse-ld=lld-16 -Wl,--shuffle-sections=.text.*=7"));
        }
        let e = settings("icx", 1).unwrap_err();
        assert!(e.contains("gcc and clang"), "{e}");
    }
}
