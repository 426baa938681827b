//===- AttnOps.td - attn ops -------------------------------*- tablegen -*-===//
//
// The root of the attn ops' ODS, which the generated AttnOps.h.inc and the
// op reference come from: the shared base (AttnOpBase.td), then the
// primitive ops (one step of the formula each), the composite ops (sdpa,
// mha), the partial ops (a block of keys and the merge of two blocks), the
// score and mask functions, the serving ops (paged KV caches) and the
// training ops (the backward of sdpa).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "AttnOpBase.td"
include "AttnPrimitiveOps.td"
include "AttnCompositeOps.td"
include "AttnPartialOps.td"
include "AttnModOps.td"
include "AttnServingOps.td"
include "AttnTrainingOps.td"

#endif // ATTN_OPS_TD
