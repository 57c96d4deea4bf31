#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every unit and
# integration test (the integration tests mount real filesystems; run as
# root, /dev/fuse needed), then every fuzz target for a short while
# (scripts/fuzz.sh, its own clang build in ./build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
cd build
ctest -j"$(nproc)" -LE integration --output-on-failure --timeout 300
ctest -L integration --output-on-failure --timeout 600
cd ..
scripts/fuzz.sh 6
