#!/usr/bin/env bash
# The main command: installs what is missing, builds, creates a small
# filesystem with 4 OST directories under ./demo, mounts it on ./demo/mnt and
# shows a striped file. Unmount with: build/tools/stripefs/stripefs umount demo/mnt
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
bin=build/tools/stripefs/stripefs
demo=$PWD/demo
if grep -q " $demo/mnt fuse.stripefs " /proc/mounts; then
  echo "unmounting the previous demo mount"
  fusermount3 -u "$demo/mnt"
fi
mkdir -p "$demo/mnt"
$bin mkfs --force --meta "$demo/meta" \
  --ost "$demo/ost0" --ost "$demo/ost1" --ost "$demo/ost2" --ost "$demo/ost3" \
  --stripe-count 4 --stripe-size 1M
$bin mount "$demo/meta" "$demo/mnt"
echo
echo "== mounted:"; grep " $demo/mnt " /proc/mounts
echo "== write a 10 MiB file with dd"
dd if=/dev/urandom of="$demo/hello.src" bs=1M count=10 status=none
dd if="$demo/hello.src" of="$demo/mnt/hello.bin" bs=1M status=none
ls -l "$demo/mnt"
echo "== its layout (getfattr -n user.stripefs.layout):"
(cd "$demo/mnt" && getfattr --only-values -n user.stripefs.layout hello.bin); echo
echo "== where the stripes went (object files in the OST directories):"
for i in 0 1 2 3; do
  find "$demo/ost$i/objects" -type f -printf "ost$i  %P  %s bytes\n" 2>/dev/null
done
echo "== read back through the mount:"
cmp "$demo/hello.src" "$demo/mnt/hello.bin" && echo "identical to the source" && md5sum "$demo/mnt/hello.bin"
df -h "$demo/mnt"
echo "== per OST (stripefs df -h; the four OST directories share one disk, counted once):"
$bin df -h "$demo/mnt"
echo
echo "stripefs is mounted on $demo/mnt; unmount with: $bin umount $demo/mnt"
