"""attn_mlir.flex_attention: PyTorch's FlexAttention, compiled by attn-mlir.

``score_mod(score, b, h, q_idx, kv_idx)`` and ``mask_mod(b, h, q_idx,
kv_idx)`` are ordinary Python functions written as for
``torch.nn.attention.flex_attention``: arithmetic, comparisons, ``&``/``|``/
``~``, ``torch.where``/``tanh``/``exp``/... and indexing of captured torch
tensors by the index arguments. They are traced once, with symbolic
arguments (``__torch_function__`` catches the torch calls), into the
``score_mod`` / ``mask_mod`` regions of one ``attn.sdpa``, which the CPU
pipeline compiles into its fused kernel (docs/recipes.md). Kernels are
cached by the traced IR. As with torch.compile's automatic dynamic shapes,
the first shape a traced body meets gets a kernel with static shapes; the
second a kernel whose batch size, lengths and captured tensors' dims are
dynamic, which then serves every other shape (a query of at most 8 rows, a
decode step, keeps its length static).

Where this differs from PyTorch: a fully masked row gives 0 (FlexAttention:
0 as well); Python control flow on traced values (``if``, ``and``, ``or``,
``not``) cannot be traced (use ``torch.where``, ``&``, ``|``, ``~``); a
captured tensor is read at its indices clamped into its shape (no
out-of-bounds error); ``return_lse=True`` returns the float32 log-sum-exp
[B, H, L] in natural log (-inf for a row that keeps no key). A BlockMask
means what it means to FlexAttention (keys of unlisted blocks dropped,
mask_mod skipped in full blocks): its lists become a captured table of
block states that the kernel bounds per tile (docs/recipes.md).

Differentiable: with a query, key or value that requires grad, torch
autograd gets dQ, dK, dV from attn-differentiate's backward of the same
IR (the score function's derivative is built from its traced body;
docs/training.md), and a captured float tensor that requires grad (a
learned bias table) gets its gradient: the scores' adjoints times the
function's derivative by each read, summed at the element read. That
backward is the fused one unless a score function reads a captured tensor
that requires grad (then it forms the [B, H, L, S] scores, the reference
route). return_lse=True is refused with grad.
"""

import math

import numpy as np

from . import _arrays
from ._cache import CACHE
from ._compile import CompiledFunction

_FLOATS = ("f16", "bf16", "f32", "f64")
# Query lengths up to this compile with Lq static (decode, speculative
# decoding) in the dynamic kernels too.
_STATIC_LQ_MAX = 8
# The static text of the first call of each dynamic text (flex_attention).
_FIRST_SHAPE = {}
_MLIR_OF_DTYPE = {"float32": "f32", "float16": "f16", "bfloat16": "bf16",
                  "bool": "i1", "int32": "i32", "int64": "i64"}


def _float_literal(v, type_="f32"):
    """An MLIR float literal: always with a '.', infinities and NaN in hex."""
    v = float(v)
    if math.isfinite(v):
        return "%.9e" % v
    bits = {"f32": ("0x7F800000", "0xFF800000", "0x7FC00000"),
            "f16": ("0x7C00", "0xFC00", "0x7E00"), "bf16": ("0x7F80", "0xFF80", "0x7FC0"),
            "f64": ("0x7FF0000000000000", "0xFFF0000000000000", "0x7FF8000000000000")}[type_]
    return bits[2] if math.isnan(v) else bits[0] if v > 0 else bits[1]


def _fail(exc, msg):
    raise exc("attn_mlir.flex_attention: " + msg)


class TraceError(TypeError):
    """A score_mod or mask_mod uses a construct the tracer cannot express."""


class _Sym:
    """A traced scalar: an SSA value of the function being built."""
    __slots__ = ("tr", "name", "type")

    def __init__(self, tr, name, type_):
        self.tr, self.name, self.type = tr, name, type_

    # --- Python protocols that would need a concrete value ---------------
    def __bool__(self):
        raise TraceError("Python control flow on a traced value (if, and, or, not, "
                         "chained comparisons) cannot be traced; use torch.where, "
                         "&, | and ~")

    def __index__(self):
        raise TraceError("a traced value cannot become a Python int (only captured "
                         "torch tensors can be indexed by traced values)")

    __int__ = __float__ = __index__

    # --- arithmetic ------------------------------------------------------
    def __add__(self, o): return self.tr.binary("add", self, o)
    def __radd__(self, o): return self.tr.binary("add", o, self)
    def __sub__(self, o): return self.tr.binary("sub", self, o)
    def __rsub__(self, o): return self.tr.binary("sub", o, self)
    def __mul__(self, o): return self.tr.binary("mul", self, o)
    def __rmul__(self, o): return self.tr.binary("mul", o, self)
    def __truediv__(self, o): return self.tr.binary("div", self, o)
    def __rtruediv__(self, o): return self.tr.binary("div", o, self)
    def __floordiv__(self, o): return self.tr.binary("floordiv", self, o)
    def __rfloordiv__(self, o): return self.tr.binary("floordiv", o, self)
    def __mod__(self, o): return self.tr.binary("mod", self, o)
    def __rmod__(self, o): return self.tr.binary("mod", o, self)
    def __pow__(self, o): return self.tr.power(self, o)
    def __neg__(self): return self.tr.binary("sub", 0, self)
    def __pos__(self): return self
    def __abs__(self): return self.tr.unary("abs", self)
    def __lt__(self, o): return self.tr.compare("lt", self, o)
    def __le__(self, o): return self.tr.compare("le", self, o)
    def __gt__(self, o): return self.tr.compare("gt", self, o)
    def __ge__(self, o): return self.tr.compare("ge", self, o)
    def __eq__(self, o): return self.tr.compare("eq", self, o)
    def __ne__(self, o): return self.tr.compare("ne", self, o)
    def __and__(self, o): return self.tr.bitwise("and", self, o)
    def __rand__(self, o): return self.tr.bitwise("and", o, self)
    def __or__(self, o): return self.tr.bitwise("or", self, o)
    def __ror__(self, o): return self.tr.bitwise("or", o, self)
    def __xor__(self, o): return self.tr.bitwise("xor", self, o)
    def __rxor__(self, o): return self.tr.bitwise("xor", o, self)
    def __invert__(self): return self.tr.invert(self)
    __hash__ = object.__hash__

    # --- tensor-like methods -------------------------------------------
    def tanh(self): return self.tr.unary("tanh", self)
    def exp(self): return self.tr.unary("exp", self)
    def log(self): return self.tr.unary("log", self)
    def abs(self): return self.tr.unary("abs", self)
    def sqrt(self): return self.tr.unary("sqrt", self)
    def sigmoid(self): return self.tr.unary("sigmoid", self)
    def float(self): return self.tr.to_float(self)
    def long(self): return self.tr.to_i64(self)
    int = long
    def clamp(self, min=None, max=None): return self.tr.clamp(self, min, max)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        tr = next(a.tr for a in _flatten(args, kwargs) if isinstance(a, _Sym))
        return tr.torch_call(func, args, kwargs or {})


def _flatten(args, kwargs):
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, (tuple, list)):
            yield from _flatten(a, None)
        else:
            yield a


class _Tracer:
    """Builds the body of one region as MLIR text lines."""

    def __init__(self, prefix, captures):
        self.prefix = prefix
        self.lines = []
        self.n = 0
        self.captures = captures  # shared list of [tensor, mlir element type]

    def new(self, type_):
        self.n += 1
        return _Sym(self, "%%%s%d" % (self.prefix, self.n), type_)

    def emit(self, type_, text):
        s = self.new(type_)
        self.lines.append("%s = %s" % (s.name, text))
        return s

    def const(self, value, type_):
        if type_ == "i1":
            return self.emit("i1", "arith.constant %s" % ("true" if value else "false"))
        if type_ in _FLOATS:
            return self.emit(type_, "arith.constant %s : %s" % (_float_literal(value, type_), type_))
        return self.emit(type_, "arith.constant %d : %s" % (int(value), type_))

    # --- conversions -----------------------------------------------------
    def lift(self, x, like=None):
        """A Python number, a 0-d torch tensor or a _Sym as a _Sym; numbers
        take the kind of `like` (int -> its integer type, float -> f32)."""
        if isinstance(x, _Sym):
            return x
        if isinstance(x, bool):
            return self.const(x, "i1")
        if isinstance(x, (int, np.integer)):
            t = like.type if like is not None and like.type not in _FLOATS + ("i1",) else "index"
            return self.const(int(x), t)
        if isinstance(x, (float, np.floating)):
            return self.const(float(x), "f32")
        if _arrays.is_torch(x) and x.dim() == 0:
            return self.read_capture(x, ())
        raise TraceError("cannot trace a value of type %s (traced functions compute on "
                         "their arguments, Python numbers and captured torch tensors)"
                         % type(x).__name__)

    def to_f32(self, s):
        if s.type == "f32":
            return s
        if s.type in ("f16", "bf16"):
            return self.emit("f32", "arith.extf %s : %s to f32" % (s.name, s.type))
        if s.type == "f64":
            return self.emit("f32", "arith.truncf %s : f64 to f32" % s.name)
        if s.type == "i1":
            return self.emit("f32", "arith.uitofp %s : i1 to f32" % s.name)
        if s.type == "index":
            s = self.emit("i64", "arith.index_cast %s : index to i64" % s.name)
        return self.emit("f32", "arith.sitofp %s : %s to f32" % (s.name, s.type))

    def to_i64(self, s):
        """torch's .long(): floats truncated towards 0, integers widened."""
        s = self.lift(s)
        if s.type in _FLOATS:
            s = self.to_f32(s)
            return self.emit("i64", "arith.fptosi %s : f32 to i64" % s.name)
        return self.to_int(s, "i64")

    def to_float(self, s):
        return self.to_f32(self.lift(s))

    def to_int(self, s, t):
        """Integer `s` as integer type `t` (index, i32, i64)."""
        if s.type == t:
            return s
        if s.type == "index" or t == "index":
            return self.emit(t, "arith.index_cast %s : %s to %s" % (s.name, s.type, t))
        if s.type == "i1":
            return self.emit(t, "arith.extui %s : i1 to %s" % (s.name, t))
        wid = lambda ty: int(ty[1:])
        op = "arith.extsi" if wid(s.type) < wid(t) else "arith.trunci"
        return self.emit(t, "%s %s : %s to %s" % (op, s.name, s.type, t))

    def common(self, a, b):
        """Both operands in one type: f32 if either is a float, else one
        integer type (index when both are, else i64)."""
        if isinstance(a, _Sym) or not isinstance(b, _Sym):
            a = self.lift(a, b if isinstance(b, _Sym) else None)
            b = self.lift(b, a)
        else:
            b = self.lift(b)
            a = self.lift(a, b)
        if a.type in _FLOATS or b.type in _FLOATS:
            return self.to_f32(a), self.to_f32(b), "f32"
        if a.type == b.type and a.type != "i1":
            return a, b, a.type
        t = "i64"
        return self.to_int(a, t), self.to_int(b, t), t

    # --- ops -------------------------------------------------------------
    def binary(self, op, a, b):
        if op == "div":
            a, b = self.to_float(a), self.to_float(b)
            return self.emit("f32", "arith.divf %s, %s : f32" % (a.name, b.name))
        a, b, t = self.common(a, b)
        if t == "f32":
            if op in ("add", "sub", "mul"):
                return self.emit(t, "arith.%sf %s, %s : f32" % (op, a.name, b.name))
            q = self.emit(t, "arith.divf %s, %s : f32" % (a.name, b.name))
            fq = self.emit(t, "math.floor %s : f32" % q.name)
            if op == "floordiv":
                return fq
            prod = self.emit(t, "arith.mulf %s, %s : f32" % (fq.name, b.name))
            return self.emit(t, "arith.subf %s, %s : f32" % (a.name, prod.name))
        if op in ("add", "sub", "mul"):
            return self.emit(t, "arith.%si %s, %s : %s" % (op, a.name, b.name, t))
        if op == "floordiv":  # Python's //: towards -inf
            return self.emit(t, "arith.floordivsi %s, %s : %s" % (a.name, b.name, t))
        # Python's %: the sign of the divisor.
        r = self.emit(t, "arith.remsi %s, %s : %s" % (a.name, b.name, t))
        zero = self.const(0, t)
        nz = self.emit("i1", "arith.cmpi ne, %s, %s : %s" % (r.name, zero.name, t))
        rn = self.emit("i1", "arith.cmpi slt, %s, %s : %s" % (r.name, zero.name, t))
        bn = self.emit("i1", "arith.cmpi slt, %s, %s : %s" % (b.name, zero.name, t))
        diff = self.emit("i1", "arith.xori %s, %s : i1" % (rn.name, bn.name))
        fix = self.emit("i1", "arith.andi %s, %s : i1" % (nz.name, diff.name))
        rb = self.emit(t, "arith.addi %s, %s : %s" % (r.name, b.name, t))
        return self.emit(t, "arith.select %s, %s, %s : %s" % (fix.name, rb.name, r.name, t))

    def power(self, a, e):
        if isinstance(e, (int, np.integer)) and not isinstance(e, bool) and 0 <= e <= 8:
            if e == 0:
                return self.const(1.0, "f32") if a.type in _FLOATS else self.const(1, a.type)
            r = a
            for _ in range(int(e) - 1):
                r = self.binary("mul", r, a)
            return r
        a, e = self.to_float(a), self.to_float(e)
        return self.emit("f32", "math.powf %s, %s : f32" % (a.name, e.name))

    _CMP_I = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
    _CMP_F = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}

    def compare(self, op, a, b):
        a, b, t = self.common(a, b)
        if t == "f32":
            return self.emit("i1", "arith.cmpf %s, %s, %s : f32" % (self._CMP_F[op], a.name, b.name))
        return self.emit("i1", "arith.cmpi %s, %s, %s : %s" % (self._CMP_I[op], a.name, b.name, t))

    def bitwise(self, op, a, b):
        a, b = self.lift(a), self.lift(b)
        if a.type == "i1" and b.type == "i1":
            t = "i1"
        elif a.type in _FLOATS or b.type in _FLOATS:
            raise TraceError("&, | and ^ take booleans or integers, not floats")
        else:
            a, b, t = self.common(a, b)
        return self.emit(t, "arith.%si %s, %s : %s" % (op, a.name, b.name, t))

    def invert(self, a):
        if a.type == "i1":
            return self.emit("i1", "arith.xori %s, %s : i1" % (a.name, self.const(True, "i1").name))
        if a.type in _FLOATS:
            raise TraceError("~ takes a boolean or an integer, not a float")
        return self.emit(a.type, "arith.xori %s, %s : %s"
                         % (a.name, self.const(-1, a.type).name, a.type))

    _MATH = {"tanh": "math.tanh", "exp": "math.exp", "exp2": "math.exp2", "log": "math.log",
             "log2": "math.log2", "log1p": "math.log1p", "sqrt": "math.sqrt",
             "rsqrt": "math.rsqrt", "sin": "math.sin", "cos": "math.cos",
             "floor": "math.floor", "ceil": "math.ceil", "erf": "math.erf"}

    def unary(self, op, a):
        a = self.lift(a)
        if op == "abs":
            if a.type in _FLOATS:
                return self.emit(a.type, "math.absf %s : %s" % (a.name, a.type))
            return self.emit(a.type, "math.absi %s : %s" % (a.name, a.type))
        if op == "sign":
            a = self.to_f32(a)
            zero, one = self.const(0.0, "f32"), self.const(1.0, "f32")
            pos = self.compare("gt", a, zero)
            neg = self.compare("lt", a, zero)
            m1 = self.const(-1.0, "f32")
            n = self.emit("f32", "arith.select %s, %s, %s : f32" % (neg.name, m1.name, zero.name))
            return self.emit("f32", "arith.select %s, %s, %s : f32" % (pos.name, one.name, n.name))
        if op == "sigmoid":
            a = self.to_f32(a)
            e = self.unary("exp", self.binary("sub", 0.0, a))
            return self.binary("div", 1.0, self.binary("add", 1.0, e))
        a = self.to_f32(a)
        return self.emit("f32", "%s %s : f32" % (self._MATH[op], a.name))

    def select(self, c, x, y):
        c = self.lift(c)
        if c.type != "i1":
            raise TraceError("torch.where's condition must be a boolean")
        x, y, t = self.common(x, y)
        return self.emit(t, "arith.select %s, %s, %s : %s" % (c.name, x.name, y.name, t))

    def minmax(self, op, a, b):
        a, b, t = self.common(a, b)
        if t == "f32":
            return self.emit(t, "arith.%simumf %s, %s : f32" % (op, a.name, b.name))
        return self.emit(t, "arith.%ssi %s, %s : %s" % (op, a.name, b.name, t))

    def clamp(self, a, lo=None, hi=None):
        r = self.lift(a)
        if lo is not None:
            r = self.minmax("max", r, lo)
        if hi is not None:
            r = self.minmax("min", r, hi)
        return r

    def read_capture(self, tensor, index):
        """tensor[index...] of a captured torch tensor (every dim indexed)."""
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) != len(tensor.shape):
            raise TraceError("a captured tensor of shape %s must be indexed in every dim "
                             "(got %d indices)" % (list(tensor.shape), len(index)))
        for slot, (t, _) in enumerate(self.captures):
            if t is tensor:
                break
        else:
            name = _arrays.dtype_name(tensor)
            if name not in _MLIR_OF_DTYPE:
                raise TraceError("a captured tensor has dtype %s; capture float32, "
                                 "float16, bfloat16, bool, int32 or int64 (convert it first)"
                                 % name)
            self.captures.append((tensor, _MLIR_OF_DTYPE[name]))
            slot = len(self.captures) - 1
        ty = _capture_type_slot(slot)
        idx = []
        for i in index:
            i = self.lift(i)
            if i.type in _FLOATS or i.type == "i1":
                raise TraceError("a captured tensor is indexed by integers, not %s" % i.type)
            idx.append(self.to_int(i, "index").name)
        elt = self.captures[slot][1]
        return self.emit(elt, "tensor.extract %%%scap%d[%s] : %s"
                         % (self.prefix, slot, ", ".join(idx), ty))

    def torch_call(self, func, args, kwargs):
        import torch
        name = getattr(func, "__name__", str(func))
        if func is torch.Tensor.__getitem__:
            return self.read_capture(args[0], args[1])
        if func is torch.where:
            return self.select(*args)
        if func in (torch.minimum, torch.min) and len(args) == 2:
            return self.minmax("min", *args)
        if func in (torch.maximum, torch.max) and len(args) == 2:
            return self.minmax("max", *args)
        if func is torch.clamp:
            lo = args[1] if len(args) > 1 else kwargs.get("min")
            hi = args[2] if len(args) > 2 else kwargs.get("max")
            return self.clamp(args[0], lo, hi)
        if func in (torch.logical_and, torch.logical_or):
            return self.bitwise("and" if func is torch.logical_and else "or", *args)
        if func is torch.logical_not:
            return self.invert(self.lift(args[0]))
        if func is torch.abs:
            return self.unary("abs", args[0])
        if func is torch.sign:
            return self.unary("sign", args[0])
        if func is torch.sigmoid:
            return self.unary("sigmoid", args[0])
        if name in self._MATH and getattr(torch, name, None) is func:
            return self.unary(name, args[0])
        dunder = {"__add__": ("add", False), "add": ("add", False),
                  "__radd__": ("add", True), "__sub__": ("sub", False), "sub": ("sub", False),
                  "__rsub__": ("sub", True), "__mul__": ("mul", False), "mul": ("mul", False),
                  "__rmul__": ("mul", True), "__truediv__": ("div", False),
                  "div": ("div", False), "true_divide": ("div", False),
                  "__rtruediv__": ("div", True)}
        if name in dunder and len(args) == 2:
            op, swap = dunder[name]
            a, b = (args[1], args[0]) if swap else args
            return self.binary(op, a, b)
        raise TraceError("%s is not supported in a traced score_mod/mask_mod (supported: "
                         "arithmetic, comparisons, &, |, ~, torch.where, torch.minimum/"
                         "maximum/clamp, abs, sign, sigmoid, %s, and indexing captured "
                         "tensors)" % (name, ", ".join(sorted(self._MATH))))


def _type(dims, elt):
    """A tensor type: an int dim is static, None dynamic."""
    return "tensor<%s%s>" % ("".join("?x" if d is None else "%dx" % d for d in dims), elt)


def _tensor_type(t, elt, static):
    """A captured tensor's type: its shape, or its rank with every dim
    dynamic, so that one kernel serves the tables of every sequence length
    (a relative bias [H, 2T-1], document ids [T], a BlockMask's block
    states)."""
    return _type(t.shape if static else (None,) * len(t.shape), elt)


def _capture_type_slot(slot):
    """What the traced bodies hold for capture `slot`'s type until the
    function's text is made (_fill_capture_types): static or dynamic."""
    return "@capture_type_%d@" % slot


def _fill_capture_types(text, captures, static):
    for slot, (t, elt) in enumerate(captures):
        text = text.replace(_capture_type_slot(slot), _tensor_type(t, elt, static))
    return text


def _trace(fn, kind, captures):
    """The body of `fn` (score_mod or mask_mod) as region text lines whose
    block arguments are the positions followed by %<p>cap0..N."""
    p = "s" if kind == "score" else "m"
    tr = _Tracer(p, captures)
    pos = [_Sym(tr, "%%%s%s" % (p, n), "index") for n in ("b", "h", "q", "kv")]
    if kind == "score":
        score = _Sym(tr, "%sscore" % ("%" + p), "f32")
        out = fn(score, *pos)
        if out is None:
            raise TraceError("score_mod returned None; it must return the new score")
        out = tr.to_f32(tr.lift(out))
    else:
        out = fn(*pos)
        out = tr.lift(out)
        if out.type != "i1":
            raise TraceError("mask_mod must return a boolean (True = keep), got %s" % out.type)
    tr.lines.append("attn.yield %s : %s" % (out.name, out.type))
    args = ([("%sscore" % ("%" + p), "f32")] if kind == "score" else []) + \
           [(s.name, "index") for s in pos]
    return p, args, tr.lines


def _region(kind, traced, captures):
    p, args, lines = traced
    args = args + [("%%%scap%d" % (p, i), _capture_type_slot(i)) for i in range(len(captures))]
    head = "^bb0(%s):" % ", ".join("%s: %s" % a for a in args)
    return "%s {\n    %s\n      %s\n    }" % (kind, head, "\n      ".join(lines))


def _traced_with_names(fn, kind, captures, who="flex_attention"):
    try:
        return _trace(fn, kind, captures)
    except TraceError as e:
        raise TraceError("attn_mlir.%s: cannot trace %s %s: %s"
                         % (who, kind, getattr(fn, "__name__", repr(fn)), e)) from None


class BlockMask:
    """FlexAttention's BlockMask: which (Q block, KV block) tiles a mask
    function keeps partly (kv_num_blocks / kv_indices) and wholly
    (full_kv_num_blocks / full_kv_indices), per batch row and head, plus the
    mask function itself. Made by create_block_mask."""

    def __init__(self, mask_mod, shape, block_size, kv_num_blocks, kv_indices,
                 full_kv_num_blocks, full_kv_indices):
        self.mask_mod = mask_mod
        self.shape = shape
        self.BLOCK_SIZE = block_size
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices

    def block_states(self):
        """The lists as one int32 table [B, H, Q blocks, KV blocks]: 2 where
        the KV block is listed as full, 1 where listed as partial, 0 where
        not listed (never visited). flex_attention's mask function reads
        it."""
        nk = -(-self.shape[3] // self.BLOCK_SIZE[1])
        num = np.asarray(self.kv_num_blocks)
        states = np.zeros(num.shape + (nk + 1,), dtype=np.int32)
        for n, idx, state in ((self.kv_num_blocks, self.kv_indices, 1),
                              (self.full_kv_num_blocks, self.full_kv_indices, 2)):
            n, idx = np.asarray(n), np.asarray(idx)
            if idx.size and (idx.min() < 0 or idx.max() >= nk):
                _fail(ValueError, "a BlockMask lists a KV block outside [0, %d)" % nk)
            # Entries past each row's count land in the extra column nk.
            listed = np.arange(idx.shape[-1]) < n[..., None]
            np.put_along_axis(states, np.where(listed, idx, nk).astype(np.int64), state,
                              axis=-1)
        return states[..., :nk]

    def sparsity(self):
        """The percentage of tiles never visited (FlexAttention's name)."""
        total = np.prod(self.kv_num_blocks.shape) * self.kv_indices.shape[-1]
        visited = int(np.asarray(self.kv_num_blocks).sum() + np.asarray(self.full_kv_num_blocks).sum())
        return 100.0 * (1.0 - visited / max(total, 1))

    def __repr__(self):
        return "BlockMask(shape=%s, BLOCK_SIZE=%s, sparsity=%.2f%%)" % (
            self.shape, self.BLOCK_SIZE, self.sparsity())


def noop_mask(b, h, q_idx, kv_idx):
    """Keeps every key (FlexAttention's noop_mask)."""
    return True


def _combine_masks(name, combine, mask_mods):
    if not mask_mods:
        raise ValueError("%s needs at least one mask function" % name)

    def mask(b, h, q_idx, kv_idx):
        keep = mask_mods[0](b, h, q_idx, kv_idx)
        for m in mask_mods[1:]:
            keep = combine(keep, m(b, h, q_idx, kv_idx))
        return keep
    return mask


def and_masks(*mask_mods):
    """A mask function keeping a key where every one of `mask_mods` does."""
    return _combine_masks("and_masks", lambda x, y: x & y, mask_mods)


def or_masks(*mask_mods):
    """A mask function keeping a key where any one of `mask_mods` does."""
    return _combine_masks("or_masks", lambda x, y: x | y, mask_mods)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128):
    """FlexAttention's create_block_mask: lists, per (b, h, Q block), the KV
    blocks mask_mod(b, h, q_idx, kv_idx) keeps partly and wholly. mask_mod
    is traced as for flex_attention and evaluated by the compiled
    attn.block_mask op (docs/recipes.md), not on a [B, H, Q_LEN, KV_LEN]
    grid in memory. B or H None means 1 (the mask does not depend on it);
    device is ignored (CPU)."""
    if isinstance(BLOCK_SIZE, (tuple, list)):
        bq, bk = BLOCK_SIZE
    else:
        bq = bk = BLOCK_SIZE
    B, H = B or 1, H or 1
    for name, n in (("B", B), ("H", H), ("Q_LEN", Q_LEN), ("KV_LEN", KV_LEN),
                    ("BLOCK_SIZE", bq), ("BLOCK_SIZE", bk)):
        if int(n) != n or n < 1:
            _fail(ValueError, "create_block_mask: %s must be a positive integer, got %r"
                  % (name, n))
    captures = []
    traced = _traced_with_names(mask_mod, "mask", captures, "create_block_mask")
    nq, nk = -(-Q_LEN // bq), -(-KV_LEN // bk)
    counts, lists = _type((B, H, nq), "i32"), _type((B, H, nq, nk), "i32")
    results = ", ".join([counts, lists] * 2)
    ctypes = [_tensor_type(t, ce, True) for t, ce in captures]
    caps = " captures(%s : %s)" % (", ".join("%%c%d" % i for i in range(len(captures))),
                                   ", ".join(ctypes)) if captures else ""
    text = ("func.func @block_mask(%s) -> (%s) {\n  %%kn, %%ki, %%fn, %%fi = attn.block_mask%s "
            "%s {q_len = %d : i64, kv_len = %d : i64, block_size = array<i64: %d, %d>}\n"
            "    : %s\n  return %%kn, %%ki, %%fn, %%fi : %s\n}\n"
            % (", ".join("%%c%d: %s" % (i, t) for i, t in enumerate(ctypes)), results, caps,
               _region("", traced, captures).lstrip(), Q_LEN, KV_LEN, bq, bk, results,
               results))
    text = _fill_capture_types(text, captures, True)
    kernel = CACHE.get(("block_mask", text), lambda: text, "block_mask", "cpu")
    kn, ki, fn, fi = (np.asarray(x) for x in
                      CompiledFunction(kernel, "block_mask")(*(c for c, _ in captures)))
    return BlockMask(mask_mod, (B, H, Q_LEN, KV_LEN), (bq, bk), kn, ki, fn, fi)


def _mask_of_block_mask(block_mask, b, h):
    """FlexAttention's meaning of a BlockMask as one mask function: a key of
    a block listed full is kept, of a block listed partial where the
    block mask's mask_mod keeps it, of any other block never. The lists
    are read as a captured table of block states (BlockMask.block_states),
    which the CPU kernel bounds per tile (docs/recipes.md): it skips the
    tiles of unlisted blocks and does not evaluate mask_mod in full ones."""
    bm, hm = block_mask.shape[:2]
    if bm not in (1, b) or hm not in (1, h):
        _fail(ValueError, "block_mask was made for B, H = %s, the call has %s"
              % ((bm, hm), (b, h)))
    states = block_mask.block_states()
    torch = _arrays._torch()
    if torch is not None:
        states = torch.from_numpy(states)  # the autograd path saves tensors
    bq, bk = block_mask.BLOCK_SIZE
    inner = block_mask.mask_mod

    def mask(bi, hi, q_idx, kv_idx):
        tr = q_idx.tr
        s = tr.read_capture(states, (bi if bm > 1 else 0, hi if hm > 1 else 0,
                                     q_idx // bq, kv_idx // bk))
        return (s == 2) | ((s == 1) & inner(bi, hi, q_idx, kv_idx))
    return mask


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, *, mask_mod=None, threads=0):
    """torch.nn.attention.flex_attention.flex_attention on CPU torch tensors or
    NumPy arrays [B, H, L, E] (float32, float16, bfloat16): softmax over the
    keys of score_mod(scale·q·kᵀ, b, h, q_idx, kv_idx) with the keys
    block_mask.mask_mod (or mask_mod) drops, times V. See the module doc for
    where it differs from PyTorch. With return_lse=True, returns (out, lse)
    with lse the float32 [B, H, L] log-sum-exp of each row's scores."""
    if block_mask is not None and mask_mod is not None:
        _fail(ValueError, "pass the mask function once: block_mask or mask_mod")
    shapes = [tuple(_arrays.shape_of(x)) for x in (query, key, value)]
    for name, s in zip(("query", "key", "value"), shapes):
        if len(s) != 4:
            _fail(ValueError, "%s must be [B, H, L, E], got shape %s" % (name, list(s)))
    (b, h, lq, e), (bk, hk, lk, ek), (bv, hv, lv, ev) = shapes
    dt = _arrays.dtype_name(query)
    if dt not in ("float32", "float16", "bfloat16"):
        _fail(TypeError, "query must be float32, float16 or bfloat16, got %s" % dt)
    for name, x in (("key", key), ("value", value)):
        if _arrays.dtype_name(x) != dt:
            _fail(TypeError, "%s has dtype %s, query %s" % (name, _arrays.dtype_name(x), dt))
    if (bk, ek) != (b, e) or (bv, hv, lv) != (b, hk, lk):
        _fail(ValueError, "shapes do not fit: query %s, key %s, value %s"
              % (list(shapes[0]), list(shapes[1]), list(shapes[2])))
    if hk != h and (not enable_gqa or h % hk):
        _fail(ValueError, "query has %d heads and key %d: pass enable_gqa=True (and heads "
              "divisible by key heads) for grouped-query attention" % (h, hk))
    if block_mask is not None and tuple(block_mask.shape[2:]) != (lq, lk):
        _fail(ValueError, "block_mask was made for Q_LEN, KV_LEN = %s, the call has %s"
              % (tuple(block_mask.shape[2:]), (lq, lk)))
    if block_mask is not None:
        mask_mod = _mask_of_block_mask(block_mask, b, h)
    scale = 1.0 / math.sqrt(e) if scale is None else float(scale)

    captures = []
    regions = []
    if score_mod is not None:
        regions.append(("score_mod", _traced_with_names(score_mod, "score", captures)))
    if mask_mod is not None:
        regions.append(("mask_mod", _traced_with_names(mask_mod, "mask", captures)))
    elt = _MLIR_OF_DTYPE[dt]
    # For the backward: a captured tensor that requires grad gets its
    # gradient (a learned bias table); the others are constants
    # (attn.no_grad).
    learned = [_arrays.requires_grad(c) for c, _ in captures]
    caps = " captures(%s)" % ", ".join("%%c%d" % i for i in range(len(captures))) \
        if captures else ""
    body = " ".join(_region(kind, traced, captures) for kind, traced in regions)

    def function_text(static, grad=False):
        """@flex with every dim static, or with batch and key length
        dynamic and the query length too unless it is a decode's few rows
        (the kernel then groups the query heads of a K/V head into one
        tile, which needs Lq static), so that one kernel per traced body,
        head counts, head dims and dtype serves every length. The
        backward's source is static: its results' shapes must be known
        before the call."""
        dq = lq if static or lq <= _STATIC_LQ_MAX else None
        db, dk = (b, lk) if static else (None, None)
        tq, tk = _type((db, h, dq, e), elt), _type((db, hk, dk, e), elt)
        tv, to = _type((db, hk, dk, ev), elt), _type((db, h, dq, ev), elt)
        ctypes = [_tensor_type(t, ce, static) for t, ce in captures]
        args = ["%%q: %s" % tq, "%%k: %s" % tk, "%%v: %s" % tv] + \
            ["%%c%d: %s%s" % (i, t, " {attn.no_grad}" if grad and not learned[i] else "")
             for i, t in enumerate(ctypes)]
        operand_types = ", ".join([tq, tk, tv] + ctypes)
        if return_lse:
            # attn.sdpa_partial: the output (f32) and each row's natural-log
            # log-sum-exp (-inf for a row that keeps no key), as
            # FlexAttention's.
            to32, tl = _type((db, h, dq, ev), "f32"), _type((db, h, dq), "f32")
            text = ("func.func @flex(%s) -> (%s, %s) {\n  %%o, %%lse = attn.sdpa_partial "
                    "%%q, %%k, %%v%s {scale = %s : f32} %s\n    : (%s) -> (%s, %s)\n"
                    "  return %%o, %%lse : %s, %s\n}\n"
                    % (", ".join(args), to32, tl, caps, _float_literal(np.float32(scale)),
                       body, operand_types, to32, tl, to32, tl))
        else:
            text = ("func.func @flex(%s) -> %s {\n  %%o = attn.sdpa %%q, %%k, %%v%s "
                    "{scale = %s : f32} %s\n    : (%s) -> %s\n  return %%o : %s\n}\n"
                    % (", ".join(args), to, caps, _float_literal(np.float32(scale)), body,
                       operand_types, to, to))
        return _fill_capture_types(text, captures, static)

    # torch.compile's "automatic dynamic shapes": the first shape a body
    # is called with gets a kernel specialised to it (static dims, a few
    # per cent faster: bench/NOTES.md), a second shape the dynamic kernel
    # that then serves every shape but the first.
    dynamic_text, static_text = function_text(static=False), function_text(static=True)
    first_key = (dynamic_text, threads)
    first = _FIRST_SHAPE.setdefault(first_key, static_text)
    text = static_text if first == static_text else dynamic_text
    try:
        kernel = CACHE.get(("flex", text, threads), lambda: text, "flex", "cpu", threads)
    except Exception:
        # A shape that does not compile (an empty capture) leaves the
        # static kernel to the next shape.
        if text is static_text and _FIRST_SHAPE.get(first_key) is static_text:
            del _FIRST_SHAPE[first_key]
        raise
    fn = CompiledFunction(kernel, "flex")
    cap_bufs = [c for c, _ in captures]
    if _arrays.records_grad(query, key, value, *cap_bufs):
        # The backward: attn-differentiate's @flex_grad (the score
        # function's derivative from its traced body, the learned
        # captures' gradients scattered from the scores' adjoints: the
        # reference route, which forms the [B, H, L, S] scores, where a
        # capture is learned, the fused backward otherwise;
        # docs/training.md).
        if return_lse:
            _fail(ValueError, "return_lse=True with a query, key, value or captured tensor "
                  "that requires grad is not supported yet (detach them, or drop return_lse)")
        grad_source = function_text(static=True, grad=True)

        def grad_text():
            from . import _attn_mlir
            return _attn_mlir.differentiate(grad_source, "flex")
        grad = CACHE.get(("flex_grad", grad_source, threads), grad_text, "flex_grad", "cpu",
                         threads)
        return _flex_function().apply(query, key, value,
                                      (fn, CompiledFunction(grad, "flex_grad"), learned),
                                      *cap_bufs)
    if not return_lse:
        return fn(query, key, value, *cap_bufs)
    out, lse = fn(query, key, value, *cap_bufs)
    return _arrays.cast(out, dt, "the output"), lse


_FLEX_FUNCTION = []


def _flex_function():
    """torch.autograd.Function for flex_attention, defined on first use:
    the forward runs the fused @flex kernel, the backward @flex_grad
    (which recomputes the forward's probabilities)."""
    if _FLEX_FUNCTION:
        return _FLEX_FUNCTION[0]
    torch = _arrays._torch()

    class FlexAttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, query, key, value, plan, *caps):
            forward_fn = plan[0]
            ctx.plan = plan
            ctx.save_for_backward(query, key, value, *caps)
            return forward_fn(query.detach(), key.detach(), value.detach(),
                              *(c.detach() for c in caps))

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad_out):
            _, grad_fn, learned = ctx.plan
            q, k, v, *caps = (t.detach() for t in ctx.saved_tensors)
            grads = list(grad_fn(q, k, v, *caps, grad_out.detach().to(q.dtype).contiguous()))
            # @flex_grad returns dQ, dK, dV, then one gradient per learned
            # capture, in order.
            dqkv, dcaps = grads[:3], iter(grads[3:])
            cap_grads = [next(dcaps) if is_learned else None for is_learned in learned]
            need = ctx.needs_input_grad
            return (tuple(g if n else None for g, n in zip(dqkv, need[:3])) + (None,)
                    + tuple(g if n else None for g, n in zip(cap_grads, need[4:])))

    _FLEX_FUNCTION.append(FlexAttentionFunction)
    return FlexAttentionFunction
