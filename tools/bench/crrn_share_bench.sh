#!/usr/bin/env bash
# Weighted CRR-N shares on a real mount: three uids at weights 1:2:4, each
# reading its own file with 16 processes (fio, O_DIRECT, random 64 KiB), on
# one OST whose disk is a loop device limited to --bps bytes/s of reads
# (cgroup v1 blkio), so requests queue at the OST and the scheduler decides
# who is served. Prints each uid's requests/s, its share of the total, the
# share its weight asks for and the ratio of the two; then the same with
# the weight-4 uid idle (its share must go to the others, 1:2). Baseline in
# the same run: plain crrn (all weights 1).
#
#   tools/bench/crrn_share_bench.sh [--dir DIR] [--seconds S] [--bps BYTES]
# Must run as root (loop devices, mounts, cgroups, drops caches).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/crrn-bench-work
seconds=20
bps=20000000
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --bps) bps=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }
[ -d /sys/fs/cgroup/blkio ] || { echo "no cgroup v1 blkio controller" >&2; exit 1; }

mnt=$dir/mnt
loop=""
cgroup=/sys/fs/cgroup/blkio/stripefs-crrn-bench-$$
cleanup() {
  if grep -q " $mnt fuse.stripefs " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
  # The daemon may still be closing its OST after fusermount returns.
  for _ in $(seq 50); do
    grep -q " $dir/disk " /proc/mounts || break
    umount "$dir/disk" 2>/dev/null || sleep 0.1
  done
  if [ -n "$loop" ]; then losetup -d "$loop" || true; fi
  if [ -d "$cgroup" ]; then
    echo $$ > /sys/fs/cgroup/blkio/cgroup.procs
    for _ in $(seq 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
  fi
}
trap cleanup EXIT
rm -rf "$dir"; mkdir -p "$dir/disk" "$mnt"
truncate -s 2G "$dir/disk.img"
loop=$(losetup --find --show "$dir/disk.img")
mkfs.ext4 -q -F "$loop"
mount "$loop" "$dir/disk"
mkdir "$cgroup"
echo "$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ') $bps" > "$cgroup/blkio.throttle.read_bps_device"
echo $$ > "$cgroup/cgroup.procs"  # the daemon reads under the limit

$bin mkfs --meta "$dir/meta" --ost "$dir/disk/ost" --stripe-count 1 >/dev/null
$bin mount "$dir/meta" "$mnt" -o log_level=warn,ost_threads=2
chmod 777 "$mnt"
set_param() { $bin set_param "$mnt" "$@" >/dev/null; }
uids=(1001 1002 1004)
for uid in "${uids[@]}"; do
  dd if=/dev/urandom of="$mnt/u$uid" bs=1M count=400 status=none
  chmod 644 "$mnt/u$uid"
done

# Requests/s of one uid's 16 readers, as fio reports them.
read_as() {  # $1 = uid
  setpriv --reuid="$1" --regid="$1" --clear-groups \
    fio --name="u$1" --filename="$mnt/u$1" --rw=randread --bs=64k --direct=1 --ioengine=psync \
        --numjobs=16 --time_based --runtime="$seconds" --group_reporting --minimal |
    awk -F';' '{ printf "%.1f\n", $8 }'
}

run() {  # $1 = title, $2.. = "uid:weight" of the uids that read
  local title=$1; shift
  sync; echo 3 > /proc/sys/vm/drop_caches
  declare -A got=() want=()
  local total=0 weights=0
  for pair in "$@"; do
    read_as "${pair%%:*}" > "$dir/out.${pair%%:*}" &
  done
  wait
  for pair in "$@"; do
    got[${pair%%:*}]=$(cat "$dir/out.${pair%%:*}")
    total=$(awk -v a="$total" -v b="${got[${pair%%:*}]}" 'BEGIN { print a + b }')
    weights=$((weights + ${pair##*:}))
  done
  echo "== $title ($seconds s, reads limited to $bps B/s, 16 readers per uid)"
  printf "%-8s %7s %12s %9s %9s %7s\n" uid weight "requests/s" share wanted ratio
  for pair in "$@"; do
    local uid=${pair%%:*} weight=${pair##*:}
    awk -v u="$uid" -v w="$weight" -v g="${got[$uid]}" -v t="$total" -v ws="$weights" 'BEGIN {
      share = g / t; wanted = w / ws
      printf "%-8s %7d %12.1f %8.1f%% %8.1f%% %7.3f\n", u, w, g, share * 100, wanted * 100, share / wanted }'
  done
}

echo "stripefs weighted CRR-N shares; $(date -u +%F)"
set_param nrs_policies="crrn uid" nrs_crrn_quantum=1
run "crrn uid, no weights (baseline: equal shares)" 1001:1 1002:1 1004:1
set_param "nrs_crrn_weight=start w2 uid={1002} weight=2" "nrs_crrn_weight=start w4 uid={1004} weight=4"
run "crrn uid, weights 1:2:4" 1001:1 1002:2 1004:4
run "crrn uid, weights 1:2:4, uid 1004 idle" 1001:1 1002:2
