#!/bin/bash
# What job stats cost: IOR (sequential 1 MiB write and cold read, 2
# processes, a file each) and mdtest (-n FILES -F) on one stripefs mount
# (4 OSTs, 4 stripes of 1 MiB), alternating per repetition between job ids
# on (jobid_var=SLURM_JOB_ID, the default: every request and metadata
# operation is counted per job) and off (jobid_var=disable: no job id, so
# nothing is counted). Prints the median and range of each and the ratio
# on/off.
#
#   tools/bench/jobstats_bench.sh --ior PATH [--mdtest PATH] [--reps N]
#       [--seq-mib N] [--files N] [--dir DIR]
#
# Must run as root (mounts, drops the page cache).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/jobstats-bench-work
ior="" mdtest="" reps=5 seq_mib=256 files=2000 np=2
while [ $# -gt 0 ]; do
  case $1 in
    --ior) ior=$2; shift 2 ;;
    --mdtest) mdtest=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seq-mib) seq_mib=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root (mounts, drops caches)" >&2; exit 1; }
[ -x "$ior" ] || { echo "give --ior PATH (IOR built by hand, see the README)" >&2; exit 1; }
[ -n "$mdtest" ] || mdtest=$(dirname "$ior")/mdtest
[ -x "$mdtest" ] || { echo "no mdtest at $mdtest (give --mdtest PATH)" >&2; exit 1; }

mnt=$dir/mnt
cleanup() {
  fusermount3 -u "$mnt" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
rm -rf "$dir"
mkdir -p "$mnt"
osts=""
for i in 0 1 2 3; do osts="$osts --ost $dir/ost$i"; done
# shellcheck disable=SC2086
"$bin" mkfs --meta "$dir/meta" $osts --stripe-count 4 --stripe-size 1M >/dev/null
"$bin" mount "$dir/meta" "$mnt" -o log_level=warn

mpi() {
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to none -np "$np" "$@"
}
ior_phase() {  # $1: -w -e or -r; prints MiB/s
  # shellcheck disable=SC2086
  mpi "$ior" -a POSIX -F -k $1 -t 1m -b "${seq_mib}m" -o "$mnt/ior.seq" |
    awk '/^Summary of all tests/ { s = 1 } s && ($1 == "write" || $1 == "read") { print $2; exit }'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }'; }

declare -A results
for rep in $(seq "$reps"); do
  order="on off"
  [ $((rep % 2)) = 0 ] && order="off on"
  for mode in $order; do
    var=SLURM_JOB_ID
    [ "$mode" = off ] && var=disable
    "$bin" set_param "$mnt" jobid_var=$var job_stats=clear
    rm -f "$mnt"/ior.seq*
    results[$mode.write]+=" $(ior_phase "-w -e")"
    sync; echo 3 > /proc/sys/vm/drop_caches
    results[$mode.read]+=" $(ior_phase "-r")"
    rm -rf "$mnt/md"
    out=$(mpi "$mdtest" -n "$files" -F -d "$mnt/md")
    results[$mode.create]+=" $(echo "$out" | awk '$1 == "File" && $2 == "creation" { print $3; exit }')"
    results[$mode.stat]+=" $(echo "$out" | awk '$1 == "File" && $2 == "stat" { print $3; exit }')"
    results[$mode.remove]+=" $(echo "$out" | awk '$1 == "File" && $2 == "removal" { print $3; exit }')"
    rm -rf "$mnt/md"
  done
done
"$bin" set_param "$mnt" jobid_var=SLURM_JOB_ID

echo "job stats on (jobid_var=SLURM_JOB_ID) against off (jobid_var=disable), one mount,"
echo "IOR 2 x ${seq_mib} MiB at 1 MiB, mdtest -n $files -F; median of $reps [range]; $(date +%F)"
printf "%-12s %24s %24s %8s\n" workload on off on/off
for w in write read create stat remove; do
  on=$(echo "${results[on.$w]}" | median) off=$(echo "${results[off.$w]}" | median)
  unit="MiB/s"
  case $w in create | stat | remove) unit="ops/s" ;; esac
  printf "%-12s %24s %24s %8s\n" "$w ($unit)" \
    "$on [$(echo "${results[on.$w]}" | range)]" "$off [$(echo "${results[off.$w]}" | range)]" \
    "$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')"
done
