#!/usr/bin/env bash
# How stripefs scales with processes (issue 33), against a plain directory
# of the same disk: for 1, 2, 4 and 8 processes (--procs), each in its own
# directory or file (tools/bench/scaling_load.cc):
#   meta  create+stat+unlink ops/s
#   4k    buffered 4 KiB pwrite ops/s
#   1m    1 MiB writes, MiB/s
# stripefs has 4 OSTs under one directory (4 stripes of 1 MiB), like
# bench.sh's sfs-4. Prints a table: plain, stripefs, ratio. One run of
# --seconds per cell, plain and stripefs interleaved.
#
#   tools/bench/scaling_bench.sh [--procs "1 2 4 8"] [--work "meta 4k 1m"]
#       [--seconds N] [--mib N] [--dir DIR] [--mount-opts OPTS]
#       [--targets "plain sfs"] [--preload LIB] [--bin STRIPEFS]
#
# --mount-opts: passed to the stripefs mount (e.g. io_uring=off).
# --bin: another stripefs binary (an earlier build, for before and after).
# --preload LIB: LD_PRELOAD for the daemon only, for the lock profiler
# build/tools/bench/liblockprof.so (tools/bench/lockprof.cc): it counts
# from the first cell's start to the daemon's exit (the unmount right after
# the last cell), and its report, call sites resolved, is printed after the
# table and kept in DIR/lockprof.txt. Profile one cell at a time, e.g.
# --preload ... --targets sfs --work meta --procs 8 --seconds 10.
# Must run as root (it mounts). The mount is removed on exit, also on
# failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
load=$PWD/build/tools/bench/scaling_load
dir=$PWD/build/scaling-work
procs="1 2 4 8" works="meta 4k 1m" seconds=5 mib=64 targets="plain sfs"
mount_opts="log_level=warn" preload=""
while [ $# -gt 0 ]; do
  case $1 in
    --procs) procs=$2; shift 2 ;;
    --work) works=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --mount-opts) mount_opts=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --bin) bin=$(realpath "$2"); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] && [ -x "$load" ] || { echo "build first: stripefs and scaling_load" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root (it mounts)" >&2; exit 1; }
[ -z "$preload" ] || [ -f "$preload" ] || { echo "no library at $preload" >&2; exit 1; }

mnt=$dir/sfs/mnt
cleanup() {
  set +e
  if grep -q " $mnt " /proc/mounts; then
    fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || umount -l "$mnt"
  fi
  # The daemon exits a moment after the unmount (and a --preload profiler
  # writes then); it holds the store's lock until it has.
  local lock=$dir/sfs/meta/stripefs.lock
  for _ in $(seq 100); do [ ! -e "$lock" ] || flock -n "$lock" true && break; sleep 0.1; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$dir"; mkdir -p "$dir/plain" "$mnt"
declare -A path=([plain]=$dir/plain [sfs]=$mnt/s4)
for t in $targets; do
  case $t in
    plain) ;;
    sfs)
      "$bin" mkfs --meta "$dir/sfs/meta" --ost "$dir"/sfs/ost0 --ost "$dir"/sfs/ost1 \
        --ost "$dir"/sfs/ost2 --ost "$dir"/sfs/ost3 --stripe-count 4 --stripe-size 1M >/dev/null
      LD_PRELOAD=$preload LOCKPROF_OUT=$dir/lockprof LOCKPROF_START_FILE=$dir/lockprof.start \
        "$bin" mount "$dir/sfs/meta" "$mnt" -o "$mount_opts"
      mkdir -p "$mnt/s4"
      "$bin" setstripe -c 4 -S 1M "$mnt/s4" ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
done

# One untimed second of each load first: the first cell after a mount ran
# at a third of its later speed.
for t in $targets; do for w in $works; do "$load" "$w" "${path[$t]}" 1 1 "$mib" >/dev/null; done; done
declare -A res=()
touch "$dir/lockprof.start"  # the profiler (--preload) counts from here
for w in $works; do
  for n in $procs; do
    for t in $targets; do
      sync  # what the last cell wrote is not flushed during this one
      out=$("$load" "$w" "${path[$t]}" "$n" "$seconds" "$mib")
      # ops/s, except 1 MiB writes: MiB/s.
      if [ "$w" = 1m ]; then res[$t,$w,$n]=${out#* }; else res[$t,$w,$n]=${out% *}; fi
    done
  done
done

echo "stripefs scaling ($(nproc) CPUs; $seconds s per cell, one run; meta and 4k in ops/s," \
  "1m in MiB/s; writes wrap at $mib MiB per process; mount options $mount_opts; $(date -u +%F))"
printf "%-5s %6s" work procs
for t in $targets; do printf " %12s" "$t"; done
[[ " $targets " == *" plain "* && " $targets " == *" sfs "* ]] && printf " %8s" "sfs/plain"
echo
for w in $works; do
  for n in $procs; do
    printf "%-5s %6s" "$w" "$n"
    for t in $targets; do printf " %12.0f" "${res[$t,$w,$n]}"; done
    if [[ " $targets " == *" plain "* && " $targets " == *" sfs "* ]]; then
      printf " %8s" "$(awk -v a="${res[sfs,$w,$n]}" -v b="${res[plain,$w,$n]}" \
        'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
    fi
    echo
  done
done

[ -n "$preload" ] || exit 0
cleanup  # the daemon writes its lock profile as it exits
# The daemon exits last; a mount helper that ran with the library wrote its own.
report=$(ls -t "$dir"/lockprof.[0-9]* 2>/dev/null | head -1)
[ -n "$report" ] || { echo "no lock profile written" >&2; exit 1; }
# module+0xoffset -> function (addr2line), frames joined by " < ".
while IFS= read -r line; do
  if [[ $line == "  site:"* ]]; then
    head=${line%%, /*}
    funcs=()
    for frame in ${line#"$head", }; do
      f=$(addr2line -f -C -e "${frame%+0x*}" "0x${frame##*+0x}" 2>/dev/null | head -1 |
        sed 's/(.*//')
      funcs+=("${f:-$frame}")
    done
    printf '%s: %s\n' "$head" "$(printf '%s < ' "${funcs[@]}" | sed 's/ < $//')"
  else
    echo "$line"
  fi
done < "$report" | tee "$dir/lockprof.txt"
