#!/usr/bin/env bash
# Filesystem-wide TBF (issue 10, nrs_tbf_scope): one uid limited by one TBF
# rule to R requests/s (4 KiB writes) or to B MiB/s (64 KiB writes), with
# 8 fio processes writing O_DIRECT at random offsets (so every request
# reaches an OST scheduler) into
#   1 stripe   a file on one OST
#   2 stripes  a file striped over 2 of the 4 OSTs
#   4 stripes  a file striped over all 4
#   skewed     4 processes on a 4-stripe file and 4 on a 1-stripe file on
#              OST 0: OST 0 sees over twice the requests of the others
# Each case runs with nrs_tbf_scope=fs (the rule holds for the filesystem)
# and =ost (it holds on each OST, Lustre's behaviour), and prints the
# measured rate, the configured one and their ratio, in one run. The 4 OSTs
# are directories of one disk (no device limit: the rule is the only brake),
# but OST 3's is a small ext4 loop device of its own: the last case freezes
# it (fsfreeze) with a write stuck in it, waits until the OST is
# unresponsive (ost_timeout=2) and evicted from the epochs, and measures the
# rule on a file striped over the other three with fs scope (issue 10
# item 3: the shares are computed without the evicted OST).
#
# --classes N runs another case instead (issue 31): N uids, each under a
# rule of its own (rate=--class-rate, 2 by default), each one fio process
# writing 4 KiB O_DIRECT at random offsets (one write in flight) into a
# file of its own striped over the 4 OSTs; with fs scope, after a 5 s ramp,
# it prints each uid's rate against its rule: the minimum, median, mean and
# maximum ratio and how many are within 5 %.
# The epoch data coordinates 63 classes per epoch, so N > 63 shows that
# every class is reached in turn (nrs/tbf_shares.h).
#
# --oss (issue 34): the 4 OSTs are served by two `stripefs oss` processes,
# OSTs 0-1 by one on 127.0.0.2, 2-3 by one on 127.0.0.3 (ports 7720,
# 7721), so the rule is the mount's, published to both, and the shares
# come from the mount's epoch handler over the network; the frozen-OST case
# is left out (the OSTs are not this machine's mount's to freeze).
#
#   tools/bench/tbf_scope_bench.sh [--dir DIR] [--seconds S] [--rate R] [--mibs B]
#                                  [--classes N [--class-rate R]] [--oss]
# Must run as root (mounts, loop device, fsfreeze).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/tbf-scope-bench-work
seconds=10
rate=400
mibs=20
classes=0
class_rate=2
oss=0
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --mibs) mibs=$2; shift 2 ;;
    --classes) classes=$2; shift 2 ;;
    --class-rate) class_rate=$2; shift 2 ;;
    --oss) oss=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }

mnt=$dir/mnt
loop="" stuck="" oss_pids=""
cleanup() {
  set +e
  if [ -n "$oss_pids" ] && grep -q " $mnt fuse.stripefs " /proc/mounts; then fusermount3 -u "$mnt"; fi
  for pid in $oss_pids; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  fsfreeze -u "$dir/dev3" 2>/dev/null
  [ -n "$stuck" ] && wait "$stuck" 2>/dev/null
  if grep -q " $mnt fuse.stripefs " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt"; fi
  # The daemon may still be closing its OSTs after fusermount returns.
  for _ in $(seq 50); do
    grep -q " $dir/dev3 " /proc/mounts || break
    umount "$dir/dev3" 2>/dev/null || sleep 0.1
  done
  [ -n "$loop" ] && losetup -d "$loop"
}
trap cleanup EXIT
rm -rf "$dir"
mkdir -p "$mnt" "$dir/dev3"
if [ "$oss" = 1 ]; then
  $bin key new "$dir/key"
  osts=""
  for server in 0 1; do
    address=127.0.0.$((2 + server)):$((7720 + server))
    mkdir -p "$dir/oss$server-a" "$dir/oss$server-b"
    $bin oss --listen "$address" --key "$dir/key" --log-level warn --log-file "$dir/oss$server.log" \
      -f "$dir/oss$server-a" "$dir/oss$server-b" &
    oss_pids="$oss_pids $!"
    for _ in $(seq 100); do
      (exec 3<>"/dev/tcp/${address%:*}/${address#*:}") 2>/dev/null && break
      sleep 0.1
    done
    osts="$osts --ost oss://$address$dir/oss$server-a --ost oss://$address$dir/oss$server-b"
  done
  # shellcheck disable=SC2086
  $bin mkfs --meta "$dir/meta" --key "$dir/key" $osts --stripe-count 1 --stripe-size 1M >/dev/null
  $bin mount "$dir/meta" "$mnt" -o "log_level=warn,ost_timeout=2,key=$dir/key"
else
  truncate -s 256M "$dir/dev3.img"
  loop=$(losetup --find --show "$dir/dev3.img")
  mkfs.ext4 -q -F "$loop"
  mount "$loop" "$dir/dev3"
  $bin mkfs --meta "$dir/meta" --ost "$dir/ost0" --ost "$dir/ost1" --ost "$dir/ost2" \
    --ost "$dir/dev3/ost" --stripe-count 1 --stripe-size 1M >/dev/null
  $bin mount "$dir/meta" "$mnt" -o log_level=warn,ost_timeout=2
fi
set_param() { $bin set_param "$mnt" "$@" >/dev/null; }

make_file() {  # $1 = name, $2 = OST list
  $bin setstripe -o "$2" -S 1M "$mnt/$1"
  dd if=/dev/zero of="$mnt/$1" bs=1M count=64 status=none
}

# ---- --classes N: N uids, a rule each ----
if [ "$classes" -gt 0 ]; then
  first_uid=20000
  job="$dir/classes.fio"
  printf '[global]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=psync\nsize=4m\n' >"$job"
  printf 'time_based\nramp_time=5\nruntime=%s\n' "$seconds" >>"$job"
  set_param nrs_policies="tbf uid"
  set_param nrs_tbf_scope=fs
  for ((i = 0; i < classes; i++)); do
    uid=$((first_uid + i))
    $bin setstripe -o 0,1,2,3 -S 1M "$mnt/c$uid"
    truncate -s 4M "$mnt/c$uid"
    chmod 666 "$mnt/c$uid"
    set_param nrs_tbf_rule="start c$uid uid={$uid} rate=$class_rate"
    printf '[c%s]\nfilename=%s\nuid=%s\n' "$uid" "$mnt/c$uid" "$uid" >>"$job"
  done
  echo "== Filesystem-wide TBF, $classes uids each under its own rule rate=$class_rate," \
    "one O_DIRECT 4 KiB write in flight each, 4 OSTs, ${seconds} s after a 5 s ramp ($(date -u +%F))"
  # One line per fio job: KiB written (field 47) over its runtime in ms
  # (field 50), in 4 KiB requests/s; fio's own IOPS field is rounded.
  fio --minimal "$job" | awk -F';' -v c="$class_rate" '{ print $47 / 4 / ($50 / 1000) / c }' |
    sort -g |
    awk -v n="$classes" -v c="$class_rate" '
      { r[NR] = $1; sum += $1; if ($1 >= 0.95 && $1 <= 1.05) within++ }
      END {
        if (NR != n) { printf "fio reported %d of %d classes\n", NR, n; exit 1 }
        printf "ratio to the rule: min %.3f median %.3f mean %.3f max %.3f; within 5%%: %d of %d;",
          r[1], r[int((NR + 1) / 2)], sum / NR, r[NR], within, NR
        printf " total %.0f/s of %d/s\n", sum * c, NR * c
      }'
  exit 0
fi
make_file s1 0
make_file s2 1,2
make_file s4 0,1,2,3
make_file s1b 0
make_file s3 0,1,2
make_file v3 3

# Requests/s and MiB/s summed over every process of one case.
run_case() {  # $1 = case, $2 = block size
  local jobs
  case $1 in
    1) jobs="--name=a --filename=$mnt/s1 --numjobs=8" ;;
    2) jobs="--name=a --filename=$mnt/s2 --numjobs=8" ;;
    4) jobs="--name=a --filename=$mnt/s4 --numjobs=8" ;;
    skewed) jobs="--name=a --filename=$mnt/s4 --numjobs=4 --name=b --filename=$mnt/s1b --numjobs=4" ;;
    3) jobs="--name=a --filename=$mnt/s3 --numjobs=8" ;;
  esac
  # shellcheck disable=SC2086
  fio --size=64m --rw=randwrite --bs="$2" --direct=1 --ioengine=psync --time_based --ramp_time=2 \
      --runtime="$seconds" --group_reporting --minimal $jobs |
    awk -F';' '{ iops += $49; kib += $48 } END { printf "%.1f %.2f\n", iops, kib / 1024 }'
}

set_param nrs_policies="tbf uid"
set_param nrs_tbf_rule="start bench uid={0} rate=$rate"
where="4 OSTs"; [ "$oss" = 1 ] && where="4 OSTs on two stripefs oss processes (0-1, 2-3)"
echo "== Filesystem-wide TBF: one uid, 8 fio processes, $where, ${seconds} s per case ($(date -u +%F))"
printf "%-10s %-6s %-14s %14s %14s %7s\n" stripes scope limit configured measured ratio
for limit in rate bps; do
  if [ $limit = rate ]; then
    set_param nrs_tbf_rule="change bench rate=$rate bps=0"
    bs=4k
  else
    set_param nrs_tbf_rule="change bench rate=1000000000 bps=${mibs}M"
    bs=64k
  fi
  for stripes in 1 2 4 skewed; do
    for scope in fs ost; do
      set_param nrs_tbf_scope=$scope
      read -r iops mibs_seen < <(run_case $stripes $bs)
      if [ $limit = rate ]; then
        printf "%-10s %-6s %-14s %12s/s %12s/s %7.3f\n" "$stripes" $scope "rate=$rate" "$rate" \
          "$iops" "$(awk -v m="$iops" -v c="$rate" 'BEGIN { print m / c }')"
      else
        printf "%-10s %-6s %-14s %8s MiB/s %8s MiB/s %7.3f\n" "$stripes" $scope "bps=${mibs}M" \
          "$mibs" "$mibs_seen" "$(awk -v m="$mibs_seen" -v c="$mibs" 'BEGIN { print m / c }')"
      fi
    done
  done
done

# ---- OST 3 frozen: it leaves the epochs, the rule holds over the others ----
[ "$oss" = 1 ] && exit 0
fsfreeze -f "$dir/dev3"
dd if=/dev/zero of="$mnt/v3" bs=64k count=1 oflag=direct conv=notrunc status=none &
stuck=$!
evicted=0
for _ in $(seq 150); do
  if $bin get_param "$mnt" ost_status | grep -E "^ost3 " | grep -q "eh=evicted"; then evicted=1; break; fi
  sleep 0.1
done
[ "$evicted" = 1 ] || { echo "OST 3 was not evicted:"; $bin get_param "$mnt" ost_status; exit 1; }
echo "== OST 3 frozen (fsfreeze, a write stuck in it): $($bin get_param "$mnt" ost_status | grep -E '^ost3 ' | tr -s ' ')"
set_param nrs_tbf_scope=fs
set_param nrs_tbf_rule="change bench rate=$rate bps=0"
read -r iops _ < <(run_case 3 4k)
printf "%-10s %-6s %-14s %12s/s %12s/s %7.3f\n" "3 of 4" fs "rate=$rate" "$rate" "$iops" \
  "$(awk -v m="$iops" -v c="$rate" 'BEGIN { print m / c }')"
set_param nrs_tbf_rule="change bench rate=1000000000 bps=${mibs}M"
read -r _ mibs_seen < <(run_case 3 64k)
printf "%-10s %-6s %-14s %8s MiB/s %8s MiB/s %7.3f\n" "3 of 4" fs "bps=${mibs}M" "$mibs" \
  "$mibs_seen" "$(awk -v m="$mibs_seen" -v c="$mibs" 'BEGIN { print m / c }')"
fsfreeze -u "$dir/dev3"
wait "$stuck" || true
stuck=""
