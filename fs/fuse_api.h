// The one place that selects the libfuse API level.
#pragma once
// 3.12: fuse_session_loop_mt then binds fuse_session_loop_mt_312, which
// takes the fuse_loop_config that fuse_loop_cfg_create makes. At 34 it
// bound the 3.2 entry point, which read that config with the old layout:
// max_idle_threads came out 0 and libfuse made a thread per request. The
// daemon now runs its own receive loop (fs/fuse_loop.h); anything that
// calls libfuse's loop again must keep this level.
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

static_assert(FUSE_USE_VERSION >= FUSE_MAKE_VERSION(3, 12),
              "the loop configuration needs fuse_session_loop_mt_312");
