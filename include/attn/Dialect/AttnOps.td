//===- AttnOps.td - attn ops -------------------------------*- tablegen -*-===//
//
// The root of the attn ops' ODS, which the generated AttnOps.h.inc and the
// op reference come from: the shared base (AttnOpBase.td), then the
// primitive ops (one step of the formula each), the composite ops (sdpa,
// mha) and the partial ops (a block of keys and the merge of two blocks).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "AttnOpBase.td"
include "AttnPrimitiveOps.td"
include "AttnCompositeOps.td"
include "AttnPartialOps.td"
include "AttnModOps.td"

#endif // ATTN_OPS_TD
