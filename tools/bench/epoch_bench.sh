#!/usr/bin/env bash
# Coordinated epochs on a real mount (issue 10 item 2): 4 jobs (SLURM_JOB_ID
# j1..j4), each reading its own file striped over 4 OSTs (1 MiB stripes) in
# 4 MiB (--bs) O_DIRECT reads, on 4 loop devices whose reads are limited to --bps
# bytes/s each (cgroup v1 blkio; the set-up of bench.sh --devices), with one
# service thread per OST so the scheduler's order is the order the disk
# sees. A 4 MiB read is 4 requests, one per OST, and completes when the last
# of them does. For each policy (crrn jobid, epoch jobid) and each number of
# reads a job keeps in flight (--depths: threads per job), prints per job the p50 and p99
# completion time of its reads (fio clat), and the total MiB/s.
#
#   tools/bench/epoch_bench.sh [--dir DIR] [--seconds S] [--bps BYTES]
#                              [--file-mib N] [--depths "1 4"] [--reps N]
#                              [--bs SIZE] [--rate BYTES]
# Must run as root (loop devices, mounts, cgroups, drops caches).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/epoch-bench-work
seconds=12 bps=25000000 file_mib=512 depths="1 4" reps=2 bs=4m rate=
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --bps) bps=$2; shift 2 ;;
    --file-mib) file_mib=$2; shift 2 ;;
    --depths) depths=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }
[ -d /sys/fs/cgroup/blkio ] || { echo "no cgroup v1 blkio controller" >&2; exit 1; }

mnt=$dir/mnt
loops=() mounts=()
cgroup=/sys/fs/cgroup/blkio/stripefs-epoch-bench-$$
cleanup() {
  set +e
  if grep -q " $mnt fuse.stripefs " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    # The daemon may still be closing its OSTs after fusermount returns.
    for _ in $(seq 50); do
      grep -q " ${mounts[i]} " /proc/mounts || break
      umount "${mounts[i]}" 2>/dev/null || sleep 0.1
    done
  done
  for l in "${loops[@]}"; do losetup -d "$l"; done
  if [ -d "$cgroup" ]; then
    echo $$ > /sys/fs/cgroup/blkio/cgroup.procs
    for _ in $(seq 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$dir"; mkdir -p "$dir" "$mnt"
mkdir "$cgroup"
for i in 0 1 2 3; do
  truncate -s $((file_mib * 2 + 256))M "$dir/disk$i.img"
  l=$(losetup --find --show "$dir/disk$i.img"); loops+=("$l")
  # No read-ahead: every read the OST makes costs its bytes at the limit,
  # none is served early from pages read ahead for it.
  blockdev --setra 0 "$l"
  mkfs.ext4 -q -F "$l"
  mkdir -p "$dir/dev$i"; mount "$l" "$dir/dev$i"; mounts+=("$dir/dev$i")
  echo "$(lsblk -dno MAJ:MIN "$l" | tr -d ' ') $bps" > "$cgroup/blkio.throttle.read_bps_device"
done
echo $$ > "$cgroup/cgroup.procs"  # the daemon reads under the limits

"$bin" mkfs --meta "$dir/meta" --ost "$dir/dev0/ost" --ost "$dir/dev1/ost" \
  --ost "$dir/dev2/ost" --ost "$dir/dev3/ost" --stripe-count 4 --stripe-size 1M >/dev/null
"$bin" mount "$dir/meta" "$mnt" -o log_level=warn,ost_threads=1
for j in 1 2 3 4; do
  dd if=/dev/urandom of="$mnt/f$j" bs=1M count="$file_mib" status=none
done
sync

# --rate: each thread reads at most this many bytes/s, at Poisson times
# (fio rate_process=poisson), so reads arrive on their own schedule instead
# of one as soon as the last is done.
pacing=""
[ -n "$rate" ] && pacing="--rate=$rate --rate_process=poisson"

# One fio per job, all at once; prints "p50_ms p99_ms MiB/s" per job.
run_jobs() {  # $1 = reads in flight per job
  local j pids=()
  for j in 1 2 3 4; do
    # psync: a read's clat is its whole time (libaio on FUSE blocks in
    # io_submit, which fio counts as slat); $1 threads per job, each on its
    # own part of the file, reported together.
    # shellcheck disable=SC2086
    SLURM_JOB_ID=j$j fio --name=j$j --filename="$mnt/f$j" --rw=read --bs="$bs" --direct=1 \
      --ioengine=psync --numjobs="$1" --offset_increment=$((file_mib / $1))m $pacing \
      --group_reporting --time_based --runtime="$seconds" --minimal >"$dir/fio.$j" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  for j in 1 2 3 4; do
    # Terse v3: field 7 read KiB/s; fields 18-37 read clat percentiles, "P%=usec".
    awk -F';' '{
      for (i = 18; i <= 37; i++) {
        split($i, kv, "=")
        if (kv[1] == "50.000000%") p50 = kv[2]
        if (kv[1] == "99.000000%") p99 = kv[2]
      }
      printf "%.0f %.0f %.1f\n", p50 / 1000, p99 / 1000, $7 / 1024
    }' "$dir/fio.$j"
  done
}

echo "stripefs coordinated epochs: 4 jobs x one 4-stripe file, $bs O_DIRECT reads${rate:+ paced at $rate/s per thread},"
echo "  4 loop devices at $bps B/s of reads each, ost_threads=1, ${seconds}s per run; $(date -u +%F)"
printf "%-12s %6s %4s %-34s %9s %9s %9s\n" policy depth rep "per job p50/p99 ms" "mean p50" "mean p99" "MiB/s"
for depth in $depths; do
  for rep in $(seq "$reps"); do
    for policy in "crrn jobid" "epoch jobid"; do
      "$bin" set_param "$mnt" "nrs_policies=$policy" >/dev/null
      sync; echo 3 > /proc/sys/vm/drop_caches
      out=$(run_jobs "$depth")
      per_job=$(echo "$out" | awk '{ printf "%s/%s ", $1, $2 }')
      echo "$out" | awk -v policy="$policy" -v depth="$depth" -v rep="$rep" -v per="$per_job" '
        { p50 += $1; p99 += $2; mib += $3; n++ }
        END { printf "%-12s %6s %4s %-34s %9.0f %9.0f %9.1f\n", policy, depth, rep, per, p50 / n, p99 / n, mib }'
    done
  done
done
