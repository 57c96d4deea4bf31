#!/usr/bin/env bash
# Runs the same workloads on a stripefs mount and on a plain directory of the
# same disk, in one run, and prints both and their ratio:
#   seq-write / seq-read : 1 MiB transfers, one file per process, 2 processes
#   rand-write / rand-read: 4 KiB transfers at random offsets, 2 processes
# Uses IOR (with mpirun) when --ior PATH is given, fio otherwise.
#
#   tools/bench/bench.sh [--dir DIR] [--ior /path/to/ior] [--size-mib N]
#                        [--runtime S] [--reps N] [--stripe-count N] [--stripe-size S]
# Must run as root: it mounts, and before every run it syncs and drops the
# page cache (so reads come from the OST disk on both sides and writes start
# from the same memory state). Each workload runs --reps times (default 3),
# alternating plain and stripefs; the median is printed with the range.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/bench-work
ior=""
size_mib=1024
runtime=15
reps=3
stripe_count=4
stripe_size=1M
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --ior) ior=$2; shift 2 ;;
    --size-mib) size_mib=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --stripe-count) stripe_count=$2; shift 2 ;;
    --stripe-size) stripe_size=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
if [ -z "$ior" ]; then command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }; fi

mnt=$dir/sfs/mnt
plain=$dir/plain
cleanup() {
  if grep -q " $mnt fuse.stripefs " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
}
trap cleanup EXIT
cleanup
rm -rf "$dir"
mkdir -p "$plain" "$mnt"
$bin mkfs --meta "$dir/sfs/meta" --ost "$dir/sfs/ost0" --ost "$dir/sfs/ost1" \
  --ost "$dir/sfs/ost2" --ost "$dir/sfs/ost3" --stripe-count "$stripe_count" \
  --stripe-size "$stripe_size" >/dev/null
$bin mount "$dir/sfs/meta" "$mnt" -o log_level=warn

drop_caches() { sync; [ -w /proc/sys/vm/drop_caches ] && echo 3 > /proc/sys/vm/drop_caches || true; }

# Prints MiB/s for one workload ($1) on one target directory ($2).
run_fio() {
  local work=$1 target=$2 rw bs extra=""
  case $work in
    seq-write) rw=write; bs=1m; extra="--end_fsync=1" ;;
    seq-read) rw=read; bs=1m ;;
    rand-write) rw=randwrite; bs=4k; extra="--time_based --runtime=$runtime --end_fsync=1" ;;
    rand-read) rw=randread; bs=4k; extra="--time_based --runtime=$runtime" ;;
  esac
  # shellcheck disable=SC2086
  fio --name=bench --directory="$target" --filename_format='bench.$jobnum' --rw=$rw --bs=$bs \
      --size=${size_mib}m --numjobs=2 --ioengine=psync --group_reporting --minimal $extra |
    awk -F';' -v rw=$rw '{ kib = (rw ~ /write/) ? $48 : $7; printf "%.1f", kib / 1024 }'
}

run_ior() {
  local work=$1 target=$2 args
  case $work in
    seq-write) args="-w -e -t 1m -b ${size_mib}m" ;;
    seq-read) args="-r -t 1m -b ${size_mib}m" ;;
    rand-write) args="-w -e -z -t 4k -b $((size_mib / 4))m" ;;
    rand-read) args="-r -z -t 4k -b $((size_mib / 4))m" ;;
  esac
  # -k keeps the files for the read phase; -F one file per process.
  # shellcheck disable=SC2086
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe -np 2 "$ior" -a POSIX -F -k $args -o "$target/ior.file" |
    awk -v op="${work#*-}" '$1 == op && $2 ~ /^[0-9.]+$/ { print $2; exit }'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

tool=fio; [ -n "$ior" ] && tool=ior
echo "stripefs benchmark ($tool; $stripe_count stripes of $stripe_size over 4 OST dirs; 2 processes;"
echo "  ${size_mib} MiB per process; median of $reps runs, range in brackets; $(date -u +%F))"
printf "%-11s %24s %24s %7s\n" workload "plain MiB/s" "stripefs MiB/s" ratio
for work in seq-write seq-read rand-write rand-read; do
  declare -A runs=([plain]="" [stripefs]="")
  for rep in $(seq "$reps"); do
    for side in plain stripefs; do
      target=$plain; [ $side = stripefs ] && target=$mnt
      [ $work = seq-write ] && rm -f "$target"/bench.* "$target"/ior.file*
      drop_caches
      if [ -n "$ior" ]; then r=$(run_ior $work "$target"); else r=$(run_fio $work "$target"); fi
      runs[$side]="${runs[$side]} $r"
    done
  done
  p=$(echo "${runs[plain]}" | median); s=$(echo "${runs[stripefs]}" | median)
  printf "%-11s %10s [%11s] %10s [%11s] %6.0f%%\n" $work "$p" "$(echo "${runs[plain]}" | range)" \
    "$s" "$(echo "${runs[stripefs]}" | range)" "$(awk -v a="$s" -v b="$p" 'BEGIN { print (b > 0 ? 100 * a / b : 0) }')"
done
