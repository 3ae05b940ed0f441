//! The build cache key: a sha256 over everything that can change a build's output: the source
//! identity, the patches' contents (in order), the compiler command and the hash of its full
//! `--version` output, the matching C++ compiler, cflags, ldflags, configure and make
//! arguments, the variant's env, the recipe (name and version, which changes when this crate
//! changes how that recipe builds) and the product path. The variant's name is NOT part of the key, so two variants
//! with identical builds share one cache entry (and one binary).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compiler::{matching_cxx, CompilerId};
use crate::error::Result;
use crate::prepare::{read_patches, PatchFile};
use crate::source::SourceTree;
use crate::spec::BuildSpec;
use crate::util::sha256_hex;

/// The hashed inputs, also written to each entry's `build.json` for inspection.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct KeyInputs {
    recipe: String,
    source_id: String,
    patches: Vec<String>,
    compiler: String,
    compiler_version_hash: String,
    pub cxx: Option<String>,
    cflags: String,
    ldflags: String,
    configure_args: Vec<String>,
    make_args: Vec<String>,
    env: BTreeMap<String, String>,
    product: String,
}

impl KeyInputs {
    pub(crate) fn new(
        tree: &SourceTree,
        spec: &BuildSpec,
        compiler: &CompilerId,
        patches: &[PatchFile],
    ) -> Self {
        KeyInputs {
            recipe: spec.recipe.id(),
            source_id: tree.id.clone(),
            patches: patches.iter().map(|p| p.sha256.clone()).collect(),
            compiler: compiler.command.clone(),
            compiler_version_hash: compiler.version_hash.clone(),
            cxx: matching_cxx(&compiler.command),
            cflags: spec.cflags.clone(),
            ldflags: spec.ldflags.clone(),
            configure_args: spec.configure_args.clone(),
            make_args: spec.make_args.clone(),
            env: spec.env.clone(),
            product: spec.recipe.product().display().to_string(),
        }
    }

    /// 32 hex digits (128 bits) of the sha256 of the canonical JSON of the inputs.
    pub(crate) fn key(&self) -> String {
        // Serializing plain strings, vectors and a BTreeMap cannot fail.
        let json = serde_json::to_string(self).unwrap_or_default();
        sha256_hex(json.as_bytes())[..32].to_string()
    }
}

/// The cache key `build` would use for this tree, spec and compiler (reads the patch files).
pub fn cache_key(tree: &SourceTree, spec: &BuildSpec, compiler: &CompilerId) -> Result<String> {
    let patches = read_patches(&spec.patches)?;
    Ok(KeyInputs::new(tree, spec, compiler, &patches).key())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Recipe;
    use std::path::PathBuf;

    fn tree() -> SourceTree {
        SourceTree {
            dir: "/src".into(),
            id: "source-id-1".into(),
            description: "test".into(),
        }
    }

    fn compiler(version_text: &str) -> CompilerId {
        CompilerId {
            command: "gcc-12".into(),
            path: "/usr/bin/gcc-12".into(),
            version: version_text.lines().next().unwrap_or("").into(),
            version_hash: sha256_hex(version_text.as_bytes()),
        }
    }

    fn spec(patch: PathBuf) -> BuildSpec {
        BuildSpec {
            variant: "base".into(),
            compiler: "gcc-12".into(),
            cflags: "-O2".into(),
            ldflags: String::new(),
            configure_args: vec!["--disable-docs".into()],
            make_args: vec![],
            patches: vec![patch],
            env: BTreeMap::from([("A".to_string(), "1".to_string())]),
            recipe: Recipe::autotools("memcached"),
            lto: None,
            profile: None,
            layout_seed: None,
        }
    }

    #[test]
    fn key_tracks_every_input_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let patch = tmp.path().join("p.diff");
        std::fs::write(&patch, "--- a/x\n+++ b/x\n").unwrap();
        let (t, c) = (
            tree(),
            compiler("gcc-12 (Debian 12.2.0-14) 12.2.0\nCopyright\n"),
        );
        let base_spec = spec(patch.clone());
        let base = cache_key(&t, &base_spec, &c).unwrap();
        assert_eq!(base.len(), 32);
        let key_with = |f: &dyn Fn(&mut BuildSpec)| {
            let mut s = base_spec.clone();
            f(&mut s);
            cache_key(&t, &s, &c).unwrap()
        };

        // Not part of the key: the variant name, the patch's file name, the env map's order.
        assert_eq!(key_with(&|s| s.variant = "other".into()), base);
        let renamed = tmp.path().join("renamed.diff");
        std::fs::copy(&patch, &renamed).unwrap();
        assert_eq!(key_with(&|s| s.patches = vec![renamed.clone()]), base);
        assert_eq!(
            cache_key(&t, &base_spec, &c).unwrap(),
            base,
            "deterministic"
        );

        // Part of the key: everything that can change the binary.
        let changed = [
            key_with(&|s| s.cflags = "-O3".into()),
            key_with(&|s| s.ldflags = "-flto".into()),
            key_with(&|s| s.configure_args.push("--enable-x".into())),
            key_with(&|s| s.make_args.push("V=1".into())),
            key_with(&|s| {
                s.env.insert("A".into(), "2".into());
            }),
            key_with(&|s| {
                s.env.insert("B".into(), "1".into());
            }),
            key_with(&|s| s.recipe = Recipe::autotools("memcached-debug")),
            key_with(&|s| s.recipe = crate::Recipe::Postgres),
            key_with(&|s| s.recipe = crate::Recipe::Mariadb),
            key_with(&|s| s.recipe = crate::Recipe::Sqlite),
            key_with(&|s| s.recipe = crate::Recipe::redis("src/redis-server")),
            key_with(&|s| s.patches.clear()),
        ];
        for (i, k) in changed.iter().enumerate() {
            assert_ne!(*k, base, "change #{i} must change the key");
        }
        let new_version = compiler("gcc-12 (Debian 12.2.0-15) 12.2.0\nCopyright\n");
        assert_ne!(cache_key(&t, &base_spec, &new_version).unwrap(), base);
        let other_command = CompilerId {
            command: "gcc".into(),
            ..c.clone()
        };
        assert_ne!(cache_key(&t, &base_spec, &other_command).unwrap(), base);
        let other_source = SourceTree {
            id: "source-id-2".into(),
            ..tree()
        };
        assert_ne!(cache_key(&other_source, &base_spec, &c).unwrap(), base);

        std::fs::write(&patch, "--- a/x\n+++ b/x\n@@ changed\n").unwrap();
        assert_ne!(
            cache_key(&t, &base_spec, &c).unwrap(),
            base,
            "patch content"
        );
    }
}
