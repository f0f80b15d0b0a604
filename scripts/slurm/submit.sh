#!/usr/bin/env bash
# Submits a blaster portfolio to Slurm: a job array of N shards, one GPU per task, and a merge
# job that runs when every shard has succeeded. Prints the two job ids.
#
#   scripts/slurm/submit.sh --suite core10 --shards 4 --work /shared/core10 --out core10-bundle
#   scripts/slurm/submit.sh ... --compile-only     # no GPU: every case compiled and recorded
#   scripts/slurm/submit.sh ... -- --pytorch torch.json   # more portfolio flags after --
#
# --work must be a folder every node sees; BLASTER (default: build/blaster of this checkout) the
# binary the nodes run. Extra sbatch options go in SBATCH_* variables (SBATCH_PARTITION, ...).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
suite="" shards="" work="" out="" gpus="--gpus-per-task=1" flags=""
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --compile-only) gpus=""; flags="$flags --compile-only"; shift ;;
    --) shift; flags="$flags $*"; break ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "submit.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$suite" ] || [ -z "$shards" ] || [ -z "$work" ] || [ -z "$out" ]; then
  echo "submit.sh: give --suite, --shards, --work and --out (see --help)" >&2
  exit 2
fi
case "$shards" in '' | *[!0-9]* | 0) echo "submit.sh: --shards must be a count of 1 or more" >&2; exit 2 ;; esac
mkdir -p "$work/logs"
work=$(cd "$work" && pwd)
export BLASTER=${BLASTER:-$(cd "$here/../.." && pwd)/build/blaster}
export BLASTER_ROOT=${BLASTER_ROOT:-$(cd "$here/../.." && pwd)}
export BLASTER_SUITE=$suite BLASTER_WORK=$work BLASTER_OUT=$out BLASTER_FLAGS=$flags
array=$(sbatch --parsable --array=1-"$shards" $gpus --output="$work/logs/shard-%a.log" \
  "$here/portfolio.sbatch")
merge=$(sbatch --parsable --dependency=afterok:"$array" --output="$work/logs/merge.log" \
  "$here/merge.sbatch")
echo "$array $merge"
