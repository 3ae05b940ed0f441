//! Loading an experiment a study derived from a file (a bisect step, a tune stage, the
//! noise check): one place that writes it beside the original, loads it and removes it.
//! Its own module, above `derive` (which makes the texts) and `document` (which loads
//! them), so neither imports the other.

/// Why a derived experiment could not be loaded.
#[derive(Debug)]
pub enum DerivedError {
    /// Its file could not be written beside the original (the message names the path).
    Write(String),
    /// It does not load (a derivation the file's own checks refuse).
    Load(crate::PlanError),
}

/// An experiment derived from `original` (a bisect step, a tune stage, a noise check):
/// `text` written beside the original file under a hidden name of `tag` and this
/// process (so its relative paths, patches, files, a local git source, resolve the same),
/// loaded with `kinds`, and the file removed again. One place for every study's steps.
pub fn load_derived(
    original: &std::path::Path,
    tag: &str,
    text: &str,
    kinds: &'static dyn crate::Kinds,
) -> Result<crate::Loaded, DerivedError> {
    let name: String = tag
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = original.with_file_name(format!(".bakeoff-{name}-{}.toml", std::process::id()));
    std::fs::write(&path, text)
        .map_err(|err| DerivedError::Write(format!("cannot write {}: {err}", path.display())))?;
    let loaded = crate::load(&path, kinds);
    let _ = std::fs::remove_file(&path);
    loaded.map_err(DerivedError::Load)
}
