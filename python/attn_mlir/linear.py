"""attn_mlir.linear: torch.nn.functional.linear, compiled, and differentiable.

``linear(input, weight, bias=None)`` computes ``input @ weight.T + bias`` as
one ``attn.project`` (the cpu pipeline's packed-panel GEMM, f32
accumulation). With torch tensors that require grad it is a
``torch.autograd.Function`` whose backward is two more ``attn.project``
GEMMs:

- dX = dY · W: ``attn.project`` of dY with W read as ``[In, Out]``
  (``layout = #attn.layout<in_out>``), no copy of W;
- dW = dYᵀ · X: ``attn.project`` of dYᵀ (a transposed copy) with X read as
  ``[In, Out]``; the kernel needs its reduction width (the rows N) static,
  so N is rounded up to a multiple of ``_ROWS_ROUND`` (zero rows add
  nothing) and one kernel serves every N of a bucket;
- db = the column sums of dY (torch).

Kernels are cached like the attention kernels: the forward and dX once per
(dtype, In, Out, bias), dW once per (dtype, In, Out, rounded N).
"""

import math

from . import _arrays
from ._cache import CACHE

# float64 is for checking (gradcheck): the reference lowering, in f64.
_FLOAT_TYPES = ("float32", "float16", "bfloat16", "float64")
_IR_TYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64"}
# dW's kernels: one per multiple of this many rows.
_ROWS_ROUND = 64


def _fail(exc, msg):
    raise exc("attn_mlir.linear: " + msg)


def _project_text(rows, width, out, elt, layout, bias):
    """@project(x [rows, width], w, [b]) -> [rows, out]; rows -1 = dynamic."""
    r = "?" if rows < 0 else str(rows)
    tx, ty = "tensor<%sx%dx%s>" % (r, width, elt), "tensor<%sx%dx%s>" % (r, out, elt)
    tw = "tensor<%dx%dx%s>" % (((out, width) if layout == "out_in" else (width, out)) + (elt,))
    args = "%%x: %s, %%w: %s" % (tx, tw)
    operands, types = "%x, %w", "%s, %s" % (tx, tw)
    if bias:
        tb = "tensor<%dx%s>" % (out, elt)
        args += ", %%b: %s" % tb
        operands += ", %b"
        types += ", " + tb
    return ("func.func @project(%s) -> %s {\n"
            "  %%y = attn.project %s {layout = #attn.layout<%s>} : (%s) -> %s\n"
            "  return %%y : %s\n}\n" % (args, ty, operands, layout, types, ty, ty))


def _kernel(rows, width, out, dtype, layout, bias, pipeline):
    key = ("project", dtype, rows, width, out, layout, bias, pipeline)
    return CACHE.get(key, lambda: _project_text(rows, width, out, _IR_TYPES[dtype], layout, bias),
                     "project", pipeline)


def _project(x2, w, b, out, dtype, layout, pipeline, ref):
    """y [N, out] = x2 [N, width] against w (out_in or in_out), + b; a new
    array or tensor of `ref`'s kind."""
    n, width = x2.shape
    kernel = _kernel(-1, width, out, dtype, layout, b is not None, pipeline)
    y, view = _arrays.empty_like_kind(ref, (n, out), dtype)
    inputs = [x2, w] + ([b] if b is not None else [])
    kernel.call(inputs, [view])
    return y


def _check(input, weight, bias):
    names = [_arrays.dtype_name(x) for x in (input, weight)]
    if names[0] not in _FLOAT_TYPES:
        _fail(TypeError, "input has dtype %s; attn_mlir takes float32, float16, bfloat16 "
              "or float64"
              % names[0])
    if names[1] != names[0]:
        _fail(TypeError, "weight has dtype %s, input %s" % (names[1], names[0]))
    xs, ws = _arrays.shape_of(input), _arrays.shape_of(weight)
    if len(xs) < 1:
        _fail(ValueError, "input must have rank >= 1 ([..., in_features]), got a scalar")
    if len(ws) != 2:
        _fail(ValueError, "weight must be [out_features, in_features], got shape %s"
              % list(ws))
    if ws[1] != xs[-1]:
        _fail(ValueError, "input has %d features (last dim), weight takes %d (dim 1)"
              % (xs[-1], ws[1]))
    if bias is not None:
        if _arrays.dtype_name(bias) != names[0]:
            _fail(TypeError, "bias has dtype %s, input %s" % (_arrays.dtype_name(bias), names[0]))
        if _arrays.shape_of(bias) != (ws[0],):
            _fail(ValueError, "bias must be [%d] (out_features), got shape %s"
                  % (ws[0], list(_arrays.shape_of(bias))))
    return names[0], xs, ws


def linear(input, weight, bias=None, *, pipeline="cpu"):
    """input @ weight.T + bias, as ``torch.nn.functional.linear``.

    input [..., in_features], weight [out_features, in_features], bias
    [out_features] or None; NumPy arrays or CPU torch tensors of one dtype
    (float32, float16; bfloat16 for torch; float64 for checking, computed in
    float64), accumulated in float32. Returns
    [..., out_features] of the input's kind. With torch tensors and grad
    mode on, differentiable with respect to input, weight and bias (the
    backward's GEMMs compiled too; see the module docstring)."""
    dtype, xs, ws = _check(input, weight, bias)
    if _arrays.records_grad(input, weight, bias):
        return _linear_function().apply(input, weight, bias, pipeline)
    return _forward(input, weight, bias, dtype, xs, ws, pipeline)


def _forward(input, weight, bias, dtype, xs, ws, pipeline):
    n = math.prod(xs[:-1])
    x2 = _arrays.as_buffer(input, "input").reshape(n, xs[-1])
    w = _arrays.as_buffer(weight, "weight")
    b = _arrays.as_buffer(bias, "bias") if bias is not None else None
    y = _project(x2, w, b, ws[0], dtype, "out_in", pipeline, input)
    return y.reshape(tuple(xs[:-1]) + (ws[0],))


def _weight_grad(dy2, x2, dtype, pipeline):
    """dW [out, in] = dy2ᵀ · x2 over the N rows, N rounded up to a multiple
    of _ROWS_ROUND with zero rows (one kernel per bucket)."""
    torch = _arrays._torch()
    n, out = dy2.shape
    width = x2.shape[1]
    if n == 0:
        return torch.zeros((out, width), dtype=getattr(torch, dtype))
    rows = -(-n // _ROWS_ROUND) * _ROWS_ROUND
    dyt = torch.zeros((out, rows), dtype=dy2.dtype)
    dyt[:, :n] = dy2.t()
    if rows != n:
        xp = torch.zeros((rows, width), dtype=x2.dtype)
        xp[:n] = x2
    else:
        xp = x2
    kernel = _kernel(out, rows, width, dtype, "in_out", False, pipeline)
    dw, view = _arrays.empty_like_kind(dy2, (out, width), dtype)
    kernel.call([_arrays.as_buffer(dyt, "grad_output"), _arrays.as_buffer(xp, "input")],
                [view])
    return dw


_LINEAR_FUNCTION = []


def _linear_function():
    """torch.autograd.Function for linear, defined on first use (torch is
    imported only by callers that pass tensors)."""
    if _LINEAR_FUNCTION:
        return _LINEAR_FUNCTION[0]
    torch = _arrays._torch()

    class Linear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias, pipeline):
            dtype, xs, ws = _check(input, weight, bias)
            ctx.dims = (dtype, xs, ws, pipeline)
            ctx.save_for_backward(input, weight)
            return _forward(input, weight, bias, dtype, xs, ws, pipeline)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad_out):
            dtype, xs, ws, pipeline = ctx.dims
            input, weight = ctx.saved_tensors
            out, width = ws
            n = math.prod(xs[:-1])
            dy2 = grad_out.detach().to(input.dtype).reshape(n, out)
            need_x, need_w, need_b = ctx.needs_input_grad[:3]
            dx = dw = db = None
            if need_x:
                # dX = dY · W: W [out, in] read as [In = out, Out = in].
                dx = _project(_arrays.as_buffer(dy2, "grad_output"),
                              _arrays.as_buffer(weight, "weight"), None, width, dtype,
                              "in_out", pipeline, input).reshape(xs)
            if need_w:
                x2 = input.detach().reshape(n, width)
                dw = _weight_grad(dy2, x2, dtype, pipeline)
            if need_b:
                acc = torch.float64 if dy2.dtype == torch.float64 else torch.float32
                db = dy2.sum(0, dtype=acc).to(input.dtype)
            return dx, dw, db, None

    _LINEAR_FUNCTION.append(Linear)
    return Linear
