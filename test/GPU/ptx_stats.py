"""Counts in one PTX file, one per line, for FileCheck: the kernel's
parameters (of its .entry), fma.rn.f32, separate mul/add f32, 64-bit integer
divisions and remainders, and global loads."""
import re
import sys

ptx = open(sys.argv[1]).read()
entry = ptx[ptx.index(".entry"):]
signature = entry[: entry.index(")")]
print("params", len(re.findall(r"\.param\s", signature)))
print("fma.f32", len(re.findall(r"\bfma\.rn\.f32\b", ptx)))
print("mul.f32", len(re.findall(r"\bmul\.rn\.f32\b", ptx)))
print("add.f32", len(re.findall(r"\badd\.rn\.f32\b", ptx)))
print("div64", len(re.findall(r"\b(?:div|rem)\.[su]64\b", ptx)))
print("ld.global", len(re.findall(r"\bld\.global\b", ptx)))
