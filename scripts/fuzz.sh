#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang into ./build-fuzz and
# runs each for a bounded time, SECONDS_PER_TARGET (default 15), as many at
# once as there are cores. Each starts from a temporary copy of its
# committed seed corpus (fuzz/corpus/<target>/), so the committed corpora
# never grow. Exits 1 if any target crashes, leaks, hangs or fails a
# round-trip check; the input that did it is kept in
# build-fuzz/crashes/<target>/ (rerun: build-fuzz/fuzz/<target> <that file>).
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
cxx=${SFS_FUZZ_CXX:-clang++-14}

cmake -S . -B build-fuzz -G Ninja -DSFS_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
ninja -C build-fuzz -j"$(nproc)" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # run TARGET: one fuzzer on a copy of its corpus; log and status in $work
  local name=$1 crashes=build-fuzz/crashes/$1 rc=0
  mkdir -p "$work/$name" "$crashes"
  cp fuzz/corpus/"$name"/* "$work/$name/" 2>/dev/null || true
  build-fuzz/fuzz/"$name" "$work/$name" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$crashes/" >"$work/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$name.rc"
}

targets=()
for fuzzer in fuzz/*_fuzzer.cc; do targets+=("$(basename "$fuzzer" .cc)"); done
for name in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  run "$name" &
done
wait
failed=()
for name in "${targets[@]}"; do
  if [ "$(cat "$work/$name.rc" 2>/dev/null)" = 0 ]; then
    echo "fuzz: $name ok ($(grep -o 'Done [0-9]* runs' "$work/$name.log" || echo '? runs'))"
  else
    failed+=("$name")
    echo "fuzz: $name FAILED; the end of its log:"
    tail -n 40 "$work/$name.log"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]} (inputs in build-fuzz/crashes/)"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds} s each without a failure"
