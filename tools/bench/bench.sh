#!/usr/bin/env bash
# stripefs against a plain directory of the same disk and the FUSE
# filesystems an admin would otherwise pick, in one run, interleaved per
# repetition (issue 9). Targets:
#   plain      a directory of the disk everything else sits on
#   sfs-4      stripefs, a directory with 4 stripes of 1 MiB (4 OST dirs)
#   sfs-1      the same mount, a directory with 1 stripe
#   sfs-wb     a second stripefs mount with cache=writeback, 4 stripes
#   mergerfs   Debian's mergerfs over two directories, cache.files=off
#   php        libfuse 3.14's example/passthrough_hp, if --passthrough-hp PATH
# Workloads (2 processes, one file each):
#   seq-write  1 MiB transfers, --seq-mib per process, fsync at close
#   seq-read   the same files after the page cache was dropped (cold)
#   re-read    the same files again, from the page cache
#   rand-write 4 KiB at random offsets, --rand-mib per process, fsync at close
#   rand-read  the same, cold
#   md-create md-stat md-read md-remove: mdtest -n --files -F (ops/s)
# IOR and mdtest when --ior PATH is given (mdtest beside it, or --mdtest
# PATH); fio otherwise (then no md-* rows). Median of --reps (default 3),
# range in brackets, ratio to plain.
#
#   tools/bench/bench.sh [--ior PATH] [--mdtest PATH] [--passthrough-hp PATH]
#       [--dir DIR] [--reps N] [--seq-mib N] [--rand-mib N] [--files N]
#       [--targets LIST] [--work LIST] [--mount-opts OPTS]
#   tools/bench/bench.sh --devices [--bps BYTES] [--dev-mib N] [--ior PATH] ...
#
# --devices: each of 4 OSTs (and each of mergerfs's 4 branches) on its own
# loop device (ext4 on a file) with a read limit per device (cgroup v1
# blkio throttle.read_bps_device, --bps, default 50 MB/s); prints a cold
# read of one file striped over 4 OSTs, of one file with 1 stripe, and of
# one file on mergerfs. Loop devices, mounts and the cgroup are removed on
# exit, also on failure.
#
# Must run as root: it mounts, and drops the page cache between the write
# and the read phases.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/bench-work
ior="" mdtest="" php="" reps=3 seq_mib=512 rand_mib=64 files=2000 np=2
targets="plain sfs-4 sfs-1 sfs-wb mergerfs php"
works="seq-write seq-read re-read rand-write rand-read md-create md-stat md-read md-remove"
mount_opts="log_level=warn"
devices=0 bps=50000000 dev_mib=512
while [ $# -gt 0 ]; do
  case $1 in
    --ior) ior=$2; shift 2 ;;
    --mdtest) mdtest=$2; shift 2 ;;
    --passthrough-hp) php=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seq-mib) seq_mib=$2; shift 2 ;;
    --rand-mib) rand_mib=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --work) works=$2; shift 2 ;;
    --mount-opts) mount_opts=$2; shift 2 ;;
    --devices) devices=1; shift ;;
    --bps) bps=$2; shift 2 ;;
    --dev-mib) dev_mib=$2; shift 2 ;;
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
[ -z "$php" ] && targets=$(echo "$targets" | tr ' ' '\n' | grep -vx php | tr '\n' ' ')
if echo " $targets " | grep -q " mergerfs " && ! command -v mergerfs >/dev/null; then
  echo "mergerfs missing (apt-get install mergerfs); leaving it out" >&2
  targets=$(echo "$targets" | tr ' ' '\n' | grep -vx mergerfs | tr '\n' ' ')
fi

mounts=()   # mount points to unmount on exit, in order
loops=()    # loop devices to detach on exit
cgroup=""
cleanup() {
  set +e
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    if grep -q " ${mounts[i]} " /proc/mounts; then
      fusermount3 -u "${mounts[i]}" 2>/dev/null || umount "${mounts[i]}" 2>/dev/null ||
        umount -l "${mounts[i]}"
    fi
  done
  for l in "${loops[@]}"; do losetup -d "$l"; done
  if [ -n "$cgroup" ] && [ -d "$cgroup" ]; then
    # Move ourselves out before removing the group.
    echo $$ > "$(dirname "$cgroup")/cgroup.procs" 2>/dev/null
    # The daemons leave the group when they exit, a moment after unmount.
    for _ in $(seq 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
  fi
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

# mdtest: one run gives all four md-* figures (ops/s), in md_result.
declare -A md_result
run_mdtest() {
  local target=$1 out
  rm -rf "$target/md"
  out=$(mpi "$mdtest" -n "$files" -F -d "$target/md")
  md_result[md-create]=$(echo "$out" | awk '$1 == "File" && $2 == "creation" { print $3; exit }')
  md_result[md-stat]=$(echo "$out" | awk '$1 == "File" && $2 == "stat" { print $3; exit }')
  md_result[md-read]=$(echo "$out" | awk '$1 == "File" && $2 == "read" { print $3; exit }')
  md_result[md-remove]=$(echo "$out" | awk '$1 == "File" && $2 == "removal" { print $3; exit }')
  rm -rf "$target/md"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }'; }

# Mounts stripefs with mount options $2 over the given OST directories on
# $1/mnt, with a 4-stripe and a 1-stripe directory in it.
mount_stripefs() {
  local base=$1 opts=$2; shift 2
  local osts=() d
  for d in "$@"; do osts+=(--ost "$d"); done
  mkdir -p "$base/mnt"
  "$bin" mkfs --meta "$base/meta" "${osts[@]}" --stripe-count 4 --stripe-size 1M >/dev/null
  "$bin" mount "$base/meta" "$base/mnt" -o "$opts"
  mounts+=("$base/mnt")
  mkdir -p "$base/mnt/s4" "$base/mnt/s1"
  "$bin" setstripe -c 4 -S 1M "$base/mnt/s4"
  "$bin" setstripe -c 1 -S 1M "$base/mnt/s1"
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
  mount_stripefs "$dir/sfs" "$mount_opts" "$dir"/dev{0,1,2,3}/ost
  mount_mergerfs "$dir/mergerfs" "$dir"/dev{0,1,2,3}/branch
  echo "stripefs striping benchmark: 4 loop devices, reads limited to $bps B/s each;"
  echo "  one file of $dev_mib MiB written, caches dropped, read back; median of $reps; $(date -u +%F)"
  printf "%-22s %12s %14s\n" "file" "MiB/s" "range"
  declare -A dres=()
  for rep in $(seq "$reps"); do
    for t in sfs-4 sfs-1 mergerfs; do
      case $t in sfs-4) d=$dir/sfs/mnt/s4 ;; sfs-1) d=$dir/sfs/mnt/s1 ;; mergerfs) d=$dir/mergerfs ;; esac
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
  one=$(echo "${dres[sfs-1]}" | median)
  for t in sfs-4 sfs-1 mergerfs; do
    m=$(echo "${dres[$t]}" | median)
    printf "%-22s %12s %14s   %.2f x 1 stripe\n" "$t" "$m" "[$(echo "${dres[$t]}" | range)]" \
      "$(awk -v a="$m" -v b="$one" 'BEGIN { print (b > 0 ? a / b : 0) }')"
  done
  exit 0
fi

# ---- IOR / mdtest against plain and peers ----
rm -rf "$dir"; mkdir -p "$dir"
declare -A path=()
for t in $targets; do
  case $t in
    plain) mkdir -p "$dir/plain"; path[$t]=$dir/plain ;;
    sfs-4 | sfs-1)
      if [ ! -d "$dir/sfs/mnt/s4" ]; then mount_stripefs "$dir/sfs" "$mount_opts" "$dir"/sfs/ost{0,1,2,3}; fi
      path[$t]=$dir/sfs/mnt/s${t#sfs-} ;;
    sfs-wb)
      mount_stripefs "$dir/sfswb" "$mount_opts,cache=writeback" "$dir"/sfswb/ost{0,1,2,3}
      path[$t]=$dir/sfswb/mnt/s4 ;;
    mergerfs)
      mkdir -p "$dir/mfs-a" "$dir/mfs-b"
      mount_mergerfs "$dir/mergerfs" "$dir/mfs-a" "$dir/mfs-b"; path[$t]=$dir/mergerfs ;;
    php)
      mkdir -p "$dir/php-src" "$dir/php"
      "$php" "$dir/php-src" "$dir/php"; mounts+=("$dir/php")
      wait_mounted "$dir/php"; path[$t]=$dir/php ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
done

declare -A res=()
for rep in $(seq "$reps"); do
  # A new order each repetition (repetition N has the same order in every
  # run): a target's cold read suffers when the target before it has just
  # written a GiB that the host is still flushing, so no target may always
  # follow the same one.
  order=$(echo $targets | tr ' ' '\n' | shuf --random-source=<(yes "$rep") | tr '\n' ' ')
  for t in $order; do
    p=${path[$t]}
    for w in $works; do
      case $w in
        md-create) run_mdtest "$p" ;;
        md-*) ;;
        *)
          case $w in seq-read | rand-read) drop_caches ;; seq-write | rand-write) sync ;; esac
          if [ -n "$ior" ]; then r=$(run_ior "$w" "$p"); else r=$(run_fio "$w" "$p"); fi
          res[$t,$w]="${res[$t,$w]:-} $r" ;;
      esac
      case $w in md-*) res[$t,$w]="${res[$t,$w]:-} ${md_result[$w]:-}" ;; esac
    done
    rm -f "$p"/ior.* "$p"/fio.*
  done
  echo "repetition $rep of $reps done" >&2
done

tool=fio; [ -n "$ior" ] && tool="IOR + mdtest"
echo "stripefs benchmark ($tool; $np processes, a file each; seq ${seq_mib} MiB/process at 1 MiB,"
echo "  random ${rand_mib} MiB/process at 4 KiB; mdtest -n $files -F; caches dropped before cold reads;"
echo "  median of $reps [min-max] (ratio to plain); MiB/s, md-* ops/s; $(date -u +%F))"
printf "%-11s" workload
for t in $targets; do printf " %30s" "$t"; done
echo
for w in $works; do
  printf "%-11s" "$w"
  base=$(echo "${res[plain,$w]:-}" | median)
  for t in $targets; do
    m=$(echo "${res[$t,$w]:-}" | median)
    cell=$(printf "%.0f [%s] (%.2f)" "$m" "$(echo "${res[$t,$w]:-}" | range)" \
      "$(awk -v a="$m" -v b="${base:-0}" 'BEGIN { print (b > 0 ? a / b : 0) }')")
    printf " %30s" "$cell"
  done
  echo
done
