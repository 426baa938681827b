/*===- capi-example.c - build and lower attention from C -------------------===*\
|*                                                                            *|
|* Builds func @attend(q, k, v) { attn.sdpa causal } with the attn C API,     *|
|* prints it, lowers it with attn-cpu-pipeline and checks that only the LLVM  *|
|* dialect is left. Exit 0 on success.                                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#include "attn-c/Dialect.h"
#include "attn-c/Passes.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void print(MlirStringRef s, void *user) {
  fwrite(s.data, 1, s.length, (FILE *)user);
}

static MlirNamedAttribute named(MlirContext ctx, const char *name,
                                MlirAttribute a) {
  return mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, mlirStringRefCreateFromCString(name)), a);
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  attnRegisterLoweringDependencies(registry); /* attn, func, arith, ... */
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(ctx);
  MlirLocation loc = mlirLocationUnknownGet(ctx);

  /* tensor<1x2x?x16xf32> for q, k, v and the result. */
  int64_t shape[4] = {1, 2, mlirShapedTypeGetDynamicSize(), 16};
  MlirType t = mlirRankedTensorTypeGet(4, shape, mlirF32TypeGet(ctx),
                                       mlirAttributeGetNull());
  MlirType args[3] = {t, t, t};
  MlirLocation locs[3] = {loc, loc, loc};
  MlirRegion body = mlirRegionCreate();
  MlirBlock block = mlirBlockCreate(3, args, locs);
  mlirRegionAppendOwnedBlock(body, block);

  AttnSdpaOptions opts = attnSdpaOptionsGetDefault();
  opts.causal = AttnCausalTopLeft;
  MlirOperation sdpa = attnSdpaOpCreate(
      loc, mlirBlockGetArgument(block, 0), mlirBlockGetArgument(block, 1),
      mlirBlockGetArgument(block, 2), (MlirValue){NULL}, opts);
  if (mlirOperationIsNull(sdpa))
    return 1;
  mlirBlockAppendOwnedOperation(block, sdpa);
  MlirValue result = mlirOperationGetResult(sdpa, 0);
  MlirOperationState ret = mlirOperationStateGet(
      mlirStringRefCreateFromCString("func.return"), loc);
  mlirOperationStateAddOperands(&ret, 1, &result);
  mlirBlockAppendOwnedOperation(block, mlirOperationCreate(&ret));

  MlirType fnType = mlirFunctionTypeGet(ctx, 3, args, 1, &t);
  MlirNamedAttribute attrs[2] = {
      named(ctx, "sym_name",
            mlirStringAttrGet(ctx, mlirStringRefCreateFromCString("attend"))),
      named(ctx, "function_type", mlirTypeAttrGet(fnType))};
  MlirOperationState fn = mlirOperationStateGet(
      mlirStringRefCreateFromCString("func.func"), loc);
  mlirOperationStateAddAttributes(&fn, 2, attrs);
  mlirOperationStateAddOwnedRegions(&fn, 1, &body);
  MlirModule module = mlirModuleCreateEmpty(loc);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(module),
                                mlirOperationCreate(&fn));
  MlirOperation moduleOp = mlirModuleGetOperation(module);
  if (!mlirOperationVerify(moduleOp))
    return 1;
  mlirOperationPrint(moduleOp, print, stdout);
  printf("\n");

  MlirPassManager pm = mlirPassManagerCreate(ctx);
  AttnCpuPipelineOptions cpu = attnCpuPipelineOptionsGetDefault();
  cpu.tileQ = 32;
  attnBuildCpuPipeline(mlirPassManagerGetAsOpPassManager(pm), cpu);
  if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, moduleOp)))
    return 1;
  /* After the pipeline only LLVM dialect ops are left at the top level,
   * and @attend is an llvm.func. */
  int ok = 1, found = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
    ok &= s.length > 5 && strncmp(s.data, "llvm.", 5) == 0;
    MlirAttribute sym = mlirOperationGetAttributeByName(
        op, mlirStringRefCreateFromCString("sym_name"));
    if (!mlirAttributeIsNull(sym) && mlirAttributeIsAString(sym)) {
      MlirStringRef n = mlirStringAttrGetValue(sym);
      if (n.length == 6 && strncmp(n.data, "attend", 6) == 0) {
        found = 1;
        printf("lowered: @attend is a %.*s\n", (int)s.length, s.data);
      }
    }
  }
  ok &= found;

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  printf(ok ? "capi-example: OK\n" : "capi-example: FAILED\n");
  return ok ? 0 : 1;
}
