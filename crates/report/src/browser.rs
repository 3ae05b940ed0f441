//! The report's browser tests' one runner: headless chromium's DOM of a page after its
//! scripts ran, at 1280x800 (report.html's own tests and the kinds' sections, which the
//! workloads crate renders through its registry).

/// Headless chromium's DOM of `page` after its scripts ran, at 1280x800; None where no
/// chromium is installed (the caller says so and skips). `tag` names its scratch folder.
pub fn dom(page: &str, tag: &str) -> Option<String> {
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(bakeoff_os::path::which)?;
    let dir = std::env::temp_dir().join(format!("bakeoff-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let file = dir.join("report.html");
    std::fs::write(&file, page).ok()?;
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,800",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("chromium");
    let _ = std::fs::remove_dir_all(&dir);
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}
