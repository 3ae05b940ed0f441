#!/usr/bin/env bash
# What ssh costs: the same memcached experiment run here and through the agent on
# 127.0.0.2 (an sshd this script starts, with a generated key; the server and the load
# both on that "host", so only the agent path differs), alternating, PAIRS times each.
# Prints per experiment the median ops/s and client CPU per op, then the ratios
# agent/local per pair and their median.
# Usage: bash bench/hosts.sh [PAIRS] [DURATION]   (default 4 pairs, 10s windows)
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pairs="${1:-4}"
duration="${2:-10s}"
bin="${BAKEOFF:-$here/target/release/bakeoff}"
out="$(mktemp -d)"
ssh_dir="$out/sshd"
mkdir -p "$ssh_dir" /run/sshd
ssh-keygen -q -t ed25519 -N "" -f "$ssh_dir/host_key"
ssh-keygen -q -t ed25519 -N "" -f "$ssh_dir/user_key"
cp "$ssh_dir/user_key.pub" "$ssh_dir/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.2",0)); print(s.getsockname()[1])')
cat > "$ssh_dir/sshd_config" <<CONF
ListenAddress 127.0.0.2:$port
HostKey $ssh_dir/host_key
AuthorizedKeysFile $ssh_dir/authorized_keys
PidFile none
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
CONF
/usr/sbin/sshd -D -f "$ssh_dir/sshd_config" -E "$ssh_dir/sshd.log" &
sshd=$!
trap 'kill $sshd 2>/dev/null || true' EXIT
sleep 1

common='[[variant]]
name = "installed"
binary = "/usr/bin/memcached"
args = ["-t", "1"]

[[workload]]
kind = "kv"
connections = [8]
mix = { get = 9, set = 1 }
keys = 10000
CLIENTS

[plan]
repetitions = 3
warmup = "1s"
duration = "'"$duration"'"'
printf 'name = "ssh-local"\n[target]\nkind = "memcached"\n%s\n' \
  "${common/CLIENTS/}" > "$out/local.toml"
printf 'name = "ssh-agent"\n[target]\nkind = "memcached"\nhost = "db"\n%s\n\n[[host]]\nname = "db"\nssh = "%s@127.0.0.2"\nport = %s\nidentity = "%s"\nwork_dir = "%s"\nssh_options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"]\n' \
  "${common/CLIENTS/clients = [\"db\"]}" "${USER:-root}" "$port" "$ssh_dir/user_key" "$out/db" > "$out/agent.toml"

for i in $(seq 1 "$pairs"); do
  for kind in local agent; do
    "$bin" run "$out/$kind.toml" --no-history --quiet --out "$out/$kind-$i" > /dev/null
  done
done

python3 - "$out" "$pairs" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def figures(path):
    r = json.load(open(path))
    runs = [x for c in r["cells"] for x in c["runs"] if x["valid"]]
    return (statistics.median(x["ops_per_s"] for x in runs),
            statistics.median(x["client_cpu_us_per_op"] for x in runs),
            statistics.median(x["server_cpu_us_per_op"] for x in runs))
ratios = []
print("pair  local ops/s  agent ops/s  local cpu/op  agent cpu/op  local srv/op  agent srv/op")
for i in range(1, pairs + 1):
    l = figures(f"{out}/local-{i}/results.json")
    a = figures(f"{out}/agent-{i}/results.json")
    ratios.append((a[0] / l[0], a[1] / l[1], a[2] / l[2]))
    print(f"{i:4}  {l[0]:11.0f}  {a[0]:11.0f}  {l[1]:10.2f}us  {a[1]:10.2f}us  {l[2]:10.2f}us  {a[2]:10.2f}us")
med = [statistics.median(r[k] for r in ratios) for k in range(3)]
lo = [min(r[k] for r in ratios) for k in range(3)]
hi = [max(r[k] for r in ratios) for k in range(3)]
print(f"agent/local ops/s: median {med[0]:.3f} (pairs {lo[0]:.3f}-{hi[0]:.3f})")
print(f"agent/local client CPU per op: median {med[1]:.3f} (pairs {lo[1]:.3f}-{hi[1]:.3f})")
print(f"agent/local server CPU per op: median {med[2]:.3f} (pairs {lo[2]:.3f}-{hi[2]:.3f})")
PY
echo "results: $out"
