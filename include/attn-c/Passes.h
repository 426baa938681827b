/*===- attn-c/Passes.h - C API for the attn passes and pipelines -*- C -*-===*\
|*                                                                            *|
|* Pass creation and registration are generated from the pass definitions   *|
|* (mlir-tblgen -gen-pass-capi-header), as upstream does:                    *|
|*   mlirRegisterAttnTransformsPasses(), mlirCreateAttnTransformsAttnFuse(), *|
|*   mlirRegisterAttnConversionPasses(),                                     *|
|*   mlirCreateAttnConversionConvertAttnToLoops(), ...                       *|
|* Pipelines are built into an MlirOpPassManager from typed options.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef ATTN_C_PASSES_H
#define ATTN_C_PASSES_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdbool.h>
#include <stdint.h>

#include "attn/Conversion/Passes.capi.h.inc"
#include "attn/GPU/Passes.capi.h.inc"
#include "attn/Transforms/Passes.capi.h.inc"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers every attn pass by name (both generated groups). */
MLIR_CAPI_EXPORTED void attnRegisterPasses(void);

/* Registers attn-reference-pipeline and attn-cpu-pipeline by name, for
 * mlirParsePassPipeline / mlirOpPassManagerAddPipeline. */
MLIR_CAPI_EXPORTED void attnRegisterPipelines(void);

/* Inserts into `registry` every dialect, interface implementation and
 * extension the attn lowerings need (including func, arith, tensor). */
MLIR_CAPI_EXPORTED void
attnRegisterLoweringDependencies(MlirDialectRegistry registry);

/* Options of attn-cpu-pipeline (see docs/passes.md). */
typedef struct AttnCpuPipelineOptions {
  int64_t tileQ;       /* query rows per tile (default 64) */
  int64_t tileK;       /* keys per tile (default 64) */
  int64_t vectorWidth; /* f32 lanes per vector (default 8) */
  int64_t threads;     /* worker threads, 0: one per core (default 0) */
  bool lowerToLLVM;    /* lower to the LLVM dialect (default true) */
} AttnCpuPipelineOptions;

MLIR_CAPI_EXPORTED AttnCpuPipelineOptions attnCpuPipelineOptionsGetDefault(void);

/* Appends attn-cpu-pipeline to `pm` (a module-level pass manager). Options
 * are checked when the pipeline runs: bad ones fail the run with a
 * diagnostic. */
MLIR_CAPI_EXPORTED void attnBuildCpuPipeline(MlirOpPassManager pm,
                                             AttnCpuPipelineOptions options);

/* Appends attn-cpu-pipeline to `pm` with options in the pipeline's textual
 * form, every option it has (docs/passes.md), not only the struct's subset:
 * e.g. "tile-q=32 bf16-dot=false min-work-items=4"; "" takes the defaults.
 * The options are parsed and checked now: a bad one (unknown, unparsable,
 * or a tiling convert-attn-to-loops refuses) returns failure, passes one
 * message to `callback` (if not null) and adds nothing to `pm`. */
MLIR_CAPI_EXPORTED MlirLogicalResult
attnBuildCpuPipelineFromString(MlirOpPassManager pm, MlirStringRef options,
                               MlirStringCallback callback, void *userData);

/* Appends attn-reference-pipeline to `pm`. */
MLIR_CAPI_EXPORTED void attnBuildReferencePipeline(MlirOpPassManager pm,
                                                   bool lowerToLLVM);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_PASSES_H */
