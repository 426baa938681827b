/*===- attn-c/Dialect.h - C API for the attn dialect -------------*- C -*-===*\
|*                                                                            *|
|* The attn dialect from C, following the upstream MLIR C API conventions:   *|
|* a dialect handle, attribute constructors and accessors, and builders for  *|
|* attn.sdpa and attn.mha (with the wave-2 features: softcap, sliding       *|
|* window, ALiBi slopes, key lengths, RoPE) that infer the result type. Use  *|
|* together with "mlir-c/IR.h" and "attn-c/Passes.h".                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef ATTN_C_DIALECT_H
#define ATTN_C_DIALECT_H

#include "mlir-c/IR.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__attn__(): insert into a registry with
 * mlirDialectHandleInsertDialect, or load with mlirDialectHandleLoadDialect. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Attn, attn);

/*===--------------------------------------------------------------------===*/
/* Attributes                                                               */
/*===--------------------------------------------------------------------===*/

/* The causal alignment of attn.sdpa/attn.mha (#attn.causal<...>). */
typedef enum AttnCausal {
  AttnCausalNone = 0,       /* no causal mask (no attribute) */
  AttnCausalTopLeft = 1,    /* key j visible to query i iff j <= i */
  AttnCausalBottomRight = 2 /* key j visible iff j <= i + Tk - Tq */
} AttnCausal;

/* The layout of attn.project/attn.mha weights (#attn.layout<...>). */
typedef enum AttnWeightLayout {
  AttnWeightLayoutOutIn = 0, /* [Out, In], nn.Linear's weight */
  AttnWeightLayoutInOut = 1  /* [In, Out] */
} AttnWeightLayout;

/* The pairing of attn.rope and of attn.mha's rope_style (#attn.rope<...>). */
typedef enum AttnRopeStyle {
  AttnRopeStyleNone = 0,        /* not given: rotate_half where tables are */
  AttnRopeStyleRotateHalf = 1,  /* GPT-NeoX/LLaMA/HF: pairs (x[k], x[k+R/2]) */
  AttnRopeStyleInterleaved = 2  /* GPT-J: pairs (x[2k], x[2k+1]) */
} AttnRopeStyle;

/* #attn.causal<top_left|bottom_right>; a null attribute for AttnCausalNone
 * or a value outside the enum. */
MLIR_CAPI_EXPORTED MlirAttribute attnCausalAttrGet(MlirContext ctx,
                                                   AttnCausal kind);
MLIR_CAPI_EXPORTED bool attnAttributeIsACausal(MlirAttribute attr);
/* The kind of a #attn.causal attribute; AttnCausalNone for any other. */
MLIR_CAPI_EXPORTED AttnCausal attnCausalAttrGetValue(MlirAttribute attr);

/* #attn.layout<out_in|in_out>; null for a value outside the enum. */
MLIR_CAPI_EXPORTED MlirAttribute attnLayoutAttrGet(MlirContext ctx,
                                                   AttnWeightLayout layout);
MLIR_CAPI_EXPORTED bool attnAttributeIsALayout(MlirAttribute attr);
/* The layout of a #attn.layout attribute; AttnWeightLayoutOutIn for any
 * other attribute. */
MLIR_CAPI_EXPORTED AttnWeightLayout attnLayoutAttrGetValue(MlirAttribute attr);

/* #attn.window<left = L, right = R, align = ...>: query row i sees key j iff
 * d(i) - L <= j <= d(i) + R. A bound of -1 is unbounded (left out of the
 * attribute); `align` AttnCausalNone leaves the diagonal to the op (its
 * causal kind, else bottom_right). Both bounds -1 and no align is
 * #attn.window<> (no window). Returns a null attribute, after a diagnostic
 * to the context's handlers, for a bound below -1 or an align outside the
 * enum. */
MLIR_CAPI_EXPORTED MlirAttribute attnWindowAttrGet(MlirContext ctx,
                                                   int64_t left, int64_t right,
                                                   AttnCausal align);
MLIR_CAPI_EXPORTED bool attnAttributeIsAWindow(MlirAttribute attr);
/* The bounds of a #attn.window attribute: -1 when unbounded, or for any
 * other attribute. */
MLIR_CAPI_EXPORTED int64_t attnWindowAttrGetLeft(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t attnWindowAttrGetRight(MlirAttribute attr);
/* The written align of a #attn.window attribute; AttnCausalNone when it is
 * not given, or for any other attribute. */
MLIR_CAPI_EXPORTED AttnCausal attnWindowAttrGetAlign(MlirAttribute attr);

/* #attn.rope<rotate_half|interleaved>; null for AttnRopeStyleNone or a value
 * outside the enum. */
MLIR_CAPI_EXPORTED MlirAttribute attnRopeAttrGet(MlirContext ctx,
                                                 AttnRopeStyle style);
MLIR_CAPI_EXPORTED bool attnAttributeIsARope(MlirAttribute attr);
/* The style of a #attn.rope attribute; AttnRopeStyleNone for any other. */
MLIR_CAPI_EXPORTED AttnRopeStyle attnRopeAttrGetValue(MlirAttribute attr);

/*===--------------------------------------------------------------------===*/
/* Op builders                                                              */
/*===--------------------------------------------------------------------===*/

/* Attributes of attn.sdpa. scale <= 0 means "default, 1/sqrt(D)"; the
 * dropout seed is used only when dropoutRate != 0. softcap <= 0 means no
 * softcap. windowLeft/windowRight: -1 unbounded, both -1 (and windowAlign
 * AttnCausalNone) no window; windowAlign AttnCausalNone: the causal kind's
 * diagonal, else bottom_right (see attnWindowAttrGet). Values the op does
 * not accept (a NaN or infinite scale or softcap, a bound below -1, an enum
 * value outside its enum) make the builder fail with a diagnostic. The
 * fields after dropoutSeed were added with the wave-2 features. */
typedef struct AttnSdpaOptions {
  float scale;
  AttnCausal causal;
  float dropoutRate;
  int64_t dropoutSeed;
  float softcap;
  int64_t windowLeft;
  int64_t windowRight;
  AttnCausal windowAlign;
} AttnSdpaOptions;

/* { scale 0 (default), no causal mask, no dropout, no softcap, no window }. */
MLIR_CAPI_EXPORTED AttnSdpaOptions attnSdpaOptionsGetDefault(void);

/* Creates a detached attn.sdpa (insert it with mlirBlockAppendOwnedOperation
 * or mlirBlockInsertOwnedOperation...). `mask` may be a null MlirValue. The
 * result type is inferred from the operands. If the operands or options
 * break an attn.sdpa rule, the verifier's diagnostic goes to the context's
 * diagnostic handlers and a null operation is returned. Same as
 * attnSdpaOpCreateWithFeatures with null slopes and key lengths. */
MLIR_CAPI_EXPORTED MlirOperation attnSdpaOpCreate(MlirLocation loc,
                                                  MlirValue query,
                                                  MlirValue key,
                                                  MlirValue value,
                                                  MlirValue mask,
                                                  AttnSdpaOptions options);

/* attnSdpaOpCreate with the optional operands of the wave-2 features, each
 * a null MlirValue when absent: `alibiSlopes` f32 [H] or [B,H] (ALiBi
 * biases), `keyLengths` i32/i64 [B] (keys j >= len[b] masked). */
MLIR_CAPI_EXPORTED MlirOperation attnSdpaOpCreateWithFeatures(
    MlirLocation loc, MlirValue query, MlirValue key, MlirValue value,
    MlirValue mask, MlirValue alibiSlopes, MlirValue keyLengths,
    AttnSdpaOptions options);

/* Attributes of attn.mha. numKvHeads 0 means numHeads; scale <= 0 means
 * 1/sqrt(head dim); the dropout seed is used only when dropoutRate != 0;
 * softcap and the window as in AttnSdpaOptions; ropeStyle AttnRopeStyleNone
 * leaves rope_style out (rotate_half when rope tables are given; another
 * style needs the tables). The fields after dropoutSeed were added with the
 * wave-2 features. */
typedef struct AttnMhaOptions {
  int64_t numHeads;
  int64_t numKvHeads;
  AttnWeightLayout layout;
  float scale;
  AttnCausal causal;
  float dropoutRate;
  int64_t dropoutSeed;
  float softcap;
  int64_t windowLeft;
  int64_t windowRight;
  AttnCausal windowAlign;
  AttnRopeStyle ropeStyle;
} AttnMhaOptions;

/* { numHeads, numKvHeads 0, layout out_in, default scale, no causal mask,
 *   no dropout, no softcap, no window, no rope style }. */
MLIR_CAPI_EXPORTED AttnMhaOptions attnMhaOptionsGetDefault(int64_t numHeads);

/* Creates a detached attn.mha. The biases bq, bk, bv come together (all
 * null or all set), bo and mask may be null. Returns a null operation after
 * emitting the verifier's diagnostic when the op would be invalid. Same as
 * attnMhaOpCreateWithFeatures with null slopes, key lengths and tables. */
MLIR_CAPI_EXPORTED MlirOperation attnMhaOpCreate(
    MlirLocation loc, MlirValue queryInput, MlirValue kvInput, MlirValue wq,
    MlirValue wk, MlirValue wv, MlirValue wo, MlirValue bq, MlirValue bk,
    MlirValue bv, MlirValue bo, MlirValue mask, AttnMhaOptions options);

/* attnMhaOpCreate with the optional operands of the wave-2 features, each a
 * null MlirValue when absent: `alibiSlopes` f32 [H] or [B,H], `keyLengths`
 * i32/i64 [B], and the RoPE tables `ropeCos`, `ropeSin` (together or not at
 * all; [T,R/2] or [B,T,R/2], applied to the split Q and K heads). */
MLIR_CAPI_EXPORTED MlirOperation attnMhaOpCreateWithFeatures(
    MlirLocation loc, MlirValue queryInput, MlirValue kvInput, MlirValue wq,
    MlirValue wk, MlirValue wv, MlirValue wo, MlirValue bq, MlirValue bk,
    MlirValue bv, MlirValue bo, MlirValue mask, MlirValue alibiSlopes,
    MlirValue keyLengths, MlirValue ropeCos, MlirValue ropeSin,
    AttnMhaOptions options);

/* Gives an op that draws a dropout mask (attn.dropout, attn.sdpa, attn.mha,
 * attn.sdpa_partial, attn.sdpa_grad) its seed as the run-time `seed`, a
 * tensor<i64> value (the IR's seed(%s)), in place of a seed attribute, which
 * it removes; a null `seed` takes the seed operand away again. One compiled
 * function then draws a fresh mask per call. Returns false, after a
 * diagnostic, and leaves the op as it was, for another op or when the op
 * would not verify (no dropout rate, a seed that is not tensor<i64>). */
MLIR_CAPI_EXPORTED bool attnOpSetRuntimeSeed(MlirOperation op, MlirValue seed);

/* Gives an attn.sdpa, attn.sdpa_partial or attn.mha attention sinks: the
 * `sinks` operand, f32 [H], one learned logit per query head in each row's
 * softmax denominator (gpt-oss); a null value takes them away. Returns
 * false, after a diagnostic, and leaves the op as it was, for another op
 * or when the op would not verify (sinks of another shape or type). */
MLIR_CAPI_EXPORTED bool attnOpSetSinks(MlirOperation op, MlirValue sinks);

/* Score and mask functions (FlexAttention's score_mod and mask_mod) on an
 * attn.sdpa or attn.sdpa_partial, built from C:
 *   1. attnSdpaOpSetCaptures(op, n, captures): the ranked tensors the
 *      functions read (replacing the op's captures; before any function is
 *      added, since each function's block takes one argument per capture);
 *   2. attnSdpaOpAddScoreFunction(op) / attnSdpaOpAddMaskFunction(op):
 *      create the op's score_mod / mask_mod region with one empty block
 *      whose arguments are (score: f32, for the score function) b, h, q, kv
 *      (index) and one per capture, and return that block;
 *   3. the caller fills the block (arith, math, scf.if, tensor.extract of
 *      the capture arguments) and ends it with attnYieldOpCreate's op
 *      (f32 for a score function, i1 for a mask function);
 *   4. mlirOperationVerify(op) checks the whole (attn.sdpa's rules for
 *      the regions: their signature, the yielded type, the allowed ops).
 * SetCaptures returns false, and Add*Function a null block, after a
 * diagnostic, for another op, a null or non-tensor capture, captures set
 * after a function, or a function the op already has. */
MLIR_CAPI_EXPORTED bool attnSdpaOpSetCaptures(MlirOperation op, intptr_t nCaptures,
                                              MlirValue const *captures);
MLIR_CAPI_EXPORTED MlirBlock attnSdpaOpAddScoreFunction(MlirOperation op);
MLIR_CAPI_EXPORTED MlirBlock attnSdpaOpAddMaskFunction(MlirOperation op);

/* Creates a detached attn.yield of `value`: the terminator of a score or
 * mask function's block (append it with mlirBlockAppendOwnedOperation). */
MLIR_CAPI_EXPORTED MlirOperation attnYieldOpCreate(MlirLocation loc, MlirValue value);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_DIALECT_H */
