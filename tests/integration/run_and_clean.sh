#!/usr/bin/env bash
# Runs one integration test binary, then detaches any stripefs mount under a
# test folder that is still there (a crashed test cannot run its own cleanup)
# and kills its daemon, then any tmpfs a test mounted as an OST. The binary's
# exit code is passed on.
"$@"
rc=$?
for m in $(awk '$3 == "fuse.stripefs" && $2 ~ /^\/tmp\/sfs-it-/ {print $2}' /proc/mounts); do
  echo "run_and_clean: detaching leftover mount $m" >&2
  fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  rc=${rc/#0/1}
done
# Then the small tmpfs OSTs some tests mount (MountedFs::MountTmpfs).
for m in $(awk '$3 == "tmpfs" && $2 ~ /^\/tmp\/sfs-it-/ {print $2}' /proc/mounts); do
  echo "run_and_clean: detaching leftover tmpfs $m" >&2
  umount -l "$m" 2>/dev/null
  rc=${rc/#0/1}
done
pkill -9 -f "stripefs mount /tmp/sfs-it-" 2>/dev/null
exit $rc
