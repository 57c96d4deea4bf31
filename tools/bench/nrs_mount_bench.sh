#!/usr/bin/env bash
# NRS on a real mount, three measurements (fio, O_DIRECT so every request
# reaches the OST scheduler):
#  1. TBF accuracy: one uid writing 4 KiB requests with 4 processes into
#     one single-stripe file (so one OST's bucket), under a rule of rate R,
#     for R = 10, 100, 1000, 10000 requests/s, then under bps limits with
#     64 KiB requests; printed beside the unthrottled rate of the same
#     workload (fifo) in the same run.
#  2. ORR against FIFO, seek distance: 16 processes read one 2-stripe file
#     in interleaved 64 KiB strides (process p reads blocks p, p+16, p+32,
#     ...) with one service thread per OST; printed: the seek distance the
#     OSTs' request order implies (sum of |offset - previous end| between
#     consecutive requests on one object, from nrs_stats), per request, and
#     MiB/s.
#  3. ORR against FIFO, throughput on a slow disk: one OST on ext4 on a
#     loop device whose reads are limited to --iops requests/s (cgroup v1
#     blkio.throttle.read_iops_device on the daemon), so a request costs
#     the same whatever its size, as a seek does on a rotating disk, and
#     fewer, larger disk requests (the kernel's readahead, once reads come
#     in ascending order) are what wins. 16 readers read one file backwards
#     in interleaved 64 KiB strides (reader p reads blocks N-1-p, N-1-p-16,
#     ...), a backward sweep that readahead cannot follow, O_DIRECT:
#     "collective", the readers wait for each other after every 1 MiB
#     window (build/tools/bench/strided_read, as MPI ranks reading a
#     checkpoint do), so a window's 16 requests queue together; and
#     "independent", each at its own pace (fio replaying each reader's
#     offsets), so they drift apart and a batch spans several windows.
#     Per workload, --pairs pairs (fifo, orr) in a seeded random order
#     (tools/bench/ratio.sh), and after each pair one ORR run with the
#     other byte quantum (nrs_orr_quantum_bytes 0 or 1M: a batch of 16
#     requests, one per reader). Printed: MiB/s and seek per request of
#     each run, medians, orr/fifo as a geometric mean [95 % interval].
#
#   tools/bench/nrs_mount_bench.sh [--dir DIR] [--seconds S] [--only tbf|seek|disk]
#       [--pairs N] [--iops N] [--readahead KB] [--seed N] [--mount-opts OPTS] [--oss]
# --oss (part 1 only, issue 34): the two OSTs are served by a `stripefs
# oss` process on 127.0.0.2 (port --oss-port, 7710 by default), so the
# rules are the mount's settings published to the OSS, and its NRS
# throttles the requests that cross the socket.
# --mount-opts: more options for every stripefs mount, e.g. io_uring=on (the
# figures on FUSE's io_uring transport; enable_uring is then set to Y for
# the run and restored on exit).
# One command for part 3 alone (about 3 minutes with the defaults):
#   ninja -C build stripefs strided_read && tools/bench/nrs_mount_bench.sh --only disk
# --seconds: per TBF step and per disk run (default 6); --only: one part;
# --pairs (default 4), --iops (default 400), --readahead: the loop
# device's read_ahead_kb (default: the kernel's; 2560 for a loop device on
# the machine of the README's figures), --seed (default 1):
# part 3.
# Must run as root (mounts, loop devices, cgroups, drops caches).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/nrs-bench-work
seconds=6
only=""
pairs=4
iops=400
readahead=""
seed=1
mount_opts=""
oss=0
oss_port=7710
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --iops) iops=$2; shift 2 ;;
    --readahead) readahead=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --mount-opts) mount_opts=",$2"; shift 2 ;;
    --oss) oss=1; shift ;;
    --oss-port) oss_port=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
case $only in ""|tbf|seek|disk) ;; *) echo "--only takes tbf, seek or disk" >&2; exit 2 ;; esac
if [ "$oss" = 1 ] && [ "$only" != tbf ]; then echo "--oss goes with --only tbf" >&2; exit 2; fi
strided=$PWD/build/tools/bench/strided_read
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }
# shellcheck source=tools/bench/ratio.sh
. tools/bench/ratio.sh
# shellcheck source=tools/bench/fuse_daemons.sh
. tools/bench/fuse_daemons.sh  # uring_enable, uring_restore
part() { [ -z "$only" ] || [ "$only" = "$1" ]; }

mnt=$dir/mnt
loop=""
oss_pid=""
cgroup=/sys/fs/cgroup/blkio/stripefs-nrs-bench-$$
unmount_sfs() {
  if grep -q " $mnt fuse.stripefs " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
  # fusermount returns before the daemon has closed its store and log: a
  # run right after this one would find them still being written.
  for _ in $(seq 100); do pgrep -f "mount $dir/meta " >/dev/null || break; sleep 0.1; done
}
cleanup() {
  unmount_sfs
  if [ -n "$oss_pid" ]; then kill "$oss_pid" 2>/dev/null; wait "$oss_pid" 2>/dev/null || true; oss_pid=""; fi
  # The daemon may still be closing its OST after fusermount returns.
  for _ in $(seq 50); do
    grep -q " $dir/disk " /proc/mounts || break
    umount "$dir/disk" 2>/dev/null || sleep 0.1
  done
  if [ -n "$loop" ]; then losetup -d "$loop" || true; loop=""; fi
  if [ -d "$cgroup" ]; then
    for _ in $(seq 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
  fi
}
trap 'cleanup; uring_restore' EXIT
if [[ $mount_opts == *io_uring=on* ]]; then uring_enable || exit 1; fi
fresh_fs() {  # $1 = stripe count, $2 = extra mount options
  cleanup
  rm -rf "$dir"
  mkdir -p "$mnt"
  if [ "$oss" = 1 ]; then
    mkdir -p "$dir/oss-ost0" "$dir/oss-ost1"
    $bin key new "$dir/key"
    $bin oss --listen "127.0.0.2:$oss_port" --key "$dir/key" --log-level warn \
      --log-file "$dir/oss.log" -f "$dir/oss-ost0" "$dir/oss-ost1" &
    oss_pid=$!
    for _ in $(seq 100); do
      (exec 3<>"/dev/tcp/127.0.0.2/$oss_port") 2>/dev/null && break
      sleep 0.1
    done
    $bin mkfs --meta "$dir/meta" --key "$dir/key" --ost "oss://127.0.0.2:$oss_port$dir/oss-ost0" \
      --ost "oss://127.0.0.2:$oss_port$dir/oss-ost1" --stripe-count "$1" --stripe-size 1M >/dev/null
    $bin mount "$dir/meta" "$mnt" -o "log_level=warn,key=$dir/key$2$mount_opts"
    return
  fi
  $bin mkfs --meta "$dir/meta" --ost "$dir/ost0" --ost "$dir/ost1" --stripe-count "$1" \
    --stripe-size 1M >/dev/null
  $bin mount "$dir/meta" "$mnt" -o "log_level=warn$2$mount_opts"
}
set_param() { $bin set_param "$mnt" "$@"; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# Requests/s and MiB/s of random direct writes by 4 processes into one file.
fio_write() {  # $1 = block size, $2 = seconds
  fio --name=tbf --filename="$mnt/tbf.dat" --size=64m --rw=randwrite --bs="$1" --direct=1 \
      --ioengine=psync --numjobs=4 --time_based --runtime="$2" --group_reporting --minimal |
    awk -F';' '{ printf "%.1f %.2f\n", $49, $48 / 1024 }'
}

# Requests the OSTs' regular heads served, and the seek bytes they imply.
served_and_seek() {
  $bin get_param "$mnt" nrs_stats | awk '/ reg dequeued=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "dequeued") d += kv[2]; if (kv[1] == "seek_bytes") s += kv[2] } } END { printf "%.0f %.0f\n", d, s }'
}

if part tbf; then
  where="one OST"; [ "$oss" = 1 ] && where="one OST behind a stripefs oss on 127.0.0.2"
  echo "== TBF accuracy (one uid, 4 processes, $where, ${seconds} s per rate; $(date -u +%F))"
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
fi

if part seek; then
  echo "== ORR against FIFO, seek distance (16 readers in interleaved 64 KiB strides, one 2-stripe file, 1 service thread per OST)"
  fresh_fs 2 ",ost_threads=1"
  dd if=/dev/urandom of="$mnt/orr.dat" bs=1M count=256 status=none
  set_param nrs_orr_supported=reads
  printf "%-6s %14s %18s %10s\n" policy "requests" "seek KiB/request" "MiB/s"
  for policy in fifo orr fifo orr; do
    set_param nrs_policies="$policy"
    before=$(served_and_seek)
    drop_caches
    mibs=$(fio --name=orr --filename="$mnt/orr.dat" --size=240m --bs=64k --rw=read:960k --direct=1 \
        --ioengine=psync --numjobs=16 --offset_increment=64k --group_reporting --minimal |
      awk -F';' '{ printf "%.1f", $7 / 1024 }')
    after=$(served_and_seek)
    read -r d0 s0 <<<"$before"; read -r d1 s1 <<<"$after"
    printf "%-6s %14d %18.1f %10s\n" "$policy" $((d1 - d0)) \
      "$(awk -v s=$((s1 - s0)) -v d=$((d1 - d0)) 'BEGIN { print (d > 0 ? s / d / 1024 : 0) }')" "$mibs"
  done
fi

if part disk; then
  [ -d /sys/fs/cgroup/blkio ] || { echo "part 3 needs the cgroup v1 blkio controller" >&2; exit 1; }
  [ -x "$strided" ] || { echo "build first: ninja -C build strided_read" >&2; exit 1; }
  cleanup
  rm -rf "$dir"; mkdir -p "$dir/disk" "$mnt"
  truncate -s 1G "$dir/disk.img"
  loop=$(losetup --find --show "$dir/disk.img")
  mkfs.ext4 -q -F "$loop"
  [ -n "$readahead" ] && echo "$readahead" > "/sys/block/${loop#/dev/}/queue/read_ahead_kb"
  mount "$loop" "$dir/disk"
  mkdir "$cgroup"
  echo "$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ') $iops" > "$cgroup/blkio.throttle.read_iops_device"
  $bin mkfs --meta "$dir/meta" --ost "$dir/disk/ost" --stripe-count 1 >/dev/null
  # Only the daemon reads under the limit (fio reads the mount, not the disk).
  (echo "$BASHPID" > "$cgroup/cgroup.procs" && exec $bin mount "$dir/meta" "$mnt" \
    -o "log_level=warn,ost_threads=1$mount_opts")
  set_param nrs_orr_supported=reads >/dev/null
  dd if=/dev/urandom of="$mnt/orr.dat" bs=1M count=512 status=none
  echo "== ORR against FIFO, throughput on a disk of $iops reads/s (read_ahead_kb" \
    "$(cat "/sys/block/${loop#/dev/}/queue/read_ahead_kb"); 16 readers backwards in interleaved" \
    "64 KiB strides, one 512 MiB file, 1 OST, 1 service thread; ${seconds} s per run;" \
    "$pairs pairs; $(date -u +%F))"
  # One run of workload $1 (collective or independent) under policy $2
  # with byte quantum $3: "<workload> <policy> quantum_bytes=<q> <MiB/s>
  # <seek KiB per request>", the seek as the OST's order implied it.
  disk_run() {
    set_param nrs_policies="$2" nrs_orr_quantum_bytes="$3" >/dev/null
    local before after d0 s0 d1 s1 mibs
    before=$(served_and_seek)
    drop_caches
    if [ "$1" = collective ]; then
      mibs=$("$strided" "$mnt/orr.dat" 16 65536 "$seconds" | awk '{ print $2 }')
    else
      mibs=$(fio --direct=1 --ioengine=psync --runtime="$seconds" --group_reporting --minimal \
          "${replay[@]}" | awk -F';' '{ printf "%.2f", $7 / 1024 }')
    fi
    after=$(served_and_seek)
    read -r d0 s0 <<<"$before"; read -r d1 s1 <<<"$after"
    printf "%-11s %-4s quantum_bytes=%-4s %8s %18.1f\n" "$1" "$2" "$3" "$mibs" \
      "$(awk -v s=$((s1 - s0)) -v d=$((d1 - d0)) 'BEGIN { print (d > 0 ? s / d / 1024 : 0) }')"
  }
  # Independent reader p's requests, replayed by fio (its rw=read with a
  # negative skip wraps around a few offsets instead of sweeping the file):
  # blocks N-1-p, N-1-p-16, ... down to the start.
  blocks=$(( $(stat -c %s "$mnt/orr.dat") / 65536 ))
  replay=()
  for p in $(seq 0 15); do
    awk -v f="$mnt/orr.dat" -v n="$blocks" -v p="$p" 'BEGIN {
      print "fio version 2 iolog"; print f " add"; print f " open"
      for (b = n - 1 - p; b >= 0; b -= 16) print f " read " b * 65536 " 65536"
      print f " close" }' > "$dir/reader$p.iolog"
    replay+=(--name="reader$p" --read_iolog="$dir/reader$p.iolog")
  done
  declare -A got=()
  record() {  # $1 = key, $2.. = disk_run's arguments
    local line key=$1
    shift
    line=$(disk_run "$@")
    echo "$line"
    got[$key]="${got[$key]:-} $(echo "$line" | awk '{ print $(NF - 1) }')"
  }
  # $1 = workload, $2 = the byte quantum of the paired ORR, $3 = that of the
  # ORR run once after each pair.
  workload() {
    local p
    printf "%-11s %-23s %8s %18s\n" workload run "MiB/s" "seek KiB/request"
    read -ra swapped <<< "$(swap_order_of "$pairs" "$seed")"
    for p in $(seq 0 $((pairs - 1))); do
      if [ "${swapped[$p]}" = 1 ]; then
        record "$1.orr" "$1" orr "$2"; record "$1.fifo" "$1" fifo 0
      else
        record "$1.fifo" "$1" fifo 0; record "$1.orr" "$1" orr "$2"
      fi
      record "$1.other" "$1" orr "$3"
    done
    echo "medians (MiB/s): fifo $(echo "${got[$1.fifo]}" | median), orr quantum_bytes=$2" \
      "$(echo "${got[$1.orr]}" | median), orr quantum_bytes=$3 $(echo "${got[$1.other]}" | median)"
    echo "orr quantum_bytes=$2 / fifo: $(ratio_ci_of "${got[$1.orr]}" "${got[$1.fifo]}")"
    echo "orr quantum_bytes=$3 / fifo: $(ratio_ci_of "${got[$1.other]}" "${got[$1.fifo]}")"
  }
  echo "-- collective: the 16 readers wait for each other after every window (build/tools/bench/strided_read)"
  workload collective 0 1M
  echo "-- independent: each reader goes at its own pace (fio, psync), so they drift apart"
  workload independent 1M 0
fi
