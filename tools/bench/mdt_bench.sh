#!/usr/bin/env bash
# The metadata service's request scheduler (issue 12, item 2), with mdtest,
# in one run:
#
# 1. Cost: mdtest -n --files -F (2 processes) on a plain directory of the
#    same disk and on stripefs mounted three ways, interleaved per
#    repetition: mdt_nrs=off (metadata unscheduled, as the fast-paths
#    figures were taken), mdt fifo (the default), and mdt "tbf jobid" with
#    no rule but the default, its rate raised out of the way (what TBF's
#    classification and buckets cost; at the default 10,000 requests/s
#    one job's mdtest would be held by it). Median ops/s per phase and the
#    ratio to mdt_nrs=off (the median of the ratios within each
#    repetition). The kernel answers most of mdtest's stats from
#    its attribute cache (a few ms per phase, so that phase is noise), so
#    off and fifo are measured a second time mounted attr_timeout=0:
#    every stat and lookup then reaches the metadata service.
# 2. Accuracy: job A runs mdtest creates (-C) held by a rule
#    "jobid={A}&opcode={create} rate=N" for each --rates N while job B runs
#    mdtest creates with no rule; prints A's create rate / N, B's create
#    rate beside A and alone (same mount, just before), and (A + B beside
#    A) / B alone: near 1 when B takes what A is not allowed (the machine's
#    2 cores are shared, so a faster A leaves B less CPU, not less turn).
#
#   tools/bench/mdt_bench.sh --mdtest PATH [--dir DIR] [--reps N] [--files N]
#       [--rates "200 1000"] [--seconds S]
# Must run as root (mounts; mpirun as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/mdt-bench-work
mdtest="" reps=5 files=2000 np=2 rates="200 1000" seconds=6
while [ $# -gt 0 ]; do
  case $1 in
    --mdtest) mdtest=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
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
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# The median over repetitions of a/b within each repetition: the two ran
# one after the other, so the machine's slow drifts cancel.
paired() {  # $1 a, $2 b, $3 phase
  paste <(echo "${res[$1.$3]}" | tr ' ' '\n' | grep -v '^$') \
        <(echo "${res[$2.$3]}" | tr ' ' '\n' | grep -v '^$') |
    awk '{ print $1 / $2 }' | median
}
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }'; }

mount_sfs() {  # $1 name, $2 mount options
  local base=$dir/$1
  mkdir -p "$base/mnt" "$base"/ost{0,1,2,3}
  "$bin" mkfs --meta "$base/meta" --ost "$base/ost0" --ost "$base/ost1" --ost "$base/ost2" \
    --ost "$base/ost3" --stripe-count 4 --stripe-size 1M >/dev/null
  "$bin" mount "$base/meta" "$base/mnt" -o "$2"
  mounts+=("$base/mnt")
}

rm -rf "$dir"; mkdir -p "$dir/plain"
mount_sfs off log_level=warn,mdt_nrs=off
mount_sfs fifo log_level=warn
mount_sfs tbf log_level=warn
mount_sfs off0 log_level=warn,mdt_nrs=off,attr_timeout=0
mount_sfs fifo0 log_level=warn,attr_timeout=0
"$bin" set_param "$dir/tbf/mnt" mdt.nrs_policies="tbf jobid" mdt.nrs_tbf_default_rate=1000000000 >/dev/null

declare -A path=([plain]=$dir/plain [mdt-off]=$dir/off/mnt [mdt-fifo]=$dir/fifo/mnt
                 [mdt-tbf]=$dir/tbf/mnt [off-uncached]=$dir/off0/mnt
                 [fifo-uncached]=$dir/fifo0/mnt)
targets="plain mdt-off mdt-fifo mdt-tbf off-uncached fifo-uncached"
phases="create stat read remove"
declare -A res=()
read -ra order <<< "$targets"
for rep in $(seq "$reps"); do
  # Each repetition starts one target later: none always runs just after
  # another's removal writes back.
  for i in "${!order[@]}"; do
    t=${order[$(( (i + rep) % ${#order[@]} ))]}
    rm -rf "${path[$t]}/md"
    out=$(mpi bench "$mdtest" -n "$files" -F -d "${path[$t]}/md")
    for p in $phases; do
      case $p in create) key=creation ;; stat) key=stat ;; read) key=read ;; remove) key=removal ;; esac
      v=$(echo "$out" | awk -v k=$key '$1 == "File" && $2 == k { print $3; exit }')
      res[$t.$p]="${res[$t.$p]:-} $v"
    done
    rm -rf "${path[$t]}/md"
  done
done

echo "stripefs metadata NRS benchmark, $(date -u +%F): mdtest -n $files -F, $np processes,"
echo "  4 OSTs on one disk, median of $reps interleaved runs (ops/s); ratios: median over"
echo "  repetitions of the ratio within each, to mdt_nrs=off mounted the same way"
printf "%-10s" "phase"; for t in $targets; do printf " %18s" "$t"; done; printf "   %s\n" "fifo/off tbf/off fifo/off(uncached)"
for p in $phases; do
  printf "%-10s" "$p"
  for t in $targets; do
    printf " %9s %-8s" "$(echo "${res[$t.$p]}" | median)" "[$(echo "${res[$t.$p]}" | range)]"
  done
  printf "   %.3f    %.3f   %.3f\n" "$(paired mdt-fifo mdt-off "$p")" \
    "$(paired mdt-tbf mdt-off "$p")" "$(paired fifo-uncached off-uncached "$p")"
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
