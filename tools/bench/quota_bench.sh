#!/usr/bin/env bash
# The cost of quota enforcement (issue 11), in one run: IOR and mdtest as
# user nobody in a directory of project 42, on one filesystem remounted
# with quota limits set for nobody's user, group and project (high enough
# never to be reached, so every growing write and every create goes
# through the reservation path) and with no limit set at all (quota
# checks skipped; usage is counted either way), back to back in a seeded
# random order (half the repetitions each way; tools/bench/ratio.sh).
# Prints the geometric mean of enforced/off per workload over the
# repetitions [95 % interval].
#
#   tools/bench/quota_bench.sh --ior PATH [--mdtest PATH] [--dir DIR]
#       [--reps N] [--rand-mib N] [--seq-mib N] [--files N] [--seed N]
# Must run as root (mounts; IOR runs as nobody through runuser).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$PWD/build/tools/stripefs/stripefs
dir=$PWD/build/quota-bench-work
seed=1 ior="" mdtest="" reps=12 rand_mib=32 seq_mib=256 files=2000 np=2
while [ $# -gt 0 ]; do
  case $1 in
    --ior) ior=$2; shift 2 ;;
    --mdtest) mdtest=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rand-mib) rand_mib=$2; shift 2 ;;
    --seq-mib) seq_mib=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
[ -n "$ior" ] && [ -x "$ior" ] || { echo "give --ior PATH (README: building IOR)" >&2; exit 1; }
[ -n "$mdtest" ] || mdtest=$(dirname "$ior")/mdtest
[ -x "$mdtest" ] || { echo "no mdtest beside $ior: give --mdtest PATH" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "mpirun missing: apt-get install openmpi-bin" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "run as root (mounts)" >&2; exit 1; }

mnt=$dir/mnt pid=""
cleanup() {
  set +e
  grep -q " $mnt " /proc/mounts && { fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tools/bench/ratio.sh
. tools/bench/ratio.sh
as_nobody() { runuser -u nobody -- env HOME=/tmp "$@"; }
mpi() { as_nobody mpirun --oversubscribe --bind-to none -np "$np" "$@"; }
mount_sfs() {
  "$bin" mount "$dir/meta" "$mnt" -f -o log_level=warn &
  pid=$!
  until grep -q " $mnt " /proc/mounts; do
    kill -0 "$pid" 2>/dev/null || { echo "mount failed" >&2; exit 1; }
    sleep 0.1
  done
}
umount_sfs() { fusermount3 -u "$mnt"; wait "$pid"; }
limits() {  # $1 on|off
  local who
  for who in u.65534 g.65534 p.42; do
    if [ "$1" = on ]; then
      setfattr -n "user.stripefs.quota.$who" -v "bsoft=1T bhard=2T isoft=100M ihard=200M" "$mnt"
    else
      setfattr -x "user.stripefs.quota.$who" "$mnt"
    fi
  done
}

rm -rf "$dir"; mkdir -p "$mnt" "$dir"/ost{0,1,2,3}
"$bin" mkfs --meta "$dir/meta" --ost "$dir/ost0" --ost "$dir/ost1" --ost "$dir/ost2" \
  --ost "$dir/ost3" --stripe-count 4 --stripe-size 1M >/dev/null
mount_sfs
mkdir -m 1777 "$mnt/run"
setfattr -n user.stripefs.projid -v 42 "$mnt/run"
umount_sfs

echo "stripefs quota benchmark, $(date -u +%F): 4 OSTs on one disk, $np processes as nobody in project 42"
echo "IOR: a file per process; 4 KiB random writes ${rand_mib} MiB and 1 MiB writes ${seq_mib} MiB"
echo "per process; mdtest -F -C -n $files; quota enforced (limits on user, group, project) / off ($reps repetitions)"
workloads="rand-write seq-write create"
declare -A res=()
run() {  # $1 workload: prints MiB/s or creates/s
  case $1 in
    rand-write) mpi "$ior" -a POSIX -F -w -e -z -t 4k -b "${rand_mib}m" -o "$mnt/run/ior.rand" |
                  awk '/^Summary of all tests/ { s = 1 } s && $1 == "write" { print $2; exit }' ;;
    seq-write) mpi "$ior" -a POSIX -F -w -e -t 1m -b "${seq_mib}m" -o "$mnt/run/ior.seq" |
                 awk '/^Summary of all tests/ { s = 1 } s && $1 == "write" { print $2; exit }' ;;
    create) mpi "$mdtest" -F -C -n "$files" -d "$mnt/run/md" |
              awk '$1 == "File" && $2 == "creation" { print $4; exit }' ;;
  esac
}
read -ra swapped <<< "$(swap_order_of "$reps" "$seed")"
for rep in $(seq "$reps"); do
  sides="on off"
  [ "${swapped[$((rep - 1))]}" = 1 ] && sides="off on"
  for side in $sides; do
    mount_sfs
    limits "$side"
    for w in $workloads; do res[$side.$w]="${res[$side.$w]:-} $(run "$w")"; done
    rm -rf "$mnt"/run/ior.* "$mnt"/run/md
    limits off 2>/dev/null || true
    umount_sfs
  done
done
printf "%-11s %14s %14s   %s\n" workload "enforced" "off" "enforced / off"
for w in $workloads; do
  printf "%-11s %14s %14s   %s\n" "$w" "$(echo "${res[on.$w]}" | median)" \
    "$(echo "${res[off.$w]}" | median)" "$(ratio_ci_of "${res[on.$w]}" "${res[off.$w]}")"
done
