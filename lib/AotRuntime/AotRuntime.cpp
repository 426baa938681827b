//===- AotRuntime.cpp - calling ahead-of-time compiled attn functions -----===//
//
// The C entry points of libattn_aot (attn-c/Aot.h): the checks the JIT path
// makes before a call (arity, rank, static dims, the relations between
// dynamic dims, key-length values), the choice of a GPU variant, and the
// call itself through the packed interface shared with the JIT.
//
//===----------------------------------------------------------------------===//
#include "attn-c/Aot.h"

#include "attn/Runtime/CudaRuntime.h"
#include "attn/Runtime/DimRelations.h"
#include "attn/Runtime/PackedCall.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

thread_local std::string lastError;
thread_local double lastKernelMs = 0;

int fail(int status, std::string message) {
  lastError = std::move(message);
  return status;
}

std::string str(int64_t v) { return std::to_string(v); }

/// "float32[1,8,?,64]".
std::string specString(int64_t dtype, const int64_t *shape, int64_t rank) {
  std::string s = std::string(attn_aot_dtype_name(dtype)) + "[";
  for (int64_t d = 0; d < rank; ++d)
    s += (d ? "," : "") + (shape[d] < 0 ? std::string("?") : str(shape[d]));
  return s + "]";
}

int64_t numelOf(const int64_t *shape, int64_t rank) {
  int64_t n = 1;
  for (int64_t d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}

std::string shapeString(const int64_t *shape, int64_t rank) {
  rank = std::max<int64_t>(0, std::min<int64_t>(rank, ATTN_AOT_MAX_RANK));
  std::string s = "[";
  for (int64_t d = 0; d < rank; ++d)
    s += (d ? "," : "") + str(shape[d]);
  return s + "]";
}

/// Offsets of each argument's dims in a concatenated shape array.
std::vector<int64_t> offsets(const int64_t *ranks, int64_t n) {
  std::vector<int64_t> at(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    at[i + 1] = at[i] + ranks[i];
  return at;
}

int64_t readInteger(const void *data, int64_t dtype, int64_t index) {
  if (dtype == ATTN_AOT_I64)
    return static_cast<const int64_t *>(data)[index];
  return static_cast<const int32_t *>(data)[index];
}

int checkInputs(const attn_aot_kernel *k, const attn_tensor *inputs, int64_t n) {
  if (!k)
    return fail(ATTN_AOT_ERROR_ARGUMENT, "no kernel");
  if (k->abi_version != ATTN_AOT_ABI_VERSION)
    return fail(ATTN_AOT_ERROR_ABI,
                "kernel '" + std::string(k->name ? k->name : "?") +
                    "' was built for AOT ABI version " + str(k->abi_version) +
                    ", this runtime is version " + str(ATTN_AOT_ABI_VERSION));
  if (n != k->num_inputs)
    return fail(ATTN_AOT_ERROR_ARGUMENT,
                "the function takes " + str(k->num_inputs) + " inputs, got " + str(n));
  if (n && !inputs)
    return fail(ATTN_AOT_ERROR_ARGUMENT, "inputs is NULL");
  std::vector<int64_t> at = offsets(k->input_ranks, n);
  for (int64_t i = 0; i < n; ++i) {
    const attn_tensor &t = inputs[i];
    int64_t rank = k->input_ranks[i];
    const int64_t *spec = k->input_shapes + at[i];
    std::string expected = specString(k->input_dtypes[i], spec, rank);
    if (t.rank != rank)
      return fail(ATTN_AOT_ERROR_ARGUMENT,
                  "input #" + str(i) + ": rank " + str(t.rank) + ", expected rank " +
                      str(rank) + " " + expected);
    for (int64_t d = 0; d < rank; ++d) {
      if (t.shape[d] < 0)
        return fail(ATTN_AOT_ERROR_ARGUMENT, "input #" + str(i) + ": negative size " +
                                                 str(t.shape[d]) + " at dim " + str(d));
      if (spec[d] >= 0 && spec[d] != t.shape[d])
        return fail(ATTN_AOT_ERROR_ARGUMENT,
                    "input #" + str(i) + ": shape " + shapeString(t.shape, rank) +
                        " does not match " + expected + " at dim " + str(d));
    }
    if (numelOf(t.shape, rank) && !t.data)
      return fail(ATTN_AOT_ERROR_ARGUMENT, "input #" + str(i) + ": data is NULL");
  }
  // Dynamic dims the function's ops tie together.
  std::string mismatch = attn::aot::checkDimRelations(
      k->dim_links, k->num_dim_links, k->class_divisors, k->num_class_divisors,
      [&](int64_t in, int64_t dim) { return inputs[in].shape[dim]; });
  if (!mismatch.empty())
    return fail(ATTN_AOT_ERROR_ARGUMENT, mismatch);
  // Key lengths within [0, Tk].
  for (int64_t l = 0; l < k->num_key_length_inputs; ++l) {
    const int64_t *e = k->key_length_inputs + 4 * l;
    int64_t in = e[0];
    int64_t bound = e[1] < 0 ? e[3] : inputs[e[1]].shape[e[2]];
    int64_t numel = numelOf(inputs[in].shape, inputs[in].rank);
    const void *values = inputs[in].data;
    std::vector<int64_t> host;
    if (k->device_resident && numel) {
      // The lengths live on the device: look at a host copy.
      host.resize(numel);
      std::string why = attn::runtime::cudaCopySync(
          host.data(), values, numel * attn_aot_dtype_size(k->input_dtypes[in]));
      if (!why.empty())
        return fail(ATTN_AOT_ERROR_DEVICE,
                    "reading the key lengths (input #" + str(in) + ") failed: " + why);
      values = host.data();
    }
    for (int64_t j = 0; j < numel; ++j) {
      int64_t len = readInteger(values, k->input_dtypes[in], j);
      if (len < 0 || len > bound)
        return fail(ATTN_AOT_ERROR_ARGUMENT,
                    "key lengths (input #" + str(in) + ") element " + str(j) + " is " +
                        str(len) + ", outside [0, Tk = " + str(bound) + "]");
    }
  }
  return ATTN_AOT_OK;
}

/// Whether the caller's output buffer has the result's shape; else the
/// error status (and message).
int checkOutputShape(size_t i, const attn_tensor &out, const attn::runtime::ResultView &r) {
  bool same = out.rank == r.rank;
  for (int64_t d = 0; same && d < r.rank; ++d)
    same = out.shape[d] == r.shape[d];
  if (same)
    return ATTN_AOT_OK;
  return fail(ATTN_AOT_ERROR_ARGUMENT,
              "output #" + str(i) + ": the buffer given has shape " +
                  shapeString(out.shape, out.rank) + ", the result is " +
                  shapeString(r.shape, r.rank));
}

/// A device-resident kernel's result `r`: handed over as it is when the
/// caller left `out.data` NULL (a fresh, dense device buffer), else copied
/// into the caller's device buffer and freed. Freed after a failed run.
void deviceResult(size_t i, const attn::runtime::ResultView &r, attn_tensor &out,
                  size_t elementSize, const std::string &gpuError, int &status) {
  auto release = [&] {
    if (r.allocated)
      attn::runtime::cudaFree(r.allocated);
  };
  if (!gpuError.empty() || status != ATTN_AOT_OK)
    return release();
  int64_t numel = numelOf(r.shape, r.rank);
  std::vector<int64_t> dense = attn::runtime::rowMajorStridesRaw(r.shape, r.rank);
  bool isDense = r.data == r.allocated;
  for (int64_t d = 0; d < r.rank; ++d)
    isDense = isDense && (r.shape[d] == 1 || r.strides[d] == dense[d]);
  if (r.rank > ATTN_AOT_MAX_RANK || !isDense) {
    status = fail(ATTN_AOT_ERROR_ARGUMENT, "output #" + str(i) +
                                               " is not a dense device buffer of rank <= " +
                                               str(ATTN_AOT_MAX_RANK));
    return release();
  }
  if (!out.data) {
    out.data = r.allocated;
    out.rank = r.rank;
    for (int64_t d = 0; d < r.rank; ++d)
      out.shape[d] = r.shape[d];
    return;
  }
  if ((status = checkOutputShape(i, out, r)) != ATTN_AOT_OK)
    return release();
  std::string why = attn::runtime::cudaCopySync(out.data, r.data, numel * elementSize);
  if (!why.empty())
    status = fail(ATTN_AOT_ERROR_DEVICE, "copying output #" + str(i) + " failed: " + why);
  release();
}

int chipNumber(const char *target) {
  if (!target || std::strncmp(target, "sm_", 3) != 0)
    return -1;
  return std::atoi(target + 3);
}

/// The variant to run here, or null with the error recorded and its
/// status in `status`.
const attn_aot_variant *selectVariant(const attn_aot_kernel *k, int &status) {
  status = ATTN_AOT_ERROR_DEVICE;
  if (k->num_variants <= 0) {
    status = fail(ATTN_AOT_ERROR_ABI, "kernel has no compiled variant");
    return nullptr;
  }
  if (std::strcmp(k->pipeline, "gpu") != 0)
    return &k->variants[0];
  std::string why = attn::runtime::cudaUnavailableReason();
  if (!why.empty()) {
    fail(ATTN_AOT_ERROR_DEVICE, "kernel '" + std::string(k->name) +
                                    "' needs an NVIDIA GPU: " + why);
    return nullptr;
  }
  std::string chip = attn::runtime::cudaDeviceChip();
  int device = chipNumber(chip.c_str());
  const attn_aot_variant *best = nullptr;
  std::string built;
  for (int64_t v = 0; v < k->num_variants; ++v) {
    int c = chipNumber(k->variants[v].target);
    built += (v ? ", " : "") + std::string(k->variants[v].target);
    if (c == device)
      return &k->variants[v];
    // An older chip's PTX, compiled for this one by the driver.
    if (c >= 0 && c < device && (!best || c > chipNumber(best->target)))
      best = &k->variants[v];
  }
  if (!best)
    fail(ATTN_AOT_ERROR_DEVICE, "kernel '" + std::string(k->name) + "' was built for " +
                                    built + "; the device is " + chip);
  return best;
}

} // namespace

extern "C" {

const char *attn_aot_dtype_name(int64_t dtype) {
  switch (dtype) {
  case ATTN_AOT_F32:
    return "float32";
  case ATTN_AOT_F16:
    return "float16";
  case ATTN_AOT_BOOL:
    return "bool";
  case ATTN_AOT_I32:
    return "int32";
  case ATTN_AOT_I64:
    return "int64";
  case ATTN_AOT_BF16:
    return "bfloat16";
  case ATTN_AOT_I8:
    return "int8";
  case ATTN_AOT_F64:
    return "float64";
  case ATTN_AOT_F8E4M3:
    return "float8_e4m3fn";
  }
  return "?";
}

size_t attn_aot_dtype_size(int64_t dtype) {
  switch (dtype) {
  case ATTN_AOT_F32:
  case ATTN_AOT_I32:
    return 4;
  case ATTN_AOT_F16:
  case ATTN_AOT_BF16:
    return 2;
  case ATTN_AOT_BOOL:
  case ATTN_AOT_I8:
  case ATTN_AOT_F8E4M3:
    return 1;
  case ATTN_AOT_I64:
  case ATTN_AOT_F64:
    return 8;
  }
  return 0;
}

const char *attn_aot_last_error(void) { return lastError.c_str(); }

double attn_aot_last_kernel_ms(void) { return lastKernelMs; }

void attn_aot_free(void *data) { std::free(data); }

void attn_aot_device_free(void *data) {
  if (data)
    attn::runtime::cudaFree(data);
}

int attn_aot_check(const attn_aot_kernel *kernel, const attn_tensor *inputs,
                   int64_t num_inputs) {
  lastError.clear();
  return checkInputs(kernel, inputs, num_inputs);
}

const char *attn_aot_selected_target(const attn_aot_kernel *kernel) {
  lastError.clear();
  if (!kernel)
    return nullptr;
  int status;
  const attn_aot_variant *v = selectVariant(kernel, status);
  return v ? v->target : nullptr;
}

int attn_aot_call(const attn_aot_kernel *k, const attn_tensor *inputs,
                  int64_t num_inputs, attn_tensor *outputs, int64_t num_outputs) {
  lastError.clear();
  lastKernelMs = 0;
  if (int status = checkInputs(k, inputs, num_inputs))
    return status;
  if (num_outputs != k->num_outputs)
    return fail(ATTN_AOT_ERROR_ARGUMENT, "the function has " + str(k->num_outputs) +
                                             " outputs, got " + str(num_outputs));
  if (num_outputs && !outputs)
    return fail(ATTN_AOT_ERROR_ARGUMENT, "outputs is NULL");
  int selectStatus;
  const attn_aot_variant *variant = selectVariant(k, selectStatus);
  if (!variant)
    return selectStatus;
  bool gpu = std::strcmp(k->pipeline, "gpu") == 0;

  std::vector<const void *> data;
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t i = 0; i < num_inputs; ++i) {
    data.push_back(inputs[i].data);
    shapes.emplace_back(inputs[i].shape, inputs[i].shape + inputs[i].rank);
  }
  std::vector<int64_t> ranks(k->output_ranks, k->output_ranks + num_outputs);
  std::vector<size_t> sizes;
  for (int64_t i = 0; i < num_outputs; ++i)
    sizes.push_back(attn_aot_dtype_size(k->output_dtypes[i]));

  std::string gpuError, earlier;
  if (gpu) {
    // An error left by loading the modules at start-up (e.g. another
    // chip's variant whose PTX this driver could not compile) concerns this
    // call only if its own kernels then fail to launch: keep it for the
    // message.
    earlier = attn::runtime::takeCudaError();
    attn::runtime::takeGpuKernelMs();
  }
  auto afterCall = [&] {
    if (gpu) {
      lastKernelMs = attn::runtime::takeGpuKernelMs();
      gpuError = attn::runtime::takeCudaError();
    }
    return gpuError.empty();
  };
  int status = ATTN_AOT_OK;
  bool device = k->device_resident != 0;
  auto sink = [&](size_t i, const attn::runtime::ResultView &r) {
    attn_tensor &out = outputs[i];
    if (device) {
      deviceResult(i, r, out, sizes[i], gpuError, status);
      return;
    }
    if (status != ATTN_AOT_OK)
      return;
    if (r.rank > ATTN_AOT_MAX_RANK) {
      status = fail(ATTN_AOT_ERROR_ARGUMENT, "output #" + str(i) + " has rank " +
                                                 str(r.rank) + ", more than the API's " +
                                                 str(ATTN_AOT_MAX_RANK));
      return;
    }
    size_t es = sizes[i];
    int64_t numel = numelOf(r.shape, r.rank);
    if (out.data) {
      if ((status = checkOutputShape(i, out, r)) != ATTN_AOT_OK)
        return;
      // Written in place: the kernel took the output as its destination.
      if (r.data == out.data)
        return;
    } else {
      out.data = std::malloc(numel ? numel * es : 1);
      if (!out.data) {
        status = fail(ATTN_AOT_ERROR_ALLOCATION,
                      "could not allocate " + str(numel * es) + " bytes for output #" +
                          str(i));
        return;
      }
      out.rank = r.rank;
      for (int64_t d = 0; d < r.rank; ++d)
        out.shape[d] = r.shape[d];
    }
    std::vector<int64_t> dst = attn::runtime::rowMajorStridesRaw(r.shape, r.rank);
    attn::runtime::copyStridedRaw(r.data, r.strides, static_cast<uint8_t *>(out.data),
                                  dst.data(), r.shape, r.rank, es);
  };
  // Outputs the runtime fills in are taken back when the call fails: the
  // caller's struct never holds a buffer after an error it did not give.
  std::vector<bool> given(num_outputs);
  for (int64_t i = 0; i < num_outputs; ++i)
    given[i] = outputs[i].data != nullptr;
  auto finish = [&](int result) {
    if (result != ATTN_AOT_OK)
      for (int64_t i = 0; i < num_outputs; ++i)
        if (!given[i] && outputs[i].data) {
          if (device)
            attn::runtime::cudaFree(outputs[i].data);
          else
            std::free(outputs[i].data);
          outputs[i].data = nullptr;
        }
    return result;
  };
  // The outputs the caller gave, as the entry's destinations where it takes
  // them (attn-result-destinations): each a dense row-major buffer, passed
  // only where it overlaps no input and no other output (the kernel could
  // overwrite what it has yet to read). The kernel writes into one whose
  // shape is the result's, and the sink then has nothing to copy.
  std::vector<attn::runtime::ResultDestination> destinations;
  if (k->result_destinations && !device) {
    auto span = [](const attn_tensor &t, size_t es) -> attn::runtime::ByteSpan {
      auto base = reinterpret_cast<uintptr_t>(t.data);
      return {base, base + numelOf(t.shape, t.rank) * es};
    };
    std::vector<attn::runtime::ByteSpan> inSpans, outSpans;
    for (int64_t i = 0; i < num_inputs; ++i)
      inSpans.push_back(span(inputs[i], attn_aot_dtype_size(k->input_dtypes[i])));
    for (int64_t i = 0; i < num_outputs; ++i)
      outSpans.push_back(outputs[i].data ? span(outputs[i], sizes[i])
                                         : attn::runtime::ByteSpan{0, 0});
    destinations.resize(num_outputs);
    for (int64_t i = 0; i < num_outputs; ++i)
      if (outputs[i].data && outputs[i].rank == ranks[i] &&
          !attn::runtime::overlapsOthers(i, outSpans, inSpans))
        destinations[i] = {outputs[i].data,
                           std::vector<int64_t>(outputs[i].shape, outputs[i].shape + ranks[i])};
  }
  uint64_t failedBytes = 0;
  // Device results reach the sink even after a failed run, to be freed.
  auto after = [&] { return afterCall() || device; };
  if (!attn::runtime::callPacked(variant->entry, data, shapes, ranks, sizes, after, sink,
                                 failedBytes, /*freeResults=*/!device,
                                 destinations.empty() ? nullptr : &destinations))
    return finish(fail(ATTN_AOT_ERROR_ALLOCATION,
                       "the compiled code could not allocate " + str(failedBytes) +
                           " bytes; the call was abandoned"));
  if (!gpuError.empty())
    return finish(fail(ATTN_AOT_ERROR_DEVICE,
                       "the GPU run failed: " + gpuError +
                           (earlier.empty() ? "" : " (before the call: " + earlier + ")")));
  return finish(status);
}

} // extern "C"
