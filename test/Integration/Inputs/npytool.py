#!/usr/bin/env python3
"""Writes and checks .npy files for the integration tests, in plain Python
(no numpy, so the tests need nothing beyond python3).

  npytool.py make OUT --dtype f4|f2|f8|b1|i1|i2|i4|i8|u1|u2|u4|u8 --shape 2,3
                   [--fill zeros|ones|arange|rand:SEED|tril|mask:SEED]
                   [--big-endian] [--fortran]
      The values are generated in C (row-major) order whatever the layout:
      a --fortran or --big-endian file holds the same array as the plain one.
      tril: 1 where the last index <= the one before it (a causal keep-mask);
      mask:SEED[:V]: random 0/V (V defaults to 1; about three in four V).
      values:A,B,...: exactly these values, in order (as many as the shape holds).
  npytool.py convert IN OUT --dtype DT [--big-endian] [--fortran]
      Rewrites the float32/float16/bool .npy IN with another dtype or layout.
  npytool.py damage IN OUT
      Copies IN with one byte flipped 130 bytes after the last .npy magic:
      inside the data of an .npz archive's last stored member.
  npytool.py npz OUT [--compressed] NAME=FILE.npy ...
      An .npz archive exactly as np.savez (stored members) or
      np.savez_compressed (--compressed: deflated) writes one: a zip64-ready
      zipfile whose member NAME.npy holds FILE.npy's bytes.
  npytool.py perturb IN OUT --index K --delta D
      Copies the float32 .npy IN to OUT with element K (row-major) plus D.
  npytool.py bad OUT KIND      malformed files: bad-magic, bad-version,
                               header-past-end, truncated, big-endian,
                               fortran, int64, overflow, empty
  npytool.py mean-check OUT V [--causal none|top_left|bottom_right] [--tol T]
      OUT must equal sdpa(q = 0, k, V): with zero queries every visible key
      has the same weight, so each output row is the mean of the visible
      rows of V.
"""
import argparse
import random
import struct
import sys

DTYPES = {"f4": ("<f4", "f", 4), "f2": ("<f2", "e", 2), "f8": ("<f8", "d", 8),
          "b1": ("|b1", "?", 1), "i1": ("|i1", "b", 1), "i2": ("<i2", "h", 2),
          "i4": ("<i4", "i", 4), "i8": ("<i8", "q", 8), "u1": ("|u1", "B", 1),
          "u2": ("<u2", "H", 2), "u4": ("<u4", "I", 4), "u8": ("<u8", "Q", 8)}


def header(descr, shape, fortran=False):
    shape_str = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    h = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_str)
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def c_to_fortran(shape, values):
    """The row-major `values` in column-major order."""
    n = numel(shape)
    out = [None] * n
    for i in range(n):
        # Row-major multi-index of i, then its column-major offset.
        rem, off, stride = i, 0, 1
        idx = []
        for d in reversed(shape):
            idx.append(rem % d)
            rem //= d
        idx.reverse()
        for k, d in enumerate(shape):
            off += idx[k] * stride
            stride *= d
        out[off] = values[i]
    return out


def write(path, dtype, shape, values, big_endian=False, fortran=False):
    descr, fmt, size = DTYPES[dtype]
    order = ">" if big_endian else "<"
    if big_endian and size > 1:
        descr = ">" + descr[1:]
    if fortran:
        values = c_to_fortran(shape, values)
    with open(path, "wb") as f:
        f.write(header(descr, shape, fortran=fortran))
        f.write(struct.pack("%s%d%s" % (order, len(values), fmt), *values))


def read_header(path):
    """(header dict, the data bytes) of a version-1 .npy file."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    hlen = struct.unpack("<H", data[8:10])[0]
    h = eval(data[10:10 + hlen].decode())  # trusted: our tools wrote it
    return h, data[10 + hlen:]


def read(path):
    h, body = read_header(path)
    fmt = {"<f4": "f", "<f2": "e", "|b1": "?"}[h["descr"]]
    n = numel(h["shape"])
    vals = struct.unpack("<%d%s" % (n, fmt), body[:n * struct.calcsize(fmt)])
    return list(h["shape"]), list(vals)


def typed(dtype, vals):
    """`vals` as the Python values write() packs for `dtype`."""
    if dtype == "b1":
        return [bool(v) for v in vals]
    if dtype[0] in "iu":
        return [int(v) for v in vals]
    return vals


def make(args):
    shape = [int(s) for s in args.shape.split(",")] if args.shape else []
    n = numel(shape)
    if args.fill == "zeros":
        vals = [0] * n
    elif args.fill == "ones":
        vals = [1] * n
    elif args.fill == "arange":
        vals = list(range(n))
    elif args.fill == "tril":
        vals = [1 if (i % shape[-1]) <= (i // shape[-1]) % shape[-2] else 0
                for i in range(n)]
    elif args.fill.startswith("values:"):
        vals = [float(v) for v in args.fill[len("values:"):].split(",")]
        if len(vals) != n:
            sys.exit("npytool: --fill values: %d values for %d elements" % (len(vals), n))
    elif args.fill.startswith("mask:"):
        parts = args.fill.split(":")
        rng = random.Random(int(parts[1]))
        keep = int(parts[2]) if len(parts) > 2 else 1
        vals = [keep if rng.random() < 0.75 else 0 for _ in range(n)]
    else:
        rng = random.Random(int(args.fill.split(":")[1]))
        vals = [rng.uniform(-1, 1) for _ in range(n)]
    write(args.out, args.dtype, shape, typed(args.dtype, vals), big_endian=args.big_endian,
          fortran=args.fortran)


def npz(args):
    import zipfile
    compression = zipfile.ZIP_DEFLATED if args.compressed else zipfile.ZIP_STORED
    # As numpy.lib.npyio._savez: allowZip64, and each member opened with
    # force_zip64 (so its local header carries a zip64 extra field).
    with zipfile.ZipFile(args.out, mode="w", compression=compression,
                         allowZip64=True) as zf:
        for spec in args.members:
            name, path = spec.split("=", 1)
            with open(path, "rb") as f:
                data = f.read()
            with zf.open(name + ".npy", "w", force_zip64=True) as member:
                member.write(data)


def convert(args):
    shape, vals = read(args.inp)
    write(args.out, args.dtype, shape, typed(args.dtype, vals), big_endian=args.big_endian,
          fortran=args.fortran)


def damage(args):
    with open(args.inp, "rb") as f:
        data = bytearray(f.read())
    at = data.rindex(b"\x93NUMPY") + 130
    data[at] ^= 0x40
    with open(args.out, "wb") as f:
        f.write(data)


def perturb(args):
    with open(args.inp, "rb") as f:
        data = bytearray(f.read())
    hlen = struct.unpack("<H", data[8:10])[0]
    at = 10 + hlen + 4 * args.index
    v = struct.unpack("<f", data[at:at + 4])[0]
    data[at:at + 4] = struct.pack("<f", v + args.delta)
    with open(args.out, "wb") as f:
        f.write(data)


def bad(args):
    good = header("<f4", [2, 3]) + struct.pack("<6f", *range(6))
    kind = args.kind
    if kind == "bad-magic":
        data = b"\x93NUMPX" + good[6:]
    elif kind == "bad-version":
        data = good[:6] + b"\x09\x00" + good[8:]
    elif kind == "header-past-end":
        data = good[:8] + struct.pack("<H", 5000) + good[10:40]
    elif kind == "truncated":
        data = good[:-4]
    elif kind == "big-endian":
        data = header(">f4", [2, 3]) + struct.pack(">6f", *range(6))
    elif kind == "fortran":
        data = header("<f4", [2, 3], fortran=True) + struct.pack("<6f", *range(6))
    elif kind == "int64":
        data = header("<i8", [2, 3]) + struct.pack("<6q", *range(6))
    elif kind == "overflow":
        data = header("<f4", [2**40, 2**40, 2**40])
    elif kind == "empty":
        data = b""
    else:
        sys.exit("unknown kind " + kind)
    with open(args.out, "wb") as f:
        f.write(data)


def mean_check(args):
    oshape, out = read(args.out)
    vshape, v = read(args.v)
    b, h, tq, dv = oshape
    _, hkv, tk, _ = vshape
    group = h // hkv
    worst = 0.0
    for bi in range(b):
        for hi in range(h):
            for i in range(tq):
                if args.causal == "top_left":
                    visible = range(0, min(i + 1, tk))
                elif args.causal == "bottom_right":
                    visible = range(0, max(0, min(i + tk - tq + 1, tk)))
                else:
                    visible = range(tk)
                for e in range(dv):
                    if len(visible):
                        want = sum(v[((bi * hkv + hi // group) * tk + j) * dv + e]
                                   for j in visible) / len(visible)
                    else:
                        want = 0.0
                    got = out[((bi * h + hi) * tq + i) * dv + e]
                    worst = max(worst, abs(got - want))
    print("max_abs_error_vs_mean %.3g" % worst)
    if worst > args.tol:
        sys.exit("mismatch: %g > %g" % (worst, args.tol))


def info(args):
    h, body = read_header(args.path)
    names = {"<f4": "float32", "<f2": "float16", "|b1": "bool"}
    print(names.get(h["descr"], h["descr"]), tuple(h["shape"]), len(body), "bytes")


parser = argparse.ArgumentParser()
sub = parser.add_subparsers(dest="cmd", required=True)
p = sub.add_parser("make")
p.add_argument("out")
p.add_argument("--dtype", default="f4", choices=DTYPES)
p.add_argument("--shape", default="")
p.add_argument("--fill", default="zeros")
p.add_argument("--big-endian", action="store_true")
p.add_argument("--fortran", action="store_true")
p.set_defaults(fn=make)
p = sub.add_parser("npz")
p.add_argument("out")
p.add_argument("--compressed", action="store_true")
p.add_argument("members", nargs="+")
p.set_defaults(fn=npz)
p = sub.add_parser("convert")
p.add_argument("inp")
p.add_argument("out")
p.add_argument("--dtype", default="f4", choices=DTYPES)
p.add_argument("--big-endian", action="store_true")
p.add_argument("--fortran", action="store_true")
p.set_defaults(fn=convert)
p = sub.add_parser("damage")
p.add_argument("inp")
p.add_argument("out")
p.set_defaults(fn=damage)
p = sub.add_parser("perturb")
p.add_argument("inp")
p.add_argument("out")
p.add_argument("--index", type=int, required=True)
p.add_argument("--delta", type=float, required=True)
p.set_defaults(fn=perturb)
p = sub.add_parser("bad")
p.add_argument("out")
p.add_argument("kind")
p.set_defaults(fn=bad)
p = sub.add_parser("mean-check")
p.add_argument("out")
p.add_argument("v")
p.add_argument("--causal", default="none")
p.add_argument("--tol", type=float, default=1e-5)
p.set_defaults(fn=mean_check)
p = sub.add_parser("info")
p.add_argument("path")
p.set_defaults(fn=info)
args = parser.parse_args()
args.fn(args)
