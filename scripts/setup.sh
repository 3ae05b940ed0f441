#!/usr/bin/env bash
# Installs everything bakeoff needs on Debian bookworm, idempotently, and puts
# `bakeoff` on PATH. Safe to run again: each step checks before it changes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. deb-src, so `apt-get source memcached` works.
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && grep -q '^Types: deb$' "$src"; then
  sudo_ sed -i 's/^Types: deb$/Types: deb deb-src/' "$src"
  need_update=1
fi
if [ -f /etc/apt/sources.list ] && grep -q '^deb http' /etc/apt/sources.list \
   && ! grep -q '^deb-src' /etc/apt/sources.list; then
  sudo_ sed -n 's/^deb \(http.*\)$/deb-src \1/p' /etc/apt/sources.list | sudo_ tee -a /etc/apt/sources.list >/dev/null
  need_update=1
fi

# 2. Debian packages: servers, peer load tools, compilers, build tools, profilers.
# The MariaDB recipe's cmake (a server from `apt-get source mariadb`) needs cmake, the system
# libfmt and PCRE2 it asks for (WITH_LIBFMT/WITH_PCRE=system: nothing downloaded), OpenSSL,
# zlib and curses; the source ships its bison output, so bison is not needed. The real
# sql-bench (Perl, from that source tree) talks to the servers through DBI: DBD::mysql, DBD::Pg.
# The allocators a variant's `preload` names: libjemalloc2, libtcmalloc-minimal4, libmimalloc2.0.
# openssl makes the certificate a MariaDB 11.4+ sandbox is given (else the server makes one at
# every start, 13-65 s here).
pkgs=(build-essential dpkg-dev patch git curl ca-certificates openssl pkg-config autoconf automake libtool
      cmake libfmt-dev libpcre2-dev libssl-dev zlib1g-dev libncurses-dev
      memcached libmemcached-tools libevent-dev
      mariadb-server mariadb-client postgresql-15 sysbench libsqlite3-0 sqlite3
      redis-server redis-tools libjemalloc-dev libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
      gcc-12 clang-16 libclang-rt-16-dev llvm-16 lld-16 bolt-16 mold openssh-server
      libdbi-perl libdbd-mysql-perl libdbd-mariadb-perl libdbd-pg-perl
      linux-perf valgrind hyperfine strace
      chromium chromium-driver)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] || [ -n "${need_update:-}" ] || ! ls /var/lib/apt/lists/*Sources* >/dev/null 2>&1; then
  sudo_ apt-get update -qq
fi
if [ "${#missing[@]}" -gt 0 ]; then
  # bakeoff runs its own sandboxes: keep the packages' system services from starting
  # (policy-rc.d), and stop any that were already running before.
  had_policy=""; [ -e /usr/sbin/policy-rc.d ] && had_policy=1
  [ -n "$had_policy" ] || printf '#!/bin/sh\nexit 101\n' | sudo_ tee /usr/sbin/policy-rc.d >/dev/null
  sudo_ chmod +x /usr/sbin/policy-rc.d
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  [ -n "$had_policy" ] || sudo_ rm -f /usr/sbin/policy-rc.d
fi
# Building PostgreSQL from `apt-get source postgresql-15` needs nothing beyond
# build-essential: bakeoff configures it --without-readline/zlib/icu, and the release
# tarball ships the bison/flex output. Check that the source packages resolve.
for s in memcached postgresql-15 redis mariadb; do
  apt-get source --print-uris -qq "$s" >/dev/null 2>&1 \
    || echo "warning: \`apt-get source $s\` does not resolve: check deb-src in $src and run apt-get update" >&2
done

# 2b. What `[[variant]] dist` fetches and unpacks with: the registries' own clients (mvn
# with a headless JDK, pip, npm; apt-get download is there already), unzip, xz and zstd.
# Each only where its command is missing (a pip or npm from elsewhere is kept).
dist_tools=()
command -v mvn >/dev/null 2>&1 || dist_tools+=(maven)
command -v java >/dev/null 2>&1 || dist_tools+=(default-jre-headless)
command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1 || dist_tools+=(python3-pip)
command -v npm >/dev/null 2>&1 || dist_tools+=(npm)
for t in unzip:unzip xz:xz-utils zstd:zstd dpkg-deb:dpkg readelf:binutils; do
  command -v "${t%%:*}" >/dev/null 2>&1 || dist_tools+=("${t##*:}")
done
if [ "${#dist_tools[@]}" -gt 0 ]; then
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${dist_tools[@]}"
fi

# The unprivileged user SQL servers run as when bakeoff runs as root (PostgreSQL refuses
# root; a uid switch by the server itself would clear its parent-death signal).
id bakeoff >/dev/null 2>&1 \
  || sudo_ useradd --system --no-create-home --shell /usr/sbin/nologin bakeoff

# 3. Rust: use the toolchain that is there (rustup), else Debian's.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cargo rustc
fi

# 4. Build bakeoff and put it on PATH.
(cd "$here" && cargo build --release --locked -q -p bakeoff)
bindir=/usr/local/bin
sudo_ install -m 0755 "$here/target/release/bakeoff" "$bindir/bakeoff"
# The host a sqlite target's library runs in; bakeoff finds it beside itself.
sudo_ install -m 0755 "$here/target/release/bakeoff-sqlited" "$bindir/bakeoff-sqlited"
# Shell completion, the man page and the example experiments, where users look for them.
share=/usr/local/share
tmp="$(mktemp -d)"
"$bindir/bakeoff" completions bash > "$tmp/bakeoff.bash"
"$bindir/bakeoff" man > "$tmp/bakeoff.1"
sudo_ install -D -m 0644 "$tmp/bakeoff.bash" "$share/bash-completion/completions/bakeoff"
sudo_ install -D -m 0644 "$tmp/bakeoff.1" "$share/man/man1/bakeoff.1"
rm -rf "$tmp"
sudo_ mkdir -p "$share/bakeoff"
sudo_ rm -rf "$share/bakeoff/examples"
sudo_ cp -r "$here/examples" "$share/bakeoff/examples"
echo "bakeoff installed: $bindir/bakeoff ($("$bindir/bakeoff" --version))"
