"""NumPy arrays and torch tensors as buffers for the native kernels.

Every operand becomes a NumPy array that shares memory with what the caller
passed (no copy) whenever that is possible:

- a NumPy array is used as it is (any non-negative strides: the runtime reads
  strided inputs through their strides, packing them into scratch each
  thread keeps between calls); negative or unaligned strides are copied
  first;
- a CPU torch tensor is viewed with ``tensor.detach().numpy()``; bfloat16,
  which NumPy lacks, travels as its 16-bit patterns
  (``tensor.view(torch.int16)``), which is exactly attn's BF16 layout, and
  float8_e4m3fn as its codes (``tensor.view(torch.uint8)``);
- anything else NumPy can read (lists, scalars) goes through
  ``numpy.asarray``.

Outputs are allocated as the kind of the query: a NumPy array, or a torch
tensor of the query's dtype.
"""

import sys

import numpy as np

# Element type names shared with the native module.
_NUMPY_TYPES = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float16): "float16",
    np.dtype(np.float64): "float64",
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "int8",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
}
_NUMPY_OF = {v: k for k, v in _NUMPY_TYPES.items()}


def _torch():
    return sys.modules.get("torch")


class _TorchTypes(dict):
    """torch dtype -> name, filled on first use (torch is never imported
    here: a torch tensor means torch is loaded)."""

    def get(self, dtype):
        if not self:
            torch = _torch()
            self.update({torch.float32: "float32", torch.float16: "float16",
                         torch.bfloat16: "bfloat16", torch.float64: "float64",
                         torch.bool: "bool",
                         torch.int8: "int8", torch.int32: "int32", torch.int64: "int64"})
        return dict.get(self, dtype)


_TORCH_TYPES = _TorchTypes()


def is_torch(x):
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def requires_grad(x):
    """Whether `x` is a torch tensor that requires grad."""
    return is_torch(x) and x.requires_grad


def records_grad(*xs):
    """Whether torch autograd records a call on `xs`: grad mode on and a
    torch tensor among them that requires grad (None entries allowed)."""
    torch = _torch()
    return torch is not None and torch.is_grad_enabled() and any(map(requires_grad, xs))


def dtype_name(x):
    """'float32', 'float16', 'bfloat16', 'bool', 'int32', 'int64', or the
    array's own dtype name for anything else (which the callers refuse)."""
    if is_torch(x):
        name = _TORCH_TYPES.get(x.dtype)
        return name if name else str(x.dtype).replace("torch.", "")
    dt = x.dtype if isinstance(x, np.ndarray) else np.asarray(x).dtype
    name = _NUMPY_TYPES.get(dt)
    return name if name else str(dt)


def shape_of(x):
    return tuple(int(d) for d in x.shape)


def as_buffer(x, what):
    """A NumPy array sharing memory with `x` where possible (see above)."""
    if is_torch(x):
        torch = _torch()
        if x.device.type != "cpu":
            raise ValueError(
                "attn_mlir: %s is on %s; attn_mlir runs on the CPU (move it with .cpu())"
                % (what, x.device))
        if x.is_sparse:
            raise TypeError("attn_mlir: %s is a sparse tensor; pass a dense one" % what)
        x = x.detach()
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
        if str(x.dtype) == "torch.float8_e4m3fn":  # its codes (attn's F8E4M3)
            x = x.view(torch.uint8)
        if x.dtype == torch.bfloat16:
            if x.dim() == 0:
                x = x.reshape(1)
                arr = x.view(torch.int16).numpy().reshape(())
            else:
                arr = x.view(torch.int16).numpy()
        else:
            arr = x.numpy()
    else:
        arr = np.asarray(x)
        if str(arr.dtype) == "float8_e4m3fn":  # ml_dtypes: its codes
            arr = arr.view(np.uint8)
    if any(s < 0 or s % arr.itemsize for s in arr.strides):
        arr = np.ascontiguousarray(arr)
    return arr


def cast(x, name, what):
    """`x` as element type `name` (a copy when it differs), same kind."""
    if dtype_name(x) == name:
        return x
    if is_torch(x):
        torch = _torch()
        return x.detach().to(getattr(torch, name))
    if name == "bfloat16":
        raise TypeError("attn_mlir: %s: NumPy has no bfloat16; pass torch tensors" % what)
    return np.asarray(x).astype(_NUMPY_OF[name])


def empty_like_kind(ref, shape, name):
    """A new output of `shape` and element type `name`, of the kind of `ref`
    (torch or NumPy), and the NumPy view the kernel writes into."""
    if is_torch(ref):
        torch = _torch()
        out = torch.empty(shape, dtype=getattr(torch, name))
        if name == "bfloat16":
            view = out.view(torch.int16).numpy() if len(shape) else None
            if view is None:
                out1 = out.reshape(1)
                view = out1.view(torch.int16).numpy().reshape(())
            return out, view
        return out, out.numpy()
    out = np.empty(shape, dtype=_NUMPY_OF[name])
    return out, out
