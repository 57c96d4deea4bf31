#!/usr/bin/env bash
# stripefs against a plain directory of the same disk and the FUSE
# filesystems an admin would otherwise pick, in one run, interleaved per
# repetition (issues 9 and 33). Targets:
#   plain      a directory of the disk everything else sits on
#   sfs-4      stripefs, a directory with 4 stripes of 1 MiB (4 OST dirs),
#              -o io_uring=off: requests through /dev/fuse
#   sfs-1      the same mount, a directory with 1 stripe
#   sfs-wb     a second stripefs mount with cache=writeback, 4 stripes
#   sfs-wbk    a third one like sfs-wb, with the bdi knobs of --wb-knob set
#              (only with --wb-knob, which adds it after sfs-wb)
#   sfs-oss    like sfs-4, its 4 OST directories served by one `stripefs oss`
#              on 127.0.0.2 (issue 34: the transport's cost against sfs-4);
#              only when asked for with --targets
#   sfs-4-ur sfs-1-ur sfs-wb-ur sfs-wbk-ur sfs-oss-ur
#              the same on mounts of their own with -o io_uring=on
#   mergerfs   Debian's mergerfs over two directories, cache.files=off
#   php        libfuse 3.14's example/passthrough_hp, if --passthrough-hp PATH
#   php318-ur  libfuse 3.18's passthrough_hp, if --passthrough-hp-318 PATH,
#              -o io_uring --nopassthrough: every request reaches the daemon,
#              over io_uring, as in stripefs
#   php318-pt  the same binary with kernel passthrough (its default) and
#              -o io_uring when the kernel has it: the kernel does the I/O,
#              the limit for a FUSE filesystem that lets it (stripefs must
#              not: NRS sees every request)
# The io_uring targets (-ur, and php318-pt) set the kernel's
# /sys/module/fuse/parameters/enable_uring to Y for the run and restore its
# value on exit; on a kernel without it, or a stripefs whose io_uring=on mount
# fails, those columns are left out with the reason.
# Workloads (2 processes, one file each):
#   seq-write  1 MiB transfers, --seq-mib per process, fsync at close
#   seq-read   the same files after the page cache was dropped (cold)
#   re-read    the same files again, from the page cache
#   rand-write 4 KiB at random offsets, --rand-mib per process, fsync at close
#   rand-read  the same, cold
#   md-create md-stat md-read md-remove: mdtest -n --files -F (ops/s)
# IOR and mdtest when --ior PATH is given (mdtest beside it, or --mdtest
# PATH); fio otherwise (then no md-* rows). Median of --reps (default 3),
# range in brackets, ratio to plain. Then the daemon's CPU per operation
# for each FUSE target (user + system time of all its threads during the
# workload, /proc/PID/stat, over IOR transfers or mdtest files; an mdtest
# phase is measured from just before it starts to just before the next one,
# the last until mdtest ends); for each stripefs target run on both
# transports the io_uring / dev_fuse ratio of throughput (paired by
# repetition) and of CPU per operation; and per workload whether the best
# stripefs io_uring target reaches the best peer (mergerfs, php, php318-ur).
#
#   tools/bench/bench.sh [--ior PATH] [--mdtest PATH] [--passthrough-hp PATH]
#       [--passthrough-hp-318 PATH] [--dir DIR] [--reps N] [--seq-mib N]
#       [--rand-mib N] [--files N] [--targets LIST] [--work LIST]
#       [--mount-opts OPTS] [--wb-knob NAME=VALUE]...
#   tools/bench/bench.sh --devices [--oss] [--bps BYTES] [--dev-mib N] [--ior PATH] ...
#   tools/bench/bench.sh --scaling ...   (tools/bench/scaling_bench.sh)
#
# --wb-knob NAME=VALUE (repeatable) writes VALUE to /sys/class/bdi/<bdi of
# the mount>/NAME of sfs-wbk after its mount (max_bytes, max_ratio,
# strict_limit, min_bytes ... as this kernel has them; stripefs itself sets
# strict_limit to 0), or for max_background and congestion_threshold to
# /sys/fs/fuse/connections/<its connection>/NAME (the kernel's 12 and 9 when,
# as from libfuse 3.14, INIT asks for nothing), to measure what they do to
# cache=writeback against sfs-wb in the same run.
#
# --devices: each of 4 OSTs (and each of mergerfs's 4 branches) on its own
# loop device (ext4 on a file) with a read limit per device (cgroup v1
# blkio throttle.read_bps_device, --bps, default 50 MB/s); prints a cold
# read of one file striped over 4 OSTs, of one file with 1 stripe, and of
# one file on mergerfs. Loop devices, mounts and the cgroup are removed on
# exit, also on failure. With --oss also a stripefs whose 4 OSTs (one per
# device) are each served by a `stripefs oss` of its own on 127.0.0.10-13,
# under the same limits (issue 34: striping across servers): sfs-oss-4
# against sfs-oss-1.
#
# Must run as root: it mounts, and drops the page cache between the write
# and the read phases.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
# shellcheck source=tools/bench/fuse_daemons.sh
. "$here/fuse_daemons.sh"
# shellcheck source=tools/bench/ratio.sh
. "$here/ratio.sh"  # median, range, ratio_ci_of
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/bench-work
ior="" mdtest="" php="" php318="" reps=3 seq_mib=512 rand_mib=64 files=2000 np=2
targets="plain sfs-4 sfs-4-ur sfs-1 sfs-1-ur sfs-wb sfs-wb-ur mergerfs php php318-ur php318-pt"
works="seq-write seq-read re-read rand-write rand-read md-create md-stat md-read md-remove"
mount_opts="log_level=warn"
wb_knobs=()
devices=0 bps=50000000 dev_mib=512 dev_oss=0
while [ $# -gt 0 ]; do
  case $1 in
    --scaling) shift; exec "$here/scaling_bench.sh" "$@" ;;
    --ior) ior=$2; shift 2 ;;
    --mdtest) mdtest=$2; shift 2 ;;
    --passthrough-hp) php=$2; shift 2 ;;
    --passthrough-hp-318) php318=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seq-mib) seq_mib=$2; shift 2 ;;
    --rand-mib) rand_mib=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --work) works=$2; shift 2 ;;
    --mount-opts) mount_opts=$2; shift 2 ;;
    --wb-knob)
      [[ $2 =~ ^[a-z_]+=[0-9]+$ ]] || { echo "--wb-knob NAME=NUMBER, not $2" >&2; exit 2; }
      wb_knobs+=("$2"); shift 2 ;;
    --devices) devices=1; shift ;;
    --bps) bps=$2; shift 2 ;;
    --dev-mib) dev_mib=$2; shift 2 ;;
    --oss) dev_oss=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root (mounts, drops caches)" >&2; exit 1; }
if [ -n "$ior" ]; then
  [ -x "$ior" ] || { echo "no IOR at $ior" >&2; exit 1; }
  [ -n "$mdtest" ] || mdtest=$(dirname "$ior")/mdtest
  [ -x "$mdtest" ] || { echo "no mdtest at $mdtest (give --mdtest PATH)" >&2; exit 1; }
  command -v mpirun >/dev/null || { echo "mpirun missing: apt-get install openmpi-bin" >&2; exit 1; }
else
  command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 1; }
  works=$(echo "$works" | tr ' ' '\n' | grep -v '^md-' | tr '\n' ' ')
fi

has_target() { echo " $targets " | grep -Eq -- " ($1) "; }
# The targets whose names match (-x) or, with $2 = -v, do not match the
# extended regex $1, space-separated.
targets_matching() {
  # shellcheck disable=SC2086 # one target a line
  printf '%s\n' $targets | grep -Ex ${2:-} -- "$1" | tr '\n' ' ' || true
}
# Leaves out the targets whose names match $1, saying why ($2) if there
# were any.
drop_targets() {
  local gone
  gone=$(targets_matching "$1")
  [ -z "$gone" ] && return 0
  [ -n "${2:-}" ] && echo "leaving out ${gone% }: $2" >&2
  targets=$(targets_matching "$1" -v)
}
# Adds target $2 after target $1 if $1 is there and $2 is not.
add_after() {
  has_target "$2" || targets=$(echo " $targets " | sed "s/ $1 / $1 $2 /")
}

[ -z "$php" ] && drop_targets php
if [ -z "$php318" ]; then
  drop_targets 'php318-.*'
else
  [ -x "$php318" ] || { echo "no passthrough_hp at $php318" >&2; exit 1; }
  # A libfuse installed to a private prefix: a binary built without an rpath
  # finds it only there (for this daemon alone, not the others).
  php318_cmd=("$php318")
  if ldd "$php318" | grep -q 'libfuse3.* not found'; then
    libs=""
    for l in "$(dirname "$php318")"/../lib{,/x86_64-linux-gnu,64}; do
      [ -d "$l" ] && libs=${libs:+$libs:}$(cd "$l" && pwd)
    done
    php318_cmd=(env "LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$php318")
  fi
  if "${php318_cmd[@]}" --help 2>&1 | grep -q 'io_uring'; then
    php318_uring=1
  else
    php318_uring=0
    drop_targets php318-ur "$php318 has no -o io_uring (libfuse before 3.18, or built without io_uring)"
  fi
fi
if [ ${#wb_knobs[@]} -gt 0 ]; then
  add_after sfs-wb sfs-wbk; add_after sfs-wb-ur sfs-wbk-ur
else
  drop_targets 'sfs-wbk(-ur)?' "no --wb-knob given"
fi
if has_target mergerfs && ! command -v mergerfs >/dev/null; then
  drop_targets mergerfs "mergerfs missing (apt-get install mergerfs)"
fi

mounts=()   # mount points to unmount on exit, in order
oss_pids=() # OSS processes to stop on exit, after the unmounts
mkfs_extra=()
loops=()    # loop devices to detach on exit
cgroup=""
cleanup() {
  set +e
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    # The OSSs go once the FUSE mounts are gone, before the disks they serve.
    if [ ${#oss_pids[@]} -gt 0 ] && ! grep -q " ${mounts[i]} fuse" /proc/mounts; then
      for p in "${oss_pids[@]}"; do kill "$p"; wait "$p"; done
      oss_pids=()
    fi
    if grep -q " ${mounts[i]} " /proc/mounts; then
      fusermount3 -u "${mounts[i]}" 2>/dev/null || umount "${mounts[i]}" 2>/dev/null ||
        umount -l "${mounts[i]}"
    fi
  done
  for p in "${oss_pids[@]}"; do kill "$p"; wait "$p"; done
  for l in "${loops[@]}"; do losetup -d "$l"; done
  if [ -n "$cgroup" ] && [ -d "$cgroup" ]; then
    # Move ourselves out before removing the group.
    echo $$ > "$(dirname "$cgroup")/cgroup.procs" 2>/dev/null
    # The daemons leave the group when they exit, a moment after unmount.
    for _ in $(seq 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
  fi
  uring_restore  # after the unmounts: the daemons no longer use it
}
trap cleanup EXIT
trap 'exit 130' INT TERM

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
wait_mounted() {  # $1 mount point; fuse daemons mount in the background
  for _ in $(seq 100); do grep -q " $1 " /proc/mounts && return 0; sleep 0.1; done
  echo "mount on $1 did not appear" >&2; return 1
}

mpi() {
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to none -np "$np" "$@"
}

# Prints MiB/s of one IOR phase; $1 work, $2 directory.
run_ior() {
  local work=$1 target=$2 args
  case $work in
    seq-write) args="-w -e -t 1m -b ${seq_mib}m -o $target/ior.seq" ;;
    seq-read | re-read) args="-r -t 1m -b ${seq_mib}m -o $target/ior.seq" ;;
    rand-write) args="-w -e -z -t 4k -b ${rand_mib}m -o $target/ior.rand" ;;
    rand-read) args="-r -z -t 4k -b ${rand_mib}m -o $target/ior.rand" ;;
  esac
  # -F a file per process, -k keep it for the next phase.
  # shellcheck disable=SC2086
  mpi "$ior" -a POSIX -F -k $args |
    awk '/^Summary of all tests/ { s = 1 } s && ($1 == "write" || $1 == "read") { print $2; exit }'
}

run_fio() {
  local work=$1 target=$2 rw bs size name extra=""
  case $work in
    seq-write) rw=write bs=1m size=$seq_mib name=seq extra="--end_fsync=1" ;;
    seq-read | re-read) rw=read bs=1m size=$seq_mib name=seq ;;
    rand-write) rw=randwrite bs=4k size=$rand_mib name=rand extra="--end_fsync=1" ;;
    rand-read) rw=randread bs=4k size=$rand_mib name=rand ;;
  esac
  # shellcheck disable=SC2086
  fio --name=bench --directory="$target" --filename_format="fio.$name.\$jobnum" --rw=$rw \
      --bs=$bs --size=${size}m --numjobs=$np --ioengine=psync --group_reporting --minimal $extra |
    awk -F';' -v rw=$rw '{ kib = (rw ~ /write/) ? $48 : $7; printf "%.1f", kib / 1024 }'
}

# mdtest: one run gives all four md-* figures (ops/s), in md_result, and
# with a daemon pid $2 the ticks of CPU it spent in each phase, in md_ticks.
declare -A md_result md_ticks
md_phases="md-create md-stat md-read md-remove"  # mdtest -F's phases, in order
run_mdtest() {
  local target=$1 pid=${2:-} out snaps=$dir/md-cpu.log end
  local hook=()
  rm -rf "$target/md" "$snaps"
  [ -n "$pid" ] && hook=("--run-cmd-before-phase=$dir/cpu-snapshot $pid $snaps")
  out=$(mpi "$mdtest" -n "$files" -F -d "$target/md" "${hook[@]}")
  md_result[md-create]=$(echo "$out" | awk '$1 == "File" && $2 == "creation" { print $3; exit }')
  md_result[md-stat]=$(echo "$out" | awk '$1 == "File" && $2 == "stat" { print $3; exit }')
  md_result[md-read]=$(echo "$out" | awk '$1 == "File" && $2 == "read" { print $3; exit }')
  md_result[md-remove]=$(echo "$out" | awk '$1 == "File" && $2 == "removal" { print $3; exit }')
  if [ -n "$pid" ]; then
    end=$(cpu_ticks "$pid")
    # $np snapshots before each phase (one per process, then a barrier): a
    # phase runs from the last of its group to the first of the next.
    local ticks
    read -r -a ticks <<<"$(awk -v np="$np" -v end="$end" '{ v[NR] = $1 }
      END { for (p = 1; p * np <= NR; p++) {
              to = (p * np + 1 <= NR) ? v[p * np + 1] : end; printf "%d ", to - v[p * np] } }' "$snaps")"
    local i=0 ph
    for ph in $md_phases; do md_ticks[$ph]=${ticks[i]:-}; i=$((i + 1)); done
  fi
  rm -rf "$target/md"
}

# Mounts stripefs with mount options $2 over the given OST directories on
# $1/mnt, with a 4-stripe and a 1-stripe directory in it (the filesystem is
# made on the first call). Returns non-zero if the mount failed (stripefs
# said why), leaving the filesystem for another try.
mount_stripefs() {
  local base=$1 opts=$2; shift 2
  local osts=() d
  for d in "$@"; do osts+=(--ost "$d"); done
  mkdir -p "$base/mnt"
  if [ ! -d "$base/meta" ]; then
    "$bin" mkfs --meta "$base/meta" "${osts[@]}" "${mkfs_extra[@]}" --stripe-count 4 \
      --stripe-size 1M >/dev/null || exit 1
  fi
  "$bin" mount "$base/meta" "$base/mnt" -o "$opts" || return 1
  mounts+=("$base/mnt")
  mkdir -p "$base/mnt/s4" "$base/mnt/s1"
  "$bin" setstripe -c 4 -S 1M "$base/mnt/s4" || exit 1
  "$bin" setstripe -c 1 -S 1M "$base/mnt/s1" || exit 1
}

# An OSS (`stripefs oss`) on host $2 (a free port) serving the directories
# after it, logging to $1.log; appends their oss:// paths to oss_urls and
# its pid to oss_pids.
start_oss() {
  local log=$1.log host=$2 port="" d; shift 2
  [ -f "$dir/oss.key" ] || "$bin" key new "$dir/oss.key"
  mkdir -p "$@"
  "$bin" oss --listen "$host:0" --key "$dir/oss.key" --log-file "$log" -f "$@" 2>>"$log" &
  oss_pids+=($!)
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$log" 2>/dev/null | tail -1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "the OSS did not start: $(cat "$log")" >&2; exit 1; }
  for d in "$@"; do oss_urls+=("oss://$host:$port$(cd "$d" && pwd)"); done
}

mount_mergerfs() {  # $1 mount point, then branches
  local m=$1; shift
  mkdir -p "$m"
  # minfreespace: its 4 GiB default would refuse every create on the small
  # devices of --devices.
  mergerfs -o cache.files=off,minfreespace=16M "$(IFS=:; echo "$*")" "$m"
  mounts+=("$m")
  wait_mounted "$m"
}

if [ "$devices" = 1 ]; then
  # ---- Striping across bandwidth-limited devices ----
  [ -d /sys/fs/cgroup/blkio ] || { echo "no cgroup v1 blkio controller" >&2; exit 1; }
  rm -rf "$dir"; mkdir -p "$dir"
  cgroup=/sys/fs/cgroup/blkio/stripefs-bench-$$
  mkdir "$cgroup"
  for i in 0 1 2 3; do
    truncate -s $((dev_mib * 2 + 256))M "$dir/disk$i.img"
    l=$(losetup --find --show "$dir/disk$i.img"); loops+=("$l")
    mkfs.ext4 -q -F "$l"
    mkdir -p "$dir/dev$i"; mount "$l" "$dir/dev$i"; mounts+=("$dir/dev$i")
    mkdir -p "$dir/dev$i/ost" "$dir/dev$i/branch"
    echo "$(lsblk -dno MAJ:MIN "$l" | tr -d ' ') $bps" > "$cgroup/blkio.throttle.read_bps_device"
  done
  # Everything started from here (daemons, IOR) reads under the limits.
  echo $$ > "$cgroup/cgroup.procs"
  mount_stripefs "$dir/sfs" "$mount_opts" "$dir"/dev{0,1,2,3}/ost || exit 1
  mount_mergerfs "$dir/mergerfs" "$dir"/dev{0,1,2,3}/branch
  dev_targets="sfs-4 sfs-1 mergerfs"
  if [ "$dev_oss" = 1 ]; then
    # Each device's OST behind an OSS of its own, on 127.0.0.1N (issue 34:
    # striping across servers), in the same cgroup, so under the same limits.
    oss_urls=()
    for i in 0 1 2 3; do start_oss "$dir/oss$i" "127.0.0.1$i" "$dir/dev$i/oss-ost"; done
    mkfs_extra=(--key "$dir/oss.key")
    mount_stripefs "$dir/sfsoss" "$mount_opts,key=$dir/oss.key" "${oss_urls[@]}" || exit 1
    mkfs_extra=()
    dev_targets="$dev_targets sfs-oss-4 sfs-oss-1"
  fi
  echo "stripefs striping benchmark: 4 loop devices, reads limited to $bps B/s each;"
  echo "  one file of $dev_mib MiB written, caches dropped, read back; median of $reps; $(date -u +%F)"
  printf "%-22s %12s %14s\n" "file" "MiB/s" "range"
  declare -A dres=()
  for rep in $(seq "$reps"); do
    for t in $dev_targets; do
      case $t in
        sfs-4) d=$dir/sfs/mnt/s4 ;; sfs-1) d=$dir/sfs/mnt/s1 ;; mergerfs) d=$dir/mergerfs ;;
        sfs-oss-4) d=$dir/sfsoss/mnt/s4 ;; sfs-oss-1) d=$dir/sfsoss/mnt/s1 ;;
      esac
      rm -f "$d"/dev.*
      if [ -n "$ior" ]; then
        # One shared file, each process reading its own half.
        mpi "$ior" -a POSIX -w -e -k -t 1m -b $((dev_mib / np))m -o "$d/dev.file" >"$dir/ior.log" || { cat "$dir/ior.log"; exit 1; }
        drop_caches
        r=$(mpi "$ior" -a POSIX -r -k -t 1m -b $((dev_mib / np))m -o "$d/dev.file" |
            awk '/^Summary of all tests/ { s = 1 } s && $1 == "read" { print $2; exit }')
      else
        fio --name=w --filename="$d/dev.file" --rw=write --bs=1m --size=${dev_mib}m \
            --end_fsync=1 --minimal >/dev/null
        drop_caches
        r=$(fio --name=r --filename="$d/dev.file" --rw=read --bs=1m --size=${dev_mib}m \
            --numjobs=$np --offset_increment=$((dev_mib / np))m --io_size=$((dev_mib / np))m \
            --group_reporting --minimal | awk -F';' '{ printf "%.1f", $7 / 1024 }')
      fi
      dres[$t]="${dres[$t]:-} $r"
      rm -f "$d"/dev.*
    done
  done
  for t in $dev_targets; do
    # Each stripefs against its own 1-stripe file; mergerfs against sfs-1.
    case $t in sfs-oss-*) one=$(echo "${dres[sfs-oss-1]}" | median) ;;
                       *) one=$(echo "${dres[sfs-1]}" | median) ;; esac
    m=$(echo "${dres[$t]}" | median)
    printf "%-22s %12s %14s   %.2f x 1 stripe\n" "$t" "$m" "[$(echo "${dres[$t]}" | range)]" \
      "$(awk -v a="$m" -v b="$one" 'BEGIN { print (b > 0 ? a / b : 0) }')"
  done
  exit 0
fi

# ---- IOR / mdtest against plain and peers ----
rm -rf "$dir"; mkdir -p "$dir"
write_cpu_snapshot_cmd "$dir/cpu-snapshot"
# FUSE over io_uring is the kernel's switch: on for the run, back on exit.
php318_pt_opts=()
if has_target '.*-ur|php318-pt'; then
  if uring_enable; then
    [ "${php318_uring:-0}" = 1 ] && php318_pt_opts=(-o io_uring)
  else
    drop_targets '.*-ur' "no FUSE over io_uring on this kernel"
    has_target php318-pt && echo "php318-pt runs on /dev/fuse" >&2
  fi
fi

# Mounts the stripefs of target $1 on $dir/$2 with the mount options $3 and
# the transport $4 (on or off), or leaves out the targets that need it.
# Before issue 33 stripefs has no io_uring option (the mount fails): then the
# /dev/fuse targets mount without it and the io_uring ones are left out.
sfs_has_uring_opt=1
start_stripefs() {
  local t=$1 base=$dir/$2 opts=$3 transport=$4
  local -a osts=("$base"/ost{0,1,2,3})
  if [[ $2 == sfsoss* ]]; then
    oss_urls=()
    start_oss "$base/oss" 127.0.0.2 "$base"/ost{0,1,2,3}
    osts=("${oss_urls[@]}")
    mkfs_extra=(--key "$dir/oss.key")
  else
    mkfs_extra=()
  fi
  if [ "$sfs_has_uring_opt" = 1 ] &&
    mount_stripefs "$base" "$opts,io_uring=$transport" "${osts[@]}"; then
    return 0
  fi
  if [ "$transport" = on ]; then
    drop_targets 'sfs-.*-ur' "stripefs did not mount with -o io_uring=on (its message above)"
    return 1
  fi
  if [ "$sfs_has_uring_opt" = 1 ]; then
    mount_stripefs "$base" "$opts" "${osts[@]}" || exit 1
    sfs_has_uring_opt=0
    echo "this stripefs has no io_uring mount option: its targets use /dev/fuse" >&2
    drop_targets 'sfs-.*-ur' "no io_uring mount option in this stripefs"
    return 0
  fi
  mount_stripefs "$base" "$opts" "${osts[@]}" || exit 1
}

# Sets the --wb-knob values for the mount point $1: the FUSE connection's
# max_background and congestion_threshold (fusectl, mounted here if it is
# not), anything else on its bdi.
set_wb_knobs() {
  local dev bdi conn k f
  dev=$(mountpoint -d "$1")
  bdi=/sys/class/bdi/$dev
  conn=/sys/fs/fuse/connections/${dev#*:}  # named by the device number, major 0
  for k in "${wb_knobs[@]}"; do
    case ${k%%=*} in
      max_background | congestion_threshold)
        if [ ! -d "$conn" ]; then
          mount -t fusectl none /sys/fs/fuse/connections && mounts=(/sys/fs/fuse/connections "${mounts[@]}")
        fi
        f=$conn/${k%%=*} ;;
      *) f=$bdi/${k%%=*} ;;
    esac
    [ -f "$f" ] || { echo "no $f on this kernel; it has: $(ls "$bdi" | tr '\n' ' ')" >&2; exit 1; }
    local was
    was=$(cat "$f")
    echo "${k#*=}" > "$f" || { echo "$f refused ${k#*=}" >&2; exit 1; }
    echo "sfs-wbk: $f: $was -> $(cat "$f")" >&2
  done
}

declare -A path=() pid=()
for t in $targets; do
  has_target "$t" || continue  # left out while mounting an earlier one
  transport=off m=""
  case $t in *-ur) transport=on ;; esac
  case ${t%-ur} in
    plain) mkdir -p "$dir/plain"; path[$t]=$dir/plain ;;
    sfs-4 | sfs-1) m=sfs extra="" sub=s${t:4:1} ;;
    sfs-wb) m=sfswb extra=",cache=writeback" sub=s4 ;;
    sfs-wbk) m=sfswbk extra=",cache=writeback" sub=s4 ;;
    sfs-oss) m=sfsoss extra=",key=$dir/oss.key" sub=s4 ;;
    mergerfs)
      mkdir -p "$dir/mfs-a" "$dir/mfs-b"
      mount_mergerfs "$dir/mergerfs" "$dir/mfs-a" "$dir/mfs-b"; path[$t]=$dir/mergerfs ;;
    php)
      mkdir -p "$dir/php-src" "$dir/php"
      "$php" "$dir/php-src" "$dir/php"; mounts+=("$dir/php")
      wait_mounted "$dir/php"; path[$t]=$dir/php ;;
    php318)  # php318-ur, without its -ur
      mkdir -p "$dir/php318ur-src" "$dir/php318ur"
      "${php318_cmd[@]}" --nopassthrough -o io_uring "$dir/php318ur-src" "$dir/php318ur"
      mounts+=("$dir/php318ur"); wait_mounted "$dir/php318ur"
      stat "$dir/php318ur" >/dev/null  # INIT done: its queue threads exist
      if has_ring_threads "$(daemon_pid "$dir/php318ur")"; then
        path[$t]=$dir/php318ur
      else
        drop_targets php318-ur "its daemon has no fuse-ring-* thread: it would run on /dev/fuse"
      fi ;;
    php318-pt)
      mkdir -p "$dir/php318pt-src" "$dir/php318pt"
      "${php318_cmd[@]}" "${php318_pt_opts[@]}" "$dir/php318pt-src" "$dir/php318pt"
      mounts+=("$dir/php318pt"); wait_mounted "$dir/php318pt"; path[$t]=$dir/php318pt ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
  if [ -n "$m" ]; then
    [ "$transport" = on ] && m=${m}ur
    if [ ! -d "$dir/$m/mnt/s4" ]; then
      start_stripefs "$t" "$m" "$mount_opts$extra" "$transport" || continue
      [ "${t%-ur}" = sfs-wbk ] && set_wb_knobs "$dir/$m/mnt"
    fi
    path[$t]=$dir/$m/mnt/$sub
  fi
  if [ "$t" != plain ]; then
    mnt=${path[$t]}; [ -n "$m" ] && mnt=$dir/$m/mnt
    pid[$t]=$(daemon_pid "$mnt")
    # Through an OSS: its CPU counts too (the pid of the OSS started last).
    [[ $t == sfs-oss* ]] && [ -n "${pid[$t]}" ] && pid[$t]=${pid[$t]},${oss_pids[-1]}
    [ -n "${pid[$t]}" ] || echo "no FUSE daemon found for $mnt: no CPU figures for $t" >&2
  fi
done

# Operations of one run of workload $1, all processes together.
ops_of() {
  case $1 in
    seq-* | re-read) echo $((np * seq_mib)) ;;
    rand-*) echo $((np * rand_mib * 256)) ;;
    md-*) echo $((np * files)) ;;
  esac
}

declare -A res=() cpu=()
for rep in $(seq "$reps"); do
  # A new order each repetition (repetition N has the same order in every
  # run): a target's cold read suffers when the target before it has just
  # written a GiB that the host is still flushing, so no target may always
  # follow the same one.
  order=$(echo $targets | tr ' ' '\n' | shuf --random-source=<(yes "$rep") | tr '\n' ' ')
  for t in $order; do
    p=${path[$t]} d=${pid[$t]:-}
    for w in $works; do
      case $w in
        md-create) run_mdtest "$p" "$d" ;;
        md-*) ;;
        *)
          case $w in seq-read | rand-read) drop_caches ;; seq-write | rand-write) sync ;; esac
          [ -n "$d" ] && t0=$(cpu_ticks "$d")
          # Through an OSS: its own share too (the row "$t/oss").
          [[ $d == *,* ]] && s0=$(cpu_ticks "${d#*,}")
          if [ -n "$ior" ]; then r=$(run_ior "$w" "$p"); else r=$(run_fio "$w" "$p"); fi
          [ -n "$d" ] && cpu[$t,$w]="${cpu[$t,$w]:-} $(us_per_op $(($(cpu_ticks "$d") - t0)) "$(ops_of "$w")")"
          [[ $d == *,* ]] &&
            cpu[$t/oss,$w]="${cpu[$t/oss,$w]:-} $(us_per_op $(($(cpu_ticks "${d#*,}") - s0)) "$(ops_of "$w")")"
          res[$t,$w]="${res[$t,$w]:-} $r" ;;
      esac
      case $w in
        md-*)
          res[$t,$w]="${res[$t,$w]:-} ${md_result[$w]:-}"
          [ -n "$d" ] && [ -n "${md_ticks[$w]:-}" ] &&
            cpu[$t,$w]="${cpu[$t,$w]:-} $(us_per_op "${md_ticks[$w]}" "$(ops_of "$w")")" ;;
      esac
    done
    rm -f "$p"/ior.* "$p"/fio.*
  done
  echo "repetition $rep of $reps done" >&2
done

tool=fio; [ -n "$ior" ] && tool="IOR + mdtest"
echo "stripefs benchmark ($tool; $np processes, a file each; seq ${seq_mib} MiB/process at 1 MiB,"
echo "  random ${rand_mib} MiB/process at 4 KiB; mdtest -n $files -F; caches dropped before cold reads;"
echo "  median of $reps [min-max] (ratio to plain); MiB/s, md-* ops/s; $(date -u +%F))"
# Prints a table: a row per workload, a column per target ($3...) $1 wide,
# each cell printed by the function $2 with the target and the workload.
print_table() {
  local width=$1 cell_of=$2 t w; shift 2
  printf "%-11s" workload
  for t in "$@"; do printf " %${width}s" "$t"; done
  echo
  for w in $works; do
    printf "%-11s" "$w"
    for t in "$@"; do printf " %${width}s" "$("$cell_of" "$t" "$w")"; done
    echo
  done
}
throughput_cell() {  # median [range] (ratio to plain)
  local m base
  m=$(echo "${res[$1,$2]:-}" | median)
  base=$(echo "${res[plain,$2]:-}" | median)
  printf "%.0f [%s] (%.2f)" "$m" "$(echo "${res[$1,$2]:-}" | range)" \
    "$(awk -v a="$m" -v b="${base:-0}" 'BEGIN { print (b > 0 ? a / b : 0) }')"
}
cpu_cell() {  # median [min-max], one decimal
  local v=${cpu[$1,$2]:-}
  echo "$(echo "$v" | median) [$(echo "$v" | tr ' ' '\n' | grep -v '^$' | sort -g |
    awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }')]"
}
# shellcheck disable=SC2086 # a target a word
print_table 30 throughput_cell $targets

# Daemon CPU per operation, the FUSE targets only.
daemons=""
for t in $targets; do
  [ -n "${pid[$t]:-}" ] && daemons="$daemons $t"
  [[ ${pid[$t]:-} == *,* ]] && daemons="$daemons $t/oss"  # the OSS's share of $t's
done
if [ -n "$daemons" ]; then
  echo
  echo "daemon CPU per operation (microseconds of user + system time of all its threads;"
  echo "  operations: IOR transfers, mdtest files; median of $reps [min-max]; sfs-oss: the"
  echo "  mount's and its OSS's together, sfs-oss/oss: the OSS's alone)"
  # shellcheck disable=SC2086
  print_table 22 cpu_cell $daemons
fi

# The gain of io_uring over /dev/fuse, per stripefs mount kind run on both:
# throughput io_uring / dev_fuse, paired by repetition (geometric mean and
# 95 % interval, tools/bench/ratio.sh), and daemon CPU per operation
# io_uring / dev_fuse (medians).
pairs=""
for t in sfs-4 sfs-1 sfs-wb sfs-wbk; do has_target "$t" && has_target "$t-ur" && pairs="$pairs $t"; done
if [ -n "$pairs" ]; then
  echo
  echo "io_uring against /dev/fuse: throughput ratio [95 % interval], daemon CPU per operation ratio"
  pair_cell() {
    local cpu_ratio
    cpu_ratio=$(awk -v a="$(echo "${cpu[$1-ur,$2]:-}" | median)" -v b="$(echo "${cpu[$1,$2]:-}" | median)" \
      'BEGIN { if (b > 0 && a != "") printf "%.2f", a / b; else printf "-" }')
    echo "$(ratio_ci_of "${res[$1-ur,$2]:-}" "${res[$1,$2]:-}"), cpu $cpu_ratio"
  }
  # shellcheck disable=SC2086
  print_table 34 pair_cell $pairs
fi

# The aim of issue 33: the best stripefs io_uring target at or above the best
# peer, per workload. Without an io_uring target, the best /dev/fuse one.
ours=$(targets_matching 'sfs-(4|1|wb)-ur')
kind="io_uring"
if [ -z "$ours" ]; then
  ours=$(targets_matching 'sfs-(4|1|wb)')
  kind="/dev/fuse (no io_uring target in this run)"
fi
peers=$(targets_matching 'mergerfs|php|php318-ur')
if [ -n "$ours" ] && [ -n "$peers" ]; then
  echo
  echo "best stripefs $kind target against the best peer (${peers% }), medians:"
  # Prints "name median" of the best of the targets $2... for workload $1.
  best_of() {
    local w=$1 t; shift
    for t in "$@"; do echo "$t $(echo "${res[$t,$w]:-}" | median)"; done |
      awk '$2 != "" && (n++ == 0 || $2 + 0 > best) { best = $2 + 0; name = $1 } END { if (n) printf "%s %.3f\n", name, best }'
  }
  for w in $works; do
    read -r s sv <<<"$(best_of "$w" $ours)"
    read -r q qv <<<"$(best_of "$w" $peers)"
    awk -v w="$w" -v s="$s" -v sv="${sv:-0}" -v q="$q" -v qv="${qv:-0}" 'BEGIN {
      r = (qv > 0) ? sv / qv : 0
      printf "%-11s %-11s %10.0f  %-9s %10.0f  %.2f x  %s\n", w, s, sv, q, qv, r, (r >= 1 ? "at or above" : "BELOW") }'
  done
fi
