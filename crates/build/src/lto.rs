//! Link-time optimization as a build setting: the compiler's flags and the archiver, ranlib,
//! nm and linker that understand its intermediate code, so a user never has to know about
//! `AR=gcc-ar`. After the build, the objects are checked to carry that code (GCC's
//! `.gnu.lto_` sections, LLVM bitcode): an LTO build whose flags the project ignored fails
//! rather than passing as a plain one.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// `lto = "full"` or `"thin"` (clang only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lto {
    Full,
    Thin,
}

impl Lto {
    pub fn as_str(self) -> &'static str {
        match self {
            Lto::Full => "full",
            Lto::Thin => "thin",
        }
    }
}

/// The compiler family a command names, and its version suffix (`gcc-12` -> Gcc, "-12").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Family {
    Gcc(String),
    Clang(String),
}

/// gcc-N or clang-N (or plain gcc, cc, clang): None for compilers whose LTO tools bakeoff
/// does not know.
pub fn family(compiler: &str) -> Option<Family> {
    let name = Path::new(compiler.trim())
        .file_name()?
        .to_string_lossy()
        .to_string();
    let suffix = |prefix: &str| name.strip_prefix(prefix).map(str::to_string);
    if name == "cc" {
        return Some(Family::Gcc(String::new()));
    }
    if let Some(s) = suffix("gcc") {
        if s.is_empty() || s.starts_with('-') {
            return Some(Family::Gcc(s));
        }
    }
    if let Some(s) = suffix("clang") {
        if s.is_empty() || s.starts_with('-') {
            return Some(Family::Clang(s));
        }
    }
    None
}

/// What an LTO build adds: compiler and linker flags, and the tools' environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub cflags: String,
    pub ldflags: String,
    pub env: BTreeMap<String, String>,
}

/// The settings for `lto` with `compiler`, or why it cannot be done (one line with the fix).
pub fn settings(compiler: &str, lto: Lto) -> Result<Settings, String> {
    let tool = |name: String| -> Result<String, String> {
        match bakeoff_os::path::which(&name) {
            Some(_) => Ok(name),
            None => Err(format!(
                "lto needs {name}, which is not installed; run scripts/setup.sh"
            )),
        }
    };
    match (family(compiler), lto) {
        (Some(Family::Gcc(v)), Lto::Full) => Ok(Settings {
            cflags: "-flto=auto".into(),
            ldflags: "-flto=auto".into(),
            env: BTreeMap::from([
                ("AR".into(), tool(format!("gcc-ar{v}"))?),
                ("RANLIB".into(), tool(format!("gcc-ranlib{v}"))?),
                ("NM".into(), tool(format!("gcc-nm{v}"))?),
            ]),
        }),
        (Some(Family::Gcc(_)), Lto::Thin) => Err(format!(
            "lto = \"thin\" is clang's; {compiler} does full LTO only (lto = \"full\")"
        )),
        (Some(Family::Clang(v)), lto) => {
            let flag = match lto {
                Lto::Full => "-flto",
                Lto::Thin => "-flto=thin",
            };
            let lld = tool(format!("ld.lld{v}"))?;
            Ok(Settings {
                cflags: flag.into(),
                // clang links LTO objects with lld (GNU ld would need LLVM's gold plugin).
                ldflags: format!("{flag} -fuse-ld={}", lld.trim_start_matches("ld.")),
                env: BTreeMap::from([
                    ("AR".into(), tool(format!("llvm-ar{v}"))?),
                    ("RANLIB".into(), tool(format!("llvm-ranlib{v}"))?),
                    ("NM".into(), tool(format!("llvm-nm{v}"))?),
                ]),
            })
        }
        (None, _) => Err(format!(
            "lto knows gcc and clang (gcc-N, clang-N), not {compiler}; set the flags and AR yourself with cflags, ldflags and env"
        )),
    }
}

/// Objects under `dir` (at most `limit` looked at): (how many carry LTO code, how many).
pub fn objects_with_lto(dir: &Path, limit: usize) -> (usize, usize) {
    let mut stack = vec![dir.to_path_buf()];
    let (mut with, mut total) = (0, 0);
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() && p.extension().is_some_and(|x| x == "o") {
                total += 1;
                if std::fs::read(&p).is_ok_and(|b| carries_lto(&b)) {
                    with += 1;
                }
                if total >= limit {
                    return (with, total);
                }
            }
        }
    }
    (with, total)
}

/// LLVM bitcode (clang -flto) or an ELF object with GCC's LTO sections.
fn carries_lto(bytes: &[u8]) -> bool {
    bytes.starts_with(b"BC\xC0\xDE")
        || (bytes.starts_with(b"\x7fELF") && bytes.windows(9).any(|w| w == b".gnu.lto_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_their_tools() {
        assert_eq!(family("gcc-12"), Some(Family::Gcc("-12".into())));
        assert_eq!(
            family("/usr/bin/clang-16"),
            Some(Family::Clang("-16".into()))
        );
        assert_eq!(family("clang"), Some(Family::Clang(String::new())));
        assert_eq!(family("icx"), None);
        assert_eq!(family("gccgo"), None);
        assert!(settings("gcc-12", Lto::Thin)
            .unwrap_err()
            .contains("clang's"));
        assert!(settings("icx", Lto::Full).is_err());
        let g = settings("gcc-12", Lto::Full).unwrap();
        assert_eq!(g.env["AR"], "gcc-ar-12");
        assert_eq!(g.cflags, "-flto=auto");
    }

    #[test]
    fn lto_objects_are_recognized() {
        assert!(carries_lto(b"BC\xC0\xDE rest"));
        let mut elf = b"\x7fELF....".to_vec();
        elf.extend_from_slice(b"\0.gnu.lto_main.0\0");
        assert!(carries_lto(&elf));
        assert!(!carries_lto(b"\x7fELF plain object"));
    }
}
