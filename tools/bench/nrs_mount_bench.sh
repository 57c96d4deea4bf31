#!/usr/bin/env bash
# NRS on a real mount, two measurements (fio, O_DIRECT so every request
# reaches the OST scheduler):
#  1. TBF accuracy: one uid writing 4 KiB requests with 4 processes into
#     one single-stripe file (so one OST's bucket), under a rule of rate R,
#     for R = 10, 100, 1000, 10000 requests/s, then under bps limits with
#     64 KiB requests; printed beside the unthrottled rate of the same
#     workload (fifo) in the same run.
#  2. ORR against FIFO: 16 processes read one 2-stripe file in interleaved
#     64 KiB strides (process p reads blocks p, p+16, p+32, ...) with one
#     service thread per OST; printed: the seek distance the OSTs' request
#     order implies (sum of |offset - previous end| between consecutive
#     requests on one object, from nrs_stats), per request, and MiB/s.
#
#   tools/bench/nrs_mount_bench.sh [--dir DIR] [--seconds S]
# Must run as root (mounts, drops caches).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/nrs-bench-work
seconds=6
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }

mnt=$dir/mnt
cleanup() {
  if grep -q " $mnt fuse.stripefs " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
}
trap cleanup EXIT
fresh_fs() {  # $1 = stripe count, $2 = extra mount options
  cleanup
  rm -rf "$dir"
  mkdir -p "$mnt"
  $bin mkfs --meta "$dir/meta" --ost "$dir/ost0" --ost "$dir/ost1" --stripe-count "$1" \
    --stripe-size 1M >/dev/null
  $bin mount "$dir/meta" "$mnt" -o "log_level=warn$2"
}
set_param() { $bin set_param "$mnt" "$@"; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# Requests/s and MiB/s of random direct writes by 4 processes into one file.
fio_write() {  # $1 = block size, $2 = seconds
  fio --name=tbf --filename="$mnt/tbf.dat" --size=64m --rw=randwrite --bs="$1" --direct=1 \
      --ioengine=psync --numjobs=4 --time_based --runtime="$2" --group_reporting --minimal |
    awk -F';' '{ printf "%.1f %.2f\n", $49, $48 / 1024 }'
}

echo "== TBF accuracy (one uid, 4 processes, one OST, ${seconds} s per rate; $(date -u +%F))"
fresh_fs 1 ""
dd if=/dev/zero of="$mnt/tbf.dat" bs=1M count=64 status=none
read -r free_iops free_mibs < <(fio_write 4k "$seconds")
printf "%-26s %12s %12s %8s\n" limit "configured" "measured" "ratio"
printf "%-26s %12s %12s %8s\n" "none (fifo), 4 KiB" "-" "$free_iops/s" "-"
set_param nrs_policies="tbf uid"
set_param nrs_tbf_rule="start bench uid={0} rate=10"
for rate in 10 100 1000 10000; do
  set_param nrs_tbf_rule="change bench rate=$rate"
  # Low rates need longer runs for the burst (depth 3) not to dominate.
  secs=$seconds; [ "$rate" -le 10 ] && secs=$((seconds * 3))
  read -r iops _ < <(fio_write 4k "$secs")
  printf "%-26s %10s/s %10s/s %7.2f\n" "rate=$rate, 4 KiB" "$rate" "$iops" \
    "$(awk -v m="$iops" -v c="$rate" 'BEGIN { print m / c }')"
done
set_param nrs_tbf_rule="change bench rate=1000000"
read -r free64_iops free64_mibs < <(fio_write 64k "$seconds")
printf "%-26s %12s %10s MiB/s\n" "none (rate=1000000), 64K" "-" "$free64_mibs"
for mib in 1 10 50; do
  set_param nrs_tbf_rule="change bench bps=${mib}M"
  read -r _ mibs < <(fio_write 64k "$seconds")
  printf "%-26s %8s MiB/s %8s MiB/s %7.2f\n" "bps=${mib}M, 64 KiB" "$mib" "$mibs" \
    "$(awk -v m="$mibs" -v c="$mib" 'BEGIN { print m / c }')"
done

echo
echo "== ORR against FIFO (16 readers in interleaved 64 KiB strides, one 2-stripe file, 1 service thread per OST)"
fresh_fs 2 ",ost_threads=1"
dd if=/dev/urandom of="$mnt/orr.dat" bs=1M count=256 status=none
set_param nrs_orr_supported=reads
printf "%-6s %14s %18s %10s\n" policy "requests" "seek KiB/request" "MiB/s"
for policy in fifo orr fifo orr; do
  set_param nrs_policies="$policy"
  before=$($bin get_param "$mnt" nrs_stats | awk '/ reg dequeued=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "dequeued") d += kv[2]; if (kv[1] == "seek_bytes") s += kv[2] } } END { printf "%.0f %.0f\n", d, s }')
  drop_caches
  mibs=$(fio --name=orr --filename="$mnt/orr.dat" --size=240m --bs=64k --rw=read:960k --direct=1 \
      --ioengine=psync --numjobs=16 --offset_increment=64k --group_reporting --minimal |
    awk -F';' '{ printf "%.1f", $7 / 1024 }')
  after=$($bin get_param "$mnt" nrs_stats | awk '/ reg dequeued=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "dequeued") d += kv[2]; if (kv[1] == "seek_bytes") s += kv[2] } } END { printf "%.0f %.0f\n", d, s }')
  read -r d0 s0 <<<"$before"; read -r d1 s1 <<<"$after"
  printf "%-6s %14d %18.1f %10s\n" "$policy" $((d1 - d0)) \
    "$(awk -v s=$((s1 - s0)) -v d=$((d1 - d0)) 'BEGIN { print (d > 0 ? s / d / 1024 : 0) }')" "$mibs"
done
