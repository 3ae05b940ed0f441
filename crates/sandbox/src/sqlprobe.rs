//! Runs one readiness probe of a SQL server on a throwaway single-threaded runtime, bounded
//! in time: the sandbox's probe loop is synchronous.

use std::future::Future;
use std::time::Duration;

/// `Ok(false)` on timeout; the future's own error otherwise.
pub(crate) fn block_on<F>(timeout: Duration, fut: F) -> std::io::Result<bool>
where
    F: Future<Output = std::io::Result<bool>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    rt.block_on(async move {
        match tokio::time::timeout(timeout, fut).await {
            Ok(r) => r,
            Err(_) => Ok(false),
        }
    })
}
