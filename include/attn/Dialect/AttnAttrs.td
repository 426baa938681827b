//===- AttnAttrs.td - attn attributes and enums ------------*- tablegen -*-===//
#ifndef ATTN_ATTRS_TD
#define ATTN_ATTRS_TD

include "AttnDialect.td"
include "mlir/IR/EnumAttr.td"

// Which keys a query row may see under a causal mask.
def Attn_CausalKind : I32EnumAttr<"CausalKind", "causal mask alignment", [
    // PyTorch `is_causal`, the seeds' triu(diagonal=1): key j masked when j > i.
    I32EnumAttrCase<"top_left", 0>,
    // FlashAttention >= 2.1: key j masked when j > i + Tk - Tq.
    I32EnumAttrCase<"bottom_right", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
def Attn_CausalKindAttr : EnumAttr<Attn_Dialect, Attn_CausalKind, "causal"> {
  let summary = "causal mask alignment, written #attn.causal<top_left> "
                "(PyTorch's is_causal=True) or #attn.causal<bottom_right>";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `#attn.causal<top_left>` / `#attn.causal<bottom_right>`: the causal
    mask kind of `attn.mask`, `attn.sdpa` and `attn.mha`. For score row `i`
    (`0 ≤ i < Tq`) and key `j` (`0 ≤ j < Tk`):

    - `top_left`: key `j` is masked (set to `-inf`) when `j > i`. This is
      PyTorch's `is_causal=True`, i.e. `torch.ones(Tq,Tk).tril(0)` as the
      keep set, the seeds' `triu(diagonal=1)` as the masked set.
    - `bottom_right`: key `j` is masked when `j > i + Tk - Tq`. This is
      FlashAttention ≥ 2.1 and `torch.nn.attention.bias.causal_lower_right`;
      it is what KV-cache decoding needs (`Tq < Tk`: the last query sees
      all keys). When `Tq == Tk` both kinds are the same mask. With
      `Tq > Tk`, `bottom_right` masks rows `i < Tq - Tk` entirely (they
      produce zeros, see `attn.softmax`).

    An op without a `causal` attribute applies no causal mask.
  }];
}

// How a projection weight is stored.
def Attn_WeightLayout : I32EnumAttr<"WeightLayout", "projection weight layout", [
    // nn.Linear: weight is [Out, In], y = x * W^T.
    I32EnumAttrCase<"out_in", 0>,
    // weight is [In, Out], y = x * W.
    I32EnumAttrCase<"in_out", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
def Attn_WeightLayoutAttr : EnumAttr<Attn_Dialect, Attn_WeightLayout, "layout"> {
  let summary = "projection weight layout, written #attn.layout<out_in> "
                "(nn.Linear's [Out,In], the default) or #attn.layout<in_out>";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `#attn.layout<out_in>` / `#attn.layout<in_out>`: how a projection
    weight of `attn.project` or `attn.mha` is stored. `out_in` (the
    **default** of both ops) is `nn.Linear`'s `(d_out, d_in)` weight,
    `y = x·Wᵀ`; `in_out` is `(d_in, d_out)`, `y = x·W`.
  }];
}

// Rotary position embedding pairing.
def Attn_RopeStyle : I32EnumAttr<"RopeStyle", "rotary embedding pairing", [
    // GPT-NeoX / LLaMA / HF apply_rotary_pos_emb: pairs (x[k], x[k+R/2]).
    I32EnumAttrCase<"rotate_half", 0>,
    // GPT-J / RoFormer: pairs (x[2k], x[2k+1]).
    I32EnumAttrCase<"interleaved", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
def Attn_RopeStyleAttr : EnumAttr<Attn_Dialect, Attn_RopeStyle, "rope"> {
  let summary = "rotary pairing, written #attn.rope<rotate_half> (GPT-NeoX, "
                "LLaMA, HF; the default) or #attn.rope<interleaved> (GPT-J)";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `#attn.rope<rotate_half>` / `#attn.rope<interleaved>`: which elements
    of a head vector `attn.rope` rotates together, for `k < R/2`:

    - `rotate_half` (the **default**; GPT-NeoX, LLaMA, Mistral, Qwen,
      Hugging Face `apply_rotary_pos_emb`): the pair `(x[k], x[k + R/2])`.
    - `interleaved` (GPT-J, RoFormer, FlashAttention `interleaved=True`):
      the pair `(x[2k], x[2k + 1])`.
  }];
}

// Where the head dim sits in a paged KV cache (attn.gather_pages).
def Attn_KvLayout : I32EnumAttr<"KvLayout", "paged KV cache layout", [
    // [num_blocks, block_size, Hkv, D]: FlashAttention's and FlashInfer's
    // default, a token's heads side by side.
    I32EnumAttrCase<"nhd", 0>,
    // [num_blocks, Hkv, block_size, D]: vLLM's CPU backend, FlashInfer's
    // "HND", a head's tokens side by side.
    I32EnumAttrCase<"hnd", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
def Attn_KvLayoutAttr : EnumAttr<Attn_Dialect, Attn_KvLayout, "kv_layout"> {
  let summary = "paged cache layout, written #attn.kv_layout<nhd> (the default) "
                "or #attn.kv_layout<hnd>";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `#attn.kv_layout<nhd>` / `#attn.kv_layout<hnd>`: the dims of a paged
    KV cache that `attn.gather_pages` reads (FlashInfer's names).

    - `nhd` (the **default**; FlashAttention's `block_table` caches,
      FlashInfer's default): `[num_blocks, block_size, Hkv, D]`.
    - `hnd` (vLLM's CPU backend): `[num_blocks, Hkv, block_size, D]`. One
      head's rows of a block are contiguous, so a kernel that reads one
      K/V head at a time streams them; with `nhd` it reads `D` of every
      `Hkv·D` elements (bench/NOTES.md, 2026-12-04: Paged decode).
  }];
}

// How a sequence is split over the ranks of a ring (attn-shard).
def Attn_RingLayout : I32EnumAttr<"RingLayout", "sequence layout over ring ranks", [
    // Rank r holds positions [r·T/P, (r+1)·T/P).
    I32EnumAttrCase<"contiguous", 0>,
    // Rank r holds positions r, r + P, r + 2P, ...
    I32EnumAttrCase<"striped", 1>,
    // 2P chunks of T/(2P); rank r holds chunks r and 2P-1-r.
    I32EnumAttrCase<"zigzag", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
def Attn_RingLayoutAttr : EnumAttr<Attn_Dialect, Attn_RingLayout, "ring"> {
  let summary = "sequence sharding over a ring of ranks, written "
                "#attn.ring<contiguous|striped|zigzag>";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `#attn.ring<contiguous>` / `#attn.ring<striped>` / `#attn.ring<zigzag>`:
    attached to an `attn.sdpa` as the discardable attribute `attn.ring`, it
    says that the sdpa's sequence dims (Tq of the query, the mask and the
    result; Tk of the key and the value) are sharded over the P ranks of an
    MPI communicator, and how (`attn-shard` rewrites it into ring
    attention). With T positions and P ranks, rank `r` holds:

    - `contiguous`: positions `[r·T/P, (r+1)·T/P)` (T a multiple of P);
    - `striped`: positions `r, r+P, r+2P, ...` (T a multiple of P);
    - `zigzag`: chunks `r` and `2P-1-r` of `2P` chunks of `T/(2P)`
      positions (T a multiple of 2P): with a causal mask every rank gets
      the same work, where `contiguous` gives the last rank about twice
      the average.

    `attn.ring = unit` (no layout) means `zigzag` for a causal sdpa and
    `contiguous` otherwise.
  }];
}

// A sliding (local) attention window.
def Attn_WindowAttr : AttrDef<Attn_Dialect, "Window"> {
  let mnemonic = "window";
  let summary = "sliding window, written #attn.window<left = L, right = R> "
                "(either bound may be left out: unbounded)";
  let description = [{
    `#attn.window<left = L, right = R[, align = top_left|bottom_right]>`:
    query row `i` sees key `j` only when

    ```
    d(i) - L <= j <= d(i) + R,   d(i) = i             (align = top_left)
                                 d(i) = i + Tk - Tq   (align = bottom_right)
    ```

    - `left`, `right`: non-negative integers; a bound that is left out is
      unbounded (`#attn.window<left = 4096>` sees every later key unless a
      causal mask also applies). `#attn.window<>` is no window at all.
    - `align`: the diagonal `d(i)`. On an op with a `causal` attribute the
      window uses the causal kind's diagonal (writing a different `align`
      is an error); without one it defaults to `bottom_right`, as in
      FlashAttention's `window_size`. When `Tq == Tk` both are the same.
    - With key lengths, `Tk` in `d(i)` is the batch row's key length.
    - Combined with `causal` the kept set is the intersection: causal is a
      window with `right = 0` (Mistral's sliding window is
      `causal = #attn.causal<bottom_right>, window = #attn.window<left = 4095>`,
      i.e. each query sees itself and the 4095 keys before it).

    The fused kernels never visit a key tile wholly outside the window:
    work is proportional to `T·(L + R + 1)`, not `T²`.

    Equivalents: FlashAttention-2 `window_size=(L, R)` (with `-1` for
    unbounded), Mistral/HF `sliding_window = L + 1`.
  }];
  let parameters = (ins
    OptionalParameter<"std::optional<int64_t>">:$left,
    OptionalParameter<"std::optional<int64_t>">:$right,
    OptionalParameter<"std::optional<::mlir::attn::CausalKind>">:$align);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when neither side is bounded (the window keeps every key).
    bool isUnbounded() const { return !getLeft() && !getRight(); }
  }];
}

// An f32 attribute whose constraint message shows how to write one.
def Attn_F32Attr : FloatAttrBase<F32, "32-bit float attribute, written with "
    "its type (e.g. `0.125 : f32`; a bare `0.125` is an f64)">;

#endif // ATTN_ATTRS_TD
