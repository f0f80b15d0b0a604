#!/usr/bin/env bash
# A portfolio through a real one-node Slurm: munge, slurmctld and slurmd started here on private
# ports, the compile-only shards submitted as a job array with a dependent merge job (no GPU
# needed); the merged home must hold what one process records, and a shard stopped by scancel
# and submitted again must finish without recording any case twice. Exits 77 (skipped, with the
# reason) where Slurm is not installed or its daemons cannot start.
#
#   tests/slurm/slurm_test.sh BLASTER_BINARY
set -uo pipefail
blaster=${1:?the blaster binary}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }

for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs jobs as their user only when started as root"

dir=$(mktemp -d /tmp/blaster-slurm-XXXXXX)
cleanup() {
  for pid in slurmd slurmctld munged; do
    [ -f "$dir/$pid.pid" ] && kill "$(cat "$dir/$pid.pid")" 2>/dev/null
  done
  sleep 1
  rm -rf "$dir"
}
trap cleanup EXIT
[ -n "${BLASTER_KEEP_SLURM_TEST:-}" ] && trap - EXIT
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
head -c 1024 /dev/urandom >"$dir/munge/munge.key" && chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" ||
  skip "munged did not start: $(tail -2 "$dir/munged.log" 2>/dev/null)"
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=blastertest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=blaster Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" || skip "slurmctld did not start: $(tail -2 "$dir/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd did not start: $(tail -2 "$dir/slurmd.log" 2>/dev/null)"
for _ in $(seq 30); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o %t 2>/dev/null | grep -q idle ||
  skip "the node did not come up: $(tail -2 "$dir/slurmd.log" 2>/dev/null)"

# Waits until the job has left the queue; its final state, from its output's absence or not.
wait_job() {
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 1
  done
  fail "job $1 still queued after 10 minutes"
}
cd "$dir"
cat >two.json <<SUITE
{"name": "two", "title": "two tasks", "entries": [
  {"id": "1", "task": "matvec", "cases": [{"case": "canonical"}, {"case": "large"}]},
  {"id": "2", "task": "rmsnorm", "cases": [{"case": "canonical"}]}]}
SUITE
export BLASTER_ROOT=$root

# The array and its merge job, against one process compiling the same suite.
read -r array merge < <(BLASTER=$blaster "$root/scripts/slurm/submit.sh" --suite "$dir/two.json" \
  --shards 2 --work "$dir/work" --out "$dir/bundle" --compile-only) || fail "submit.sh failed"
wait_job "$array"
wait_job "$merge"
grep -q "runs added" "$dir/work/logs/merge.log" 2>/dev/null ||
  fail "the merge job did not merge: $(cat "$dir"/work/logs/*.log 2>/dev/null)"
"$blaster" --home "$dir/one" portfolio --suite two.json --compile-only --json >one.json ||
  fail "one process: $(cat one.json)"
"$blaster" --home "$dir/work/merged" portfolio --suite two.json --compile-only --json >merged.json ||
  fail "the merged home: $(cat merged.json)"
python3 - "$blaster" "$dir" <<'PY' || fail "the merged home differs from one process's"
import json, subprocess, sys
blaster, d = sys.argv[1], sys.argv[2]
one = json.load(open(f"{d}/one.json"))["compiled"]
merged = json.load(open(f"{d}/merged.json"))["compiled"]
assert all(row["resumed"] for row in merged), "the merged home compiled again"
assert [r["run_id"] for r in merged] == [1000000, 1000001, 2000000], merged
def compilations(home, run):
    shown = json.loads(subprocess.check_output([blaster, "--home", home, "show", str(run), "--json"]))
    sources = {s["id"]: s["sha256"] for s in shown["sources"]}
    return sorted((c["variant"], sources[c["source_id"]], c["succeeded"]) for c in shown["compilations"])
for a, b in zip(one, merged):
    assert (a["task"], a["case"], a["compiled"]) == (b["task"], b["case"], b["compiled"]), (a, b)
    assert compilations(f"{d}/one", a["run_id"]) == compilations(f"{d}/work/merged", b["run_id"])
print(f"merged home = one process: {len(merged)} cases")
PY

# A shard stopped by scancel and submitted again: each case recorded once.
export BLASTER=$blaster BLASTER_SUITE=core10 BLASTER_WORK=$dir/kill BLASTER_FLAGS=--compile-only
mkdir -p "$dir/kill/homes"
job=$(sbatch --parsable --array=1 --output="$dir/kill/first.log" "$root/scripts/slurm/portfolio.sbatch")
# Stopped while a case's run is under way (its second case's, so that one is recorded before): a
# stop between two runs would interrupt none.
for _ in $(seq 240); do
  grep -q "\[2/" "$dir/kill/first.log" 2>/dev/null &&
    python3 - "$dir/kill/homes/shard-1/blaster.db" <<'PY' && break
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
sys.exit(0 if db.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone()[0] else 1)
PY
  sleep 0.25
done
scancel "$job"
wait_job "$job"
job=$(sbatch --parsable --array=1 --output="$dir/kill/second.log" "$root/scripts/slurm/portfolio.sbatch")
wait_job "$job"
python3 - "$blaster" "$dir/kill/homes/shard-1" <<'PY' || fail "the resubmitted shard: $(tail -5 "$dir/kill/second.log")"
import collections, json, subprocess, sys
blaster, home = sys.argv[1], sys.argv[2]
runs = json.loads(subprocess.check_output([blaster, "--home", home, "runs", "--limit", "0", "--json"]))
compiled = collections.Counter(r["command"] for r in runs if r["status"] == "compiled")
assert len(compiled) == 19, f"{len(compiled)} of core10's 19 cases compiled"
assert max(compiled.values()) == 1, "a case was recorded twice"
stopped = [r for r in runs if r["status"] != "compiled"]
assert stopped, "scancel stopped nothing: the first job had finished"
print(f"resubmitted shard: 19 cases once each; {len(stopped)} run(s) stopped by scancel:",
      ", ".join(r["status"] for r in stopped))
PY
echo "PASSED"
