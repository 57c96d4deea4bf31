#!/usr/bin/env bash
# The io_uring integration runs' fixture (CMakeLists.txt): FUSE over io_uring
# is the admin's kernel-wide switch, so the suite turns it on only for its
# own io_uring runs and puts back what it found.
#   uring_param.sh enable SAVED    saves the current value in SAVED, sets Y
#   uring_param.sh restore SAVED   writes the saved value back
# A kernel without the parameter (before 6.14, or built without
# CONFIG_FUSE_IO_URING) is left alone; the io_uring runs then skip.
set -euo pipefail
param=/sys/module/fuse/parameters/enable_uring
saved=$2
case $1 in
  enable)
    if [ ! -e "$param" ]; then
      echo "no $param: this kernel has no FUSE over io_uring; io_uring runs will skip"
      echo absent > "$saved"
      exit 0
    fi
    cat "$param" > "$saved"
    echo Y > "$param"
    echo "enable_uring was $(cat "$saved"), now $(cat "$param") for the io_uring runs"
    ;;
  restore)
    [ -f "$saved" ] || { echo "nothing saved"; exit 0; }
    old=$(cat "$saved")
    if [ "$old" != absent ] && [ -e "$param" ]; then
      echo "$old" > "$param"
      echo "enable_uring restored to $(cat "$param")"
    fi
    rm -f "$saved"
    ;;
  *) echo "usage: $0 enable|restore SAVED" >&2; exit 2 ;;
esac
