/*===- attn-c/Aot.h - calling ahead-of-time compiled attn functions -*- C -*-===*\
|*                                                                            *|
|* attn-aot compiles one function of an attn module into an object file and   *|
|* a header that declares `<name>_kernel` (an attn_aot_kernel) and a          *|
|* `<name>(inputs, outputs)` entry. The object needs only this runtime        *|
|* (libattn_aot: argument checks, the guarded allocator, the CUDA driver      *|
|* loaded with dlopen for GPU kernels) and, for CPU kernels, the OpenMP       *|
|* runtime (libomp) — no libMLIR or libLLVM.                                  *|
|*                                                                            *|
|* A call: inputs are dense row-major buffers with their shapes; every        *|
|* dtype, rank, static dim and every relation between dynamic dims that the   *|
|* function's ops require (e.g. K and V of the same length) is checked before *|
|* the compiled code runs, and so is every key length (within [0, Tk]).       *|
|* Outputs: give `data` (a buffer of the result's shape, which is checked) or *|
|* leave it NULL to receive a malloc'ed buffer (free it with                 *|
|* attn_aot_free). A nonzero status comes with attn_aot_last_error(), and   *|
|* leaves every output that was NULL NULL.                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef ATTN_C_AOT_H
#define ATTN_C_AOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of attn_aot_kernel; a kernel built for another version is
 * refused with ATTN_AOT_ERROR_ABI. */
#define ATTN_AOT_ABI_VERSION 4
#define ATTN_AOT_MAX_RANK 8

typedef enum attn_aot_dtype {
  ATTN_AOT_F32 = 0,
  ATTN_AOT_F16 = 1,  /* IEEE half, 2-byte words */
  ATTN_AOT_BOOL = 2, /* one byte per element, 0 or 1 */
  ATTN_AOT_I32 = 3,
  ATTN_AOT_I64 = 4,
  ATTN_AOT_BF16 = 5, /* bfloat16, 2-byte words (the high half of an f32) */
  ATTN_AOT_I8 = 6,   /* int8 (quantised K/V caches) */
  ATTN_AOT_F64 = 7,  /* float64 (checking: the reference lowering) */
  ATTN_AOT_F8E4M3 = 8 /* fp8 e4m3 (OCP E4M3FN, one byte; quantised K/V caches) */
} attn_aot_dtype;

typedef enum attn_aot_status {
  ATTN_AOT_OK = 0,
  ATTN_AOT_ERROR_ARGUMENT = 1, /* wrong count, rank, shape or value */
  ATTN_AOT_ERROR_ALLOCATION = 2, /* the compiled code could not allocate */
  ATTN_AOT_ERROR_DEVICE = 3,   /* no usable GPU, or a CUDA call failed */
  ATTN_AOT_ERROR_ABI = 4       /* kernel built for another runtime version */
} attn_aot_status;

/* One input or output of a call. */
typedef struct attn_tensor {
  void *data;
  int64_t rank;
  int64_t shape[ATTN_AOT_MAX_RANK];
} attn_tensor;

/* One compiled variant: the host CPU code, or one GPU chip's. */
typedef struct attn_aot_variant {
  const char *target;   /* "cpu", or the chip: "sm_80", "sm_90", ... */
  void (*entry)(void **); /* packed: args[0] -> result descriptors, then inputs */
} attn_aot_variant;

/* What attn-aot emits beside the code (all arrays in argument order). */
typedef struct attn_aot_kernel {
  int64_t abi_version;
  const char *name;     /* the header's prefix */
  const char *function; /* the MLIR function it came from */
  const char *pipeline; /* "cpu", "reference" or "gpu" */
  int64_t num_inputs, num_outputs;
  const int64_t *input_dtypes;  /* attn_aot_dtype */
  const int64_t *input_ranks;
  const int64_t *input_shapes;  /* ranks concatenated; -1: dynamic */
  const int64_t *output_dtypes;
  const int64_t *output_ranks;
  const int64_t *output_shapes; /* -1: known after the call */
  /* Relations between dynamic input dims, derived from the attn ops' shape
   * rules: (input, dim, class, multiple, coef) entries; every dim of a class
   * is `coef` times the class's unit u, and u is a multiple of `multiple`
   * (e.g. with 6 query and 2 key/value heads, Wq's rows are 3u and Wk's u,
   * u a multiple of 2). */
  int64_t num_dim_links;
  const int64_t *dim_links;
  /* (class, divisor class) pairs: the first class's unit must be a multiple
   * of the second's (e.g. query heads of key/value heads). */
  int64_t num_class_divisors;
  const int64_t *class_divisors;
  /* Inputs holding key lengths: (input, bound input, bound dim, bound) with
   * bound input -1 when the bound is the constant `bound`. */
  int64_t num_key_length_inputs;
  const int64_t *key_length_inputs;
  int64_t num_variants;
  const attn_aot_variant *variants;
  /* 1: a GPU kernel built with --device-resident: inputs and outputs are
   * device buffers (see attn_aot_call). */
  int64_t device_resident;
  /* 1: the entry takes a destination per result after its inputs (cpu
   * pipeline, attn-result-destinations): attn_aot_call passes an output the
   * caller gave, when it overlaps no input and no other output, and the
   * kernel writes the result there instead of into a buffer of its own that
   * is then copied. */
  int64_t result_destinations;
} attn_aot_kernel;

/* Runs `kernel`. For a GPU kernel the variant is the one built for the
 * device's chip, else the newest one older than it (its PTX compiled by the
 * driver). Its inputs and outputs are host buffers, copied to the device and
 * back inside the call; or, for a kernel built with --device-resident
 * (device_resident = 1), device buffers (CUDA device pointers of the
 * current device, e.g. torch's data_ptr()): no copy, and an output left NULL
 * receives a device buffer to free with attn_aot_device_free (one given is
 * filled by a device-to-device copy). */
int attn_aot_call(const attn_aot_kernel *kernel, const attn_tensor *inputs,
                  int64_t num_inputs, attn_tensor *outputs,
                  int64_t num_outputs);

/* Checks the inputs as attn_aot_call would, without running anything. */
int attn_aot_check(const attn_aot_kernel *kernel, const attn_tensor *inputs,
                   int64_t num_inputs);

/* The message of this thread's last failed call ("" after a success). */
const char *attn_aot_last_error(void);

/* GPU kernels: milliseconds this thread's last call spent in kernels
 * (CUDA events around each launch); 0 for CPU kernels. */
double attn_aot_last_kernel_ms(void);

/* The target of the variant a call would run: "cpu", or a chip; NULL (and
 * attn_aot_last_error set) when none can run here. */
const char *attn_aot_selected_target(const attn_aot_kernel *kernel);

/* "float32", "float16", "bool", "int32", "int64", "bfloat16". */
const char *attn_aot_dtype_name(int64_t dtype);
/* Bytes per element. */
size_t attn_aot_dtype_size(int64_t dtype);

/* Frees an output buffer the runtime allocated. */
void attn_aot_free(void *data);

/* Frees a device output of a device-resident kernel. */
void attn_aot_device_free(void *data);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_AOT_H */
