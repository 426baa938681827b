/*===- capi-test.c - every function of the attn C API ----------------------===*\
|*                                                                            *|
|* Calls every public function of include/attn-c/ (check_capi_coverage.py    *|
|* makes sure none is missed) and prints what it built; capi.test checks the *|
|* output with FileCheck.                                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#include "attn-c/Dialect.h"
#include "attn-c/Passes.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print(MlirStringRef s, void *user) {
  fwrite(s.data, 1, s.length, (FILE *)user);
}

static MlirLogicalResult onDiagnostic(MlirDiagnostic d, void *user) {
  (void)user;
  printf("diagnostic: ");
  mlirDiagnosticPrint(d, print, stdout);
  printf("\n");
  return mlirLogicalResultSuccess();
}

/* Inserts `op` (if not null) before the terminator of `block`, so that it
 * prints with the function's value names, and prints it. */
static void printOp(const char *label, MlirBlock block, MlirOperation op) {
  printf("%s: ", label);
  if (mlirOperationIsNull(op)) {
    printf("null\n");
    return;
  }
  mlirBlockInsertOwnedOperationBefore(block, mlirBlockGetTerminator(block), op);
  mlirOperationPrint(op, print, stdout);
  printf("\n");
}

static void printAttr(MlirAttribute a) {
  mlirAttributePrint(a, print, stdout);
  printf("\n");
}

static MlirContext newContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  attnRegisterLoweringDependencies(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(ctx, onDiagnostic, NULL, NULL);
  return ctx;
}

static MlirModule parse(MlirContext ctx, const char *text) {
  MlirModule m = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(text));
  if (mlirModuleIsNull(m)) {
    printf("parse failed\n");
    exit(1);
  }
  return m;
}

/* The body block of the first function of a module. */
/* The body of the module's first function that has one (a lowering may
 * put bodiless declarations first). */
static MlirBlock firstFunctionBody(MlirModule m) {
  for (MlirOperation fn = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(fn); fn = mlirOperationGetNextInBlock(fn)) {
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
    if (!mlirBlockIsNull(body))
      return body;
  }
  MlirBlock none = {NULL};
  return none;
}

static MlirValue arg(MlirBlock b, int i) { return mlirBlockGetArgument(b, i); }
static const MlirValue kNone = {NULL};

/* A detached attn.sdpa of the block's first three arguments (q, k, v),
 * with the default options. */
static MlirOperation plainSdpa(MlirContext ctx, MlirBlock b) {
  return attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 0), arg(b, 1), arg(b, 2), kNone,
                          attnSdpaOptionsGetDefault());
}

static void testDialectHandle(void) {
  printf("== dialect handle\n");
  MlirDialectHandle h = mlirGetDialectHandle__attn__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(h);
  printf("namespace: %.*s\n", (int)ns.length, ns.data);
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDialectHandleInsertDialect(h, registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  MlirDialect d = mlirDialectHandleLoadDialect(h, ctx);
  MlirStringRef dns = mlirDialectGetNamespace(d);
  printf("loaded: %.*s\n", (int)dns.length, dns.data);
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: == dialect handle
// CHECK: namespace: attn
// CHECK: loaded: attn

static void testAttributes(MlirContext ctx) {
  printf("== attributes\n");
  MlirAttribute tl = attnCausalAttrGet(ctx, AttnCausalTopLeft);
  MlirAttribute br = attnCausalAttrGet(ctx, AttnCausalBottomRight);
  printAttr(tl);
  printAttr(br);
  printf("none is null: %d\n", mlirAttributeIsNull(attnCausalAttrGet(ctx, AttnCausalNone)));
  printf("7 is null: %d\n", mlirAttributeIsNull(attnCausalAttrGet(ctx, (AttnCausal)7)));
  MlirAttribute io = attnLayoutAttrGet(ctx, AttnWeightLayoutInOut);
  MlirAttribute oi = attnLayoutAttrGet(ctx, AttnWeightLayoutOutIn);
  printAttr(io);
  printAttr(oi);
  printf("layout 5 is null: %d\n",
         mlirAttributeIsNull(attnLayoutAttrGet(ctx, (AttnWeightLayout)5)));
  printf("isa causal: %d %d %d\n", attnAttributeIsACausal(tl),
         attnAttributeIsACausal(io), attnAttributeIsACausal(mlirAttributeGetNull()));
  printf("isa layout: %d %d\n", attnAttributeIsALayout(io), attnAttributeIsALayout(br));
  printf("causal values: %d %d %d\n", attnCausalAttrGetValue(tl),
         attnCausalAttrGetValue(br), attnCausalAttrGetValue(io));
  printf("layout values: %d %d %d\n", attnLayoutAttrGetValue(io),
         attnLayoutAttrGetValue(oi), attnLayoutAttrGetValue(tl));
}
// CHECK-LABEL: == attributes
// CHECK: #attn.causal<top_left>
// CHECK: #attn.causal<bottom_right>
// CHECK: none is null: 1
// CHECK: 7 is null: 1
// CHECK: #attn.layout<in_out>
// CHECK: #attn.layout<out_in>
// CHECK: layout 5 is null: 1
// CHECK: isa causal: 1 0 0
// CHECK: isa layout: 1 0
// CHECK: causal values: 1 2 0
// CHECK: layout values: 1 0 0

static void printWindow(const char *label, MlirAttribute w) {
  printf("%s: ", label);
  if (mlirAttributeIsNull(w)) {
    printf("null\n");
    return;
  }
  mlirAttributePrint(w, print, stdout);
  printf(" isa=%d left=%lld right=%lld align=%d\n", attnAttributeIsAWindow(w),
         (long long)attnWindowAttrGetLeft(w), (long long)attnWindowAttrGetRight(w),
         attnWindowAttrGetAlign(w));
}

static void testFeatureAttributes(MlirContext ctx) {
  printf("== feature attributes\n");
  printWindow("left 3", attnWindowAttrGet(ctx, 3, -1, AttnCausalNone));
  printWindow("right 2", attnWindowAttrGet(ctx, -1, 2, AttnCausalNone));
  printWindow("both, top_left",
              attnWindowAttrGet(ctx, 0, 5, AttnCausalTopLeft));
  printWindow("bottom_right only",
              attnWindowAttrGet(ctx, -1, -1, AttnCausalBottomRight));
  printWindow("unbounded", attnWindowAttrGet(ctx, -1, -1, AttnCausalNone));
  printWindow("left -2", attnWindowAttrGet(ctx, -2, 4, AttnCausalNone));
  printWindow("right -7", attnWindowAttrGet(ctx, 1, -7, AttnCausalNone));
  printWindow("align 6", attnWindowAttrGet(ctx, 1, 1, (AttnCausal)6));
  MlirAttribute tl = attnCausalAttrGet(ctx, AttnCausalTopLeft);
  printf("not a window: isa=%d left=%lld right=%lld align=%d\n",
         attnAttributeIsAWindow(tl), (long long)attnWindowAttrGetLeft(tl),
         (long long)attnWindowAttrGetRight(tl), attnWindowAttrGetAlign(tl));
  printf("null is a window: %d\n", attnAttributeIsAWindow(mlirAttributeGetNull()));

  MlirAttribute rh = attnRopeAttrGet(ctx, AttnRopeStyleRotateHalf);
  MlirAttribute il = attnRopeAttrGet(ctx, AttnRopeStyleInterleaved);
  printAttr(rh);
  printAttr(il);
  printf("rope none is null: %d\n", mlirAttributeIsNull(attnRopeAttrGet(ctx, AttnRopeStyleNone)));
  printf("rope 3 is null: %d\n", mlirAttributeIsNull(attnRopeAttrGet(ctx, (AttnRopeStyle)3)));
  printf("rope -1 is null: %d\n", mlirAttributeIsNull(attnRopeAttrGet(ctx, (AttnRopeStyle)-1)));
  printf("isa rope: %d %d %d\n", attnAttributeIsARope(rh), attnAttributeIsARope(tl),
         attnAttributeIsARope(mlirAttributeGetNull()));
  printf("rope values: %d %d %d\n", attnRopeAttrGetValue(rh), attnRopeAttrGetValue(il),
         attnRopeAttrGetValue(tl));
}
// CHECK-LABEL: == feature attributes
// CHECK: left 3: #attn.window<left = 3> isa=1 left=3 right=-1 align=0
// CHECK: right 2: #attn.window<right = 2> isa=1 left=-1 right=2 align=0
// CHECK: both, top_left: #attn.window<left = 0, right = 5, align = top_left> isa=1 left=0 right=5 align=1
// CHECK: bottom_right only: #attn.window<align = bottom_right> isa=1 left=-1 right=-1 align=2
// CHECK: unbounded: #attn.window<> isa=1 left=-1 right=-1 align=0
// CHECK: diagnostic: attnWindowAttrGet: window bound 'left' must be >= 0 (leave it out for unbounded), got -2
// CHECK: left -2: null
// CHECK: diagnostic: attnWindowAttrGet: window bound 'right' must be >= 0 (leave it out for unbounded), got -7
// CHECK: right -7: null
// CHECK: diagnostic: attnWindowAttrGet: unknown AttnCausal value 6 for the window align
// CHECK: align 6: null
// CHECK: not a window: isa=0 left=-1 right=-1 align=0
// CHECK: null is a window: 0
// CHECK: #attn.rope<rotate_half>
// CHECK: #attn.rope<interleaved>
// CHECK: rope none is null: 1
// CHECK: rope 3 is null: 1
// CHECK: rope -1 is null: 1
// CHECK: isa rope: 1 0 0
// CHECK: rope values: 1 2 0

static void testSdpa(MlirContext ctx) {
  printf("== sdpa\n");
  MlirModule m = parse(ctx,
      "func.func @f(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x7x8xf32>,\n"
      "             %v: tensor<1x2x7x4xf32>, %m: tensor<5x7xi1>,\n"
      "             %bad: tensor<1x2x7x9xf32>, %u: tensor<*xf32>,\n"
      "             %mem: memref<1x2x7x8xf32>) { return }");
  MlirBlock b = firstFunctionBody(m);
  AttnSdpaOptions d = attnSdpaOptionsGetDefault();
  printf("defaults: scale=%g causal=%d rate=%g seed=%lld softcap=%g window=%lld,%lld "
         "align=%d\n", d.scale, d.causal, d.dropoutRate, (long long)d.dropoutSeed,
         d.softcap, (long long)d.windowLeft, (long long)d.windowRight, d.windowAlign);
  printOp("plain", b, plainSdpa(ctx, b));
  AttnSdpaOptions o = d;
  o.scale = 0.5f;
  o.causal = AttnCausalBottomRight;
  o.dropoutRate = 0.25f;
  o.dropoutSeed = 42;
  MlirOperation full = attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 0),
                                        arg(b, 1), arg(b, 2), arg(b, 3), o);
  printOp("full", b, full);
  MlirOperation bad = attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 0),
                                       arg(b, 4), arg(b, 2), kNone, d);
  printOp("bad key", b, bad);
  o = d;
  o.causal = (AttnCausal)9;
  printOp("bad causal", b, attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 0),
                                         arg(b, 1), arg(b, 2), kNone, o));
  printOp("null query", b, attnSdpaOpCreate(mlirLocationUnknownGet(ctx), kNone,
                                         arg(b, 1), arg(b, 2), kNone, d));
  /* Operands that are not ranked tensors: a diagnostic and null, no crash. */
  printOp("unranked query", b, attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 5),
                                             arg(b, 1), arg(b, 2), kNone, d));
  printOp("memref key", b, attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 0),
                                         arg(b, 6), arg(b, 2), kNone, d));
  printOp("unranked mask", b, attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 0),
                                            arg(b, 1), arg(b, 2), arg(b, 5), d));
  mlirModuleDestroy(m);
}
// CHECK-LABEL: == sdpa
// CHECK: defaults: scale=0 causal=0 rate=0 seed=0 softcap=0 window=-1,-1 align=0
// CHECK: plain: %0 = attn.sdpa %arg0, %arg1, %arg2 : (tensor<1x4x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x4xf32>) -> tensor<1x4x5x4xf32>
// CHECK: full: %1 = attn.sdpa %arg0, %arg1, %arg2, %arg3 {causal = #attn.causal<bottom_right>, dropout_rate = 2.500000e-01 : f32, dropout_seed = 42 : i64, scale = 5.000000e-01 : f32} : (tensor<1x4x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x4xf32>, tensor<5x7xi1>) -> tensor<1x4x5x4xf32>
// CHECK: diagnostic: 'attn.sdpa' op operand 'key' head dim (dim 3) is 9, expected 8
// CHECK: bad key: null
// CHECK: diagnostic: 'attn.sdpa' op unknown AttnCausal value 9
// CHECK: bad causal: null
// CHECK: diagnostic: attnSdpaOpCreate: query, key and value must not be null
// CHECK: null query: null
// CHECK: diagnostic: attnSdpaOpCreate: operand 'query' must be a ranked tensor, got 'tensor<*xf32>'
// CHECK: unranked query: null
// CHECK: diagnostic: attnSdpaOpCreate: operand 'key' must be a ranked tensor, got 'memref<1x2x7x8xf32>'
// CHECK: memref key: null
// CHECK: diagnostic: attnSdpaOpCreate: operand 'mask' must be a ranked tensor, got 'tensor<*xf32>'
// CHECK: unranked mask: null

static void testMha(MlirContext ctx) {
  printf("== mha\n");
  MlirModule m = parse(ctx,
      "func.func @f(%xq: tensor<2x5x16xf32>, %xkv: tensor<2x7x12xf32>,\n"
      "             %wq: tensor<16x16xf32>, %wk: tensor<8x12xf32>,\n"
      "             %wv: tensor<8x12xf32>, %wo: tensor<20x16xf32>,\n"
      "             %bq: tensor<16xf32>, %bk: tensor<8xf32>, %bv: tensor<8xf32>,\n"
      "             %bo: tensor<20xf32>, %mask: tensor<2x4x5x7xf32>,\n"
      "             %wkT: tensor<12x8xf32>, %u: tensor<*xf32>) { return }");
  MlirBlock b = firstFunctionBody(m);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  AttnMhaOptions d = attnMhaOptionsGetDefault(4);
  printf("defaults: heads=%lld kv=%lld layout=%d scale=%g causal=%d rate=%g "
         "softcap=%g window=%lld,%lld align=%d rope=%d\n",
         (long long)d.numHeads, (long long)d.numKvHeads, d.layout, d.scale,
         d.causal, d.dropoutRate, d.softcap, (long long)d.windowLeft,
         (long long)d.windowRight, d.windowAlign, d.ropeStyle);
  d.numKvHeads = 2;
  MlirOperation plain = attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), arg(b, 2),
                                        arg(b, 3), arg(b, 4), arg(b, 5), kNone,
                                        kNone, kNone, kNone, kNone, d);
  printOp("plain", b, plain);
  AttnMhaOptions o = d;
  o.causal = AttnCausalTopLeft;
  o.scale = 0.125f;
  MlirOperation full = attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), arg(b, 2),
                                       arg(b, 3), arg(b, 4), arg(b, 5), arg(b, 6),
                                       arg(b, 7), arg(b, 8), arg(b, 9), arg(b, 10), o);
  printOp("full", b, full);
  printOp("two biases", b, attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), arg(b, 2),
                                        arg(b, 3), arg(b, 4), arg(b, 5), arg(b, 6),
                                        arg(b, 7), kNone, kNone, kNone, d));
  printOp("wrong wk", b, attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), arg(b, 2),
                                      arg(b, 11), arg(b, 4), arg(b, 5), kNone,
                                      kNone, kNone, kNone, kNone, d));
  o = d;
  o.layout = (AttnWeightLayout)3;
  printOp("bad layout", b, attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), arg(b, 2),
                                        arg(b, 3), arg(b, 4), arg(b, 5), kNone,
                                        kNone, kNone, kNone, kNone, o));
  printOp("null weight", b, attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), kNone,
                                         arg(b, 3), arg(b, 4), arg(b, 5), kNone,
                                         kNone, kNone, kNone, kNone, d));
  printOp("unranked wo", b, attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), arg(b, 2),
                                         arg(b, 3), arg(b, 4), arg(b, 12), kNone,
                                         kNone, kNone, kNone, kNone, d));
  printOp("unranked bias", b, attnMhaOpCreate(loc, arg(b, 0), arg(b, 1), arg(b, 2),
                                           arg(b, 3), arg(b, 4), arg(b, 5), arg(b, 12),
                                           arg(b, 7), arg(b, 8), kNone, kNone, d));
  mlirModuleDestroy(m);
}
// CHECK-LABEL: == mha
// CHECK: defaults: heads=4 kv=0 layout=0 scale=0 causal=0 rate=0 softcap=0 window=-1,-1 align=0 rope=0
// CHECK: plain: %0 = attn.mha %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {num_heads = 4 : i64, num_kv_heads = 2 : i64} : ({{.*}}) -> tensor<2x5x20xf32>
// CHECK: full: %1 = attn.mha %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 qkv_bias(%arg6, %arg7, %arg8) out_bias(%arg9) mask(%arg10) {causal = #attn.causal<top_left>, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 1.250000e-01 : f32} : ({{.*}}) -> tensor<2x5x20xf32>
// CHECK: diagnostic: attnMhaOpCreate: bq, bk and bv must be given together
// CHECK: two biases: null
// CHECK: diagnostic: 'attn.mha' op operand 'wk' input width (dim 1) is 8, expected 12
// CHECK: wrong wk: null
// CHECK: diagnostic: attnMhaOpCreate: unknown AttnWeightLayout value 3
// CHECK: bad layout: null
// CHECK: diagnostic: attnMhaOpCreate: the inputs and the four weights must not be null
// CHECK: null weight: null
// CHECK: diagnostic: attnMhaOpCreate: operand 'wo' must be a ranked tensor, got 'tensor<*xf32>'
// CHECK: unranked wo: null
// CHECK: diagnostic: attnMhaOpCreate: operand 'bq' must be a ranked tensor, got 'tensor<*xf32>'
// CHECK: unranked bias: null

static void testSdpaFeatures(MlirContext ctx) {
  printf("== sdpa features\n");
  MlirModule m = parse(ctx,
      "func.func @f(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>,\n"
      "             %v: tensor<2x2x7x4xf32>, %m: tensor<5x7xi1>,\n"
      "             %s: tensor<4xf32>, %sbh: tensor<2x4xf32>,\n"
      "             %len: tensor<2xi32>, %len64: tensor<2xi64>,\n"
      "             %s3: tensor<3xf32>, %sbh3: tensor<3x4xf32>, %s16: tensor<4xf16>,\n"
      "             %len3: tensor<3xi32>, %u: tensor<*xf32>) { return }");
  MlirBlock b = firstFunctionBody(m);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  AttnSdpaOptions d = attnSdpaOptionsGetDefault();
  MlirValue q = arg(b, 0), k = arg(b, 1), v = arg(b, 2);

  /* Operands only: the options' defaults add no attribute. */
  printOp("operands", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, arg(b, 4),
                                                      arg(b, 6), d));
  AttnSdpaOptions o = d;
  o.causal = AttnCausalBottomRight;
  o.softcap = 30.0f;
  o.windowLeft = 3;
  printOp("mistral", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, arg(b, 4),
                                                     arg(b, 6), o));
  o = d;
  o.windowLeft = 2;
  o.windowRight = 1;
  o.windowAlign = AttnCausalTopLeft;
  printOp("mask, [B,H] slopes, i64 lengths", b,
          attnSdpaOpCreateWithFeatures(loc, q, k, v, arg(b, 3), arg(b, 5), arg(b, 7), o));
  o = d;
  o.windowRight = 2;
  printOp("right only", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, kNone,
                                                        kNone, o));
  /* The old builder takes the new options too. */
  o = d;
  o.causal = AttnCausalTopLeft;
  o.softcap = 50.0f;
  o.windowLeft = 0;
  o.windowRight = 0;
  printOp("old builder", b, attnSdpaOpCreate(loc, q, k, v, kNone, o));

  o = d;
  o.windowLeft = -2;
  printOp("window -2", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, kNone,
                                                       kNone, o));
  o = d;
  o.windowLeft = 1;
  o.windowRight = -2;
  printOp("old builder window -2", b, attnSdpaOpCreate(loc, q, k, v, kNone, o));
  o = d;
  o.softcap = NAN;
  printOp("softcap nan", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, kNone,
                                                         kNone, o));
  o = d;
  o.softcap = INFINITY;
  printOp("softcap inf", b, attnSdpaOpCreate(loc, q, k, v, kNone, o));
  o = d;
  o.scale = NAN;
  printOp("scale nan", b, attnSdpaOpCreate(loc, q, k, v, kNone, o));
  o = d;
  o.windowLeft = 4;
  o.windowAlign = (AttnCausal)5;
  printOp("bad window align", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone,
                                                              kNone, kNone, o));
  o = d;
  o.causal = (AttnCausal)-3;
  printOp("bad causal", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, arg(b, 4),
                                                        kNone, o));
  o = d;
  o.causal = AttnCausalBottomRight;
  o.windowLeft = 4;
  o.windowAlign = AttnCausalTopLeft;
  printOp("align vs causal", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone,
                                                             kNone, kNone, o));
  printOp("slopes [3]", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, arg(b, 8),
                                                        kNone, d));
  printOp("slopes [3,4]", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone,
                                                          arg(b, 9), kNone, d));
  printOp("slopes f16", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone,
                                                        arg(b, 10), kNone, d));
  printOp("slopes as lengths", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone,
                                                               kNone, arg(b, 4), d));
  printOp("lengths [3]", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone, kNone,
                                                         arg(b, 11), d));
  printOp("unranked slopes", b, attnSdpaOpCreateWithFeatures(loc, q, k, v, kNone,
                                                             arg(b, 12), kNone, d));
  printOp("null key", b, attnSdpaOpCreateWithFeatures(loc, q, kNone, v, kNone, kNone,
                                                      kNone, d));
  mlirModuleDestroy(m);
}
// CHECK-LABEL: == sdpa features
// CHECK: operands: %0 = attn.sdpa %arg0, %arg1, %arg2 alibi(%arg4) key_lengths(%arg6) : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x4xf32>, tensor<4xf32>, tensor<2xi32>) -> tensor<2x4x5x4xf32>
// CHECK: mistral: %1 = attn.sdpa %arg0, %arg1, %arg2 alibi(%arg4) key_lengths(%arg6) {causal = #attn.causal<bottom_right>, softcap = 3.000000e+01 : f32, window = #attn.window<left = 3>} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x4xf32>, tensor<4xf32>, tensor<2xi32>) -> tensor<2x4x5x4xf32>
// CHECK: mask, [B,H] slopes, i64 lengths: %2 = attn.sdpa %arg0, %arg1, %arg2, %arg3 alibi(%arg5) key_lengths(%arg7) {window = #attn.window<left = 2, right = 1, align = top_left>} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x4xf32>, tensor<5x7xi1>, tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4x5x4xf32>
// CHECK: right only: %3 = attn.sdpa %arg0, %arg1, %arg2 {window = #attn.window<right = 2>} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x4xf32>) -> tensor<2x4x5x4xf32>
// CHECK: old builder: %4 = attn.sdpa %arg0, %arg1, %arg2 {causal = #attn.causal<top_left>, softcap = 5.000000e+01 : f32, window = #attn.window<left = 0, right = 0>} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x4xf32>) -> tensor<2x4x5x4xf32>
// CHECK: diagnostic: 'attn.sdpa' op window bound 'left' must be >= 0 (leave it out for unbounded), got -2
// CHECK: window -2: null
// CHECK: diagnostic: 'attn.sdpa' op window bound 'right' must be >= 0 (leave it out for unbounded), got -2
// CHECK: old builder window -2: null
// CHECK: diagnostic: 'attn.sdpa' op attribute 'softcap' must be a positive finite number, got nan
// CHECK: softcap nan: null
// CHECK: diagnostic: 'attn.sdpa' op attribute 'softcap' must be a positive finite number, got inf
// CHECK: softcap inf: null
// CHECK: diagnostic: 'attn.sdpa' op attribute 'scale' must be a positive finite number, got nan
// CHECK: scale nan: null
// CHECK: diagnostic: 'attn.sdpa' op unknown AttnCausal value 5 for the window align
// CHECK: bad window align: null
// CHECK: diagnostic: 'attn.sdpa' op unknown AttnCausal value -3
// CHECK: bad causal: null
// CHECK: diagnostic: 'attn.sdpa' op window align = top_left differs from causal = bottom_right
// CHECK: align vs causal: null
// CHECK: diagnostic: 'attn.sdpa' op operand 'alibi_slopes' heads (dim 0) is 3, expected 4
// CHECK: slopes [3]: null
// CHECK: diagnostic: 'attn.sdpa' op operand 'alibi_slopes' batch (dim 0) is 3, expected 2
// CHECK: slopes [3,4]: null
// CHECK: diagnostic: 'attn.sdpa' op operand #3 must be ALiBi slopes: a ranked tensor of 32-bit float values, but got 'tensor<4xf16>'
// CHECK: slopes f16: null
// CHECK: diagnostic: 'attn.sdpa' op operand #3 must be key lengths: a ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'
// CHECK: slopes as lengths: null
// CHECK: diagnostic: 'attn.sdpa' op operand 'key_lengths' length (dim 0) is 3, expected 2
// CHECK: lengths [3]: null
// CHECK: diagnostic: attnSdpaOpCreateWithFeatures: operand 'alibi_slopes' must be a ranked tensor, got 'tensor<*xf32>'
// CHECK: unranked slopes: null
// CHECK: diagnostic: attnSdpaOpCreateWithFeatures: query, key and value must not be null
// CHECK: null key: null

static void testMhaFeatures(MlirContext ctx) {
  printf("== mha features\n");
  /* 8 heads of D = 8 over 2 KV heads, T = 10 (self-attention). */
  MlirModule m = parse(ctx,
      "func.func @f(%x: tensor<2x10x64xf32>, %wq: tensor<64x64xf32>,\n"
      "             %wkv: tensor<16x64xf32>, %s: tensor<8xf32>, %len: tensor<2xi32>,\n"
      "             %cos: tensor<10x4xf32>, %sin: tensor<10x4xf32>,\n"
      "             %cosb: tensor<2x10x2xf32>, %sinb: tensor<2x10x2xf32>,\n"
      "             %sbh: tensor<2x8xf32>, %len64: tensor<2xi64>,\n"
      "             %cosw: tensor<10x5xf32>, %sinw: tensor<10x5xf32>,\n"
      "             %s4: tensor<4xf32>, %keep: tensor<2x1x1x10xi1>,\n"
      "             %u: tensor<*xf32>) { return }");
  MlirBlock b = firstFunctionBody(m);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  AttnMhaOptions d = attnMhaOptionsGetDefault(8);
  d.numKvHeads = 2;
  MlirValue x = arg(b, 0), wq = arg(b, 1), wkv = arg(b, 2);

  AttnMhaOptions o = d;
  o.causal = AttnCausalTopLeft;
  o.softcap = 20.0f;
  o.windowLeft = 4;
  o.ropeStyle = AttnRopeStyleInterleaved;
  printOp("full", b, attnMhaOpCreateWithFeatures(
                         loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone, kNone,
                         kNone, arg(b, 3), arg(b, 4), arg(b, 5), arg(b, 6), o));
  /* Default rope style, per-sequence tables (R = 4 < D), [B,H] slopes, i64
   * lengths and a keep mask. */
  printOp("partial rope", b, attnMhaOpCreateWithFeatures(
                                 loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone,
                                 kNone, arg(b, 14), arg(b, 9), arg(b, 10), arg(b, 7),
                                 arg(b, 8), d));
  o = d;
  o.ropeStyle = AttnRopeStyleRotateHalf;
  printOp("rotate_half", b, attnMhaOpCreateWithFeatures(
                                loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone,
                                kNone, kNone, kNone, kNone, arg(b, 5), arg(b, 6), o));
  /* The old builder takes the new options too. */
  o = d;
  o.softcap = 15.0f;
  o.windowLeft = 2;
  o.windowRight = 3;
  o.windowAlign = AttnCausalBottomRight;
  printOp("old builder", b, attnMhaOpCreate(loc, x, x, wq, wkv, wkv, wq, kNone, kNone,
                                            kNone, kNone, kNone, o));

  o = d;
  o.ropeStyle = AttnRopeStyleInterleaved;
  printOp("style without tables", b, attnMhaOpCreate(loc, x, x, wq, wkv, wkv, wq, kNone,
                                                     kNone, kNone, kNone, kNone, o));
  printOp("cos without sin", b, attnMhaOpCreateWithFeatures(
                                    loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone,
                                    kNone, kNone, kNone, kNone, arg(b, 5), kNone, d));
  o = d;
  o.ropeStyle = (AttnRopeStyle)7;
  printOp("bad rope style", b, attnMhaOpCreateWithFeatures(
                                   loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone,
                                   kNone, kNone, kNone, kNone, arg(b, 5), arg(b, 6), o));
  printOp("R > D", b, attnMhaOpCreateWithFeatures(
                          loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone, kNone,
                          kNone, kNone, kNone, arg(b, 11), arg(b, 12), d));
  printOp("cos, sin types differ", b, attnMhaOpCreateWithFeatures(
                                          loc, x, x, wq, wkv, wkv, wq, kNone, kNone,
                                          kNone, kNone, kNone, kNone, kNone, arg(b, 5),
                                          arg(b, 8), d));
  printOp("slopes [4]", b, attnMhaOpCreateWithFeatures(
                               loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone, kNone,
                               kNone, arg(b, 13), kNone, kNone, kNone, d));
  o = d;
  o.windowRight = -2;
  printOp("window -2", b, attnMhaOpCreateWithFeatures(
                              loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone, kNone,
                              kNone, kNone, kNone, kNone, kNone, o));
  o = d;
  o.softcap = NAN;
  printOp("softcap nan", b, attnMhaOpCreate(loc, x, x, wq, wkv, wkv, wq, kNone, kNone,
                                            kNone, kNone, kNone, o));
  o = d;
  o.windowAlign = (AttnCausal)4;
  printOp("bad window align", b, attnMhaOpCreate(loc, x, x, wq, wkv, wkv, wq, kNone,
                                                 kNone, kNone, kNone, kNone, o));
  printOp("unranked sin", b, attnMhaOpCreateWithFeatures(
                                 loc, x, x, wq, wkv, wkv, wq, kNone, kNone, kNone,
                                 kNone, kNone, kNone, kNone, arg(b, 5), arg(b, 15), d));
  printOp("null wo", b, attnMhaOpCreateWithFeatures(
                            loc, x, x, wq, wkv, wkv, kNone, kNone, kNone, kNone, kNone,
                            kNone, kNone, kNone, kNone, kNone, d));
  mlirModuleDestroy(m);
}
// CHECK-LABEL: == mha features
// CHECK: full: %0 = attn.mha %arg0, %arg0, %arg1, %arg2, %arg2, %arg1 alibi(%arg3) key_lengths(%arg4) rope(%arg5, %arg6) {causal = #attn.causal<top_left>, num_heads = 8 : i64, num_kv_heads = 2 : i64, rope_style = #attn.rope<interleaved>, softcap = 2.000000e+01 : f32, window = #attn.window<left = 4>} : (tensor<2x10x64xf32>, tensor<2x10x64xf32>, tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<8xf32>, tensor<2xi32>, tensor<10x4xf32>, tensor<10x4xf32>) -> tensor<2x10x64xf32>
// CHECK: partial rope: %1 = attn.mha %arg0, %arg0, %arg1, %arg2, %arg2, %arg1 mask(%arg14) alibi(%arg9) key_lengths(%arg10) rope(%arg7, %arg8) {num_heads = 8 : i64, num_kv_heads = 2 : i64} : ({{.*}}, tensor<2x1x1x10xi1>, tensor<2x8xf32>, tensor<2xi64>, tensor<2x10x2xf32>, tensor<2x10x2xf32>) -> tensor<2x10x64xf32>
// CHECK: rotate_half: %2 = attn.mha %arg0, %arg0, %arg1, %arg2, %arg2, %arg1 rope(%arg5, %arg6) {num_heads = 8 : i64, num_kv_heads = 2 : i64, rope_style = #attn.rope<rotate_half>} : ({{.*}}) -> tensor<2x10x64xf32>
// CHECK: old builder: %3 = attn.mha %arg0, %arg0, %arg1, %arg2, %arg2, %arg1 {num_heads = 8 : i64, num_kv_heads = 2 : i64, softcap = 1.500000e+01 : f32, window = #attn.window<left = 2, right = 3, align = bottom_right>} : ({{.*}}) -> tensor<2x10x64xf32>
// CHECK: diagnostic: 'attn.mha' op attribute 'rope_style' is given without rope(%cos, %sin)
// CHECK: style without tables: null
// CHECK: diagnostic: attnMhaOpCreateWithFeatures: ropeCos and ropeSin must be given together
// CHECK: cos without sin: null
// CHECK: diagnostic: attnMhaOpCreateWithFeatures: unknown AttnRopeStyle value 7
// CHECK: bad rope style: null
// CHECK: diagnostic: 'attn.mha' op rotary dims R = 2 * 5 = 10 exceed the head dim D = 8 of 'query heads' (R must be <= D)
// CHECK: R > D: null
// CHECK: diagnostic: 'attn.mha' op operands 'cos' and 'sin' must have the same type, got 'tensor<10x4xf32>' and 'tensor<2x10x2xf32>'
// CHECK: cos, sin types differ: null
// CHECK: diagnostic: 'attn.mha' op operand 'alibi_slopes' heads (dim 0) is 4, expected 8
// CHECK: slopes [4]: null
// CHECK: diagnostic: 'attn.mha' op window bound 'right' must be >= 0 (leave it out for unbounded), got -2
// CHECK: window -2: null
// CHECK: diagnostic: 'attn.mha' op attribute 'softcap' must be a positive finite number, got nan
// CHECK: softcap nan: null
// CHECK: diagnostic: 'attn.mha' op unknown AttnCausal value 4 for the window align
// CHECK: bad window align: null
// CHECK: diagnostic: attnMhaOpCreateWithFeatures: operand 'rope_sin' must be a ranked tensor, got 'tensor<*xf32>'
// CHECK: unranked sin: null
// CHECK: diagnostic: attnMhaOpCreateWithFeatures: the inputs and the four weights must not be null
// CHECK: null wo: null

/* attnOpSetRuntimeSeed: the dropout seed as a run-time tensor<i64> operand
 * on an sdpa and an mha (the seed attribute goes), taken away again with a
 * null seed; refused, with the op left as it was, without a dropout rate,
 * for a seed that is not tensor<i64>, and on an op that draws no mask. */
static void testRuntimeSeed(MlirContext ctx) {
  printf("== runtime seed\n");
  MlirModule m = parse(ctx,
      "func.func @f(%q: tensor<1x2x5x8xf32>, %x: tensor<1x5x16xf32>,\n"
      "             %w: tensor<16x16xf32>, %s: tensor<i64>, %s32: tensor<i32>) { return }");
  MlirBlock b = firstFunctionBody(m);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirValue q = arg(b, 0), x = arg(b, 1), w = arg(b, 2), s = arg(b, 3);
  AttnSdpaOptions o = attnSdpaOptionsGetDefault();
  o.dropoutRate = 0.25f;
  o.dropoutSeed = 9;
  MlirOperation sdpa = attnSdpaOpCreate(loc, q, q, q, kNone, o);
  printf("sdpa set: %d\n", attnOpSetRuntimeSeed(sdpa, s));
  printOp("sdpa", b, sdpa);
  printf("sdpa i32 seed: %d\n", attnOpSetRuntimeSeed(sdpa, arg(b, 4)));
  mlirOperationPrint(sdpa, print, stdout);
  printf("\n");
  AttnMhaOptions mo = attnMhaOptionsGetDefault(2);
  mo.dropoutRate = 0.1f;
  MlirOperation mha = attnMhaOpCreate(loc, x, x, w, w, w, w, kNone, kNone, kNone, kNone,
                                      kNone, mo);
  printf("mha set: %d\n", attnOpSetRuntimeSeed(mha, s));
  printOp("mha", b, mha);
  printf("mha unset: %d\n", attnOpSetRuntimeSeed(mha, kNone));
  mlirOperationPrint(mha, print, stdout);
  printf("\n");
  MlirOperation plain = attnSdpaOpCreate(loc, q, q, q, kNone, attnSdpaOptionsGetDefault());
  printf("no rate: %d\n", attnOpSetRuntimeSeed(plain, s));
  printOp("no rate kept", b, plain);
  printf("return: %d\n", attnOpSetRuntimeSeed(mlirBlockGetTerminator(b), s));
  mlirModuleDestroy(m);
}
// CHECK-LABEL: == runtime seed
// CHECK: sdpa set: 1
// CHECK: sdpa: %0 = attn.sdpa %arg0, %arg0, %arg0 seed(%arg3) {dropout_rate = 2.500000e-01 : f32} : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<i64>) -> tensor<1x2x5x8xf32>
// CHECK: diagnostic: 'attn.sdpa' op operand #3 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'
// CHECK: sdpa i32 seed: 0
// CHECK-NEXT: %0 = attn.sdpa %arg0, %arg0, %arg0 seed(%arg3) {dropout_rate = 2.500000e-01 : f32}
// CHECK: mha set: 1
// CHECK: mha: %1 = attn.mha %arg1, %arg1, %arg2, %arg2, %arg2, %arg2 seed(%arg3) {dropout_rate = 1.000000e-01 : f32, num_heads = 2 : i64} : (tensor<1x5x16xf32>, tensor<1x5x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<i64>) -> tensor<1x5x16xf32>
// CHECK: mha unset: 1
// CHECK-NEXT: %1 = attn.mha %arg1, %arg1, %arg2, %arg2, %arg2, %arg2 {dropout_rate = 1.000000e-01 : f32, num_heads = 2 : i64} : (tensor<1x5x16xf32>, tensor<1x5x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x5x16xf32>
// CHECK: diagnostic: 'attn.sdpa' op 'seed(...)' is given without 'dropout_rate'
// CHECK: no rate: 0
// CHECK: no rate kept: %2 = attn.sdpa %arg0, %arg0, %arg0 : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
// CHECK: diagnostic: attnOpSetRuntimeSeed: 'func.return' draws no dropout mask (attn.dropout, attn.sdpa, attn.mha, attn.sdpa_partial or attn.sdpa_grad)
// CHECK: return: 0

static const char *kSdpaModule =
    "func.func @f(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>,\n"
    "             %v: tensor<1x2x7x8xf32>) -> tensor<1x2x5x8xf32> {\n"
    "  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}\n"
    "      : (tensor<1x2x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>)\n"
    "        -> tensor<1x2x5x8xf32>\n"
    "  return %o : tensor<1x2x5x8xf32>\n"
    "}\n";

/* The same sdpa, sequence-sharded (attn-shard). */
static const char *kRingModule =
    "func.func @f(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>,\n"
    "             %v: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {\n"
    "  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, attn.ring}\n"
    "      : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>)\n"
    "        -> tensor<1x2x8x8xf32>\n"
    "  return %o : tensor<1x2x8x8xf32>\n"
    "}\n";

/* A bf16 tensor-core mma (attn-legalize-mma-bf16). */
static const char *kBf16MmaModule =
    "func.func @f(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>)\n"
    "    -> vector<2x2xf32> {\n"
    "  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}\n"
    "      : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>\n"
    "  return %d : vector<2x2xf32>\n"
    "}\n";

/* A math.tanh on a vector (attn-expand-math). */
/* attn_ptx ops (attn-lower-ptx-ops): the dialect comes with
 * attnRegisterLoweringDependencies. */
static const char *kPtxModule =
    "func.func @f(%x: f32) -> f32 {\n"
    "  attn_ptx.cp_async_wait_group 0\n"
    "  %y = attn_ptx.ex2_approx %x\n"
    "  return %y : f32\n"
    "}\n";

static const char *kTanhModule =
    "func.func @f(%x: vector<8xf32>) -> vector<8xf32> {\n"
    "  %y = math.tanh %x : vector<8xf32>\n"
    "  return %y : vector<8xf32>\n"
    "}\n";

/* An OpenMP worksharing loop without a schedule (attn-openmp-schedule). */
static const char *kScopeModule =
    "func.func @f(%c: i1, %buf: memref<4xf32>) {\n"
    "  scf.if %c {\n"
    "    memref.alloca_scope {\n"
    "      %t = memref.alloca() : memref<4xf32>\n"
    "      memref.copy %buf, %t : memref<4xf32> to memref<4xf32>\n"
    "    }\n"
    "  }\n"
    "  return\n"
    "}\n";

static const char *kResultModule =
    "func.func @f(%n: index) -> memref<?xf32> {\n"
    "  %a = memref.alloc(%n) : memref<?xf32>\n"
    "  return %a : memref<?xf32>\n"
    "}\n";

static const char *kAmxModule =
    "func.func @f(%m: memref<16x16xf32>) {\n"
    "  %c0 = arith.constant 0 : index\n"
    "  %z = amx.tile_zero : !amx.tile<16x16xf32>\n"
    "  amx.tile_store %m[%c0, %c0], %z : memref<16x16xf32>, !amx.tile<16x16xf32>\n"
    "  return\n"
    "}\n";

static const char *kOmpModule =
    "func.func @f(%n: index, %buf: memref<?xf32>) {\n"
    "  %c0 = arith.constant 0 : index\n"
    "  %c1 = arith.constant 1 : index\n"
    "  %one = arith.constant 1.0 : f32\n"
    "  omp.parallel {\n"
    "    omp.wsloop {\n"
    "      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {\n"
    "        memref.store %one, %buf[%i] : memref<?xf32>\n"
    "        omp.yield\n"
    "      }\n"
    "    }\n"
    "    omp.terminator\n"
    "  }\n"
    "  return\n"
    "}\n";

/* Attention on one head as generic linalg (attn-raise). */
static const char *kLinalgAttentionModule =
    "func.func @attention(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {\n"
    "  %zero = arith.constant 0.0 : f32\n"
    "  %ninf = arith.constant 0xFF800000 : f32\n"
    "  %e0 = tensor.empty() : tensor<16x16xf32>\n"
    "  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x16xf32>) -> tensor<16x16xf32>\n"
    "  %s = linalg.matmul indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>]\n"
    "         ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>\n"
    "  %e1 = tensor.empty() : tensor<16xf32>\n"
    "  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>\n"
    "  %m = linalg.reduce ins(%s : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) dimensions = [1]\n"
    "         (%x: f32, %acc: f32) { %r = arith.maximumf %x, %acc : f32\n"
    "                               linalg.yield %r : f32 }\n"
    "  %e = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],\n"
    "                       iterator_types = [\"parallel\", \"parallel\"]}\n"
    "         ins(%s, %m : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {\n"
    "  ^bb0(%x: f32, %mx: f32, %o: f32):\n"
    "    %d = arith.subf %x, %mx : f32\n"
    "    %y = math.exp %d : f32\n"
    "    linalg.yield %y : f32\n"
    "  } -> tensor<16x16xf32>\n"
    "  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>\n"
    "  %sum = linalg.reduce ins(%e : tensor<16x16xf32>) outs(%s0 : tensor<16xf32>) dimensions = [1]\n"
    "           (%x: f32, %acc: f32) { %r = arith.addf %x, %acc : f32\n"
    "                                 linalg.yield %r : f32 }\n"
    "  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],\n"
    "                       iterator_types = [\"parallel\", \"parallel\"]}\n"
    "         ins(%e, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e0 : tensor<16x16xf32>) {\n"
    "  ^bb0(%x: f32, %t: f32, %o: f32):\n"
    "    %y = arith.divf %x, %t : f32\n"
    "    linalg.yield %y : f32\n"
    "  } -> tensor<16x16xf32>\n"
    "  %e2 = tensor.empty() : tensor<16x8xf32>\n"
    "  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>\n"
    "  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>\n"
    "  return %o : tensor<16x8xf32>\n"
    "}\n";

/* Runs `pass` (then `second`, if given) on a fresh module parsed from `src`
 * and prints the names of the ops in the function body. */
static void runAndListOpsOn(MlirContext ctx, const char *src, const char *label,
                            MlirPass pass, MlirPass second) {
  MlirModule m = parse(ctx, src);
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirPassManagerAddOwnedPass(pm, pass);
  if (second.ptr)
    mlirPassManagerAddOwnedPass(pm, second);
  MlirLogicalResult r = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(m));
  printf("%s: %s:", label, mlirLogicalResultIsSuccess(r) ? "ok" : "failed");
  for (MlirOperation op = mlirBlockGetFirstOperation(firstFunctionBody(m));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    printf(" %.*s", (int)n.length, n.data);
  }
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(m);
}

static void runAndListOps(MlirContext ctx, const char *label, MlirPass pass,
                          MlirPass second) {
  runAndListOpsOn(ctx, kSdpaModule, label, pass, second);
}

static void testPasses(MlirContext ctx) {
  printf("== passes\n");
  MlirPass none = {NULL};
  runAndListOps(ctx, "decompose", mlirCreateAttnTransformsAttnDecompose(), none);
  runAndListOps(ctx, "decompose+fuse", mlirCreateAttnTransformsAttnDecompose(),
                mlirCreateAttnTransformsAttnFuse());
  runAndListOps(ctx, "to-linalg", mlirCreateAttnTransformsAttnDecompose(),
                mlirCreateAttnConversionConvertAttnToLinalg());
  runAndListOps(ctx, "to-loops", mlirCreateAttnConversionConvertAttnToLoops(), none);
  runAndListOps(ctx, "to-gpu", mlirCreateAttnConversionConvertAttnToGpu(), none);
  runAndListOps(ctx, "to-gpu+emulate", mlirCreateAttnConversionConvertAttnToGpu(),
                mlirCreateAttnGPUAttnEmulateGpuSchedule());
  runAndListOps(ctx, "to-gpu+map", mlirCreateAttnConversionConvertAttnToGpu(),
                mlirCreateAttnGPUAttnMapScheduleToGpu());
  runAndListOpsOn(ctx, kRingModule, "shard", mlirCreateAttnConversionAttnShard(), none);
  runAndListOpsOn(ctx, kBf16MmaModule, "legalize-mma-bf16",
                  mlirCreateAttnGPUAttnLegalizeMmaBf16(), mlirCreateAttnGPUAttnAlignWorkgroupBuffers());
  runAndListOpsOn(ctx, kPtxModule, "lower-ptx-ops", mlirCreateAttnGPUAttnLowerPtxOps(), none);
  runAndListOpsOn(ctx, kRingModule, "shard+lower-mpi", mlirCreateAttnConversionAttnShard(),
                  mlirCreateAttnConversionAttnLowerMpi());
  runAndListOpsOn(ctx, kOmpModule, "openmp-schedule",
                  mlirCreateAttnTransformsAttnOpenMPSchedule(), none);
  runAndListOpsOn(ctx, kTanhModule, "expand-math", mlirCreateAttnTransformsAttnExpandMath(),
                  none);
  runAndListOpsOn(ctx, kScopeModule, "isolate-alloca-scopes",
                  mlirCreateAttnTransformsAttnIsolateAllocaScopes(), none);
  runAndListOpsOn(ctx, kResultModule, "result-destinations",
                  mlirCreateAttnTransformsAttnResultDestinations(), none);
  runAndListOpsOn(ctx, kAmxModule, "emulate-amx", mlirCreateAttnTransformsAttnEmulateAmx(),
                  none);
  runAndListOpsOn(ctx, kLinalgAttentionModule, "raise",
                  mlirCreateAttnTransformsAttnRaise(), none);
  {
    /* attn-differentiate adds @f_grad after @f: list its body. */
    MlirModule m = parse(ctx, kSdpaModule);
    MlirPassManager pm = mlirPassManagerCreate(ctx);
    mlirPassManagerAddOwnedPass(pm, mlirCreateAttnTransformsAttnDifferentiate());
    MlirLogicalResult r = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(m));
    printf("differentiate: %s:", mlirLogicalResultIsSuccess(r) ? "ok" : "failed");
    MlirOperation grad =
        mlirOperationGetNextInBlock(mlirBlockGetFirstOperation(mlirModuleGetBody(m)));
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(grad, 0));
    for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op)) {
      MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
      printf(" %.*s", (int)n.length, n.data);
    }
    printf("\n");
    mlirPassManagerDestroy(pm);
    mlirModuleDestroy(m);
  }

  /* Registration by name, then textual pipelines. */
  mlirRegisterAttnTransformsPasses();
  mlirRegisterAttnConversionPasses();
  mlirRegisterAttnGPUPasses();
  mlirRegisterAttnTransformsAttnDecompose();
  mlirRegisterAttnTransformsAttnFuse();
  mlirRegisterAttnTransformsAttnRaise();
  mlirRegisterAttnTransformsAttnDifferentiate();
  mlirRegisterAttnTransformsAttnOpenMPSchedule();
  mlirRegisterAttnTransformsAttnExpandMath();
  mlirRegisterAttnTransformsAttnIsolateAllocaScopes();
  mlirRegisterAttnTransformsAttnResultDestinations();
  mlirRegisterAttnTransformsAttnEmulateAmx();
  mlirRegisterAttnConversionConvertAttnToLinalg();
  mlirRegisterAttnConversionConvertAttnToLoops();
  mlirRegisterAttnConversionConvertAttnToGpu();
  mlirRegisterAttnConversionAttnShard();
  mlirRegisterAttnConversionAttnLowerMpi();
  mlirRegisterAttnGPUAttnEmulateGpuSchedule();
  mlirRegisterAttnGPUAttnMapScheduleToGpu();
  mlirRegisterAttnGPUAttnLegalizeMmaBf16();
  mlirRegisterAttnGPUAttnLowerPtxOps();
  mlirRegisterAttnGPUAttnAlignWorkgroupBuffers();
  attnRegisterPasses();
  attnRegisterPipelines();
  const char *pipelines[] = {
      "builtin.module(attn-decompose{keep-sdpa=true},attn-fuse)",
      "builtin.module(convert-attn-to-loops{tile-q=16 tile-k=16})",
      "builtin.module(attn-reference-pipeline{lower-to-llvm=false})",
      "builtin.module(attn-cpu-pipeline{tile-q=32 threads=1})",
      "builtin.module(convert-attn-to-gpu{tile-q=32},attn-emulate-gpu-schedule)",
      "builtin.module(attn-gpu-pipeline{chip=sm_80})",
      "builtin.module(no-such-pass)"};
  for (int i = 0; i < 7; ++i) {
    MlirPassManager pm = mlirPassManagerCreate(ctx);
    MlirLogicalResult r = mlirParsePassPipeline(
        mlirPassManagerGetAsOpPassManager(pm),
        mlirStringRefCreateFromCString(pipelines[i]), print, stdout);
    printf("\nparse %s: %s\n", pipelines[i],
           mlirLogicalResultIsSuccess(r) ? "ok" : "failed");
    mlirPassManagerDestroy(pm);
  }
}
// CHECK-LABEL: == passes
// CHECK: decompose: ok: attn.scores attn.scale attn.mask attn.softmax attn.weighted_sum func.return
// CHECK: decompose+fuse: ok: attn.sdpa func.return
// CHECK: to-linalg: ok: {{.*}}linalg.{{.*}} func.return
// CHECK-NOT: attn.
// CHECK: to-loops: ok: {{.*}}scf.parallel{{.*}} func.return
// CHECK: to-gpu: ok: {{.*}}memref.alloc {{.*}}scf.forall bufferization.to_tensor func.return
// CHECK: to-gpu+emulate: ok: {{.*}}memref.alloc {{.*}}scf.parallel bufferization.to_tensor func.return
// CHECK: to-gpu+map: ok: {{.*}}gpu.alloc {{.*}}gpu.launch gpu.memcpy gpu.dealloc {{.*}}func.return
// CHECK: shard: ok: mpi.comm_world mpi.comm_rank mpi.comm_size {{.*}}cf.assert {{.*}}memref.alloc memref.alloc {{.*}}scf.for tensor.empty {{.*}}memref.subview bufferization.to_tensor linalg.copy tensor.insert_slice func.return
// CHECK-NOT: mpi.
// CHECK: legalize-mma-bf16: ok: {{.*}}llvm.bitcast {{.*}}nvvm.mma.sync {{.*}}llvm.extractvalue {{.*}}vector.from_elements func.return
// CHECK: lower-ptx-ops: ok: llvm.inline_asm llvm.inline_asm func.return
// CHECK: shard+lower-mpi: ok: func.call func.call func.call {{.*}}cf.assert {{.*}}func.return
// CHECK: openmp-schedule: ok: arith.constant arith.constant arith.constant omp.parallel func.return
// CHECK: expand-math: ok: {{.*}}arith.divf {{.*}}vector.fma {{.*}}func.return
// CHECK: isolate-alloca-scopes: ok: scf.if func.return
// CHECK-NOT: math.
// CHECK: result-destinations: ok: arith.constant memref.extract_aligned_pointer_as_index arith.cmpi arith.constant memref.dim arith.cmpi arith.andi scf.if func.return
// CHECK: emulate-amx: ok: arith.constant arith.constant {{.*}}vector.store {{.*}}func.return
// CHECK-NOT: amx.
// CHECK: raise: ok: tensor.expand_shape tensor.expand_shape tensor.expand_shape attn.sdpa tensor.collapse_shape func.return
// CHECK: differentiate: ok: attn.sdpa_partial attn.sdpa_grad func.return
// CHECK: parse builtin.module(attn-decompose{keep-sdpa=true},attn-fuse): ok
// CHECK: parse builtin.module(convert-attn-to-loops{tile-q=16 tile-k=16}): ok
// CHECK: parse builtin.module(attn-reference-pipeline{lower-to-llvm=false}): ok
// CHECK: parse builtin.module(attn-cpu-pipeline{tile-q=32 threads=1}): ok
// CHECK: parse builtin.module(convert-attn-to-gpu{tile-q=32},attn-emulate-gpu-schedule): ok
// CHECK: parse builtin.module(attn-gpu-pipeline{chip=sm_80}): ok
// CHECK: 'no-such-pass' does not refer to a registered pass or pass pipeline
// CHECK: parse builtin.module(no-such-pass): failed

/* Builds a pipeline with a builder and prints which dialects are left. */
static void runPipeline(MlirContext ctx, const char *label, int cpu,
                        AttnCpuPipelineOptions options, bool lowerToLLVM) {
  MlirModule m = parse(ctx, kSdpaModule);
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  if (cpu)
    attnBuildCpuPipeline(mlirPassManagerGetAsOpPassManager(pm), options);
  else
    attnBuildReferencePipeline(mlirPassManagerGetAsOpPassManager(pm), lowerToLLVM);
  MlirLogicalResult r = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(m));
  MlirOperation first = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(first));
  printf("%s: %s, first op %.*s\n", label,
         mlirLogicalResultIsSuccess(r) ? "ok" : "failed", (int)n.length, n.data);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(m);
}

static void testPipelines(MlirContext ctx) {
  printf("== pipelines\n");
  AttnCpuPipelineOptions d = attnCpuPipelineOptionsGetDefault();
  printf("cpu defaults: tileQ=%lld tileK=%lld vectorWidth=%lld threads=%lld "
         "lowerToLLVM=%d\n",
         (long long)d.tileQ, (long long)d.tileK, (long long)d.vectorWidth,
         (long long)d.threads, d.lowerToLLVM);
  runPipeline(ctx, "reference", 0, d, false);
  runPipeline(ctx, "reference to llvm", 0, d, true);
  AttnCpuPipelineOptions o = d;
  o.tileQ = 16;
  o.lowerToLLVM = false;
  runPipeline(ctx, "cpu tile 16", 1, o, false);
  runPipeline(ctx, "cpu to llvm", 1, d, false);
  o = d;
  o.tileK = -3;
  runPipeline(ctx, "cpu bad tile", 1, o, false);

  /* The textual form: options the struct lacks, checked before running. */
  const char *texts[] = {"tile-q=16 min-work-items=1 bf16-dot=false lower-to-llvm=false",
                         "", "tile-k=-3", "no-such-option=1", "tile-q=many"};
  for (int i = 0; i < 5; ++i) {
    MlirModule m = parse(ctx, kSdpaModule);
    MlirPassManager pm = mlirPassManagerCreate(ctx);
    printf("cpu from '%s': ", texts[i]);
    MlirLogicalResult built = attnBuildCpuPipelineFromString(
        mlirPassManagerGetAsOpPassManager(pm), mlirStringRefCreateFromCString(texts[i]),
        print, stdout);
    if (mlirLogicalResultIsSuccess(built)) {
      MlirLogicalResult r = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(m));
      MlirOperation first = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
      MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(first));
      printf(" built; run %s, first op %.*s", mlirLogicalResultIsSuccess(r) ? "ok" : "failed",
             (int)n.length, n.data);
    } else {
      printf(" refused");
    }
    printf("\n");
    mlirPassManagerDestroy(pm);
    mlirModuleDestroy(m);
  }
}
// CHECK-LABEL: == pipelines
// CHECK: cpu defaults: tileQ=64 tileK=64 vectorWidth=8 threads=0 lowerToLLVM=1
// CHECK: reference: ok, first op func.func
// CHECK: reference to llvm: ok, first op llvm.
// CHECK: cpu tile 16: ok, first op func.func
// CHECK: cpu to llvm: ok, first op llvm.
// CHECK: diagnostic: {{.*}}tile-k{{.*}}
// CHECK: cpu bad tile: failed
// CHECK: cpu from 'tile-q=16 min-work-items=1 bf16-dot=false lower-to-llvm=false':  built; run ok, first op func.func
// CHECK: cpu from '':  built; run ok, first op llvm.
// CHECK: cpu from 'tile-k=-3': {{.*}}tile-k{{.*}} refused
// CHECK: cpu from 'no-such-option=1': attn-cpu-pipeline options 'no-such-option=1' do not parse: {{.*}}no such option no-such-option refused
// CHECK: cpu from 'tile-q=many': attn-cpu-pipeline options 'tile-q=many' do not parse refused

/* One op of the generic form: `name` on `operands`, one result of type
 * `result`, and an optional integer attribute (an enum such as a cmpi
 * predicate). */
static MlirOperation genericOp(MlirContext ctx, const char *name, intptr_t n,
                               MlirValue *operands, MlirType result,
                               const char *attrName, int64_t attrValue) {
  MlirOperationState st = mlirOperationStateGet(mlirStringRefCreateFromCString(name),
                                                mlirLocationUnknownGet(ctx));
  mlirOperationStateAddOperands(&st, n, operands);
  mlirOperationStateAddResults(&st, 1, &result);
  if (attrName) {
    MlirNamedAttribute a = mlirNamedAttributeGet(
        mlirIdentifierGet(ctx, mlirStringRefCreateFromCString(attrName)),
        mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), attrValue));
    mlirOperationStateAddAttributes(&st, 1, &a);
  }
  return mlirOperationCreate(&st);
}

static MlirValue append(MlirBlock block, MlirOperation op) {
  mlirBlockAppendOwnedOperation(block, op);
  return mlirOperationGetResult(op, 0);
}

/* @built: softmax(scale·q·kᵀ + bias[kv]) over the keys kv <= q, as a score
 * function reading a captured bias and a mask function, built through the
 * C API. capi.test runs it against the same attention written with a
 * named additive mask and causal (Inputs/named.mlir). */
static MlirModule buildFunctions(MlirContext ctx) {
  MlirModule m = parse(ctx,
      "func.func @built(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>,\n"
      "                 %v: tensor<1x2x7x8xf32>, %bias: tensor<7xf32>)\n"
      "    -> tensor<1x2x5x8xf32> {\n"
      "  return %q : tensor<1x2x5x8xf32>\n}");
  MlirBlock b = firstFunctionBody(m);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirOperation sdpa = plainSdpa(ctx, b);
  MlirValue bias = arg(b, 3);
  if (!attnSdpaOpSetCaptures(sdpa, 1, &bias))
    printf("set captures failed\n");
  MlirType f32 = mlirF32TypeGet(ctx), i1 = mlirIntegerTypeGet(ctx, 1);
  /* score(s, b, h, q, kv, bias) = s + bias[kv] */
  MlirBlock score = attnSdpaOpAddScoreFunction(sdpa);
  MlirValue read[2] = {mlirBlockGetArgument(score, 5), mlirBlockGetArgument(score, 4)};
  MlirValue x = append(score, genericOp(ctx, "tensor.extract", 2, read, f32, NULL, 0));
  MlirValue sum[2] = {mlirBlockGetArgument(score, 0), x};
  MlirValue r = append(score, genericOp(ctx, "arith.addf", 2, sum, f32, NULL, 0));
  mlirBlockAppendOwnedOperation(score, attnYieldOpCreate(loc, r));
  /* mask(b, h, q, kv, bias) = kv <= q (cmpi predicate 3: sle) */
  MlirBlock mask = attnSdpaOpAddMaskFunction(sdpa);
  MlirValue cmp[2] = {mlirBlockGetArgument(mask, 3), mlirBlockGetArgument(mask, 2)};
  MlirValue keep = append(mask, genericOp(ctx, "arith.cmpi", 2, cmp, i1, "predicate", 3));
  mlirBlockAppendOwnedOperation(mask, attnYieldOpCreate(loc, keep));
  MlirOperation ret = mlirBlockGetTerminator(b);
  mlirBlockInsertOwnedOperationBefore(b, ret, sdpa);
  mlirOperationSetOperand(ret, 0, mlirOperationGetResult(sdpa, 0));
  return m;
}

static void testFunctions(MlirContext ctx) {
  printf("== functions\n");
  MlirModule built = buildFunctions(ctx);
  MlirOperation fn = mlirBlockGetFirstOperation(mlirModuleGetBody(built));
  printf("built verifies: %d\n", mlirOperationVerify(fn));
  mlirOperationPrint(fn, print, stdout);
  printf("\n");
  mlirModuleDestroy(built);

  MlirModule m = parse(ctx,
      "func.func @f(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>,\n"
      "             %v: tensor<1x2x7x8xf32>, %u: tensor<*xf32>, %i: tensor<7xi32>) {\n"
      "  return\n}");
  MlirBlock b = firstFunctionBody(m);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirOperation sdpa = plainSdpa(ctx, b);
  mlirBlockInsertOwnedOperationBefore(b, mlirBlockGetTerminator(b), sdpa);
  MlirValue bad[2] = {arg(b, 4), arg(b, 3)};
  printf("unranked capture: %d\n", attnSdpaOpSetCaptures(sdpa, 2, bad));
  printf("null capture: %d\n", attnSdpaOpSetCaptures(sdpa, 1, &kNone));
  printf("not an sdpa: %d\n", attnSdpaOpSetCaptures(mlirBlockGetTerminator(b), 1, bad));
  printf("not an sdpa: %d\n",
         mlirBlockIsNull(attnSdpaOpAddMaskFunction(mlirBlockGetTerminator(b))));
  printf("ids: %d\n", attnSdpaOpSetCaptures(sdpa, 1, bad));
  /* A mask function that yields an index: the op no longer verifies. */
  MlirBlock mask = attnSdpaOpAddMaskFunction(sdpa);
  printf("mask args: %d\n", (int)mlirBlockGetNumArguments(mask));
  mlirBlockAppendOwnedOperation(mask, attnYieldOpCreate(loc, mlirBlockGetArgument(mask, 2)));
  printf("index yield verifies: %d\n", mlirOperationVerify(sdpa));
  printf("second mask: %d\n", mlirBlockIsNull(attnSdpaOpAddMaskFunction(sdpa)));
  printf("captures after: %d\n", attnSdpaOpSetCaptures(sdpa, 1, bad));
  printf("score args: %d\n", (int)mlirBlockGetNumArguments(attnSdpaOpAddScoreFunction(sdpa)));
  printf("null yield: %d\n", mlirOperationIsNull(attnYieldOpCreate(loc, kNone)));
  mlirModuleDestroy(m);
}
// CHECK-LABEL: == functions
// CHECK: built verifies: 1
// CHECK: func.func @built(%arg0: tensor<1x2x5x8xf32>, %arg1: tensor<1x2x7x8xf32>, %arg2: tensor<1x2x7x8xf32>, %arg3: tensor<7xf32>) -> tensor<1x2x5x8xf32> {
// CHECK-NEXT: %0 = attn.sdpa %arg0, %arg1, %arg2 captures(%arg3) score_mod {
// CHECK-NEXT: ^bb0(%arg4: f32, %arg5: index, %arg6: index, %arg7: index, %arg8: index, %arg9: tensor<7xf32>):
// CHECK-NEXT: %extracted = tensor.extract %arg9[%arg8] : tensor<7xf32>
// CHECK-NEXT: %1 = arith.addf %arg4, %extracted : f32
// CHECK-NEXT: attn.yield %1 : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%arg4: index, %arg5: index, %arg6: index, %arg7: index, %arg8: tensor<7xf32>):
// CHECK-NEXT: %1 = arith.cmpi sle, %arg7, %arg6 : index
// CHECK-NEXT: attn.yield %1 : i1
// CHECK: return %0 : tensor<1x2x5x8xf32>
// CHECK: diagnostic: attnSdpaOpSetCaptures: capture #1 must be a ranked tensor, got 'tensor<*xf32>'
// CHECK-NEXT: unranked capture: 0
// CHECK-NEXT: diagnostic: attnSdpaOpSetCaptures: capture #0 is null
// CHECK-NEXT: null capture: 0
// CHECK-NEXT: diagnostic: attnSdpaOpSetCaptures: 'func.return' takes no score or mask function (attn.sdpa or attn.sdpa_partial)
// CHECK-NEXT: not an sdpa: 0
// CHECK-NEXT: diagnostic: attnSdpaOpAddMaskFunction: 'func.return' takes no score or mask function (attn.sdpa or attn.sdpa_partial)
// CHECK-NEXT: not an sdpa: 1
// CHECK-NEXT: ids: 1
// CHECK-NEXT: mask args: 5
// CHECK-NEXT: diagnostic: {{.*}}mask_mod{{.*}}
// CHECK: index yield verifies: 0
// CHECK-NEXT: diagnostic: attnSdpaOpAddMaskFunction: the op already has a mask function
// CHECK-NEXT: second mask: 1
// CHECK-NEXT: diagnostic: attnSdpaOpSetCaptures: set the captures before adding a score or mask function (each function's block takes one argument per capture)
// CHECK-NEXT: captures after: 0
// CHECK-NEXT: score args: 6
// CHECK-NEXT: diagnostic: attnYieldOpCreate: the value must not be null
// CHECK-NEXT: null yield: 1

static void printInserted(const char *label, MlirOperation op) {
  printf("%s: ", label);
  mlirOperationPrint(op, print, stdout);
  printf("\n");
}

static void testSinks(MlirContext ctx) {
  printf("== sinks\n");
  MlirModule m = parse(ctx,
      "func.func @f(%q: tensor<1x4x5x8xf32>, %s: tensor<4xf32>, %s2: tensor<2xf32>,\n"
      "             %x: tensor<1x5x32xf32>, %w: tensor<32x32xf32>) { return }");
  MlirBlock b = firstFunctionBody(m);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirOperation ret = mlirBlockGetTerminator(b);
  MlirOperation sdpa = attnSdpaOpCreate(loc, arg(b, 0), arg(b, 0), arg(b, 0), kNone,
                                        attnSdpaOptionsGetDefault());
  mlirBlockInsertOwnedOperationBefore(b, ret, sdpa);
  printf("set: %d\n", attnOpSetSinks(sdpa, arg(b, 1)));
  printInserted("sdpa", sdpa);
  printf("two heads: %d\n", attnOpSetSinks(sdpa, arg(b, 2)));
  printInserted("unchanged", sdpa);
  printf("taken away: %d\n", attnOpSetSinks(sdpa, kNone));
  printInserted("none", sdpa);
  MlirOperation mha = attnMhaOpCreate(loc, arg(b, 3), arg(b, 3), arg(b, 4), arg(b, 4),
                                      arg(b, 4), arg(b, 4), kNone, kNone, kNone, kNone,
                                      kNone, attnMhaOptionsGetDefault(4));
  mlirBlockInsertOwnedOperationBefore(b, ret, mha);
  printf("mha: %d\n", attnOpSetSinks(mha, arg(b, 1)));
  printInserted("mha", mha);
  printf("not an sdpa: %d\n", attnOpSetSinks(ret, arg(b, 1)));
  mlirModuleDestroy(m);
}
// CHECK-LABEL: == sinks
// CHECK: set: 1
// CHECK-NEXT: sdpa: %0 = attn.sdpa %arg0, %arg0, %arg0 sinks(%arg1) : (tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>, tensor<4xf32>) -> tensor<1x4x5x8xf32>
// CHECK-NEXT: diagnostic: 'attn.sdpa' op operand 'sinks' heads (dim 0) is 2, expected 4 (query heads H)
// CHECK-NEXT: two heads: 0
// CHECK-NEXT: unchanged: %0 = attn.sdpa %arg0, %arg0, %arg0 sinks(%arg1)
// CHECK-NEXT: taken away: 1
// CHECK-NEXT: none: %0 = attn.sdpa %arg0, %arg0, %arg0 : (tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>) -> tensor<1x4x5x8xf32>
// CHECK-NEXT: mha: 1
// CHECK-NEXT: mha: %1 = attn.mha %arg3, %arg3, %arg4, %arg4, %arg4, %arg4 sinks(%arg1) {num_heads = 4 : i64}
// CHECK-NEXT: diagnostic: attnOpSetSinks: 'func.return' takes no attention sinks (attn.sdpa, attn.sdpa_partial or attn.mha)
// CHECK-NEXT: not an sdpa: 0

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--functions") == 0) {
    /* Only @built's module, for capi.test to run. */
    MlirContext ctx = newContext();
    MlirModule m = buildFunctions(ctx);
    mlirOperationPrint(mlirModuleGetOperation(m), print, stdout);
    printf("\n");
    mlirModuleDestroy(m);
    mlirContextDestroy(ctx);
    return 0;
  }
  testDialectHandle();
  MlirContext ctx = newContext();
  testAttributes(ctx);
  testFeatureAttributes(ctx);
  testSdpa(ctx);
  testMha(ctx);
  testSdpaFeatures(ctx);
  testMhaFeatures(ctx);
  testRuntimeSeed(ctx);
  testPasses(ctx);
  testPipelines(ctx);
  testFunctions(ctx);
  testSinks(ctx);
  mlirContextDestroy(ctx);
  printf("== done\n");
  return 0;
}
// CHECK: == done
