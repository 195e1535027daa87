"""Keep freed memory in the process instead of returning it to the kernel after every step.

glibc serves allocations above its mmap threshold (at most 32 MiB by default) with fresh mmap'd pages and unmaps
them on free. A training step allocates and frees several such buffers (the (B, T, V) logits and their gradient
are 65 MB for the demo model), so every step page-faults hundreds of MB of zeroed memory: measured at a third of
the step time on CPU. Raising the thresholds makes the heap keep and reuse that memory; the cost is that RSS
stays at its peak, which a training process reaches on its first step anyway.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_freed_memory(threshold_bytes: int = 1 << 30) -> bool:
    """Raise glibc's mmap and trim thresholds; returns False (and changes nothing) where libc is not glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold_bytes)) and bool(mallopt(_M_TRIM_THRESHOLD, threshold_bytes))
