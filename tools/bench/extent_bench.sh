#!/usr/bin/env bash
# Extent credits (issue 11, resource type 1), in one run:
#
# 1. Torn reads: build/tools/bench/torn_io on a file striped 4 ways with
#    64 KiB stripes: 2 writers overwrite the same bytes with whole
#    patterns while 2 readers read them back with O_DIRECT, each thread
#    through its own handle; a read holding two patterns is torn. Counted
#    with extent credits (the default) and with extent_credits=off, under
#    the orr and "tbf uid" policies, for 512 KiB patterns (one FUSE request
#    each), 4 MiB patterns on a default mount (which the kernel cuts into
#    1 MiB writes and max_read-sized reads, docs/design.md "Resources and
#    credits"; --reads / 5 of them), and 4 MiB patterns with
#    -o max_request=4M, for which /proc/sys/fs/fuse/max_pages_limit is
#    raised to 1024 pages while those rows run and put back after (skipped
#    on a kernel without it).
# 2. Cost: IOR (2 processes) on two filesystems of the same layout on the
#    same disk, mounted side by side, one with extent credits and one with
#    extent_credits=off: sequential 1 MiB and random 4 KiB writes and
#    reads, a file per process (each handle alone on its file: the cached
#    whole-file credit) and a shared file (two handles on one file: a
#    credit per request). Each repetition runs each workload group (a
#    write and the read of what it wrote) on both, back to back, in a
#    seeded random order (half the pairs each way; tools/bench/ratio.sh),
#    then removes the files: the two sides of a pair run seconds apart
#    rather than a whole pass of all six apart, and no mount or RocksDB
#    recovery falls between them. Prints the geometric mean of on/off per
#    workload over the repetitions [95 % interval].
#   tools/bench/extent_bench.sh --ior PATH [--dir DIR] [--reps N]
#       [--reads N] [--seq-mib N] [--rand-mib N] [--ior-only] [--aa]
#       [--workloads "seq-write seq-read"] [--seed N]
#   tools/bench/extent_bench.sh --torn-only [--dir DIR] [--reads N]
# --ior-only skips part 1, --torn-only part 2 (then no IOR or mpirun is
# needed); --workloads runs only those IOR workloads (a read needs its
# write before it). --aa mounts both filesystems with extent_credits=off
# (an A/A control: what the bench reports when nothing differs). --seed
# N: the seed of the pairs' order (default 1).
# Must run as root (mounts; mpirun as root; the sysctl).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
torn=$PWD/build/tools/bench/torn_io
dir=$PWD/build/extent-bench-work
seed=1 aa=0 ior="" reps=8 reads=10000 seq_mib=256 rand_mib=32 np=2 ior_only=0 torn_only=0
workloads="seq-write seq-read rand-write rand-read shared-write shared-read"
while [ $# -gt 0 ]; do
  case $1 in
    --ior) ior=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --reads) reads=$2; shift 2 ;;
    --seq-mib) seq_mib=$2; shift 2 ;;
    --rand-mib) rand_mib=$2; shift 2 ;;
    --ior-only) ior_only=1; shift ;;
    --aa) aa=1; shift ;;
    --torn-only) torn_only=1; shift ;;
    --workloads) workloads=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] && [ -x "$torn" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
if [ "$torn_only" = 0 ]; then
  [ -n "$ior" ] && [ -x "$ior" ] || { echo "give --ior PATH (README: building IOR)" >&2; exit 1; }
  command -v mpirun >/dev/null || { echo "mpirun missing: apt-get install openmpi-bin" >&2; exit 1; }
fi
[ "$(id -u)" = 0 ] || { echo "run as root (mounts)" >&2; exit 1; }

# A filesystem NAME lives in $dir/NAME: its store, OSTs, and mount point.
declare -A pids=()
pages_limit=/proc/sys/fs/fuse/max_pages_limit old_limit=""
restore_limit() { [ -z "$old_limit" ] || echo "$old_limit" >"$pages_limit"; old_limit=""; }
cleanup() {
  set +e
  for name in "${!pids[@]}"; do
    m=$dir/$name/mnt
    grep -q " $m " /proc/mounts && { fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m"; }
  done
  restore_limit
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tools/bench/ratio.sh
. tools/bench/ratio.sh
mpi() {
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to none -np "$np" "$@"
}
mkfs_sfs() {  # $1 name, $2 stripe size
  local d=$dir/$1
  rm -rf "$d"; mkdir -p "$d/mnt" "$d"/ost{0,1,2,3}
  "$bin" mkfs --meta "$d/meta" --ost "$d/ost0" --ost "$d/ost1" --ost "$d/ost2" \
    --ost "$d/ost3" --stripe-count 4 --stripe-size "$2" >/dev/null
}
mount_sfs() {  # $1 name, $2 mount options
  local m=$dir/$1/mnt
  "$bin" mount "$dir/$1/meta" "$m" -f -o "$2" &
  pids[$1]=$!
  until grep -q " $m " /proc/mounts; do
    kill -0 "${pids[$1]}" 2>/dev/null || { echo "mount -o $2 failed" >&2; exit 1; }
    sleep 0.1
  done
}
umount_sfs() { fusermount3 -u "$dir/$1/mnt"; wait "${pids[$1]}"; unset "pids[$1]"; }

echo "stripefs extent credits benchmark, $(date -u +%F): 4 OSTs on one disk"
if [ "$ior_only" = 0 ]; then
echo
echo "Torn reads (torn_io: 2 writers, 2 readers, a handle each; file striped 4 x 64 KiB)"
printf "%-22s %-8s %-9s %14s %14s\n" pattern policy reads "credits on" "credits off"
rm -rf "$dir"
mkfs_sfs torn 64K
mnt=$dir/torn/mnt
torn_rows() {  # $1 size, $2 reads, $3 label, $4 extra mount options
  for policy in orr "tbf uid"; do
    declare -A count=()
    for credits in on off; do
      mount_sfs torn "log_level=warn,extent_credits=$credits$4"
      "$bin" set_param "$mnt" nrs_policies="$policy" >/dev/null
      out=$("$torn" "$mnt/torn.$1" "$1" 2 2 "$2")
      count[$credits]=$(echo "$out" | awk '{ print $4 }')
      rm -f "$mnt/torn.$1"
      umount_sfs torn
    done
    printf "%-22s %-8s %-9s %14s %14s\n" "$3" "${policy%% *}" "$2" "${count[on]}" "${count[off]}"
  done
}
torn_rows 512K "$reads" 512K ""
torn_rows 4M $((reads / 5)) "4M" ""
if [ -w "$pages_limit" ]; then
  old_limit=$(cat "$pages_limit")
  echo 1024 >"$pages_limit"
  torn_rows 4M "$reads" "4M max_request=4M" ",max_request=4M"
  restore_limit
else
  echo "4M max_request=4M: skipped, this kernel has no writable $pages_limit"
fi
fi
[ "$torn_only" = 1 ] && exit 0

echo
if [ "$aa" = 1 ]; then
  echo "IOR, $np processes, A/A control: two filesystems, both extent_credits=off ($reps repetitions)"
else
  echo "IOR, $np processes, extent credits on / off (two filesystems side by side; $reps repetitions)"
fi
rm -rf "$dir"
declare -A res=()
run_ior() {  # $1 mount point, $2 workload: prints MiB/s
  local args m=$1
  case $2 in
    seq-write) args="-F -w -e -t 1m -b ${seq_mib}m -o $m/ior.seq" ;;
    seq-read) args="-F -r -t 1m -b ${seq_mib}m -o $m/ior.seq" ;;
    rand-write) args="-F -w -e -z -t 4k -b ${rand_mib}m -o $m/ior.rand" ;;
    rand-read) args="-F -r -z -t 4k -b ${rand_mib}m -o $m/ior.rand" ;;
    shared-write) args="-w -e -t 1m -b ${seq_mib}m -o $m/ior.shared" ;;
    shared-read) args="-r -t 1m -b ${seq_mib}m -o $m/ior.shared" ;;
  esac
  # shellcheck disable=SC2086
  mpi "$ior" -a POSIX -k $args |
    awk '/^Summary of all tests/ { s = 1 } s && ($1 == "write" || $1 == "read") { print $2; exit }'
}
for side in on off; do
  option=$side
  [ "$aa" = 1 ] && option=off
  mkfs_sfs "$side" 1M
  mount_sfs "$side" "log_level=warn,extent_credits=$option"
done
# Groups: a write and then the read of what it wrote, on one side.
groups=()
for g in seq rand shared; do
  group=""
  for w in $workloads; do [ "${w%%-*}" = "$g" ] && group="$group $w"; done
  [ -n "$group" ] && groups+=("$group")
done
read -ra swapped <<< "$(swap_order_of $((reps * ${#groups[@]})) "$seed")"
pair=0
for _ in $(seq "$reps"); do
  for group in "${groups[@]}"; do
    sides="on off"
    [ "${swapped[$pair]}" = 1 ] && sides="off on"
    pair=$((pair + 1))
    for side in $sides; do
      for w in $group; do res[$side.$w]="${res[$side.$w]:-} $(run_ior "$dir/$side/mnt" "$w")"; done
      rm -f "$dir/$side"/mnt/ior.*
    done
  done
done
for side in on off; do umount_sfs "$side"; done
ratio_ci() { ratio_ci_of "${res[on.$1]}" "${res[off.$1]}"; }  # $1 workload
printf "%-13s %12s %12s   %s\n" workload "on MiB/s" "off MiB/s" "on / off"
for w in $workloads; do
  printf "%-13s %12s %12s   %s\n" "$w" "$(echo "${res[on.$w]}" | median)" \
    "$(echo "${res[off.$w]}" | median)" "$(ratio_ci "$w")"
done
