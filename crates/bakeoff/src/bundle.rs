//! bundles
use crate::session::Failure;
pub fn export_cmd(_a: &crate::cli::ExportArgs) -> Result<(), Failure> {
    Err(Failure::Failed("todo".into()))
}
pub fn import_cmd(_a: &crate::cli::ImportArgs) -> Result<(), Failure> {
    Err(Failure::Failed("todo".into()))
}
