//===- AttnModule.cpp - attn_mlir._attn_mlir: attn::Kernel for Python -----===//
//
// The thin native layer of the attn_mlir package: attn::Kernel (compile once,
// call many times, attn/Attention.h) over Python buffers. Everything about
// NumPy/torch conversion, argument defaults and caching lives in the Python
// files of the package; this file only
//   - binds SdpaSpec / MhaSpec as classes and builds CompileOptions from keyword arguments,
//   - compiles (the GIL released) and turns a failed attn::Status into
//     attn_mlir.AttnError with the runtime's message,
//   - calls a kernel on objects with the buffer protocol (NumPy arrays),
//     strides in bytes turned into elements, the GIL released while the
//     compiled code runs.
//
// It is compiled with exceptions and RTTI (pybind11 needs both); the runtime
// it links (AttnRuntime) is not, and throws nothing: every error comes back
// as an attn::Status.
//
//===----------------------------------------------------------------------===//

#include "attn/Attention.h"
#include "attn/Runtime/HostTensor.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// The exception type every failed attn::Status becomes (set in the module
/// init; attn_mlir re-exports it).
PyObject *attnError = nullptr;

[[noreturn]] void raise(const attn::Status &s) {
  PyErr_SetString(attnError, s.message().c_str());
  throw py::error_already_set();
}

void check(const attn::Status &s) {
  if (!s.ok())
    raise(s);
}

/// Element types by name, as the Python side spells them (the runtime's
/// dtypeName: "float32", "float16", "bfloat16", "float64", "bool", "int8",
/// "int32", "int64", "float8_e4m3fn").
attn::ElementType elementType(const std::string &name) {
  for (attn::ElementType t :
       {attn::ElementType::F32, attn::ElementType::F16, attn::ElementType::BF16,
        attn::ElementType::Bool, attn::ElementType::I8, attn::ElementType::I32,
        attn::ElementType::I64, attn::ElementType::F64, attn::ElementType::F8E4M3})
    if (attn::runtime::dtypeName(t) == name)
      return t;
  throw py::type_error("attn_mlir: unknown element type '" + name +
                       "' (float32, float16, bfloat16, float64, bool, int8, int32, int64, "
                       "float8_e4m3fn)");
}

const char *elementTypeName(attn::ElementType t) {
  return attn::runtime::dtypeName(t).data();
}

size_t elementSize(attn::ElementType t) { return attn::runtime::dtypeSize(t); }

/// The Python names of an enum's values: one table serves both ways.
template <typename E>
using Names = std::initializer_list<std::pair<E, const char *>>;

constexpr Names<attn::Causal> kCausalNames = {{attn::Causal::None, "none"},
                                              {attn::Causal::TopLeft, "top_left"},
                                              {attn::Causal::BottomRight, "bottom_right"}};
constexpr Names<attn::MaskKind> kMaskNames = {{attn::MaskKind::None, "none"},
                                              {attn::MaskKind::Keep, "keep"},
                                              {attn::MaskKind::Additive, "additive"}};
constexpr Names<attn::SdpaPart> kPartNames = {
    {attn::SdpaPart::Output, "output"},
    {attn::SdpaPart::OutputWithLse, "output_with_lse"},
    {attn::SdpaPart::Gradients, "gradients"}};

template <typename E>
const char *nameOf(Names<E> names, E value) {
  for (auto [e, n] : names)
    if (e == value)
      return n;
  return names.begin()->second;
}

/// The value named `name` ("" also names the first, the default), or
/// nullopt.
template <typename E>
std::optional<E> valueOf(Names<E> names, const std::string &name) {
  if (name.empty())
    return names.begin()->first;
  for (auto [e, n] : names)
    if (name == n)
      return e;
  return std::nullopt;
}

attn::Causal causalKind(const std::string &name) {
  if (std::optional<attn::Causal> c = valueOf(kCausalNames, name))
    return *c;
  throw py::value_error("attn_mlir: causal must be None, 'top_left' or "
                        "'bottom_right', got '" + name + "'");
}

attn::MaskKind maskKind(const std::string &name) {
  if (std::optional<attn::MaskKind> m = valueOf(kMaskNames, name))
    return *m;
  throw py::value_error("attn_mlir: mask must be None, 'keep' or 'additive', got '" +
                        name + "'");
}

attn::CompileOptions compileOptions(const std::string &target, int64_t threads,
                                    std::optional<int64_t> tileQ,
                                    std::optional<int64_t> tileK, unsigned optLevel) {
  attn::CompileOptions o;
  if (target == "cpu")
    o.target = attn::Target::Cpu;
  else if (target == "reference")
    o.target = attn::Target::Reference;
  else
    throw py::value_error("attn_mlir: pipeline must be 'cpu' or 'reference', got '" +
                          target + "'");
  o.threads = threads;
  o.tileQ = tileQ;
  o.tileK = tileK;
  o.optLevel = optLevel;
  return o;
}

/// A compiled attn::Kernel, shared by every Python object that refers to it.
class PyKernel {
public:
  explicit PyKernel(std::unique_ptr<attn::Kernel> k) : kernel(std::move(k)) {}

  /// [(dtype name, shape with -1 for dynamic dims)] of the inputs / outputs.
  static py::list infos(const std::vector<attn::TensorInfo> &v) {
    py::list out;
    for (const attn::TensorInfo &t : v)
      out.append(py::make_tuple(elementTypeName(t.type), py::tuple(py::cast(t.shape))));
    return out;
  }
  py::list inputs() const { return infos(kernel->inputs()); }
  py::list outputs() const { return infos(kernel->outputs()); }
  std::string mlir() const { return kernel->mlir(); }
  std::string signature() const {
    std::string s = "(";
    for (size_t i = 0; i < kernel->inputs().size(); ++i)
      s += (i ? ", " : "") + kernel->inputs()[i].str();
    s += ") -> (";
    for (size_t i = 0; i < kernel->outputs().size(); ++i)
      s += (i ? ", " : "") + kernel->outputs()[i].str();
    return s + ")";
  }

  /// The output shapes for inputs of these shapes (after call()'s checks).
  std::vector<std::vector<int64_t>>
  resultShapes(const std::vector<std::vector<int64_t>> &inputShapes) const {
    std::vector<std::vector<int64_t>> shapes;
    check(kernel->resultShapes(inputShapes, shapes));
    return shapes;
  }

  /// Runs the kernel on buffers `repeat` times from C++ (the GIL released)
  /// and returns the seconds of each call as attn::Kernel::call measures
  /// them: the C++ API's cost without Python's (bench/python_bench.py).
  std::vector<double> timeCalls(const std::vector<py::buffer> &ins,
                                const std::vector<py::buffer> &outs, int repeat) const {
    std::vector<py::buffer_info> keep;
    std::vector<attn::TensorRef> inRefs, outRefs;
    prepare(ins, outs, keep, inRefs, outRefs);
    std::vector<double> seconds;
    attn::Status s;
    {
      py::gil_scoped_release release;
      for (int i = 0; i < repeat && s.ok(); ++i) {
        auto t0 = std::chrono::steady_clock::now();
        s = kernel->call(inRefs, outRefs);
        seconds.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
    check(s);
    return seconds;
  }

  /// Runs the kernel on buffers. Each argument is an object with the buffer
  /// protocol whose element size matches the kernel's element type at that
  /// position (bfloat16 travels as 16-bit integers); outputs must be
  /// writable. Strides may be anything the runtime accepts (non-negative
  /// multiples of the element size; inputs may repeat elements).
  void call(const std::vector<py::buffer> &ins, const std::vector<py::buffer> &outs) const {
    // The buffer views stay alive (and the objects pinned) until we return.
    std::vector<py::buffer_info> keep;
    std::vector<attn::TensorRef> inRefs, outRefs;
    prepare(ins, outs, keep, inRefs, outRefs);
    attn::Status s;
    {
      py::gil_scoped_release release;
      s = kernel->call(inRefs, outRefs);
    }
    check(s);
  }

private:
  /// Buffers -> TensorRefs: the element size must match the kernel's
  /// element type at that position (bfloat16 travels as 16-bit integers);
  /// byte strides become element strides; outputs must be writable.
  void prepare(const std::vector<py::buffer> &ins, const std::vector<py::buffer> &outs,
               std::vector<py::buffer_info> &keep, std::vector<attn::TensorRef> &inRefs,
               std::vector<attn::TensorRef> &outRefs) const {
    keep.reserve(ins.size() + outs.size());
    auto convert = [&](const py::buffer &b, const attn::TensorInfo *want, bool writable,
                       const std::string &what, std::vector<attn::TensorRef> &refs) {
      keep.push_back(b.request(writable));
      const py::buffer_info &info = keep.back();
      attn::TensorRef ref;
      ref.type = want ? want->type : attn::ElementType::F32;
      size_t size = elementSize(ref.type);
      if (static_cast<size_t>(info.itemsize) != size)
        throw py::type_error("attn_mlir: " + what + ": elements of " +
                             std::to_string(info.itemsize) + " bytes, the kernel takes " +
                             elementTypeName(ref.type) + " (" + std::to_string(size) +
                             " bytes)");
      ref.data = info.ptr;
      ref.shape.assign(info.shape.begin(), info.shape.end());
      // An empty array's strides (NumPy gives 0s) say nothing: leave it
      // row-major.
      if (info.size == 0) {
        refs.push_back(std::move(ref));
        return;
      }
      for (py::ssize_t st : info.strides) {
        if (st < 0 || st % static_cast<py::ssize_t>(size) != 0)
          throw py::value_error("attn_mlir: " + what + ": byte stride " +
                                std::to_string(st) +
                                " is negative or not a multiple of the element size");
        ref.strides.push_back(st / static_cast<py::ssize_t>(size));
      }
      refs.push_back(std::move(ref));
    };
    const auto &kin = kernel->inputs();
    const auto &kout = kernel->outputs();
    for (size_t i = 0; i < ins.size(); ++i)
      convert(ins[i], i < kin.size() ? &kin[i] : nullptr, false,
              "input #" + std::to_string(i), inRefs);
    for (size_t i = 0; i < outs.size(); ++i)
      convert(outs[i], i < kout.size() ? &kout[i] : nullptr, true,
              "output #" + std::to_string(i), outRefs);
  }

  std::unique_ptr<attn::Kernel> kernel;
};

std::shared_ptr<PyKernel> compileText(const std::string &text, const std::string &entry,
                                      const std::string &target, int64_t threads,
                                      std::optional<int64_t> tileQ,
                                      std::optional<int64_t> tileK, unsigned optLevel,
                                      std::optional<std::string> raise) {
  attn::CompileOptions o = compileOptions(target, threads, tileQ, tileK, optLevel);
  o.raise = std::move(raise);
  std::unique_ptr<attn::Kernel> k;
  attn::Status s;
  {
    py::gil_scoped_release release;
    s = attn::Kernel::compile(text, entry, o, k);
  }
  check(s);
  return std::make_shared<PyKernel>(std::move(k));
}

attn::SdpaPart sdpaPart(const std::string &part) {
  std::optional<attn::SdpaPart> p = part.empty() ? std::nullopt : valueOf(kPartNames, part);
  if (p)
    return *p;
  throw py::value_error("attn_mlir: part must be 'output', 'output_with_lse' or "
                        "'gradients', got '" + part + "'");
}

/// The fields SdpaSpec and MhaSpec share, as Python attributes: the enums
/// as the strings the Python package uses.
template <typename Spec>
void bindSharedFields(py::class_<Spec> &c) {
  c.def(py::init<>())
      .def_property(
          "type", [](const Spec &s) { return std::string(elementTypeName(s.type)); },
          [](Spec &s, const std::string &v) { s.type = elementType(v); })
      .def_property(
          "causal", [](const Spec &s) { return std::string(nameOf(kCausalNames, s.causal)); },
          [](Spec &s, const std::string &v) { s.causal = causalKind(v); })
      .def_property(
          "mask", [](const Spec &s) { return std::string(nameOf(kMaskNames, s.mask)); },
          [](Spec &s, const std::string &v) { s.mask = maskKind(v); })
      .def_readwrite("scale", &Spec::scale)
      .def_readwrite("mask_shape", &Spec::maskShape)
      .def_readwrite("softcap", &Spec::softcap)
      .def_readwrite("window_left", &Spec::windowLeft)
      .def_readwrite("window_right", &Spec::windowRight)
      .def_readwrite("alibi", &Spec::alibi)
      .def_readwrite("alibi_per_batch", &Spec::alibiPerBatch)
      .def_readwrite("key_lengths", &Spec::keyLengths)
      .def_readwrite("sinks", &Spec::sinks)
      .def_readwrite("dropout_rate", &Spec::dropoutRate)
      .def_readwrite("dropout_seed", &Spec::dropoutSeed)
      .def_readwrite("runtime_seed", &Spec::runtimeSeed);
}

} // namespace

PYBIND11_MODULE(_attn_mlir, m) {
  m.doc() = "attn-mlir's compile-and-call runtime (attn/Attention.h); use the "
            "attn_mlir package, not this module";
  static py::exception<std::runtime_error> error(m, "AttnError", PyExc_RuntimeError);
  attnError = error.ptr();

  py::class_<PyKernel, std::shared_ptr<PyKernel>>(m, "Kernel")
      .def_property_readonly("inputs", &PyKernel::inputs)
      .def_property_readonly("outputs", &PyKernel::outputs)
      .def_property_readonly("mlir", &PyKernel::mlir)
      .def_property_readonly("signature", &PyKernel::signature)
      .def("result_shapes", &PyKernel::resultShapes, py::arg("input_shapes"))
      .def("call", &PyKernel::call, py::arg("inputs"), py::arg("outputs"))
      .def("time_calls", &PyKernel::timeCalls, py::arg("inputs"), py::arg("outputs"),
           py::arg("repeat"));

  m.def(
      "differentiate",
      [](const std::string &text, const std::string &functions) {
        std::string out;
        attn::Status s;
        {
          py::gil_scoped_release release;
          s = attn::differentiate(text, functions, out);
        }
        check(s);
        return out;
      },
      py::arg("text"), py::arg("functions") = "");
  m.def("compile", &compileText, py::arg("text"), py::arg("entry"),
        py::arg("target") = "cpu", py::arg("threads") = 0,
        py::arg("tile_q") = py::none(), py::arg("tile_k") = py::none(),
        py::arg("opt_level") = 3, py::arg("raise_options") = py::none());

  // attn/Attention.h's SdpaSpec and MhaSpec, field by field (snake_case),
  // and the attn IR each spec compiles.
  py::class_<attn::SdpaSpec> sdpa(m, "SdpaSpec");
  bindSharedFields(sdpa);
  sdpa.def_property(
          "part", [](const attn::SdpaSpec &s) { return std::string(nameOf(kPartNames, s.part)); },
          [](attn::SdpaSpec &s, const std::string &v) { s.part = sdpaPart(v); })
      .def_readwrite("batch", &attn::SdpaSpec::batch)
      .def_readwrite("heads", &attn::SdpaSpec::heads)
      .def_readwrite("kv_heads", &attn::SdpaSpec::kvHeads)
      .def_readwrite("query_len", &attn::SdpaSpec::queryLen)
      .def_readwrite("key_len", &attn::SdpaSpec::keyLen)
      .def_readwrite("head_dim", &attn::SdpaSpec::headDim)
      .def_readwrite("value_dim", &attn::SdpaSpec::valueDim)
      .def_readwrite("mask_grad", &attn::SdpaSpec::maskGrad)
      .def_readwrite("query_tokens_first", &attn::SdpaSpec::queryTokensFirst)
      .def_readwrite("key_tokens_first", &attn::SdpaSpec::keyTokensFirst)
      .def_readwrite("value_tokens_first", &attn::SdpaSpec::valueTokensFirst)
      .def("to_mlir", [](const attn::SdpaSpec &s) {
        std::string text;
        check(attn::sdpaToMlir(s, text));
        return text;
      });

  py::class_<attn::MhaSpec> mha(m, "MhaSpec");
  bindSharedFields(mha);
  mha.def_readwrite("batch", &attn::MhaSpec::batch)
      .def_readwrite("query_len", &attn::MhaSpec::queryLen)
      .def_readwrite("key_len", &attn::MhaSpec::keyLen)
      .def_readwrite("embed_dim", &attn::MhaSpec::embedDim)
      .def_readwrite("kv_embed_dim", &attn::MhaSpec::kvEmbedDim)
      .def_readwrite("num_heads", &attn::MhaSpec::numHeads)
      .def_readwrite("num_kv_heads", &attn::MhaSpec::numKvHeads)
      .def_readwrite("head_dim", &attn::MhaSpec::headDim)
      .def_readwrite("out_dim", &attn::MhaSpec::outDim)
      .def_readwrite("bias", &attn::MhaSpec::bias)
      .def("to_mlir", [](const attn::MhaSpec &s) {
        std::string text;
        check(attn::mhaToMlir(s, text));
        return text;
      });
}
