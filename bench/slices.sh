#!/usr/bin/env bash
# Does finer alternation help? The issue's experiment: the variants of a round run as live
# servers at the same time and the load alternates between them in slices (SLICE s each,
# 0.2 s settle discarded at each switch), in a palindromic order (A B C C B A: a linear
# drift inside the round cancels for every variant), servers restarted every round. Each
# variant's round figure is the mean of its slices; the rounds are then compared with
# bakeoff's own statistics (paired signed-rank, the same code as `bakeoff run`), for the
# same three memcached builds as bench/precision.sh, over the same wall time.
#
#   bash bench/slices.sh [SECONDS=300] [ITERS=80] [SLICE=1]
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs="${1:-300}"
iters="${2:-80}"
slice="${3:-1}"
bench_work
bakeoff="${BAKEOFF:-bakeoff}"
kvload_build

# shellcheck source=bench/three-builds.sh
. "$here/bench/three-builds.sh"
work_patch "$iters" > "$work/work.patch"

# One short bakeoff run builds the three variants (cached) and leaves a results.json whose
# shape the slices' figures are written into.
three_builds slices $'repetitions = 1\nwarmup = "100ms"\nduration = "200ms"' > "$work/t.toml"
"$bakeoff" run "$work/t.toml" --out "$work/t" >/dev/null 2>"$work/t.log" || { tail "$work/t.log"; exit 1; }

python3 - "$work/t/results.json" "$kvload" "$secs" "$slice" <<'PY'
import copy, json, os, random, socket, subprocess, sys, time
path, kvload, secs, slice_s = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
r = json.load(open(path))
names = [v["name"] for v in r["variants"]]
binaries = {v["name"]: v["binary"] for v in r["variants"]}
rng = random.Random(7)
env = dict(os.environ, KVLOAD_KEYS="10000")

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def load(port, measure, warmup_ms, preload):
    e = dict(env, KVLOAD_WARMUP_MS=str(warmup_ms), KVLOAD_PRELOAD="1" if preload else "0")
    out = subprocess.run([kvload, f"127.0.0.1:{port}", "16", str(measure)], env=e,
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[0].split("=")[1])

def wait_up(port):
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close(); return
        except OSError:
            time.sleep(0.02)

figures = {n: [] for n in names}
start = time.time()
rounds = 0
while time.time() - start < secs:
    ports, procs = {}, []
    try:
        for n in names:
            ports[n] = free_port()
            user = ["-u", "root"] if os.getuid() == 0 else []
            procs.append(subprocess.Popen([binaries[n], "-t", "1", "-m", "64", "-U", "0",
                                           "-l", "127.0.0.1", "-p", str(ports[n])] + user))
        for n in names:
            wait_up(ports[n]); load(ports[n], 0.2, 100, True)
        order = names[:]; rng.shuffle(order)
        got = {n: [] for n in names}
        for n in order + order[::-1]:
            got[n].append(load(ports[n], slice_s, 200, False))
        for n in names:
            figures[n].append(sum(got[n]) / len(got[n]))
        rounds += 1
    finally:
        for p in procs:
            p.kill(); p.wait()
took = time.time() - start
cells = r["cells"]
for c in cells:
    template = c["runs"][0]
    c["runs"] = []
    for i, x in enumerate(figures[c["variant"]]):
        run = copy.deepcopy(template); run["round"] = i; run["ops_per_s"] = x; run["valid"] = True
        run.pop("disturbed", None); run["client_bound"] = False
        c["runs"].append(run)
r["plan"]["rounds"] = [[] for _ in range(rounds)]
r["rounds_s"] = took
json.dump(r, open(path, "w"))
print(f"slices: {rounds} rounds of {len(names)} servers x 2 slices of {slice_s} s in {took:.0f} s")
PY
"$bakeoff" report "$work/t" --pairing paired | grep -E '^kv' | sed 's/^/slices, paired rounds: /'
