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
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

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
static MlirBlock firstFunctionBody(MlirModule m) {
  MlirOperation fn = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
  return mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
}

static MlirValue arg(MlirBlock b, int i) { return mlirBlockGetArgument(b, i); }
static const MlirValue kNone = {NULL};

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

static void testSdpa(MlirContext ctx) {
  printf("== sdpa\n");
  MlirModule m = parse(ctx,
      "func.func @f(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x7x8xf32>,\n"
      "             %v: tensor<1x2x7x4xf32>, %m: tensor<5x7xi1>,\n"
      "             %bad: tensor<1x2x7x9xf32>, %u: tensor<*xf32>,\n"
      "             %mem: memref<1x2x7x8xf32>) { return }");
  MlirBlock b = firstFunctionBody(m);
  AttnSdpaOptions d = attnSdpaOptionsGetDefault();
  printf("defaults: scale=%g causal=%d rate=%g seed=%lld\n", d.scale, d.causal,
         d.dropoutRate, (long long)d.dropoutSeed);
  MlirOperation plain = attnSdpaOpCreate(mlirLocationUnknownGet(ctx), arg(b, 0),
                                         arg(b, 1), arg(b, 2), kNone, d);
  printOp("plain", b, plain);
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
// CHECK: defaults: scale=0 causal=0 rate=0 seed=0
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
  printf("defaults: heads=%lld kv=%lld layout=%d scale=%g causal=%d rate=%g\n",
         (long long)d.numHeads, (long long)d.numKvHeads, d.layout, d.scale,
         d.causal, d.dropoutRate);
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
// CHECK: defaults: heads=4 kv=0 layout=0 scale=0 causal=0 rate=0
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

static const char *kSdpaModule =
    "func.func @f(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x7x8xf32>,\n"
    "             %v: tensor<1x2x7x8xf32>) -> tensor<1x2x5x8xf32> {\n"
    "  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}\n"
    "      : (tensor<1x2x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>)\n"
    "        -> tensor<1x2x5x8xf32>\n"
    "  return %o : tensor<1x2x5x8xf32>\n"
    "}\n";

/* Runs `pass` alone on a fresh sdpa module and prints the names of the ops
 * in the function body. */
static void runAndListOps(MlirContext ctx, const char *label, MlirPass pass,
                          MlirPass second) {
  MlirModule m = parse(ctx, kSdpaModule);
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

  /* Registration by name, then textual pipelines. */
  mlirRegisterAttnTransformsPasses();
  mlirRegisterAttnConversionPasses();
  mlirRegisterAttnGPUPasses();
  mlirRegisterAttnTransformsAttnDecompose();
  mlirRegisterAttnTransformsAttnFuse();
  mlirRegisterAttnConversionConvertAttnToLinalg();
  mlirRegisterAttnConversionConvertAttnToLoops();
  mlirRegisterAttnConversionConvertAttnToGpu();
  mlirRegisterAttnGPUAttnEmulateGpuSchedule();
  mlirRegisterAttnGPUAttnMapScheduleToGpu();
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
}
// CHECK-LABEL: == pipelines
// CHECK: cpu defaults: tileQ=64 tileK=64 vectorWidth=8 threads=0 lowerToLLVM=1
// CHECK: reference: ok, first op func.func
// CHECK: reference to llvm: ok, first op llvm.
// CHECK: cpu tile 16: ok, first op func.func
// CHECK: cpu to llvm: ok, first op llvm.
// CHECK: diagnostic: {{.*}}tile-k{{.*}}
// CHECK: cpu bad tile: failed

int main(void) {
  testDialectHandle();
  MlirContext ctx = newContext();
  testAttributes(ctx);
  testSdpa(ctx);
  testMha(ctx);
  testPasses(ctx);
  testPipelines(ctx);
  mlirContextDestroy(ctx);
  printf("== done\n");
  return 0;
}
// CHECK: == done
