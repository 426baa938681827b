"""Checks ptxas -v's report for every kernel of the PTX files given against
a budget: no spills, no stack frame, at most --max-registers registers and
--max-smem bytes of shared memory. Prints one line per kernel and exits 1
when one is over."""
import argparse, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("ptxas")
ap.add_argument("arch")
ap.add_argument("--max-registers", type=int, required=True)
ap.add_argument("--max-smem", type=int, required=True)
ap.add_argument("ptx", nargs="+")
a = ap.parse_args()
bad = False
for path in a.ptx:
    out = subprocess.run([a.ptxas, "-v", "-arch=" + a.arch, path, "-o", "/dev/null"],
                         capture_output=True, text=True, check=True).stderr
    for fn, body in re.findall(r"Compiling entry function '(\w+)'.*?\n(.*?)(?=ptxas info\s+: Compiling|\Z)", out, re.S):
        regs = int(re.search(r"Used (\d+) registers", body).group(1))
        smem = int((re.search(r"(\d+) bytes smem", body) or [0, 0])[1]) if re.search(r"(\d+) bytes smem", body) else 0
        spill = sum(int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", body))
        stack = int(re.search(r"(\d+) bytes stack frame", body).group(1))
        ok = spill == 0 and stack == 0 and regs <= a.max_registers and smem <= a.max_smem
        bad |= not ok
        print(f"{'within budget' if ok else 'OVER BUDGET'}: {fn} {a.arch} registers {regs} "
              f"smem {smem} spill {spill} stack {stack}")
sys.exit(1 if bad else 0)
