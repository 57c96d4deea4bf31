// The one place that selects the libfuse API level.
#pragma once
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
