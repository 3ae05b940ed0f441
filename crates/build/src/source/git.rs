//! Git sources: clone the url (a local repository path works too), resolve the rev to a commit
//! (also as `origin/<rev>` for branches other than the default), check it out detached and
//! init submodules. Cached under url + rev: a branch name is resolved on the first fetch only,
//! so pin a commit for reproducible experiments. Identity: the commit hash. `.git` is kept
//! (version scripts such as memcached's run `git describe`).

use std::path::Path;
use std::process::Command;

use super::{cached_or_fill, SourceMeta, SourceTree};
use crate::cache::Cache;
use crate::error::{BuildError, Result};
use crate::util::{last_lines, require_tool, run_captured, sha256_hex};

pub(super) fn fetch(url: &str, rev: &str, cache: &Cache) -> Result<SourceTree> {
    let fail = |detail: String| BuildError::Git {
        url: url.to_string(),
        rev: rev.to_string(),
        detail,
    };
    if url.trim().is_empty() || rev.trim().is_empty() || rev.starts_with('-') {
        return Err(fail(
            "url and rev must be non-empty and rev must not start with `-`".into(),
        ));
    }
    let name = sha256_hex(format!("{url}\n{rev}").as_bytes())[..32].to_string();
    cached_or_fill(cache, "git", &name, |staging| {
        require_tool("git", "git")?;
        let tree = staging.join("tree");
        let mut clone = Command::new("git");
        clone.args(["clone", "--quiet", "--", url]).arg(&tree);
        git(&mut clone).map_err(fail)?;
        let commit = resolve(&tree, rev).map_err(fail)?;
        git(in_repo(&tree).args(["checkout", "--quiet", "--detach", &commit])).map_err(fail)?;
        if tree.join(".gitmodules").is_file() {
            let mut cmd = in_repo(&tree);
            git(cmd.args(["submodule", "update", "--init", "--recursive"])).map_err(fail)?;
        }
        Ok(SourceMeta {
            id: sha256_hex(format!("git:{commit}").as_bytes()),
            description: format!("git {url} {rev} ({})", &commit[..commit.len().min(12)]),
        })
    })
}

fn in_repo(tree: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(tree)
        .args(["-c", "advice.detachedHead=false"]);
    cmd
}

/// Run a git command; on failure return its last output line.
fn git(cmd: &mut Command) -> Result<String, String> {
    let res = run_captured(cmd.env("GIT_TERMINAL_PROMPT", "0")).map_err(|e| e.to_string())?;
    if res.ok {
        Ok(res.output.trim().to_string())
    } else {
        Err(last_lines(res.output.trim(), 1))
    }
}

/// The full commit hash `rev` names, trying `origin/<rev>` for non-default branches.
fn resolve(tree: &Path, rev: &str) -> Result<String, String> {
    let verify = |r: &str| {
        let spec = format!("{r}^{{commit}}");
        git(in_repo(tree).args(["rev-parse", "--verify", "--quiet", &spec]))
    };
    verify(rev)
        .or_else(|_| verify(&format!("origin/{rev}")))
        .map_err(|_| format!("rev `{rev}` not found in the repository"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{fetch as fetch_source, SourceSpec};

    fn sh(dir: &Path, script: &str) -> String {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A repo with two commits on `main` and a tag `v1` on the first.
    fn make_repo(dir: &Path) -> (String, String) {
        std::fs::create_dir_all(dir).unwrap();
        sh(dir, "git init -q -b main . && echo one > f && git add f && git commit -qm one && git tag v1");
        let first = sh(dir, "git rev-parse HEAD");
        sh(
            dir,
            "echo two > f && git commit -qam two && git branch side HEAD~1",
        );
        let second = sh(dir, "git rev-parse HEAD");
        (first, second)
    }

    #[test]
    fn local_repo_at_tag_branch_and_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let (first, second) = make_repo(&repo);
        let cache = Cache::new(tmp.path().join("cache"));
        let url = repo.display().to_string();
        let get = |rev: &str| {
            let spec = SourceSpec::Git {
                url: url.clone(),
                rev: rev.into(),
            };
            fetch_source(&spec, &cache).unwrap()
        };
        let tag = get("v1");
        assert_eq!(std::fs::read_to_string(tag.dir.join("f")).unwrap(), "one\n");
        assert!(
            tag.description.contains(&first[..12]),
            "{}",
            tag.description
        );
        let head = get("main");
        assert_eq!(
            std::fs::read_to_string(head.dir.join("f")).unwrap(),
            "two\n"
        );
        let by_commit = get(&second);
        assert_eq!(
            by_commit.id, head.id,
            "identity is the commit, not the rev text"
        );
        assert_ne!(head.id, tag.id);
        assert_eq!(
            get("side").id,
            tag.id,
            "non-default branch via origin/<rev>"
        );
    }

    #[test]
    fn missing_rev_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        make_repo(&repo);
        let cache = Cache::new(tmp.path().join("cache"));
        let spec = SourceSpec::Git {
            url: repo.display().to_string(),
            rev: "no-such-rev".into(),
        };
        let err = fetch_source(&spec, &cache).unwrap_err();
        assert!(err.to_string().contains("no-such-rev"), "{err}");
    }
}
