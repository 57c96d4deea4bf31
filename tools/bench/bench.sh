#!/usr/bin/env bash
# Runs the same workloads on a stripefs mount and on a plain directory of the
# same disk, in one run, and prints both and their ratio:
#   seq-write / seq-read : 1 MiB transfers, one file per process, 2 processes
#   rand-write / rand-read: 4 KiB transfers at random offsets, 2 processes
# Uses IOR (with mpirun) when --ior PATH is given, fio otherwise.
#
#   tools/bench/bench.sh [--dir DIR] [--ior /path/to/ior] [--size-mib N]
#                        [--runtime S] [--stripe-count N] [--stripe-size S]
# Must run as root (it mounts, and drops the page cache between phases so
# reads come from the OST disk on both sides).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/bench-work
ior=""
size_mib=1024
runtime=15
stripe_count=4
stripe_size=1M
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --ior) ior=$2; shift 2 ;;
    --size-mib) size_mib=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
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
    awk -v w=$work '/^Max Write:/ && w ~ /write/ {print $3} /^Max Read:/ && w ~ /read/ {print $3}'
}

tool=fio; [ -n "$ior" ] && tool=ior
echo "stripefs benchmark ($tool; $stripe_count stripes of $stripe_size over 4 OST dirs; 2 processes; $(date -u +%F))"
printf "%-12s %14s %14s %8s\n" workload "plain MiB/s" "stripefs MiB/s" ratio
for work in seq-write seq-read rand-write rand-read; do
  declare -A result=()
  for side in plain stripefs; do
    target=$plain; [ $side = stripefs ] && target=$mnt
    [[ $work == *read ]] && drop_caches
    if [ -n "$ior" ]; then result[$side]=$(run_ior $work "$target"); else result[$side]=$(run_fio $work "$target"); fi
  done
  printf "%-12s %14s %14s %7.0f%%\n" $work "${result[plain]}" "${result[stripefs]}" \
    "$(awk -v a="${result[stripefs]}" -v b="${result[plain]}" 'BEGIN { print (b > 0 ? 100 * a / b : 0) }')"
done
