# shellcheck shell=bash
# Sourced by the benchmarks: the FUSE daemons behind mount points (their
# CPU time) and the kernel's FUSE-over-io_uring switch.

uring_param=/sys/module/fuse/parameters/enable_uring
uring_saved=""   # enable_uring's value before uring_enable, "" if untouched

# Turns FUSE over io_uring on for this run. Returns 1, with the reason on
# stderr, on a kernel that lacks it (Linux < 6.14 or no CONFIG_FUSE_IO_URING)
# or refuses the write. enable_uring is the admin's, kernel-wide: the caller
# must call uring_restore on exit (a trap), whatever happens in between.
uring_enable() {
  if [ ! -e "$uring_param" ]; then
    echo "no $uring_param: this kernel has no FUSE over io_uring (Linux 6.14+," \
      "CONFIG_FUSE_IO_URING)" >&2
    return 1
  fi
  local old
  old=$(cat "$uring_param")
  if [ "$old" != Y ]; then
    echo Y 2>/dev/null > "$uring_param" || { echo "cannot write Y to $uring_param" >&2; return 1; }
    uring_saved=$old
    echo "$uring_param: $old -> Y for this run, restored on exit" >&2
  fi
}

uring_restore() {
  [ -n "$uring_saved" ] || return 0
  echo "$uring_saved" > "$uring_param" && echo "$uring_param restored to $uring_saved" >&2
  uring_saved=""
}

# The pid of the FUSE daemon serving mount point $1: a process whose command
# line holds the mount point as a whole word and which has /dev/fuse open
# (stripefs, passthrough_hp and mergerfs all run in the background with their
# mount point among their arguments). Prints nothing if there is none.
daemon_pid() {
  local p f
  for p in $(pgrep -f -- "$1( |\$)"); do
    for f in "/proc/$p/fd/"*; do
      if [ "$(readlink "$f")" = /dev/fuse ]; then echo "$p"; return 0; fi
    done
  done
}

# Clock ticks of CPU (user + system) the process $1 has used, all its threads,
# those that ended too (the thread group's /proc/PID/stat, fields 14 and 15;
# fields are counted after the command name, which may hold spaces). $1 may
# be several pids joined by commas (a mount and its OSS): their sum.
cpu_ticks() {
  local p files=()
  for p in ${1//,/ }; do files+=("/proc/$p/stat"); done
  sed 's/.*) //' "${files[@]}" 2>/dev/null | awk '{ s += $12 + $13 } END { print s + 0 }'
}

# Microseconds of CPU per operation: $1 ticks used, $2 operations.
us_per_op() {
  awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (n > 0 ? t / hz * 1e6 / n : 0) }'
}

# Writes an executable $1 that appends the CPU ticks of process $2 to file $3:
# mdtest's --run-cmd-before-phase runs it in every process before each phase,
# outside the phase's timing (then a barrier, then the clock starts).
write_cpu_snapshot_cmd() {
  cat > "$1" <<'EOF'
#!/bin/sh
for p in $(echo "$1" | tr ',' ' '); do sed 's/.*) //' "/proc/$p/stat"; done |
  awk '{ s += $12 + $13 } END { print s + 0 }' >> "$2"
EOF
  chmod +x "$1"
}

# Whether the daemon $1 serves its requests from io_uring queues: libfuse
# 3.18 names its queue threads fuse-ring-<qid> (lib/fuse_uring.c). Call after
# the first request on the mount (a stat), when INIT has started them.
has_ring_threads() {
  cat "/proc/$1/task/"*/comm 2>/dev/null | grep -q '^fuse-ring-'
}
