#!/usr/bin/env python3
"""stderr_tty.py CMD ARGS...: runs CMD with its stderr on a pseudo-terminal
(stdout and stdin as given), then prints what it wrote to stderr with each
carriage return shown as a line break and trailing blanks dropped, so that
a progress line rewritten in place can be checked line by line. Exits with
CMD's exit status."""
import os
import pty
import subprocess
import sys

master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stderr=slave)
os.close(slave)
chunks = []
while True:
    try:
        data = os.read(master, 65536)
    except OSError:  # EIO: the child closed the terminal
        break
    if not data:
        break
    chunks.append(data)
code = p.wait()
text = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")
sys.stdout.flush()
for line in text.split("\n"):
    line = line.rstrip()
    if line:
        print("stderr: " + line)
sys.exit(code)
