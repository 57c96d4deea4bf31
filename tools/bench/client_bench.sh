#!/usr/bin/env bash
# Client mounts of one metadata service (issue 35), in one run on this
# machine: an MDS (127.0.0.4), two OSS processes (127.0.0.2, 127.0.0.3)
# with two OSTs each, two client mounts A and B, and for comparison the
# same four OST directories under a one-process mount.
#
#   IOR (-F, 1 MiB transfers, $np processes): all on A, then spread over A
#   and B (IOR's -o A/f@B/f form): the aggregate of two clients / one.
#   mdtest -F -u -i 3 -n $files ($np processes; the mean of 3): one client, two clients at once
#   (-d A/md@B/md), and the one-process mount: creates and stats.
#   Torn reads: torn_io's writers on A, its readers on B (extent credits).
#   Coherence: a chmod on A that must revoke B's cached attributes, against
#   one that revokes nothing; a stat on B right after (which must see it).
#   TBF across clients: one jobid rule of --rate requests/s (fs scope, the
#   default) and 2 fio processes per client in that job writing 4 KiB
#   O_DIRECT at random offsets into files striped over the 4 OSTs of the
#   two OSSs for --seconds: the rate both clients get together / the rule.
#   Quota and room across clients (item 4): 2 writers per client (1 MiB
#   appends, as uid 1000) with no limit, then with a limit far above, timed
#   (the cost of the MDS's quota grants); then up to a limit of --quota-mib
#   until every writer met EDQUOT (usage / limit); then, in a directory on
#   OST 3 (a 512 MiB tmpfs), until every writer met ENOSPC (what was left).
#
#   tools/bench/client_bench.sh --ior PATH [--mdtest PATH] [--np N]
#                               [--files N] [--mib N] [--rate R] [--seconds S]
#                               [--quota-mib N] [--build DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="$here/../../build"
ior="" mdtest="" np=4 files=2000 mib=256 rate=400 seconds=10 quota_mib=256
while [ $# -gt 0 ]; do
  case $1 in
    --ior) ior=$2; shift 2 ;;
    --mdtest) mdtest=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --quota-mib) quota_mib=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$ior" ] || { echo "give --ior PATH (IOR built by hand, README)" >&2; exit 2; }
[ -n "$mdtest" ] || mdtest=$(dirname "$ior")/mdtest
bin="$build/tools/stripefs/stripefs"
[ -x "$bin" ] || { echo "no stripefs at $bin (build first)" >&2; exit 2; }

dir=$(mktemp -d /tmp/sfs-clientbench.XXXXXX)
chmod 755 "$dir"  # the quota and room writers run as uid 1000
pids=() mounts=()
cleanup() {
  set +e
  for m in "${mounts[@]}"; do fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  umount "$dir/127.0.0.3-1" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

mpi() {  # its output is kept in $mpi_log too (an error is printed there)
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to none -np "$1" "${@:2}" 2>&1 | tee -a "$mpi_log"
}
mpi_log=${CLIENT_BENCH_MPI_LOG:-/dev/null}
port_of() {  # $1 log: the port a server logged it listens on
  for _ in $(seq 100); do
    p=$(grep -oE 'on [^ ]+ \(port [0-9]+\)' "$1" 2>/dev/null | grep -oE '[0-9]+\)$' | tr -d ')' | head -1)
    [ -n "$p" ] && { echo "$p"; return; }
    sleep 0.1
  done
  echo "no port in $1" >&2; exit 1
}
wait_mounted() { for _ in $(seq 100); do grep -q " $1 " /proc/mounts && return; sleep 0.1; done; exit 1; }

"$bin" key new "$dir/key"
urls=()
mkdir -p "$dir/127.0.0.3-1"
# OST 3 is a 512 MiB tmpfs: the room phase fills it (placement weighs OSTs
# by free space, so the other phases put little there).
mount -t tmpfs -o size=512m tmpfs "$dir/127.0.0.3-1"
for host in 127.0.0.2 127.0.0.3; do
  mkdir -p "$dir/$host-0" "$dir/$host-1"
  "$bin" oss --listen "$host:0" --key "$dir/key" --log-file "$dir/oss-$host.log" -f \
    "$dir/$host-0" "$dir/$host-1" & pids+=($!)
  port=$(port_of "$dir/oss-$host.log")
  urls+=(--ost "oss://$host:$port$dir/$host-0" --ost "oss://$host:$port$dir/$host-1")
done
"$bin" mkfs --meta "$dir/meta" "${urls[@]}" --key "$dir/key" --stripe-count 1 >/dev/null
# The benchmarks run as root in root's directories: this machine's clients
# are trusted and mount with no_root_squash (mds/squash.h).
"$bin" mds --listen 127.0.0.4:0 --key "$dir/key" --trusted 127.0.0.0/8 --log-file "$dir/mds.log" \
  -f "$dir/meta" &
pids+=($!)
mds="mds://127.0.0.4:$(port_of "$dir/mds.log")"
for c in a b; do
  mkdir -p "$dir/$c"
  "$bin" mount -o "key=$dir/key,log_file=$dir/$c.log,no_root_squash" "$mds" "$dir/$c"
  wait_mounted "$dir/$c"; mounts+=("$dir/$c")
done
A=$dir/a B=$dir/b
mkdir -p "$dir/local/meta" "$dir/local/mnt" "$dir/local/o0" "$dir/local/o1" "$dir/local/o2" "$dir/local/o3"
"$bin" mkfs --meta "$dir/local/meta" --ost "$dir/local/o0" --ost "$dir/local/o1" \
  --ost "$dir/local/o2" --ost "$dir/local/o3" --stripe-count 1 >/dev/null
"$bin" mount "$dir/local/meta" "$dir/local/mnt"; mounts+=("$dir/local/mnt")
P=$dir/local/mnt

ior_rate() {  # $1 phase (-w or -r), $2 -o argument: MiB/s
  local extra=""; [ "$1" = "-w" ] && extra="-e"
  sync; echo 3 > /proc/sys/vm/drop_caches
  mpi "$np" "$ior" -a POSIX -F -k $1 $extra -t 1m -b "${mib}m" -o "$2" |
    awk '/^Summary of all tests/ { s = 1 } s && ($1 == "write" || $1 == "read") { print $2; exit }'
}
mdtest_rates() {  # $1 -d argument: "create stat" ops/s
  # -u: a directory per process (mdtest needs it with several paths).
  # -i 3, the mean: a stat phase served from the kernel's cache lasts a few
  # milliseconds, and one run of it is noise.
  mpi "$np" "$mdtest" -n "$files" -F -u -i 3 -d "$1" |
    awk '$1 == "File" && $2 == "creation" { c = $5 } $1 == "File" && $2 == "stat" { s = $5 }
         END { print c, s }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# OST 3 (the small tmpfs) takes no new file until the room phase (RTDS
# weight 0): IOR and mdtest run on disk alone, as before it was there.
setfattr -n user.stripefs.rtds_weight -v "3=0" "$A"
mkdir -p "$A/ior1" "$A/ior2" "$B/ior2"
w1=$(ior_rate -w "$A/ior1/f"); r1=$(ior_rate -r "$A/ior1/f")
w2=$(ior_rate -w "$A/ior2/f@$B/ior2/f"); r2=$(ior_rate -r "$A/ior2/f@$B/ior2/f")
rm -rf "$A/ior1" "$A/ior2"
read -r c1 s1 <<<"$(mdtest_rates "$A/md1")"
# Two names: A/x and B/x are one directory (one filesystem), and each
# path's test directory is removed at the end by its own process.
read -r c2 s2 <<<"$(mdtest_rates "$A/md2a@$B/md2b")"
read -r cp sp <<<"$(mdtest_rates "$P/md")"
setfattr -n user.stripefs.rtds_weight -v "3=1" "$A"  # torn and TBF stripe over all four

coherence=$(python3 - "$A" "$B" <<'PY'
import os, sys, time
A, B = sys.argv[1], sys.argv[2]
open(A + "/c", "w").close()
def median(v): return sorted(v)[len(v) // 2] * 1e6
alone, shared, after, stale = [], [], [], 0
for i in range(400):
    mode = 0o600 if i % 2 else 0o640
    if i % 4 < 2:           # B holds no credit: the chmod revokes nothing
        t = time.perf_counter(); os.chmod(A + "/c", mode); alone.append(time.perf_counter() - t)
        continue
    os.stat(B + "/c")       # B caches the attributes
    t = time.perf_counter(); os.chmod(A + "/c", mode); shared.append(time.perf_counter() - t)
    t = time.perf_counter(); st = os.stat(B + "/c"); after.append(time.perf_counter() - t)
    stale += (st.st_mode & 0o777) != mode
print("%.0f %.0f %.0f %d" % (median(alone), median(shared), median(after), stale))
PY
)
read -r chmod_alone chmod_shared stat_after stale <<<"$coherence"

# Torn reads across clients (extent_bench's torn_io): 2 writers on A
# overwrite 512 KiB (one FUSE request: max_read's default; striped 128 KiB
# over the 4 OSTs) while 2 readers on B read
# it; a read holding two writes is torn.
torn_io="$build/tools/bench/torn_io"
mkdir -p "$A/torn"
"$bin" setstripe -c 4 -S 128K "$A/torn"
read -r _ torn_reads _ torn_count _ torn_writes <<<"$("$torn_io" "$A/torn/f" 512K 2 2 1000 \
  "readers-at=$B/torn/f")"

# TBF: the rule is set through A (the MDS stores it and sends it to both
# OSSs); the job id comes from each process's SLURM_JOB_ID (jobid_var's
# default), on both clients.
mkdir -p "$A/tbf"
"$bin" setstripe -c 4 -S 1M "$A/tbf"
tbf_fio() {  # $1 client mount, $2 name: requests/s of its 2 processes
  SLURM_JOB_ID=clientbench fio --name="$2" --directory="$1/tbf" --filename_format="$2.\$jobnum" \
    --rw=randwrite --bs=4k --direct=1 --size=64m --numjobs=2 --time_based --runtime="$seconds" \
    --ramp_time=2 --ioengine=psync --group_reporting --minimal |
    awk -F';' '{ printf "%.1f", $48 / 4 }'
}
# First without the rule: what the job gets unthrottled (the rule must bind).
tbf_fio "$A" a > "$dir/free-a" & fa=$!
tbf_fio "$B" b > "$dir/free-b" & fb=$!
wait "$fa" "$fb"
free_sum=$(awk -v a="$(cat "$dir/free-a")" -v b="$(cat "$dir/free-b")" 'BEGIN { printf "%.1f", a + b }')
setfattr -n user.stripefs.nrs_policies -v tbf "$A"
setfattr -n user.stripefs.nrs_tbf_rule -v "start bench jobid={clientbench} rate=$rate" "$A"
tbf_fio "$A" a > "$dir/tbf-a" & fa=$!
tbf_fio "$B" b > "$dir/tbf-b" & fb=$!
wait "$fa" "$fb"
tbf_a=$(cat "$dir/tbf-a") tbf_b=$(cat "$dir/tbf-b")
tbf_sum=$(awk -v a="$tbf_a" -v b="$tbf_b" 'BEGIN { printf "%.1f", a + b }')
setfattr -n user.stripefs.nrs_tbf_rule -v "stop bench" "$A"
setfattr -n user.stripefs.nrs_policies -v fifo "$A"

# Quota and room across clients: 2 writers on each client append 1 MiB
# blocks as uid 1000 to files of their own; each stops at its first error.
writers() {  # $1 directory (under A, also seen under B), $2 MiB each (0: until refused)
  local rel=${1#"$A"/} count=$2 pids_w=()
  [ "$count" = 0 ] && count=100000
  for c in "$A" "$B"; do
    for w in 1 2; do
      setpriv --reuid=1000 --regid=1000 --clear-groups \
        dd if=/dev/zero of="$c/$rel/$(basename "$c")$w" bs=1M count="$count" oflag=append \
        conv=notrunc status=none 2>"$dir/writer.$(basename "$c")$w.err" & pids_w+=($!)
    done
  done
  for p in "${pids_w[@]}"; do wait "$p" || true; done  # a refused writer exits 1
}
seconds_of() { local t0; t0=$(date +%s.%N); "$@" || true; awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
quota_used() { getfattr --absolute-names --only-values -n user.stripefs.quota.u.1000 "$A" | grep -oE 'bused=[0-9]+' | cut -d= -f2; }
setfattr -n user.stripefs.rtds_weight -v "3=0" "$A"  # the quota phase on disk
mkdir -p "$A/q1" "$A/q2" "$A/q3"; chmod 777 "$A/q1" "$A/q2" "$A/q3"
# Twice each, alternating, from a clean page cache: what the OSSs still
# flush of one run must not slow the next.
t_free=0 t_limited=0
for round in 1 2; do
  for limit in none 1T; do
    if [ "$limit" = none ]; then
      setfattr -x user.stripefs.quota.u.1000 "$A" 2>/dev/null || true
    else
      setfattr -n user.stripefs.quota.u.1000 -v "bhard=$limit" "$A"
    fi
    rm -rf "$A/q1"/*; sync; echo 3 > /proc/sys/vm/drop_caches
    t=$(seconds_of writers "$A/q1" 256)
    if [ "$limit" = none ]; then t_free=$(awk -v a="$t_free" -v b="$t" 'BEGIN { print a + b }');
    else t_limited=$(awk -v a="$t_limited" -v b="$t" 'BEGIN { print a + b }'); fi
  done
done
rm -rf "$A/q1" "$A/q2"
setfattr -n user.stripefs.quota.u.1000 -v "bhard=${quota_mib}M" "$A"
writers "$A/q3" 0
quota_refused=$(grep -l "quota exceeded" "$dir"/writer.*.err | wc -l)
quota_bytes=$(quota_used)
rm -rf "$A/q3"
setfattr -x user.stripefs.quota.u.1000 "$A"
rm -f "$dir"/writer.*.err
mkdir -p "$A/room"; chmod 777 "$A/room"
"$bin" setstripe -c 1 "$A/room"
setfattr -n user.stripefs.rtds_weight -v "0=0,1=0,2=0,3=1" "$A"  # new files on OST 3 only
writers "$A/room" 0
room_refused=$(grep -l "No space left" "$dir"/writer.*.err | wc -l)
room_left=$(df -B1 --output=avail "$dir/127.0.0.3-1" | tail -1)
room_written=$(du -sb "$A/room" | cut -f1)
rm -rf "$A/room"

echo "client mounts of one MDS (2 OSS x 2 OSTs, this machine; $np processes)"
printf "  %-34s %10s %10s %7s\n" case "2 clients" "1 client" ratio
printf "  %-34s %10s %10s %7s\n" "IOR seq write MiB/s (-F, ${mib} MiB)" "$w2" "$w1" "$(ratio "$w2" "$w1")"
printf "  %-34s %10s %10s %7s\n" "IOR seq read MiB/s (cold)" "$r2" "$r1" "$(ratio "$r2" "$r1")"
printf "  %-34s %10s %10s %7s\n" "mdtest create ops/s (-n $files)" "$c2" "$c1" "$(ratio "$c2" "$c1")"
printf "  %-34s %10s %10s %7s\n" "mdtest stat ops/s" "$s2" "$s1" "$(ratio "$s2" "$s1")"
printf "  %-34s %10s %10s %7s\n" "" "1 client" "1 process" ratio
printf "  %-34s %10s %10s %7s\n" "mdtest create ops/s" "$c1" "$cp" "$(ratio "$c1" "$cp")"
printf "  %-34s %10s %10s %7s\n" "mdtest stat ops/s" "$s1" "$sp" "$(ratio "$s1" "$sp")"
echo "  coherence (medians, us): chmod on A revoking nothing $chmod_alone; revoking B's credit" \
     "$chmod_shared (one revocation round trip: $((chmod_shared - chmod_alone))); stat on B" \
     "right after $stat_after; stale stats $stale of 200"
echo "  torn reads across 2 clients (torn_io, 512 KiB requests over 4 OSTs, writers on A, readers on B):" \
     "$torn_count of $torn_reads ($torn_writes writes)"
echo "  quota across 2 clients (2 writers each, uid 1000, 1 MiB appends): 2 x 1 GiB in ${t_free} s" \
     "with no limit, ${t_limited} s under a limit far above ($(ratio "$t_free" "$t_limited") of the" \
     "speed); to a limit of $quota_mib MiB: $quota_refused of 4 writers refused (EDQUOT) at" \
     "$((quota_bytes >> 20)) MiB used, $(ratio "$quota_bytes" "$((quota_mib << 20))") of the limit"
echo "  room across 2 clients (2 writers each into OST 3, a 512 MiB tmpfs): $room_refused of 4" \
     "writers refused (ENOSPC) with $((room_written >> 20)) MiB written and" \
     "$((room_left >> 10)) KiB left (the OST keeps 1 % back: 5,243 KiB)"
echo "  TBF jobid rule of $rate req/s across 2 clients (4 fio processes, 4 OSTs of 2 OSSs," \
     "fs scope): A $tbf_a + B $tbf_b = $tbf_sum req/s, $(ratio "$tbf_sum" "$rate") of the rule" \
     "(unthrottled: $free_sum req/s)"
