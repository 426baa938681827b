#!/usr/bin/env python3
"""limit_memory.py SIZE CMD ARGS...: runs CMD with its address space limited
(RLIMIT_AS) to SIZE bytes; SIZE may end in M or G."""
import os
import resource
import sys

size = sys.argv[1]
units = {"M": 1 << 20, "G": 1 << 30}
limit = int(float(size[:-1]) * units[size[-1]]) if size[-1] in units else int(size)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.execvp(sys.argv[2], sys.argv[2:])
