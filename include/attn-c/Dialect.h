/*===- attn-c/Dialect.h - C API for the attn dialect -------------*- C -*-===*\
|*                                                                            *|
|* The attn dialect from C, following the upstream MLIR C API conventions:   *|
|* a dialect handle, attribute constructors and accessors, and builders for  *|
|* attn.sdpa and attn.mha that infer the result type. Use together with      *|
|* "mlir-c/IR.h" and "attn-c/Passes.h".                                      *|
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

/*===--------------------------------------------------------------------===*/
/* Op builders                                                              */
/*===--------------------------------------------------------------------===*/

/* Attributes of attn.sdpa. scale <= 0 means "default, 1/sqrt(D)"; the
 * dropout seed is used only when dropoutRate > 0. */
typedef struct AttnSdpaOptions {
  float scale;
  AttnCausal causal;
  float dropoutRate;
  int64_t dropoutSeed;
} AttnSdpaOptions;

/* { scale 0 (default), no causal mask, no dropout }. */
MLIR_CAPI_EXPORTED AttnSdpaOptions attnSdpaOptionsGetDefault(void);

/* Creates a detached attn.sdpa (insert it with mlirBlockAppendOwnedOperation
 * or mlirBlockInsertOwnedOperation...). `mask` may be a null MlirValue. The
 * result type is inferred from the operands. If the operands or options
 * break an attn.sdpa rule, the verifier's diagnostic goes to the context's
 * diagnostic handlers and a null operation is returned. */
MLIR_CAPI_EXPORTED MlirOperation attnSdpaOpCreate(MlirLocation loc,
                                                  MlirValue query,
                                                  MlirValue key,
                                                  MlirValue value,
                                                  MlirValue mask,
                                                  AttnSdpaOptions options);

/* Attributes of attn.mha. numKvHeads 0 means numHeads; scale <= 0 means
 * 1/sqrt(head dim); the dropout seed is used only when dropoutRate > 0. */
typedef struct AttnMhaOptions {
  int64_t numHeads;
  int64_t numKvHeads;
  AttnWeightLayout layout;
  float scale;
  AttnCausal causal;
  float dropoutRate;
  int64_t dropoutSeed;
} AttnMhaOptions;

/* { numHeads, numKvHeads 0, layout out_in, default scale, no causal mask,
 *   no dropout }. */
MLIR_CAPI_EXPORTED AttnMhaOptions attnMhaOptionsGetDefault(int64_t numHeads);

/* Creates a detached attn.mha. The biases bq, bk, bv come together (all
 * null or all set), bo and mask may be null. Returns a null operation after
 * emitting the verifier's diagnostic when the op would be invalid. */
MLIR_CAPI_EXPORTED MlirOperation attnMhaOpCreate(
    MlirLocation loc, MlirValue queryInput, MlirValue kvInput, MlirValue wq,
    MlirValue wk, MlirValue wv, MlirValue wo, MlirValue bq, MlirValue bk,
    MlirValue bv, MlirValue bo, MlirValue mask, AttnMhaOptions options);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_DIALECT_H */
