"""attn_mlir.compile: attn IR text -> a callable on arrays."""

import re

from . import _arrays
from . import _attn_mlir


class CompiledFunction:
    """One function of attn IR, compiled (attn::Kernel::compile). Call it
    with one array per argument (NumPy arrays or CPU torch tensors of the
    argument's element type; the shapes must fit its static sizes); it
    returns the result (a tuple for several), of the first argument's kind.
    Thread-safe; the GIL is released while the compiled code runs."""

    def __init__(self, kernel, entry):
        self._kernel = kernel
        self.entry = entry

    @property
    def inputs(self):
        """[(element type, shape)] of the arguments; -1 = dynamic."""
        return self._kernel.inputs

    @property
    def outputs(self):
        """[(element type, shape)] of the results; -1 = dynamic."""
        return self._kernel.outputs

    @property
    def signature(self):
        """e.g. '(float32[1,8,?,64], ...) -> (float32[1,8,?,64])'."""
        return self._kernel.signature

    @property
    def mlir(self):
        return self._kernel.mlir

    def __repr__(self):
        return "<attn_mlir.CompiledFunction @%s %s>" % (self.entry, self.signature)

    def __call__(self, *args):
        want = self._kernel.inputs
        if len(args) != len(want):
            raise TypeError("attn_mlir: @%s takes %d arguments %s, got %d"
                            % (self.entry, len(want), self.signature, len(args)))
        bufs = []
        for i, (a, (name, shape)) in enumerate(zip(args, want)):
            got = _arrays.dtype_name(a)
            # fp8 arguments also take uint8 arrays of their codes.
            if got != name and not (name == "float8_e4m3fn" and got == "uint8"):
                raise TypeError("attn_mlir: @%s argument #%d has dtype %s, expected %s"
                                % (self.entry, i, got, _spec_str(name, shape)))
            bufs.append(_arrays.as_buffer(a, "argument #%d" % i))
        shapes = self._kernel.result_shapes([list(b.shape) for b in bufs])
        ref = args[0] if args else None
        outs, views = [], []
        for (name, _), shape in zip(self._kernel.outputs, shapes):
            o, v = _arrays.empty_like_kind(ref, tuple(shape), name)
            outs.append(o)
            views.append(v)
        self._kernel.call(bufs, views)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _spec_str(name, shape):
    return "%s[%s]" % (name, ",".join("?" if d < 0 else str(d) for d in shape))


def _functions(text):
    return re.findall(r"func\.func\s+(?:public\s+|private\s+)?@([\w$.-]+)", text)


def compile(mlir_text, pipeline="cpu", entry=None, *, threads=0, tile_q=None,
            tile_k=None, opt_level=3, attn_raise=False):
    """Compiles function `entry` of `mlir_text` (attn, func, arith, tensor IR)
    through `pipeline`: 'cpu' (attn-cpu-pipeline: fused, tiled, vectorised,
    OpenMP, `threads` workers, 0 = one per core, `tile_q`/`tile_k` query rows
    and keys per tile) or 'reference' (unfused). `entry` may be left out
    when the text has one function. `attn_raise=True` first raises attention
    written as generic linalg (torch-mlir's output) to attn.sdpa (the
    attn-raise pass, docs/raise.md); a string passes its options
    ("zero-empty-rows=1"). Errors (IR that does not parse or verify, with
    the verifier's messages; a failed lowering; a bad attn-raise option)
    raise attn_mlir.AttnError."""
    if not isinstance(mlir_text, str):
        raise TypeError("attn_mlir.compile: mlir_text must be a str of attn IR, got %s"
                        % type(mlir_text).__name__)
    if entry is None:
        names = _functions(mlir_text)
        if len(names) != 1:
            raise ValueError("attn_mlir.compile: the IR has %s; name one with entry=..."
                             % ("no func.func" if not names else
                                "%d functions (%s)" % (len(names),
                                                       ", ".join("@" + n for n in names))))
        entry = names[0]
    if attn_raise is True:
        raise_options = ""
    elif attn_raise is False or attn_raise is None:
        raise_options = None
    elif isinstance(attn_raise, str):
        raise_options = attn_raise
    else:
        raise TypeError("attn_mlir.compile: attn_raise must be a bool or a str of "
                        "attn-raise options, got %s" % type(attn_raise).__name__)
    kernel = _attn_mlir.compile(mlir_text, entry, pipeline, threads, tile_q, tile_k,
                                opt_level, raise_options)
    return CompiledFunction(kernel, entry)
