#!/usr/bin/env bash
# Installs the Debian 12 packages stripefs needs, only those missing
# (clang-14 and its runtime libraries build the fuzz targets, scripts/fuzz.sh;
# curl and man-db are what the metrics and install tests use).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config fuse3 libfuse3-dev librocksdb-dev
      libboost-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev liburing-dev
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libssl-dev
      attr curl fio git man-db openssl clang-14 libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
