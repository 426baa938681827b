"""Lists the entries of a CUDA fatbin: one line per entry, "ELF sm_90" (a
cubin, checked to start with the ELF magic) or "PTX sm_90". The layout is
the one the CUDA toolkit's fatbinary writes: a 16-byte header (magic
0xBA55ED50, version, header size, payload size), then entries, each a
header (kind 1 = PTX, 2 = ELF; header size at byte 4, payload size at 8,
arch at 28) followed by its payload."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
magic, _version, header, size = struct.unpack_from("<IHHQ", data, 0)
if magic != 0xBA55ED50:
    sys.exit(f"{sys.argv[1]}: not a fatbin (magic {magic:#x})")
at = header
while at < header + size:
    kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, at)
    arch = struct.unpack_from("<I", data, at + 28)[0]
    body = data[at + entry_header : at + entry_header + payload]
    if kind == 2:
        if not body.startswith(b"\x7fELF"):
            sys.exit(f"entry for sm_{arch}: ELF kind without an ELF payload")
        print(f"ELF sm_{arch}")
    elif kind == 1:
        print(f"PTX sm_{arch}")
    else:
        print(f"kind {kind} sm_{arch}")
    at += entry_header + payload
