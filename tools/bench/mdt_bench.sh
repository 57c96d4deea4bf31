#!/usr/bin/env bash
# The metadata service's request scheduler (issue 12, item 2), with mdtest,
# in one run:
#
# 1. Cost: mdtest -n --files -F (2 processes) on a plain directory of the
#    same disk and on stripefs mounted three ways: mdt_nrs=off (metadata
#    unscheduled, as the fast-paths figures were taken), mdt fifo (the
#    default), and mdt "tbf jobid" with no rule but the default, its rate
#    raised out of the way (what TBF's classification and buckets cost; at
#    the default 10,000 requests/s one job's mdtest would be held by it).
#    The kernel answers most of mdtest's stats from its attribute cache (a
#    few ms per phase, so that phase is noise), so off and fifo are
#    measured a second time mounted attr_timeout=0: every stat and lookup
#    then reaches the metadata service. off and fifo (both ways) are one
#    filesystem, mounted afresh with the options of each run, so the two
#    sides of a ratio share store and directories. Each repetition runs
#    every target once, each off/fifo pair back to back (in an order
#    drawn at random per repetition, half each way), so the machine's
#    drifts cancel in the ratio within the pair. Printed: median ops/s per
#    phase and target [range], and per phase the geometric mean of the
#    ratios to mdt_nrs=off over the repetitions with its 95 % confidence
#    interval (Student's t on the log ratios): the aim fifo/off >= 0.95 is
#    shown met when the interval's low end is at least 0.95, missed when
#    its high end is below.
# 2. Accuracy: job A runs mdtest creates (-C) held by a rule
#    "jobid={A}&opcode={create} rate=N" for each --rates N while job B runs
#    mdtest creates with no rule; prints A's create rate / N, B's create
#    rate beside A and alone (same mount, just before), and (A + B beside
#    A) / B alone: near 1 when B takes what A is not allowed (the machine's
#    2 cores are shared, so a faster A leaves B less CPU, not less turn).
#
#   tools/bench/mdt_bench.sh --mdtest PATH [--dir DIR] [--reps N] [--files N]
#       [--rates "200 1000"] [--seconds S] [--uncached-only | --cached-only]
#       [--settle S] [--mdtest-args "-C"] [--aa] [--seed N]
# --uncached-only: only the uncached off/fifo pair of part 1 (where every
# stat and lookup passes the head), so that many repetitions fit in a few
# minutes and the interval narrows; --cached-only: only the cached pair. --settle S: wait S seconds after each
# remount before mdtest starts. --mdtest-args: more mdtest arguments for
# part 1 (e.g. -C, creates only). --aa: an A/A control: the fifo sides
# are mounted mdt_nrs=off too, so their ratios show the bench's own error.
# --seed N: the seed of the pairs' random order (default 1).
# Must run as root (mounts; mpirun as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/mdt-bench-work
mdtest="" reps=5 files=2000 np=2 rates="200 1000" seconds=6 only="" settle=0 aa=0 mdtest_args="" seed=1
while [ $# -gt 0 ]; do
  case $1 in
    --mdtest) mdtest=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --uncached-only) only=uncached; shift ;;
    --cached-only) only=cached; shift ;;
    --aa) aa=1; shift ;;
    --settle) settle=$2; shift 2 ;;
    --mdtest-args) mdtest_args=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
[ -n "$mdtest" ] && [ -x "$mdtest" ] || { echo "give --mdtest PATH (README: building IOR)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "mpirun missing: apt-get install openmpi-bin" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root (mounts)" >&2; exit 1; }

mounts=()
cleanup() {
  set +e
  for m in "${mounts[@]}"; do
    grep -q " $m " /proc/mounts && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mpi() {  # $1 job id, then the command
  local job=$1; shift
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to none -np "$np" -x SLURM_JOB_ID="$job" "$@"
}
# shellcheck source=tools/bench/ratio.sh
. tools/bench/ratio.sh

mkfs_sfs() {  # $1 name
  local base=$dir/$1
  mkdir -p "$base/mnt" "$base"/ost{0,1,2,3}
  "$bin" mkfs --meta "$base/meta" --ost "$base/ost0" --ost "$base/ost1" --ost "$base/ost2" \
    --ost "$base/ost3" --stripe-count 4 --stripe-size 1M >/dev/null
}
mount_sfs() {  # $1 name, $2 mount options
  mkfs_sfs "$1"
  "$bin" mount "$dir/$1/meta" "$dir/$1/mnt" -o "$2"
  mounts+=("$dir/$1/mnt")
}

rm -rf "$dir"; mkdir -p "$dir/plain"
if [ -z "$only" ]; then
  mount_sfs tbf log_level=warn
  "$bin" set_param "$dir/tbf/mnt" mdt.nrs_policies="tbf jobid" mdt.nrs_tbf_default_rate=1000000000 >/dev/null
fi
# off and fifo, cached and not, are one filesystem remounted with each one's
# options for each of its runs: the same store and directories, so only the
# mount options differ between the two sides of a ratio.
mkfs_sfs pair
mounts+=("$dir/pair/mnt")
declare -A remount=([mdt-off]=log_level=warn,mdt_nrs=off [mdt-fifo]=log_level=warn
                    [off-uncached]=log_level=warn,mdt_nrs=off,attr_timeout=0
                    [fifo-uncached]=log_level=warn,attr_timeout=0)
if [ "$aa" = 1 ]; then
  remount[mdt-fifo]=${remount[mdt-off]}
  remount[fifo-uncached]=${remount[off-uncached]}
fi
declare -A path=([plain]=$dir/plain [mdt-off]=$dir/pair/mnt [mdt-fifo]=$dir/pair/mnt
                 [mdt-tbf]=$dir/tbf/mnt [off-uncached]=$dir/pair/mnt
                 [fifo-uncached]=$dir/pair/mnt)
targets="plain mdt-off mdt-fifo mdt-tbf off-uncached fifo-uncached"
phases="create stat read remove"
declare -A res=()
run_target() {  # $1 target: one mdtest run, its phase rates appended to res
  local t=$1 out v key pid=""
  if [ -n "${remount[$t]:-}" ]; then
    "$bin" mount "$dir/pair/meta" "$dir/pair/mnt" -f -o "${remount[$t]}" &
    pid=$!
    until grep -q " $dir/pair/mnt " /proc/mounts; do
      kill -0 "$pid" 2>/dev/null || { echo "mount of $t failed" >&2; exit 1; }
      sleep 0.1
    done
    sleep "$settle"
  fi
  rm -rf "${path[$t]}/md"
  # shellcheck disable=SC2086 # mdtest_args is a word list
  out=$(mpi bench "$mdtest" -n "$files" -F $mdtest_args -d "${path[$t]}/md")
  for p in $phases; do
    case $p in create) key=creation ;; stat) key=stat ;; read) key=read ;; remove) key=removal ;; esac
    v=$(echo "$out" | awk -v k=$key '$1 == "File" && $2 == k { print $3; exit }')
    res[$t.$p]="${res[$t.$p]:-} $v"
  done
  rm -rf "${path[$t]}/md"
  if [ -n "$pid" ]; then fusermount3 -u "$dir/pair/mnt"; wait "$pid"; fi
}
# Blocks run in turn, one block later each repetition; within a pair the
# order is drawn at random, half the repetitions each way (swap_order_of in
# tools/bench/ratio.sh says why not a strict alternation).
blocks=("plain" "mdt-off mdt-fifo" "mdt-tbf" "off-uncached fifo-uncached")
case $only in
  uncached) blocks=("off-uncached fifo-uncached"); targets="off-uncached fifo-uncached" ;;
  cached) blocks=("mdt-off mdt-fifo"); targets="mdt-off mdt-fifo" ;;
esac
read -ra swapped <<< "$(swap_order_of "$reps" "$seed")"
for rep in $(seq "$reps"); do
  for i in "${!blocks[@]}"; do
    read -ra pair <<< "${blocks[$(( (i + rep) % ${#blocks[@]} ))]}"
    if [ ${#pair[@]} = 2 ] && [ "${swapped[$((rep - 1))]}" = 1 ]; then pair=("${pair[1]}" "${pair[0]}"); fi
    for t in "${pair[@]}"; do run_target "$t"; done
  done
done

ratio_ci() { ratio_ci_of "${res[$1.$3]}" "${res[$2.$3]}"; }  # $1 a, $2 b, $3 phase

echo "stripefs metadata NRS benchmark, $(date -u +%F): mdtest -n $files -F, $np processes,"
echo "  4 OSTs on one disk, $reps repetitions: median ops/s [range]; ratios to mdt_nrs=off mounted"
echo "  the same way: geometric mean over repetitions [95 % confidence interval]"
printf "%-10s" "phase"; for t in $targets; do printf " %18s" "$t"; done; echo
for p in $phases; do
  printf "%-10s" "$p"
  for t in $targets; do
    printf " %9.0f %-8s" "$(echo "${res[$t.$p]}" | median)" "[$(echo "${res[$t.$p]}" | range)]"
  done
  echo
done
if [ -n "$only" ]; then
  printf "\n%-10s %-24s\n" "phase" "fifo/off ($only)"
  for p in $phases; do
    if [ "$only" = uncached ]; then
      printf "%-10s %-24s\n" "$p" "$(ratio_ci fifo-uncached off-uncached "$p")"
    else
      printf "%-10s %-24s\n" "$p" "$(ratio_ci mdt-fifo mdt-off "$p")"
    fi
  done
  exit 0
fi
printf "\n%-10s %-24s %-24s %-24s\n" "phase" "fifo/off" "fifo/off (uncached)" "tbf/off"
for p in $phases; do
  printf "%-10s %-24s %-24s %-24s\n" "$p" "$(ratio_ci mdt-fifo mdt-off "$p")" \
    "$(ratio_ci fifo-uncached off-uncached "$p")" "$(ratio_ci mdt-tbf mdt-off "$p")"
done

# ---- Accuracy of a create rule, with a free job beside ----
m=$dir/tbf/mnt
"$bin" set_param "$m" mdt.nrs_policies="tbf jobid+opcode" >/dev/null
create_rate() {  # mdtest's File creation rate from its output on stdin
  awk '$1 == "File" && $2 == "creation" { print $3; exit }'
}
echo
echo "create rule: job A held to N creates/s (rate=N), job B free beside it; $np processes each"
printf "%8s %12s %10s %14s %15s %17s\n" "N" "A creates/s" "A / N" "B alone /s" "B beside A /s" "(A+B) / B alone"
for n in $rates; do
  "$bin" set_param "$m" mdt.nrs_tbf_rule="start a jobid={A}&opcode={create} rate=$n" >/dev/null
  a_files=$((n * seconds / np))
  rm -rf "$m/a" "$m/b"
  b_alone=$(mpi B "$mdtest" -n "$files" -F -C -d "$m/b" | create_rate)
  rm -rf "$m/b"
  mpi A "$mdtest" -n "$a_files" -F -C -d "$m/a" > "$dir/a.out" &
  a_pid=$!
  sleep 1
  b_beside=$(mpi B "$mdtest" -n "$files" -F -C -d "$m/b" | create_rate)
  wait "$a_pid"
  a_rate=$(create_rate < "$dir/a.out")
  printf "%8s %12.0f %10.3f %14.0f %15.0f %17.3f\n" "$n" "$a_rate" \
    "$(awk -v a="$a_rate" -v n="$n" 'BEGIN { print a / n }')" "$b_alone" "$b_beside" \
    "$(awk -v a="$a_rate" -v c="$b_beside" -v b="$b_alone" 'BEGIN { print (a + c) / b }')"
  "$bin" set_param "$m" mdt.nrs_tbf_rule="stop a" >/dev/null
  rm -rf "$m/a" "$m/b"
done
