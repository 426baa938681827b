//===- sdpa-app.cpp - compile attention once, call it many times ---------===//
//
// An application that uses attn-mlir's compile-and-call API
// (attn/Attention.h): one causal sdpa kernel with dynamic lengths, JIT-
// compiled once, then called on the application's own buffers — one of
// them a strided view — from four threads at once. Every result is checked
// against a naive triple loop. Exit 0 when everything matches.
//
//===----------------------------------------------------------------------===//
#include "attn/Attention.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

namespace {
constexpr int64_t B = 2, H = 4, D = 32;

/// out[b,h,i,:] = sum_j softmax_j(q·k / sqrt(D), j <= i) v[b,h,j,:], with
/// q read through the [B,T,H,D] layout the application keeps it in.
std::vector<float> naive(const std::vector<float> &qBTHD,
                         const std::vector<float> &k,
                         const std::vector<float> &v, int64_t T) {
  std::vector<float> out(B * H * T * D);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> s(i + 1);
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += double(qBTHD[((b * T + i) * H + h) * D + d]) *
                   k[((b * H + h) * T + j) * D + d];
          s[j] = dot / std::sqrt(double(D));
          mx = std::max(mx, s[j]);
        }
        for (double &x : s)
          sum += (x = std::exp(x - mx));
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j <= i; ++j)
            acc += s[j] / sum * v[((b * H + h) * T + j) * D + d];
          out[((b * H + h) * T + i) * D + d] = float(acc);
        }
      }
  return out;
}

std::vector<float> random(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(n);
  for (float &e : x)
    e = dist(gen);
  return x;
}
} // namespace

int main() {
  attn::SdpaSpec spec;
  spec.batch = B;
  spec.heads = H;
  spec.headDim = D;
  spec.queryLen = -1; // any length at call time
  spec.keyLen = -1;
  spec.causal = attn::Causal::TopLeft;
  std::unique_ptr<attn::Kernel> kernel;
  if (attn::Status s = attn::Kernel::compileSdpa(spec, {}, kernel); !s.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("compiled: %s -> %s\n", kernel->inputs()[0].str().c_str(),
              kernel->outputs()[0].str().c_str());

  // Four threads, each with its own length, share the one kernel.
  const int64_t lengths[] = {1, 37, 64, 130};
  double worst[4] = {0, 0, 0, 0};
  std::string errors[4];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      int64_t T = lengths[t];
      // q lives as [B,T,H,D] (before the head transpose): pass a strided
      // [B,H,T,D] view of it instead of copying.
      std::vector<float> q = random(B * T * H * D, 1 + t);
      std::vector<float> k = random(B * H * T * D, 10 + t);
      std::vector<float> v = random(B * H * T * D, 20 + t);
      std::vector<float> out(B * H * T * D, NAN);
      attn::TensorRef qView{attn::ElementType::F32, q.data(), {B, H, T, D},
                            {T * H * D, D, H * D, 1}};
      for (int rep = 0; rep < 3; ++rep) {
        attn::Status s = kernel->call(
            {qView,
             {attn::ElementType::F32, k.data(), {B, H, T, D}},
             {attn::ElementType::F32, v.data(), {B, H, T, D}}},
            {{attn::ElementType::F32, out.data(), {B, H, T, D}}});
        if (!s.ok()) {
          errors[t] = s.message();
          return;
        }
      }
      std::vector<float> ref = naive(q, k, v, T);
      for (size_t i = 0; i < ref.size(); ++i)
        worst[t] = std::max(worst[t], double(std::fabs(out[i] - ref[i])));
    });
  for (std::thread &t : threads)
    t.join();
  bool ok = true;
  for (int t = 0; t < 4; ++t) {
    std::printf("T=%lld max_abs_err=%.3g %s\n", (long long)lengths[t], worst[t],
                errors[t].c_str());
    ok &= errors[t].empty() && worst[t] < 1e-5;
  }

  // A mistake comes back as a Status, not a crash: k and v of different
  // lengths.
  std::vector<float> a(B * H * 8 * D), b(B * H * 9 * D), o(B * H * 8 * D);
  attn::Status bad = kernel->call(
      {{attn::ElementType::F32, a.data(), {B, H, 8, D}},
       {attn::ElementType::F32, a.data(), {B, H, 8, D}},
       {attn::ElementType::F32, b.data(), {B, H, 9, D}}},
      {{attn::ElementType::F32, o.data(), {B, H, 8, D}}});
  std::printf("mismatched lengths: %s\n", bad.message().c_str());
  ok &= !bad.ok();

  std::printf(ok ? "sdpa-app: OK\n" : "sdpa-app: FAILED\n");
  return ok ? 0 : 1;
}
