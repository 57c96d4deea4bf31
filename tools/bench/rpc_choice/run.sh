#!/usr/bin/env bash
# gRPC 1.51 vs Cap'n Proto 0.9.2 for the client <-> object storage server
# data path over loopback TCP: builds the benchmark, then for each of REPS
# repetitions starts each variant's server and runs its client over all
# cases (write/read x 4 KiB/1 MiB x 1/8 outstanding), and prints one table
# of medians. Variants, interleaved per repetition so drift hits all alike:
#   grpc-proto   generated protobuf types (3 user-space payload copies)
#   grpc-bb      grpc::ByteBuffer, payload as its own slice (0 copies)
#   capnp-copy   Data field set with setData() (1 copy, by the sender)
#   capnp-ref    Data field adopted by referenceExternalData() (0 copies)
#
# Usage: run.sh [BUILD_DIR]          (default build/rpc_choice of the checkout)
# Env:   SECS=1        seconds per case (a case also ends at MAX_CALLS)
#        MAX_CALLS=20000
#        REPS=3
#        MALLOC_TUNED=1  run both sides with glibc's mmap threshold raised
#                        (see the note printed with the table)
# Whole run at the defaults: about 2 minutes. Listens on 127.0.0.1 only,
# ports 47311-47314.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build/rpc_choice}
secs=${SECS:-1}
max_calls=${MAX_CALLS:-20000}
reps=${REPS:-3}

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" >/dev/null

if [[ ${MALLOC_TUNED:-0} == 1 ]]; then
  # 64 MiB: buffers of 1 MiB come from the heap and are reused, instead of a
  # fresh mmap (256 page faults) per message.
  export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=67108864:glibc.malloc.trim_threshold=268435456
fi

variants=(grpc-proto grpc-bb capnp-copy capnp-ref)
declare -A bin=([grpc-proto]=grpc_rpc [grpc-bb]=grpc_rpc [capnp-copy]=capnp_rpc [capnp-ref]=capnp_rpc)
declare -A mode=([grpc-proto]=proto [grpc-bb]=bb [capnp-copy]=copy [capnp-ref]=ref)
declare -A port=([grpc-proto]=47311 [grpc-bb]=47312 [capnp-copy]=47313 [capnp-ref]=47314)

for v in "${variants[@]}"; do
  if ss -Htln "sport = :${port[$v]}" | grep -q .; then
    echo "port ${port[$v]} is in use; stop whatever listens there first" >&2
    exit 1
  fi
done

work=$(mktemp -d /tmp/rpc_choice.XXXXXX)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

raw=$build/rpc_choice_raw.tsv  # kept: one line per case and run
: >"$raw"
start_time=$SECONDS
for rep in $(seq "$reps"); do
  for v in "${variants[@]}"; do
    addr=127.0.0.1:${port[$v]}
    "$build/${bin[$v]}" server --addr "$addr" --mode "${mode[$v]}" >"$work/server.out" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
      grep -q '^ready' "$work/server.out" && break
      kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.out" >&2; exit 1; }
      sleep 0.05
    done
    timeout 300 "$build/${bin[$v]}" client --addr "$addr" --mode "${mode[$v]}" \
      --server-pid "$server_pid" --variant "$v" --secs "$secs" --max-calls "$max_calls" >>"$raw"
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  done
  echo "repetition $rep/$reps done ($((SECONDS - start_time)) s)" >&2
done

cores=$(nproc)
virt=$(grep -qw hypervisor /proc/cpuinfo && echo "VM" || echo "machine")
cat <<EOF

RPC choice: loopback TCP (127.0.0.1), one connection, client and server as
separate processes on a ${cores}-core ${virt} ($(uname -r)): the two processes share
the ${cores} cores, so CPU per call matters as much as calls/s.
gRPC $(pkg-config --modversion grpc++) (server: callback API, gRPC's own threads;
client: one thread on a CompletionQueue), Cap'n Proto $(pkg-config --modversion capnp-rpc)
(EzRpc, one kj event loop thread per side).
Per case: ${secs} s or ${max_calls} calls after a 0.2 s warm-up; median of ${reps} runs,
each column on its own. CPU = user+system of all threads, per call
(server: /proc/<pid>/stat, 10 ms ticks); flt = minor page faults per call.
glibc malloc: ${GLIBC_TUNABLES:-defaults (a buffer of 1 MiB is a fresh mmap, 256 faults; MALLOC_TUNED=1 raises the threshold)}

EOF

awk -F'\t' -v order="${variants[*]}" '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
      for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    key = $2 SUBSEP $3 SUBSEP $4 SUBSEP $1
    $16 = $10 + $11
    for (c = 7; c <= 16; c++) vals[key, c] = vals[key, c] " " $c
    if (!((key) in other) || $15 > other[key]) other[key] = $15
  }
  END {
    nv = split(order, vs, " ")
    printf "%-5s %4s %4s  %-10s %8s %7s %8s %8s %8s %8s %6s %6s %4s %4s\n",
      "op", "size", "conc", "variant", "calls/s", "MiB/s", "lat_us",
      "cpu_cli", "cpu_srv", "cpu_sum", "flt_c", "flt_s", "thr", "oth%"
    split("write read", ops, " "); split("4096 1048576", sizes, " "); split("1 8", concs, " ")
    for (o = 1; o <= 2; o++) for (s = 1; s <= 2; s++) for (k = 1; k <= 2; k++) {
      for (i = 1; i <= nv; i++) {
        key = ops[o] SUBSEP sizes[s] SUBSEP concs[k] SUBSEP vs[i]
        if (!((key, 7) in vals)) continue
        for (c = 7; c <= 16; c++) m[c] = median(vals[key, c])
        printf "%-5s %4s %4s  %-10s %8.0f %7.1f %8.1f %8.1f %8.1f %8.1f %6.1f %6.1f %4d %4d\n",
          ops[o], sizes[s] == 4096 ? "4K" : "1M", concs[k], vs[i],
          m[7], m[8], m[9], m[10], m[11], m[16], m[12], m[13], m[14], other[key]
      }
      print ""
    }
  }' "$raw"
echo "cpu_* in us per call (cpu_sum: median of the per-run sums); thr = threads in the server;"
echo "oth% = highest share of the machine's CPU used by other processes during the case's runs."
echo "Raw lines (one per case and run): $raw"
echo "Total time: $((SECONDS - start_time)) s"
