"""The compiled-kernel cache: one kernel per key, compiled once, shared by
every thread.

A key is a tuple of everything that is compiled into the kernel (the static
sizes, the element types, the options); sizes left dynamic (batch and the
sequence lengths of attention) are not part of it, so one kernel serves every
batch size and length. The first thread to ask for a key compiles it (the GIL
released while it does) while other threads asking for the same key wait;
threads asking for other keys go on.
"""

import threading

from . import _attn_mlir


class _Entry:
    __slots__ = ("lock", "kernel")

    def __init__(self):
        self.lock = threading.Lock()
        self.kernel = None


class KernelCache:
    def __init__(self):
        self._lock = threading.Lock()
        self._entries = {}
        self.hits = 0
        self.misses = 0

    def get(self, key, make_text, entry, pipeline, threads=0):
        """The kernel for `key`, compiling `make_text()` (attn IR) with
        function `entry` through `pipeline` on first use."""
        with self._lock:
            e = self._entries.get(key)
            if e is None:
                e = self._entries[key] = _Entry()
            elif e.kernel is not None:
                self.hits += 1
                return e.kernel
        with e.lock:
            if e.kernel is None:
                try:
                    e.kernel = _attn_mlir.compile(make_text(), entry, pipeline, threads)
                except BaseException:
                    with self._lock:
                        if self._entries.get(key) is e:
                            del self._entries[key]
                    raise
                with self._lock:
                    self.misses += 1
            else:
                with self._lock:
                    self.hits += 1
            return e.kernel

    def info(self):
        with self._lock:
            return {"kernels": sum(1 for e in self._entries.values() if e.kernel is not None),
                    "hits": self.hits, "misses": self.misses}

    def clear(self):
        with self._lock:
            self._entries.clear()
            self.hits = 0
            self.misses = 0


CACHE = KernelCache()
