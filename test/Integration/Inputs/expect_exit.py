#!/usr/bin/env python3
"""expect_exit.py CODE CMD ARGS...: runs CMD, prints its stdout and stderr,
and fails unless it exited with exactly CODE (a crash is a signal, never 2)."""
import subprocess
import sys

code = int(sys.argv[1])
p = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.write(p.stdout.decode(errors="replace"))
if p.returncode != code:
    sys.exit("expected exit status %d, got %d" % (code, p.returncode))
