//! The experiment file once read: the [`Experiment`] with the file's text and syntax tree
//! kept, so every error, now or later, points at `file:line:col` of the key it is about
//! ([`Loaded::error_at`]).

use super::{Experiment, Kinds};
use crate::located::{keys_in, locate_offset, offset_of, Key, PlanError};
use std::path::{Path, PathBuf};

/// An experiment file that parsed and passed validation, with its text kept so later
/// checks (a compiler missing, say) can still point at the key that named it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub experiment: Experiment,
    /// The file as given on the command line.
    pub path: PathBuf,
    /// The directory relative paths in the file are resolved against.
    pub base_dir: PathBuf,
    /// The file's exact text (kept in the results folder).
    pub text: String,
    pub(crate) doc: Option<toml_edit::ImDocument<String>>,
    /// The workload kinds it was read with.
    pub(crate) kinds: &'static dyn Kinds,
}

impl Loaded {
    /// The workload kinds the file was read with.
    pub fn kinds(&self) -> &'static dyn Kinds {
        self.kinds
    }

    /// The file as a variant of `kind` reads it: `[target] kind` set to that kind, so
    /// what is made per kind (each workload's protocol or dialect, a server's facts) is
    /// made for it. The text and positions stay the file's.
    pub fn for_kind(&self, kind: crate::TargetKind) -> Loaded {
        let mut l = self.clone();
        l.experiment.target.kind = kind;
        l
    }

    /// An error at the key `at` (or at the nearest enclosing key the file has).
    pub fn error_at(&self, at: &[Key], message: impl Into<String>) -> PlanError {
        PlanError {
            location: locate_offset(&self.path, &self.text, self.offset_of(at)),
            message: message.into(),
        }
    }

    /// Resolves a path from the file (patches, sources) against the file's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// The keys the file sets in the table at `at` (empty if there is none), in file order.
    pub fn keys_in(&self, at: &[Key]) -> Vec<String> {
        match self.doc.as_ref() {
            Some(doc) => keys_in(doc, at),
            None => Vec::new(),
        }
    }

    fn offset_of(&self, at: &[Key]) -> Option<usize> {
        offset_of(self.doc.as_ref()?, at)
    }
}
