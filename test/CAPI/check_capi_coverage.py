"""Fails unless every function the attn C API declares is called in the test.

usage: check_capi_coverage.py TEST.c HEADER_DIR... (headers: *.h, *.capi.h.inc)
"""
import pathlib
import re
import sys

test = pathlib.Path(sys.argv[1]).read_text()
declared = set()
for d in sys.argv[2:]:
    for h in sorted(pathlib.Path(d).iterdir()):
        if not (h.name.endswith(".h") or h.name.endswith(".capi.h.inc")):
            continue
        text = h.read_text()
        declared |= set(re.findall(r"MLIR_CAPI_EXPORTED\s+[\w\s\*]*?\b(\w+)\s*\(", text))
        for ns in re.findall(r"MLIR_DECLARE_CAPI_DIALECT_REGISTRATION\(\s*\w+\s*,\s*(\w+)\s*\)", text):
            declared.add("mlirGetDialectHandle__%s__" % ns)
missing = sorted(f for f in declared if not re.search(r"\b%s\s*\(" % re.escape(f), test))
print("C API functions declared: %d, called in the test: %d" % (len(declared), len(declared) - len(missing)))
if not declared or missing:
    print("not exercised: " + ", ".join(missing))
    sys.exit(1)
