//===- NpyTest.cpp - Tests of HostTensor, binary16 and .npy I/O -----------===//

#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/PackedCall.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn::runtime;

namespace {

std::string u32le(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i)
    s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::string u16le(uint16_t v) {
  return std::string{static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
}

std::string f32le(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return u32le(bits);
}

const std::string kMagic("\x93NUMPY", 6);

/// A .npy file with the given version and header dict text, padded the way
/// numpy pads (spaces, final newline, data aligned to 64), then `data`.
std::string npyFile(const std::string &dict, const std::string &data,
                    int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t hlen = dict.size() + 1;
  size_t padlen = 64 - (prefix + hlen) % 64;
  std::string header = dict + std::string(padlen, ' ') + "\n";
  std::string s = kMagic + static_cast<char>(major) + '\0';
  s += major == 1 ? u16le(static_cast<uint16_t>(header.size()))
                  : u32le(static_cast<uint32_t>(header.size()));
  return s + header + data;
}

std::string f32Dict(const std::string &shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
}

class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> d;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-npy-test", d));
    dir = std::string(d);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string pathOf(const std::string &name) { return dir + "/" + name; }

  std::string writeFile(const std::string &name, const std::string &bytes) {
    std::string p = pathOf(name);
    std::ofstream os(p, std::ios::binary);
    os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

  std::string readFile(const std::string &p) {
    std::ifstream is(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(is), {});
  }

  /// Reads `p`, expects failure; returns the message and checks it is one
  /// line starting with "<path>: ".
  std::string readError(const std::string &p) {
    llvm::Expected<HostTensor> t = readNpy(p);
    if (t) {
      ADD_FAILURE() << "expected an error reading " << p;
      return "";
    }
    std::string msg = llvm::toString(t.takeError());
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    return msg;
  }

  /// Writes `bytes` to a file and returns the read error message.
  std::string errorFor(const std::string &bytes) {
    return readError(writeFile("bad.npy", bytes));
  }

  std::string dir;
};

#define EXPECT_HAS(msg, sub)                                                   \
  EXPECT_NE((msg).find(sub), std::string::npos)                                \
      << "message: " << (msg) << "\nexpected to contain: " << (sub)

//===----------------------------------------------------------------------===//
// binary16
//===----------------------------------------------------------------------===//

TEST(Half, SpecialValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff); // below the halfway point
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // halfway rounds to even: inf
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  uint16_t n = floatToHalf(std::nanf(""));
  EXPECT_EQ(n & 0x7c00, 0x7c00);
  EXPECT_NE(n & 0x03ff, 0);
  // The smallest normal 2^-14 = 6.1035e-5, and 6.1e-5 just below it, which
  // is the denormal 1023 * 2^-24 (6.1e-5 / 2^-24 = 1023.4).
  EXPECT_EQ(floatToHalf(6.103515625e-5f), 0x0400);
  EXPECT_EQ(floatToHalf(6.1e-5f), 0x03ff);
  // The smallest denormal 2^-24 = 5.96046e-8.
  EXPECT_EQ(floatToHalf(5.96e-8f), 0x0001);
  EXPECT_EQ(floatToHalf(-5.96e-8f), 0x8001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);        // tie -> even 0
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);        // above tie
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);        // tie -> even 2
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  // Denormal that rounds up into the smallest normal.
  EXPECT_EQ(floatToHalf(std::ldexp(1023.75f, -24)), 0x0400);

  EXPECT_EQ(halfToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0x8000), 0.0f);
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
}

TEST(Half, RoundToNearestEven) {
  // 1 + 2^-11 is halfway between 1 (0x3c00) and 1 + 2^-10 (0x3c01): even.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3*2^-11 is halfway between 0x3c01 and 0x3c02: even is 0x3c02.
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above halfway rounds up.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            0x3c01);
  // Just below halfway rounds down.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) - std::ldexp(1.0f, -20)),
            0x3c00);
  // Rounding up carries into the exponent: 2 - 2^-12 -> 2.
  EXPECT_EQ(floatToHalf(2.0f - std::ldexp(1.0f, -12)), 0x4000);
}

TEST(Half, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0) << h;
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f)))) << h;
      continue;
    }
    EXPECT_EQ(floatToHalf(f), h) << "h = " << h;
  }
}

#if defined(__FLT16_MAX__)
TEST(Half, MatchesCompilerFloat16) {
  // The compiler's _Float16 conversions are correctly rounded (IEEE RNE).
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    _Float16 x;
    std::memcpy(&x, &bits, 2);
    float f = static_cast<float>(x);
    float mine = halfToFloat(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(mine));
      continue;
    }
    EXPECT_EQ(std::memcmp(&f, &mine, 4), 0) << h;
  }
  uint64_t s = 88172645463325252ULL;
  for (int i = 0; i < 2000000; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint32_t bits = static_cast<uint32_t>(s);
    // Bias towards the half range: exponents around 127 +- 30.
    if (i & 1)
      bits = (bits & 0x807fffffu) | ((97u + (bits >> 23) % 60u) << 23);
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f))
      continue;
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    ASSERT_EQ(floatToHalf(f), refBits) << "f = " << f << " bits " << bits;
  }
}
#endif

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

TEST(HostTensorTest, DTypes) {
  EXPECT_EQ(dtypeName(ElementType::F32), "float32");
  EXPECT_EQ(dtypeName(ElementType::F16), "float16");
  EXPECT_EQ(dtypeName(ElementType::Bool), "bool");
  EXPECT_EQ(dtypeSize(ElementType::F32), 4u);
  EXPECT_EQ(dtypeSize(ElementType::F16), 2u);
  EXPECT_EQ(dtypeSize(ElementType::Bool), 1u);
  EXPECT_EQ(dtypeName(ElementType::I32), "int32");
  EXPECT_EQ(dtypeName(ElementType::I64), "int64");
  EXPECT_EQ(dtypeSize(ElementType::I32), 4u);
  EXPECT_EQ(dtypeSize(ElementType::I64), 8u);
  EXPECT_EQ(dtypeDescr(ElementType::I32), "<i4");
  EXPECT_EQ(dtypeDescr(ElementType::I64), "<i8");
  EXPECT_EQ(dtypeName(ElementType::I8), "int8");
  EXPECT_EQ(dtypeSize(ElementType::I8), 1u);
  EXPECT_EQ(dtypeDescr(ElementType::I8), "|i1");
}

TEST(HostTensorTest, Int8GetSetAndRoundTrip) {
  HostTensor t = HostTensor::zeros(ElementType::I8, {4});
  t.setFromFloat(0, -7.4f);  // rounds to nearest
  t.setFromFloat(1, 300.0f); // saturates
  t.setFromFloat(2, -300.0f);
  t.setFromFloat(3, 126.6f);
  EXPECT_EQ(t.getAsInt(0), -7);
  EXPECT_EQ(t.getAsInt(1), 127);
  EXPECT_EQ(t.getAsInt(2), -128);
  EXPECT_EQ(t.getAsFloat(3), 127.0f);
}

TEST(HostTensorTest, IntegerGetSet) {
  HostTensor t = HostTensor::zeros(ElementType::I32, {4});
  t.setFromFloat(0, 7.0f);
  t.setFromFloat(1, -2.6f); // rounds to nearest
  t.setFromFloat(2, 3e9f);  // saturates
  t.setFromFloat(3, std::nanf(""));
  EXPECT_EQ(t.getAsInt(0), 7);
  EXPECT_EQ(t.getAsInt(1), -3);
  EXPECT_EQ(t.getAsInt(2), INT32_MAX);
  EXPECT_EQ(t.getAsInt(3), 0);
  EXPECT_EQ(t.getAsFloat(0), 7.0f);
  // Little endian: 7 = 07 00 00 00.
  EXPECT_EQ(t.bytes[0], 7);
  EXPECT_EQ(t.bytes[3], 0);
  HostTensor l = HostTensor::zeros(ElementType::I64, {2});
  l.setFromFloat(0, -5.0f);
  l.setFromFloat(1, 4096.0f);
  EXPECT_EQ(l.getAsInt(0), -5);
  EXPECT_EQ(l.getAsInt(1), 4096);
  EXPECT_EQ(l.bytes[7], 0xff);
  HostTensor f = HostTensor::zeros(ElementType::F32, {1});
  f.setFromFloat(0, 12.75f);
  EXPECT_EQ(f.getAsInt(0), 12); // truncated
}

TEST(HostTensorTest, ZerosGetSet) {
  HostTensor t = HostTensor::zeros(ElementType::F32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.bytes.size(), 24u);
  EXPECT_EQ(t.getAsFloat(5), 0.0f);
  t.setFromFloat(1, 1.0f);
  EXPECT_EQ(t.getAsFloat(1), 1.0f);
  // Little endian: 1.0f = 0x3f800000.
  EXPECT_EQ(t.bytes[4], 0x00);
  EXPECT_EQ(t.bytes[7], 0x3f);

  HostTensor h = HostTensor::zeros(ElementType::F16, {4});
  h.setFromFloat(2, 1.0f + std::ldexp(1.0f, -11)); // rounds to 1
  EXPECT_EQ(h.getAsFloat(2), 1.0f);
  EXPECT_EQ(h.bytes[4], 0x00);
  EXPECT_EQ(h.bytes[5], 0x3c);

  HostTensor b = HostTensor::zeros(ElementType::Bool, {3});
  b.setFromFloat(0, 0.5f);
  b.setFromFloat(1, 0.0f);
  EXPECT_EQ(b.bytes[0], 1);
  EXPECT_EQ(b.getAsFloat(0), 1.0f);
  EXPECT_EQ(b.getAsFloat(1), 0.0f);

  HostTensor s = HostTensor::zeros(ElementType::F32, {});
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.bytes.size(), 4u);
  HostTensor e = HostTensor::zeros(ElementType::F32, {0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.bytes.empty());
}

//===----------------------------------------------------------------------===//
// Round trips and exact bytes
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, RoundTripEachDType) {
  struct Case {
    ElementType dtype;
    std::vector<int64_t> shape;
  } cases[] = {{ElementType::F32, {2, 3}},   {ElementType::F16, {5}},
               {ElementType::Bool, {2, 2}},  {ElementType::F32, {}},
               {ElementType::F16, {}},       {ElementType::F32, {0, 4}},
               {ElementType::F32, {1, 2, 3, 4}}, {ElementType::I32, {3}},
               {ElementType::I64, {2, 2}},   {ElementType::F64, {2, 3}}};
  int n = 0;
  for (const Case &c : cases) {
    HostTensor t = HostTensor::zeros(c.dtype, c.shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.setFromFloat(i, c.dtype == ElementType::Bool ? static_cast<float>(i % 2)
                        : c.dtype == ElementType::I32 || c.dtype == ElementType::I64
                            ? static_cast<float>(3 * i - 4)
                            : 0.5f * i - 1.25f);
    std::string p = pathOf("rt" + std::to_string(n++) + ".npy");
    ASSERT_FALSE(writeNpy(p, t)) << p;
    std::string bytes = readFile(p);
    // Data starts at a multiple of 64 and the header ends in '\n'.
    size_t dataStart = bytes.size() - t.bytes.size();
    EXPECT_EQ(dataStart % 64, 0u);
    EXPECT_EQ(bytes[dataStart - 1], '\n');
    llvm::Expected<HostTensor> r = readNpy(p);
    ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
    EXPECT_EQ(r->dtype, c.dtype);
    EXPECT_EQ(r->shape, c.shape);
    EXPECT_EQ(r->bytes, t.bytes);
  }
}

TEST_F(NpyTest, ExactNumpyBytes) {
  // np.save of np.arange(1, 7, dtype=np.float32).reshape(2, 3) (numpy >=
  // 1.23): the dict, 21 - len('2') = 20 spaces of growth room, then spaces
  // to align the data to 64 bytes and '\n'. 10 + 118 = 128.
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(dict.size(), 59u);
  std::string file = kMagic + std::string("\x01\x00", 2) +
                     std::string("\x76\x00", 2) + dict +
                     std::string(58, ' ') + "\n";
  ASSERT_EQ(file.size(), 128u);
  file += std::string("\x00\x00\x80\x3f"
                      "\x00\x00\x00\x40"
                      "\x00\x00\x40\x40"
                      "\x00\x00\x80\x40"
                      "\x00\x00\xa0\x40"
                      "\x00\x00\xc0\x40",
                      24);
  std::string p = writeFile("numpy.npy", file);
  llvm::Expected<HostTensor> r = readNpy(p);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->dtype, ElementType::F32);
  EXPECT_EQ(r->shape, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(r->getAsFloat(i), static_cast<float>(i + 1));

  // writeNpy produces exactly the same bytes.
  std::string q = pathOf("ours.npy");
  ASSERT_FALSE(writeNpy(q, *r));
  EXPECT_EQ(readFile(q), file);
}

TEST_F(NpyTest, ExactNumpyBytesScalarAndBool) {
  // np.save(np.float32(2.5)): shape () gets no growth room; the dict is
  // 55 chars, hlen 56, padlen 64 - (10 + 56) % 64 = 62, header 118.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
  ASSERT_EQ(dict.size(), 55u);
  std::string file = kMagic + std::string("\x01\x00", 2) + u16le(118) +
                     dict + std::string(62, ' ') + "\n" + f32le(2.5f);
  ASSERT_EQ(file.size(), 128u + 4u);
  HostTensor s = HostTensor::zeros(ElementType::F32, {});
  s.setFromFloat(0, 2.5f);
  std::string p = pathOf("scalar.npy");
  ASSERT_FALSE(writeNpy(p, s));
  EXPECT_EQ(readFile(p), file);

  // np.save(np.array([True, False, True])): shape (3,).
  std::string bdict =
      "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }";
  size_t hlen = bdict.size() + 20 + 1; // growth room 21 - len('3')
  size_t padlen = 64 - (10 + hlen) % 64;
  std::string bfile = kMagic + std::string("\x01\x00", 2) +
                      u16le(static_cast<uint16_t>(hlen + padlen)) + bdict +
                      std::string(20 + padlen, ' ') + "\n" +
                      std::string("\x01\x00\x01", 3);
  std::string bp = writeFile("bool.npy", bfile);
  llvm::Expected<HostTensor> r = readNpy(bp);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->dtype, ElementType::Bool);
  EXPECT_EQ(r->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(r->bytes, (std::vector<uint8_t>{1, 0, 1}));
  std::string q = pathOf("bool2.npy");
  ASSERT_FALSE(writeNpy(q, *r));
  EXPECT_EQ(readFile(q), bfile);
}

TEST_F(NpyTest, HeaderVariantsAccepted) {
  std::string data = f32le(1) + f32le(2);
  struct {
    const char *what;
    std::string file;
  } cases[] = {
      {"version 2.0", npyFile(f32Dict("(2,)"), data, 2)},
      {"version 3.0", npyFile(f32Dict("(2,)"), data, 3)},
      {"keys reordered, no trailing comma, double quotes",
       npyFile("{\"shape\": (1, 2), 'fortran_order': False, 'descr': '<f4'}",
               data)},
      {"python 2 longs", npyFile(f32Dict("(1L, 2L)"), data)},
      {"native byte order", npyFile("{'descr': '=f4', 'fortran_order': False, "
                                    "'shape': (2,), }",
                                    data)},
      {"no padding", kMagic + std::string("\x01\x00", 2) +
                         u16le(static_cast<uint16_t>(f32Dict("(2,)").size())) +
                         f32Dict("(2,)") + data},
  };
  for (const auto &c : cases) {
    llvm::Expected<HostTensor> r = readNpy(writeFile("v.npy", c.file));
    ASSERT_TRUE(static_cast<bool>(r))
        << c.what << ": " << llvm::toString(r.takeError());
    EXPECT_EQ(r->numel(), 2) << c.what;
    EXPECT_EQ(r->getAsFloat(1), 2.0f) << c.what;
  }
  // float16 with a hand-written value: 0x3c00 = 1.0, 0xc000 = -2.0.
  llvm::Expected<HostTensor> h = readNpy(writeFile(
      "h.npy", npyFile("{'descr': '<f2', 'fortran_order': False, 'shape': "
                       "(2,), }",
                       u16le(0x3c00) + u16le(0xc000))));
  ASSERT_TRUE(static_cast<bool>(h)) << llvm::toString(h.takeError());
  EXPECT_EQ(h->dtype, ElementType::F16);
  EXPECT_EQ(h->getAsFloat(0), 1.0f);
  EXPECT_EQ(h->getAsFloat(1), -2.0f);
  // Bool bytes other than 0/1 are normalized.
  llvm::Expected<HostTensor> b = readNpy(writeFile(
      "b.npy", npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': "
                       "(2,), }",
                       std::string("\x07\x00", 2))));
  ASSERT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->bytes, (std::vector<uint8_t>{1, 0}));
}

//===----------------------------------------------------------------------===//
// Errors: one test per case
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, ErrorMissingFile) {
  std::string msg = readError(pathOf("nope.npy"));
  EXPECT_HAS(msg, "nope.npy: cannot open file: No such file or directory");
}

TEST_F(NpyTest, ErrorDirectory) {
  std::string d = pathOf("adir.npy");
  ASSERT_FALSE(llvm::sys::fs::create_directory(d));
  EXPECT_EQ(readError(d), d + ": is a directory");
}

TEST_F(NpyTest, ErrorFifo) {
  std::string f = pathOf("fifo.npy");
  ASSERT_EQ(mkfifo(f.c_str(), 0600), 0);
  // Must not block waiting for a writer.
  EXPECT_EQ(readError(f), f + ": not a regular file");
}

TEST_F(NpyTest, ErrorPermissionDenied) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root can read any file";
  std::string p = writeFile("noperm.npy", npyFile(f32Dict("(1,)"), f32le(1)));
  ASSERT_EQ(chmod(p.c_str(), 0), 0);
  EXPECT_HAS(readError(p), "cannot open file: Permission denied");
}

TEST_F(NpyTest, ErrorEmptyFile) {
  std::string p = writeFile("empty.npy", "");
  EXPECT_EQ(readError(p), p + ": empty file");
}

TEST_F(NpyTest, ErrorBadMagic) {
  std::string p = writeFile("bad.npy", "PK\x03\x04 this is a zip file");
  EXPECT_EQ(readError(p), p + ": bad magic (not a .npy file)");
  EXPECT_HAS(errorFor("ab"), "bad magic (not a .npy file)");
  EXPECT_HAS(errorFor(std::string("\x93NUMPx\x01\x00", 8)), "bad magic");
}

TEST_F(NpyTest, ErrorTruncatedPreamble) {
  EXPECT_HAS(errorFor(kMagic), "truncated header");
  EXPECT_HAS(errorFor(kMagic + std::string("\x01\x00\x10", 3)),
             "truncated header");
  EXPECT_HAS(errorFor(kMagic + std::string("\x02\x00\x10\x00", 4)),
             "truncated header");
}

TEST_F(NpyTest, ErrorUnsupportedVersion) {
  std::string file = npyFile(f32Dict("(1,)"), f32le(1));
  file[6] = 9;
  EXPECT_HAS(errorFor(file), ": unsupported .npy version 9.0");
  file[6] = 1;
  file[7] = 1;
  EXPECT_HAS(errorFor(file), ": unsupported .npy version 1.1");
}

TEST_F(NpyTest, ErrorHeaderRunsPastEnd) {
  std::string file = kMagic + std::string("\x01\x00", 2) + u16le(5000) +
                     f32Dict("(1,)") + "\n" + f32le(1);
  EXPECT_HAS(errorFor(file), ": header length 5000 runs past the end of the file");
  // Version 2.0 with a 4 GiB header length: no allocation, same message.
  std::string file2 = kMagic + std::string("\x02\x00", 2) +
                      u32le(0xffffffffu) + f32Dict("(1,)");
  EXPECT_HAS(errorFor(file2),
             ": header length 4294967295 runs past the end of the file");
}

TEST_F(NpyTest, ErrorMalformedHeader) {
  const char *bad[] = {
      "",                                                        // empty
      "not a dict",                                              // no '{'
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",  // no '}'
      "{'descr': '<f4', 'fortran_order': False}",                // no shape
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': 1}",    // not tuple
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1)}",  // (1) is 1
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': ('a',)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
      "{'descr': 4, 'fortran_order': False, 'shape': (1,)}",
      "{'descr: '<f4', 'fortran_order': False, 'shape': (1,)}",  // quoting
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",  // no comma
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk",
      "{'descr': '<f4', 'fortran_order': Fals, 'shape': (1,)}",
      ("{'descr': '<f4', 'fortran_order': False, 'shape': "
       "((((((((((((((((((((((((((((((((((((((((1,)}"),          // deep
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,\x01)}",
  };
  for (const char *dict : bad) {
    std::string msg = errorFor(npyFile(dict, f32le(1)));
    EXPECT_HAS(msg, ": malformed header: ");
  }
}

TEST_F(NpyTest, ErrorUnsupportedDType) {
  std::string msg = errorFor(npyFile(
      "{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }",
      std::string(2, '\0')));
  EXPECT_HAS(msg, ": unsupported dtype '<i2' (supported: float32 '<f4', "
                  "float16 '<f2', float64 '<f8', bool '|b1', int8 '|i1', int32 '<i4', "
                  "int64 '<i8')");
  EXPECT_HAS(errorFor(npyFile("{'descr': '|f4', 'fortran_order': False, "
                              "'shape': (1,), }",
                              f32le(1))),
             "unsupported dtype '|f4'");
  EXPECT_HAS(errorFor(npyFile("{'descr': [('a', '<f4')], 'fortran_order': "
                              "False, 'shape': (1,), }",
                              f32le(1))),
             "unsupported dtype");
  // Non-printable bytes in the descr are escaped; the message stays one line.
  EXPECT_HAS(errorFor(npyFile("{'descr': '<f\\\n4', 'fortran_order': False, "
                              "'shape': (1,), }",
                              f32le(1))),
             "unsupported dtype '<f\\x0a4'");
}

TEST_F(NpyTest, ErrorBigEndian) {
  EXPECT_HAS(errorFor(npyFile("{'descr': '>f4', 'fortran_order': False, "
                              "'shape': (1,), }",
                              f32le(1))),
             ": big-endian dtype '>f4' is not supported");
  EXPECT_HAS(errorFor(npyFile("{'descr': '>f2', 'fortran_order': False, "
                              "'shape': (2,), }",
                              f32le(1))),
             ": big-endian dtype '>f2' is not supported");
}

TEST_F(NpyTest, ErrorFortranOrder) {
  EXPECT_HAS(errorFor(npyFile("{'descr': '<f4', 'fortran_order': True, "
                              "'shape': (1, 1), }",
                              f32le(1))),
             ": Fortran-order arrays are not supported");
}

TEST_F(NpyTest, ErrorShapeOverflows) {
  EXPECT_HAS(errorFor(npyFile(f32Dict("(4611686018427387904, 4)"), "")),
             ": shape (4611686018427387904, 4) overflows");
  EXPECT_HAS(errorFor(npyFile(f32Dict("(99999999999999999999999,)"), "")),
             ": shape (99999999999999999999999,) overflows");
  // numel fits but the byte count does not.
  EXPECT_HAS(errorFor(npyFile(f32Dict("(2305843009213693952,)"), "")),
             "overflows");
}

TEST_F(NpyTest, ErrorTruncatedData) {
  std::string data = f32le(1) + f32le(2) + f32le(3) + f32le(4) + f32le(5);
  EXPECT_HAS(errorFor(npyFile(f32Dict("(2, 3)"), data)),
             ": truncated data: expected 24 bytes, found 20");
  // A huge (but non-overflowing) shape is caught before allocating.
  EXPECT_HAS(errorFor(npyFile(f32Dict("(1000000000, 1000000000)"), data)),
             ": truncated data: expected 4000000000000000000 bytes, found 20");
}

TEST_F(NpyTest, ErrorTrailingData) {
  std::string data(28, '\0');
  EXPECT_HAS(errorFor(npyFile(f32Dict("(2, 3)"), data)),
             ": 4 unexpected bytes after the data");
}

TEST_F(NpyTest, WriteErrors) {
  HostTensor t = HostTensor::zeros(ElementType::F32, {2});
  llvm::Error e = writeNpy(dir, t); // a directory
  ASSERT_TRUE(static_cast<bool>(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_HAS(msg, dir + ": cannot open file for writing: ");
  t.bytes.pop_back();
  e = writeNpy(pathOf("x.npy"), t);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_HAS(llvm::toString(std::move(e)), "holds 7 bytes");
  // "-" is a file name, not stdout.
  HostTensor ok = HostTensor::zeros(ElementType::F32, {1});
  llvm::SmallString<256> cwd;
  ASSERT_FALSE(llvm::sys::fs::current_path(cwd));
  ASSERT_FALSE(llvm::sys::fs::set_current_path(dir));
  EXPECT_FALSE(writeNpy("-", ok));
  EXPECT_TRUE(llvm::sys::fs::exists(pathOf("-")));
  ASSERT_FALSE(llvm::sys::fs::set_current_path(cwd));
}

//===----------------------------------------------------------------------===//
// Raw arrays, conversions and .npz archives
//===----------------------------------------------------------------------===//

std::string f64le(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
  return s;
}

std::string fromHex(const std::string &hex) {
  std::string s;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    s += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return s;
}

/// np.savez(q=np.arange(6, dtype=np.float32).reshape(2, 3),
///          m=np.array([1, 0, 2, 1], dtype=np.uint8).view(bool)),
/// as Python's zipfile writes it (zip64 local headers).
const char *const kStoredNpz =
    "504b03042d0000000000000021004fe9002affffffffffffffff05001400712e6e707901"
    "00100098000000000000009800000000000000934e554d5059010076007b276465736372"
    "273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73652c202773"
    "68617065273a2028322c2033292c207d2020202020202020202020202020202020202020"
    "202020202020202020202020202020202020202020202020202020202020202020202020"
    "20200a000000000000803f0000004000004040000080400000a040504b03042d00000000"
    "000000210041a77911ffffffffffffffff050014006d2e6e707901001000840000000000"
    "00008400000000000000934e554d5059010076007b276465736372273a20277c6231272c"
    "2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a202834"
    "2c292c207d20202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020202020202020202020202020202020202020200a01000201504b"
    "01022d032d0000000000000021004fe9002a980000009800000005000000000000000000"
    "0000800100000000712e6e7079504b01022d032d00000000000000210041a77911840000"
    "00840000000500000000000000000000008001cf0000006d2e6e7079504b050600000000"
    "02000200660000008a0100000000";

/// np.savez_compressed(q=np.arange(6, dtype=np.float32).reshape(2, 3),
///          m=np.array([1, 0, 2, 1], dtype=np.uint8).view(bool)),
/// as Python's zipfile writes it (zip64 local headers).
const char *const kDeflatedNpz =
    "504b03042d0000000800000021004fe9002affffffffffffffff05001400712e6e707901"
    "001000980000000000000055000000000000009bec17ea1b10c9c850c650ad9e925a9c5c"
    "a46ea5a06e9366a2aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416"
    "a402f91a463a0ac69a3a0ab50a64032e063068b007120e4004c40d40bcc00100504b0304"
    "2d00000008000000210041a77911ffffffffffffffff050014006d2e6e70790100100084"
    "0000000000000048000000000000009bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a0"
    "5e9364a8aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416a402f91a"
    "263a9a3a0ab50a14002e4606264600504b01022d032d0000000800000021004fe9002a55"
    "00000098000000050000000000000000000000800100000000712e6e7079504b01022d03"
    "2d00000008000000210041a7791148000000840000000500000000000000000000008001"
    "8c0000006d2e6e7079504b05060000000002000200660000000b0100000000";

TEST_F(NpyTest, ReadNpyArrayTakesWhatReadNpyRefuses) {
  std::string p = writeFile(
      "d.npy", npyFile("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }",
                       std::string(48, '\0')));
  llvm::Expected<NpyArray> a = readNpyArray(p);
  ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
  EXPECT_EQ(a->kind, NpyArray::Kind::Float);
  EXPECT_EQ(a->itemSize, 8u);
  EXPECT_TRUE(a->bigEndian);
  EXPECT_TRUE(a->fortranOrder);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->dtypeStr(), "float64");
  EXPECT_FALSE(a->exactDType());
  // readNpy keeps its errors.
  EXPECT_HAS(readError(p), "unsupported dtype '>f8'");
  for (auto [descr, name] : {std::pair<const char *, const char *>{"|i1", "int8"},
                             {"<i2", "int16"},
                             {"<i4", "int32"},
                             {"<i8", "int64"},
                             {"|u1", "uint8"},
                             {"<u2", "uint16"},
                             {"<u4", "uint32"},
                             {"<u8", "uint64"},
                             {"<f2", "float16"},
                             {"|b1", "bool"}}) {
    std::string d = std::string("{'descr': '") + descr +
                    "', 'fortran_order': False, 'shape': (1,), }";
    unsigned size = descr[2] - '0';
    llvm::Expected<NpyArray> x =
        readNpyArray(writeFile("x.npy", npyFile(d, std::string(size, '\0'))));
    ASSERT_TRUE(static_cast<bool>(x)) << descr << ": " << llvm::toString(x.takeError());
    EXPECT_EQ(x->dtypeStr(), name);
  }
  // Still refused: complex, '|' with a multi-byte dtype, odd sizes.
  for (const char *descr : {"<c8", "|f4", "<f3", "<i3", "<U4", "|O"}) {
    std::string d = std::string("{'descr': '") + descr +
                    "', 'fortran_order': False, 'shape': (1,), }";
    llvm::Expected<NpyArray> x = readNpyArray(writeFile("x.npy", npyFile(d, f32le(0))));
    ASSERT_FALSE(static_cast<bool>(x)) << descr;
    EXPECT_HAS(llvm::toString(x.takeError()), "unsupported dtype '" + std::string(descr) + "'");
  }
}

TEST_F(NpyTest, ConvertFloat64BigEndianFortran) {
  // The 2x3 array [[0, 1, 2], [3, 4, 5]] as '>f8', Fortran order: stored
  // column by column, each element big endian.
  std::string data;
  for (double v : {0.0, 3.0, 1.0, 4.0, 2.0, 5.0}) {
    std::string le = f64le(v);
    data += std::string(le.rbegin(), le.rend());
  }
  std::string p = writeFile(
      "d.npy",
      npyFile("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }", data));
  llvm::Expected<NpyArray> a = readNpyArray(p);
  ASSERT_TRUE(static_cast<bool>(a));
  std::vector<std::string> notes;
  llvm::Expected<HostTensor> t = toHostTensor(*a, p, ElementType::F32, true, &notes);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->dtype, ElementType::F32);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(t->getAsFloat(i), static_cast<float>(i));
  EXPECT_EQ(notes, (std::vector<std::string>{"byte-swapped from big-endian '>f8'",
                                             "transposed from Fortran order",
                                             "converted float64 to float32"}));
  // The same into a float16 argument.
  llvm::Expected<HostTensor> h = toHostTensor(*a, p, ElementType::F16, true);
  ASSERT_TRUE(static_cast<bool>(h));
  EXPECT_EQ(h->dtype, ElementType::F16);
  EXPECT_EQ(h->getAsFloat(5), 5.0f);
  // No conversions allowed: readNpy's error.
  llvm::Expected<HostTensor> strict = toHostTensor(*a, p, ElementType::F32, false);
  ASSERT_FALSE(static_cast<bool>(strict));
  EXPECT_HAS(llvm::toString(strict.takeError()), p + ": unsupported dtype '>f8'");
}

TEST_F(NpyTest, FortranOrderRank3) {
  // shape (2, 3, 4): element (i, j, k) = 100i + 10j + k, stored with i
  // fastest.
  std::string data;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i)
        data += f32le(100.0f * i + 10.0f * j + k);
  std::string p = writeFile(
      "f.npy",
      npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", data));
  llvm::Expected<NpyArray> a = readNpyArray(p);
  ASSERT_TRUE(static_cast<bool>(a));
  std::vector<std::string> notes;
  llvm::Expected<HostTensor> t = toHostTensor(*a, p, ElementType::F32, true, &notes);
  ASSERT_TRUE(static_cast<bool>(t));
  int64_t flat = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(t->getAsFloat(flat++), 100.0f * i + 10.0f * j + k);
  EXPECT_EQ(notes, std::vector<std::string>{"transposed from Fortran order"});
  // 1-D: Fortran and C order are the same layout; nothing to note.
  llvm::Expected<NpyArray> v = readNpyArray(writeFile(
      "v.npy", npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
                       f32le(1) + f32le(2))));
  ASSERT_TRUE(static_cast<bool>(v));
  notes.clear();
  ASSERT_TRUE(static_cast<bool>(toHostTensor(*v, "v", ElementType::F32, true, &notes)));
  EXPECT_TRUE(notes.empty());
}

TEST_F(NpyTest, IntegerMasksToBool) {
  // int64 [0, 5, -1, 256]: nonzero = true, whatever byte holds it.
  std::string data;
  for (int64_t v : {int64_t(0), int64_t(5), int64_t(-1), int64_t(256)})
    for (int i = 0; i < 8; ++i)
      data += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  llvm::Expected<NpyArray> a = readNpyArray(writeFile(
      "m.npy", npyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }", data)));
  ASSERT_TRUE(static_cast<bool>(a));
  std::vector<std::string> notes;
  llvm::Expected<HostTensor> t = toHostTensor(*a, "m", ElementType::Bool, true, &notes);
  ASSERT_TRUE(static_cast<bool>(t));
  EXPECT_EQ(t->bytes, (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(notes, std::vector<std::string>{"converted int64 to bool (nonzero = true)"});
  // Integers for a float argument, or floats for a mask: not converted
  // (int64 is left as int64 for the caller's dtype check).
  llvm::Expected<HostTensor> f = toHostTensor(*a, "m", ElementType::F32, true);
  ASSERT_TRUE(static_cast<bool>(f));
  EXPECT_EQ(f->dtype, ElementType::I64);
  llvm::Expected<NpyArray> fl = readNpyArray(writeFile(
      "f.npy", npyFile(f32Dict("(1,)"), f32le(1))));
  ASSERT_TRUE(static_cast<bool>(fl));
  llvm::Expected<HostTensor> kept = toHostTensor(*fl, "f", ElementType::Bool, true);
  ASSERT_TRUE(static_cast<bool>(kept)); // left as float32 for the dtype check
  EXPECT_EQ(kept->dtype, ElementType::F32);
}

TEST(HostTensorTest, Bfloat16RoundsToNearestEven) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 is half-way between 1 and 1 + 2^-7: to even (1).
  EXPECT_EQ(floatToBfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3·2^-8 is half-way between 1 + 2^-7 and 1 + 2^-6: to even (0x3f82).
  EXPECT_EQ(floatToBfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // Just above half-way rounds up.
  EXPECT_EQ(floatToBfloat16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(floatToBfloat16(-2.5f), 0xc020);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::max()), 0x7f80); // rounds to inf
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(std::nanf("")))));
  // A NaN whose payload sits only in the dropped bits stays a NaN.
  uint32_t lowNan = 0x7f800001;
  float f;
  std::memcpy(&f, &lowNan, 4);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(f))));
  HostTensor t = HostTensor::zeros(ElementType::BF16, {2});
  t.setFromFloat(1, 3.140625f);
  EXPECT_EQ(t.getAsFloat(1), 3.140625f);
  EXPECT_EQ(dtypeName(ElementType::BF16), "bfloat16");
  EXPECT_EQ(dtypeSize(ElementType::BF16), 2u);
}

TEST_F(NpyTest, Bfloat16FromFloatArraysAndWrittenAsFloat32) {
  llvm::Expected<NpyArray> a = readNpyArray(
      writeFile("f.npy", npyFile(f32Dict("(3,)"), f32le(1.0f) + f32le(1.00390625f) + f32le(-0.1f))));
  ASSERT_TRUE(static_cast<bool>(a));
  std::vector<std::string> notes;
  llvm::Expected<HostTensor> t = toHostTensor(*a, "x", ElementType::BF16, true, &notes);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->dtype, ElementType::BF16);
  EXPECT_EQ(t->getAsFloat(0), 1.0f);
  EXPECT_EQ(t->getAsFloat(1), 1.0f); // 1 + 2^-8: half-way, to even
  EXPECT_EQ(t->getAsFloat(2), bfloat16ToFloat(floatToBfloat16(-0.1f)));
  EXPECT_EQ(notes, std::vector<std::string>{"converted float32 to bfloat16"});
  // Written as float32, exactly.
  std::string p = pathOf("out.npy");
  ASSERT_FALSE(writeNpy(p, *t));
  llvm::Expected<HostTensor> back = readNpy(p);
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(back->dtype, ElementType::F32);
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(back->getAsFloat(i), t->getAsFloat(i));
}

TEST_F(NpyTest, IntegersToInt32AndInt64) {
  // int64 [0, 5, -1, 4096] (NumPy's default integer) for an int32 argument:
  // converted exactly; a value that does not fit is an error naming it.
  auto i64Bytes = [](std::initializer_list<int64_t> vs) {
    std::string data;
    for (int64_t v : vs)
      for (int i = 0; i < 8; ++i)
        data += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
    return data;
  };
  std::string dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }";
  llvm::Expected<NpyArray> a =
      readNpyArray(writeFile("l.npy", npyFile(dict, i64Bytes({0, 5, -1, 4096}))));
  ASSERT_TRUE(static_cast<bool>(a));
  EXPECT_EQ(a->exactDType(), ElementType::I64);
  std::vector<std::string> notes;
  llvm::Expected<HostTensor> t = toHostTensor(*a, "len", ElementType::I32, true, &notes);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->dtype, ElementType::I32);
  EXPECT_EQ(t->getAsInt(1), 5);
  EXPECT_EQ(t->getAsInt(2), -1);
  EXPECT_EQ(t->getAsInt(3), 4096);
  EXPECT_EQ(notes, std::vector<std::string>{"converted int64 to int32"});
  // Without conversions the int64 file is returned as int64 (readNpy).
  llvm::Expected<HostTensor> exact = readNpy(pathOf("l.npy"));
  ASSERT_TRUE(static_cast<bool>(exact));
  EXPECT_EQ(exact->dtype, ElementType::I64);
  EXPECT_EQ(exact->getAsInt(3), 4096);

  llvm::Expected<NpyArray> big = readNpyArray(
      writeFile("b.npy", npyFile(dict, i64Bytes({1, 2, int64_t(1) << 40, 3}))));
  ASSERT_TRUE(static_cast<bool>(big));
  llvm::Expected<HostTensor> bad = toHostTensor(*big, "len", ElementType::I32, true);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_HAS(llvm::toString(bad.takeError()),
             "len: element 2 (1099511627776) does not fit int32");
  // uint8 to int64.
  llvm::Expected<NpyArray> u8 = readNpyArray(writeFile(
      "u.npy", npyFile("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
                       std::string("\x07\xff", 2))));
  ASSERT_TRUE(static_cast<bool>(u8));
  llvm::Expected<HostTensor> w = toHostTensor(*u8, "u", ElementType::I64, true);
  ASSERT_TRUE(static_cast<bool>(w));
  EXPECT_EQ(w->getAsInt(0), 7);
  EXPECT_EQ(w->getAsInt(1), 255);
}

// fp8 e4m3 (OCP E4M3FN) against its definition: sign, exponent field e
// (bias 7), mantissa m; (1 + m/8)·2^(e−7), subnormals (m/8)·2^−6, NaN at
// S.1111.111, no infinities.
TEST(Fp8E4M3, EveryCodeAndRounding) {
  for (int c = 0; c < 256; ++c) {
    int e = (c >> 3) & 15, m = c & 7;
    double mag = e == 0 ? m / 8.0 * std::ldexp(1.0, -6) : (1 + m / 8.0) * std::ldexp(1.0, e - 7);
    float got = e4m3ToFloat(static_cast<uint8_t>(c));
    if ((c & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(got)) << c;
      continue;
    }
    EXPECT_EQ(got, static_cast<float>((c & 0x80) ? -mag : mag)) << c;
    EXPECT_EQ(floatToE4m3(got), c) << c; // every finite code round trips
  }
  EXPECT_EQ(e4m3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(floatToE4m3(1000.0f), 0x7e); // saturates
  EXPECT_EQ(floatToE4m3(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(floatToE4m3(std::nanf("")) & 0x7f, 0x7f);
  EXPECT_EQ(floatToE4m3(1.0625f), 0x38); // half-way 1 / 1.125: to the even code 0x38
  EXPECT_EQ(floatToE4m3(1.1875f), 0x3a); // half-way 1.125 / 1.25: to 0x3a
  EXPECT_EQ(floatToE4m3(1.07f), 0x39);
  EXPECT_EQ(floatToE4m3(std::ldexp(1.0f, -10)), 0x00); // half of the least subnormal: to 0
  EXPECT_EQ(floatToE4m3(std::ldexp(1.5f, -10)), 0x01);
  EXPECT_EQ(floatToE4m3(-0.0f), 0x80);
  EXPECT_EQ(dtypeName(ElementType::F8E4M3), "float8_e4m3fn");
  EXPECT_EQ(dtypeSize(ElementType::F8E4M3), 1u);
}

// An fp8 argument takes a uint8 (or int8) array's bytes as they are; a
// float array is refused.
TEST_F(NpyTest, Fp8FromUint8Bytes) {
  llvm::Expected<NpyArray> u8 = readNpyArray(writeFile(
      "f8.npy", npyFile("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
                        std::string("\x38\xfe\x01", 3))));
  ASSERT_TRUE(static_cast<bool>(u8));
  llvm::Expected<HostTensor> t = toHostTensor(*u8, "k", ElementType::F8E4M3, true);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->dtype, ElementType::F8E4M3);
  EXPECT_EQ(t->getAsFloat(0), 1.0f);
  EXPECT_EQ(t->getAsFloat(1), -448.0f);
  EXPECT_EQ(t->getAsFloat(2), std::ldexp(1.0f, -9));
  llvm::Expected<NpyArray> f =
      readNpyArray(writeFile("f.npy", npyFile(f32Dict("(1,)"), f32le(1.0f))));
  ASSERT_TRUE(static_cast<bool>(f));
  llvm::Expected<HostTensor> bad = toHostTensor(*f, "k", ElementType::F8E4M3, true);
  if (bad) // a float32 tensor, which the caller's dtype check refuses
    EXPECT_EQ(bad->dtype, ElementType::F32);
  else
    llvm::consumeError(bad.takeError());
}

TEST(Half, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above the tie between 1 and 1 + 2^-10:
  // correctly rounded it is 1 + 2^-10 (0x3c01); through float32 it would
  // become the tie 1 + 2^-11 and then round to even, 1 (0x3c00).
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
  EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3c00); // the tie: even
  EXPECT_EQ(doubleToHalf(-2.0), 0xc000);
  EXPECT_EQ(doubleToHalf(65519.99), 0x7bff);
  EXPECT_EQ(doubleToHalf(65520.0), 0x7c00);
  EXPECT_EQ(doubleToHalf(1e300), 0x7c00);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -25)), 0x0000); // tie to even zero
  EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -25) + std::ldexp(1.0, -60)), 0x0001);
  EXPECT_TRUE(std::isnan(halfToFloat(doubleToHalf(std::nan("")))));
  // Every half value round-trips through double.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (!std::isnan(f))
      EXPECT_EQ(doubleToHalf(f), h) << h;
  }
  EXPECT_EQ(doubleToFloat(1e300), std::numeric_limits<float>::infinity());
  EXPECT_EQ(doubleToFloat(-1e39), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(doubleToFloat(3.4028235e38), 3.4028235e38f);
  EXPECT_EQ(doubleToFloat(0.1), 0.1f);
}

TEST_F(NpyTest, ReadNpzStoredAndDeflated) {
  for (const char *hex : {kStoredNpz, kDeflatedNpz}) {
    std::string p = writeFile("a.npz", fromHex(hex));
    EXPECT_TRUE(isZipFile(p));
    llvm::Expected<std::vector<NpzMember>> m = readNpz(p);
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    ASSERT_EQ(m->size(), 2u);
    EXPECT_EQ((*m)[0].name, "q");
    EXPECT_EQ((*m)[0].array.shape, (std::vector<int64_t>{2, 3}));
    llvm::Expected<HostTensor> q = toHostTensor((*m)[0].array, "q", ElementType::F32, false);
    ASSERT_TRUE(static_cast<bool>(q));
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(q->getAsFloat(i), static_cast<float>(i));
    EXPECT_EQ((*m)[1].name, "m");
    llvm::Expected<HostTensor> b = toHostTensor((*m)[1].array, "m", ElementType::Bool, false);
    ASSERT_TRUE(static_cast<bool>(b));
    EXPECT_EQ(b->bytes, (std::vector<uint8_t>{1, 0, 1, 1}));
  }
  EXPECT_FALSE(isZipFile(writeFile("q.npy", npyFile(f32Dict("(1,)"), f32le(1)))));
  EXPECT_FALSE(isZipFile(pathOf("missing.npz")));
}

TEST_F(NpyTest, ReadNpzErrors) {
  std::string good = fromHex(kDeflatedNpz);
  auto npzError = [&](const std::string &bytes) {
    std::string p = writeFile("bad.npz", bytes);
    llvm::Expected<std::vector<NpzMember>> m = readNpz(p);
    if (m) {
      ADD_FAILURE() << "expected an error";
      return std::string();
    }
    std::string msg = llvm::toString(m.takeError());
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind(p, 0), 0u) << msg;
    return msg;
  };
  EXPECT_HAS(npzError(""), ": empty file");
  EXPECT_HAS(npzError("PK\x03\x04 short"), "not a valid zip archive: too short");
  EXPECT_HAS(npzError(good.substr(0, good.size() - 30)),
             "not a valid zip archive: no end of central directory record");
  // A flipped bit in the first member's deflate data.
  std::string flipped = good;
  flipped[80] ^= 0x10;
  std::string msg = npzError(flipped);
  EXPECT_TRUE(msg.find("bad.npz:q.npy: invalid deflate data") != std::string::npos ||
              msg.find("bad.npz:q.npy: CRC-32 mismatch") != std::string::npos ||
              msg.find("bad.npz:q.npy: inflated to") != std::string::npos)
      << msg;
  // Any truncation or any flipped byte is an error or a valid archive,
  // never a crash (the sanitizer build checks the reads).
  for (size_t n = 0; n < good.size(); ++n) {
    std::string p = writeFile("t.npz", good.substr(0, n));
    llvm::Expected<std::vector<NpzMember>> m = readNpz(p);
    EXPECT_FALSE(static_cast<bool>(m)) << n;
    llvm::consumeError(m.takeError());
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bytes = good;
    bytes[i] ^= 0xff;
    llvm::Expected<std::vector<NpzMember>> m = readNpz(writeFile("f.npz", bytes));
    if (!m)
      llvm::consumeError(m.takeError());
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Reading some rows only (readNpyRows), a rank's share (readNpyShare) and
// putting shares back together (unshard)
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Shard.h"

namespace {

/// A [2, 12, 3] float32 tensor whose element (a, r, c) is 100a + 10r + c.
HostTensor rowsTensor() {
  HostTensor t = HostTensor::zeros(ElementType::F32, {2, 12, 3});
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t r = 0; r < 12; ++r)
      for (int64_t c = 0; c < 3; ++c)
        t.setFromFloat((a * 12 + r) * 3 + c, static_cast<float>(100 * a + 10 * r + c));
  return t;
}

TEST_F(NpyTest, ReadsOnlyTheRowsAsked) {
  std::string p = pathOf("rows.npy");
  ASSERT_FALSE(writeNpy(p, rowsTensor()));
  int64_t seen = -1;
  llvm::Expected<HostTensor> t =
      readNpyRows(p, 1, [&](int64_t n) -> llvm::Expected<std::vector<int64_t>> {
        seen = n;
        return std::vector<int64_t>{7, 3, 4, 5, 11};
      });
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(seen, 12);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 5, 3}));
  const int64_t rows[] = {7, 3, 4, 5, 11};
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t k = 0; k < 5; ++k)
      for (int64_t c = 0; c < 3; ++c)
        EXPECT_EQ(t->getAsFloat((a * 5 + k) * 3 + c), 100 * a + 10 * rows[k] + c);
  // A row outside the dim, a dim the file lacks, and the caller's error.
  auto bad = readNpyRows(p, 1, [](int64_t) -> llvm::Expected<std::vector<int64_t>> {
    return std::vector<int64_t>{12};
  });
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), p + ": row 12 is outside dim 1 of length 12");
  auto noDim = readNpyRows(p, 3, [](int64_t) -> llvm::Expected<std::vector<int64_t>> {
    return std::vector<int64_t>{};
  });
  ASSERT_FALSE(static_cast<bool>(noDim));
  EXPECT_EQ(llvm::toString(noDim.takeError()), p + ": has rank 3, no dim 3 to take rows of");
}

TEST_F(NpyTest, ShareOfEachLayoutMatchesTheWholeTensorsRows) {
  std::string p = pathOf("share.npy");
  HostTensor whole = rowsTensor();
  ASSERT_FALSE(writeNpy(p, whole));
  for (std::string layout : {"contiguous", "striped", "zigzag"})
    for (int ranks : {1, 2, 3}) {
      ShardSpec spec{1, layout};
      std::vector<char> gathered;
      std::vector<int64_t> shareShape;
      for (int r = 0; r < ranks; ++r) {
        std::vector<int64_t> wholeShape;
        auto share = readNpyShare(p, spec, r, ranks, &wholeShape);
        ASSERT_TRUE(static_cast<bool>(share)) << llvm::toString(share.takeError());
        EXPECT_EQ(wholeShape, whole.shape);
        auto cut = shardOf(whole, spec, r, ranks);
        ASSERT_TRUE(static_cast<bool>(cut));
        EXPECT_EQ(share->bytes, cut->bytes) << layout << " rank " << r << " of " << ranks;
        // Row j of the share is global row globalRow(j).
        int64_t local = 12 / ranks;
        for (int64_t j = 0; j < local; ++j)
          EXPECT_EQ(share->getAsFloat(j * 3), 10 * globalRow(spec, j, local, r, ranks));
        gathered.insert(gathered.end(), share->bytes.begin(), share->bytes.end());
        shareShape = share->shape;
      }
      auto joined = unshard(gathered, ElementType::F32, shareShape, spec, ranks);
      ASSERT_TRUE(static_cast<bool>(joined));
      EXPECT_EQ(joined->bytes, whole.bytes) << layout << " over " << ranks;
    }
  // 12 rows are not 5 contiguous parts, nor 8 zigzag chunks.
  auto five = readNpyShare(p, ShardSpec{1, "contiguous"}, 0, 5);
  ASSERT_FALSE(static_cast<bool>(five));
  EXPECT_EQ(llvm::toString(five.takeError()),
            p + ": dim 1 has 12 rows, which do not split into 5 contiguous parts");
  auto eight = shardOf(whole, ShardSpec{1, "zigzag"}, 0, 4);
  ASSERT_FALSE(static_cast<bool>(eight));
  EXPECT_EQ(llvm::toString(eight.takeError()),
            "a tensor of shape [2,12,3] cannot be split into 8 zigzag parts along dim 1");
}

} // namespace

// copyStridedRaw against an element-by-element gather: permuted views
// (transposes, as the Python layer passes [B, T, H, D] as [B, H, T, D]) of
// ranks 0 to 4, unit dims, a strided innermost dim and a strided
// destination, for 1-, 2- and 4-byte elements.
TEST(CopyStrided, MatchesElementwise) {
  std::mt19937 rng(7);
  auto check = [&](std::vector<int64_t> shape, std::vector<int64_t> srcStrides,
                   std::vector<int64_t> dstStrides, size_t es) {
    int64_t rank = shape.size(), n = 1, srcSpan = 1, dstSpan = 1;
    for (int64_t k = 0; k < rank; ++k) {
      n *= shape[k];
      srcSpan += (shape[k] - 1) * srcStrides[k];
      dstSpan += (shape[k] - 1) * dstStrides[k];
    }
    std::vector<uint8_t> src(srcSpan * es), dst(dstSpan * es, 0xAB), want(dst);
    for (uint8_t &x : src)
      x = static_cast<uint8_t>(rng());
    std::vector<int64_t> idx(rank, 0);
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t so = 0, doff = 0;
      for (int64_t k = 0; k < rank; ++k) {
        so += idx[k] * srcStrides[k];
        doff += idx[k] * dstStrides[k];
      }
      std::memcpy(&want[doff * es], &src[so * es], es);
      for (int64_t k = rank - 1; k >= 0; --k) {
        if (++idx[k] < shape[k])
          break;
        idx[k] = 0;
      }
    }
    attn::runtime::copyStridedRaw(src.data(), srcStrides.data(), dst.data(), dstStrides.data(),
                                  shape.data(), rank, es);
    EXPECT_EQ(dst, want);
  };
  auto rowMajor = [](const std::vector<int64_t> &shape) {
    return attn::runtime::rowMajorStridesRaw(shape.data(), shape.size());
  };
  for (size_t es : {1, 2, 4}) {
    check({}, {}, {}, es);
    check({5}, {3}, {1}, es);
    check({2, 3, 4, 5}, rowMajor({2, 3, 4, 5}), rowMajor({2, 3, 4, 5}), es);
    // [B, T, H, D] = [2, 6, 3, 8] read as [B, H, T, D].
    check({2, 3, 6, 8}, {6 * 3 * 8, 8, 3 * 8, 1}, rowMajor({2, 3, 6, 8}), es);
    // [B, T, H] scales read as [B, H, T]: a strided innermost dim.
    check({2, 3, 6}, {18, 1, 3}, rowMajor({2, 3, 6}), es);
    // Unit dims anywhere, and a contiguous inner block under a transpose.
    check({1, 4, 1, 3, 5}, {999, 5, 7, 20, 1}, rowMajor({1, 4, 1, 3, 5}), es);
    // A strided destination (an output written into a view).
    check({3, 4}, {4, 1}, {1, 3}, es);
    check({0, 4}, {4, 1}, {4, 1}, es);
  }
}
