# Sourced by bench/precision.sh and bench/slices.sh: the patch that adds a fixed loop of
# work to every memcached command, and the experiment with its three builds (base, an
# identical one, and the patched one), so both scripts measure the same thing.

# work_patch ITERS: the patch, on stdout.
work_patch() {
  printf -- '--- a/proto_text.c\n+++ b/proto_text.c\n@@ -2713,5 +2713,7 @@\n void process_command_ascii(conn *c, char *command) {\n \n+    static volatile unsigned bakeoff_work;\n+    for (unsigned bakeoff_i = 0; bakeoff_i < %s; bakeoff_i++) bakeoff_work += bakeoff_i;\n     token_t tokens[MAX_TOKENS];\n     size_t ntokens;\n     int comm;\n' "$1"
}

# three_builds NAME PLAN: the experiment (reads work.patch beside it), on stdout.
three_builds() {
  printf 'name = "%s"\n[target]\nkind = "memcached"\nsource = { debian = "memcached" }\nargs = ["-t", "1", "-m", "64"]\n' "$1"
  for v in base same work; do
    printf '[[variant]]\nname = "%s"\ncompiler = "gcc-12"\ncflags = "-O2"\n' "$v"
  done
  cat <<TOML
patches = ["work.patch"]
[[workload]]
kind = "kv"
name = "kv"
connections = [16]
keys = 10000
mix = { get = 90, set = 10 }
[plan]
$2
TOML
}
