#!/usr/bin/env bash
# Runs one integration test binary, then detaches any stripefs mount under a
# test folder that is still there (a crashed test cannot run its own cleanup)
# and kills its daemon, then any tmpfs a test mounted as an OST. The binary's
# exit code is passed on. $SFS_IT_PREFIX (default /tmp/sfs-it-) is where the
# tests make their folders (tests/integration/mounted_fs.cc): two checkouts
# testing at once on one machine give different prefixes, so neither cleans
# up the other's mounts. A test's freezable OST helper (it_freezefs) that is
# left stopped is woken and killed.
prefix="${SFS_IT_PREFIX:-/tmp/sfs-it-}"
"$@"
rc=$?
for m in $(awk -v p="$prefix" '$3 == "fuse.stripefs" && index($2, p) == 1 {print $2}' /proc/mounts); do
  echo "run_and_clean: detaching leftover mount $m" >&2
  fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  rc=${rc/#0/1}
done
# Then the filesystems some tests mount under an OST or the metadata
# (MountedFs::MountTmpfs, MountExt4, a test's own passthrough FUSE helper).
for m in $(awk -v p="$prefix" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r); do
  echo "run_and_clean: detaching leftover mount $m" >&2
  umount -l "$m" 2>/dev/null
  rc=${rc/#0/1}
done
pkill -9 -f "stripefs mount $prefix" 2>/dev/null
# Client mounts name their MDS first; servers their log under the prefix.
pkill -9 -f "stripefs mount mds://[^ ]* $prefix" 2>/dev/null
pkill -9 -f "stripefs (oss|mds) .*--log-file $prefix" 2>/dev/null
pkill -CONT -f "it_freezefs $prefix" 2>/dev/null
pkill -9 -f "it_freezefs $prefix" 2>/dev/null
exit $rc
