#!/usr/bin/env python3
"""ring_lost_rank.py MPIRUN ATTN_RUN MLIR WORKDIR: a ring whose rank is lost
must not hang the others.

1. For 3 and 4 ranks: start a long ring run (--repeat), SIGKILL one rank
   (not rank 0) while it computes, then require that every other rank ends
   within BOUND seconds, that the job's status is non-zero, that the message
   names the lost rank, and that no output file (nor a partial one) is left.
2. A rank that fails after the ring has run (rank 0 cannot write its
   output): the job ends (within 100 s, compile included) with a message
   and a non-zero status, and no rank is left.

Prints one line per case and "lost-rank: N passed, 0 failed".
"""
import glob
import os
import shlex
import signal
import subprocess
import sys
import time

MPIRUN, ATTN_RUN, MLIR, WORK = sys.argv[1:5]
BOUND = 30.0


def ranks_of(marker):
    """{rank: pid} of the attn-run processes whose command line has marker."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        if not cmd or not cmd[0].endswith(b"attn-run") or marker.encode() not in b" ".join(cmd):
            continue
        for e in env:
            if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                out[int(e.split(b"=", 1)[1])] = int(pid)
    return out


def start(np_, out, repeat):
    cmd = shlex.split(MPIRUN) + ["-np", str(np_), ATTN_RUN, MLIR, "--entry=ring",
                                 "--pipeline=ring", "--random-inputs",
                                 "--repeat=%d" % repeat, "--output=" + out, "--quiet"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finish(proc, t0, bound=BOUND):
    try:
        text, _ = proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None, time.time() - t0, ""
    return proc.returncode, time.time() - t0, text.decode(errors="replace")


failures = 0
passed = 0


def report(ok, what):
    global failures, passed
    print("%s: %s" % ("ok  " if ok else "FAIL", what))
    if ok:
        passed += 1
    else:
        failures += 1


for np_ in (3, 4):
    out = os.path.join(WORK, "lost%d.npy" % np_)
    proc = start(np_, out, 100000)
    # Wait until every rank runs (compiled and computing), then kill one.
    t_start = time.time()
    pids = {}
    while time.time() - t_start < 60 and len(pids) < np_:
        time.sleep(0.2)
        pids = ranks_of(out)
    time.sleep(3.0)  # into the timed repeats
    victim = np_ - 1 if np_ == 3 else 1
    if victim not in pids or proc.poll() is not None:
        report(False, "%d ranks: the run did not start (%s)" % (np_, sorted(pids)))
        continue
    os.kill(pids[victim], signal.SIGKILL)
    rc, took, text = finish(proc, time.time())
    left = ranks_of(out)
    partial = glob.glob(out + "*")
    named = ("rank %d" % victim) in text
    report(rc not in (None, 0) and not left and named and not partial,
           "%d ranks, rank %d killed: the job ended in %.1f s (bound %.0f), status %s, "
           "message names rank %d: %s, ranks left: %s, output files: %s"
           % (np_, victim, took, BOUND, rc, victim, named, sorted(left), partial))
    if rc is None or not named:
        print(text[-2000:])

# An error after the ring has run: rank 0 cannot write the output. The
# bound covers the whole run here (3 ranks compile on 2 cores first).
out = os.path.join(WORK, "no-such-dir", "o.npy")
t0 = time.time()
proc = start(3, out, 3)
rc, took, text = finish(proc, t0, bound=100.0)
said = "cannot open file for writing" in text or "No such file" in text
report(rc not in (None, 0) and said and not ranks_of(out),
       "3 ranks, rank 0 fails to write its output: the job ended in %.1f s, status %s, "
       "message: %s" % (took, rc, said))
if not said:
    print(text[-2000:])

print("lost-rank: %d passed, %d failed" % (passed, failures))
sys.exit(1 if failures else 0)
