#!/usr/bin/env bash
# What the writing marks cost (issue 32, item 6; docs/design.md, "Writes in
# flight"): the binary under test against a base binary without them (e.g.
# a build of the commit before), paired runs on the same disk.
#
#   tools/bench/writing_mark_bench.sh --base BIN [--new BIN] [--reps N]
#       [--seconds S] [--files N] [--dir DIR] [--seed N]
#
# Per repetition, each side (in a seeded random order, half each way:
# tools/bench/ratio.sh) is mounted afresh on a filesystem of its own (4
# OSTs, stripe count 4, 1 MiB) and runs:
#   rand-write  fio, 4 KiB random writes (psync, one job) into a 64 MiB file
#               for S seconds (default 5): IOPS. A write inside an object
#               already recorded stores no mark.
#   create      N (default 2000) files created and closed, nothing written
#               (the mdtest -F create phase): files/s. No mark either.
#   create-4k   N files created, 4 KiB written, closed: files/s. One mark
#               put per file and its erase at the last close.
# Printed per workload: the rate (median per side [range], and new/base as
# the geometric mean of the paired ratios with its 95 % confidence
# interval), then the daemon's CPU time per operation (all its threads,
# from /proc/PID/task/*/schedstat) the same way, cpu-us rows: what the
# marks add to the daemon's work, which other jobs loading the machine
# disturb much less than the rates. Quiet machine: trust the rates; loaded:
# the CPU rows.
# Last, build/tools/bench/writing_mark_cost: the mark's put and erase
# against the store writes of a created and written file, store alone.
# Must run as root (mounts).
set -euo pipefail
cd "$(dirname "$0")/../.."
new=$PWD/build/tools/stripefs/stripefs
base="" reps=5 seconds=5 files=2000 dir=$PWD/build/writing-mark-bench seed=1
while [ $# -gt 0 ]; do
  case $1 in
    --base) base=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$base" ] && [ -x "$base" ] || { echo "give --base BIN (a stripefs without the marks)" >&2; exit 1; }
[ -x "$new" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root (mounts)" >&2; exit 1; }

# shellcheck source=tools/bench/ratio.sh
. tools/bench/ratio.sh
declare -A bins=([base]=$base [new]=$new) pids=()
cleanup() {
  set +e
  for side in "${!pids[@]}"; do
    m=$dir/$side/mnt
    grep -q " $m " /proc/mounts && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkfs_side() {  # $1 side
  local d=$dir/$1
  rm -rf "$d"; mkdir -p "$d/mnt" "$d"/ost{0,1,2,3}
  "${bins[$1]}" mkfs --meta "$d/meta" --ost "$d/ost0" --ost "$d/ost1" --ost "$d/ost2" \
    --ost "$d/ost3" --stripe-count 4 --stripe-size 1M >/dev/null
}
mount_side() {  # $1 side
  local m=$dir/$1/mnt
  "${bins[$1]}" mount "$dir/$1/meta" "$m" -f 2>>"$dir/$1/daemon.log" &
  pids[$1]=$!
  until grep -q " $m " /proc/mounts; do
    kill -0 "${pids[$1]}" 2>/dev/null || { echo "mount of $1 failed" >&2; exit 1; }
    sleep 0.1
  done
}
umount_side() { fusermount3 -u "$dir/$1/mnt"; wait "${pids[$1]}"; unset "pids[$1]"; }

# Files per second creating $2 files in directory $1, writing $3 bytes each.
creates() {
  python3 - "$1" "$2" "$3" <<'EOF'
import os, sys, time
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d)
data = b"x" * size
start = time.monotonic()
for i in range(n):
    fd = os.open(os.path.join(d, str(i)), os.O_CREAT | os.O_WRONLY, 0o644)
    if size:
        os.write(fd, data)
    os.close(fd)
print("%.0f" % (n / (time.monotonic() - start)))
EOF
}

rand_write() {  # $1 mount point: "IOPS writes"
  fio --name=rw --filename="$1/rand" --rw=randwrite --bs=4k --size=64m --ioengine=psync \
      --time_based --runtime="$seconds" --minimal |
    awk -F';' '{ printf "%.0f %.0f", $49, $47 / 4 }'
}

# CPU time of every thread of daemon $1 so far, in ns.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }

declare -A result=()
# Runs workload $2 of side $1 (the command: the rest), which prints its
# rate and, for rand-write, the operations it made; records both rate and
# daemon CPU us per operation.
measure() {
  local side=$1 work=$2 before out ops
  shift 2
  before=$(cpu_ns "${pids[$side]}")
  out=$("$@")
  ops=$(echo "$out" | awk -v n="$files" '{ print (NF > 1) ? $2 : n }')
  result[$side.$work]+="$(echo "$out" | awk '{ print $1 }') "
  result[$side.cpu-$work]+="$(awk -v a="$before" -v b="$(cpu_ns "${pids[$side]}")" -v n="$ops" \
    'BEGIN { printf "%.2f", (b - a) / 1000 / n }') "
}
run_side() {  # $1 side, $2 repetition
  mount_side "$1"
  local m=$dir/$1/mnt
  measure "$1" rand-write rand_write "$m"
  measure "$1" create creates "$m/c$2" "$files" 0
  measure "$1" create-4k creates "$m/w$2" "$files" 4096
  rm -rf "$m/rand" "$m/c$2" "$m/w$2"
  umount_side "$1"
}

echo "writing marks: new $new against base $base, $reps repetitions, $(date -u +%F)"
mkfs_side base
mkfs_side new
order=($(swap_order_of "$reps" "$seed"))
for ((rep = 0; rep < reps; rep++)); do
  if [ "${order[$rep]}" = 1 ]; then run_side new "$rep"; run_side base "$rep"
  else run_side base "$rep"; run_side new "$rep"; fi
done
printf "%-14s %-22s %-22s %s\n" workload base new "new/base [95 % CI]"
for work in rand-write create create-4k cpu-us-rand-write cpu-us-create cpu-us-create-4k; do
  work=${work/cpu-us-/cpu-}
  b=${result[base.$work]} n=${result[new.$work]}
  printf "%-14s %-22s %-22s %s\n" "${work/cpu-/cpu-us-}" "$(echo "$b" | median) [$(echo "$b" | range)]" \
    "$(echo "$n" | median) [$(echo "$n" | range)]" "$(ratio_ci_of "$n" "$b")"
done
cost=$PWD/build/tools/bench/writing_mark_cost
[ -x "$cost" ] && "$cost" "$dir/cost-store"
