//===- Npz.cpp - .npz archives: a zip reader and an inflater --------------===//
//
// readNpz reads the members of a zip archive (stored or deflated, zip64
// included) as .npy arrays: the central directory and every member are
// bounds-checked against the file, deflated data goes through a small
// RFC 1951 decoder whose output is capped at the declared size, and every
// member's CRC-32 is checked before its .npy is parsed.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/HostTensor.h"

#include "NpyInternal.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>
#include <mutex>
#include <optional>
#include <set>

using namespace llvm;

namespace attn::runtime {

using namespace detail;

namespace {

/// A raw DEFLATE (RFC 1951) decoder, after zlib's contrib/puff: canonical
/// Huffman codes decoded a bit at a time, every read and every back
/// reference bounds-checked, the output capped at `limit` bytes.
class Inflater {
public:
  Inflater(ArrayRef<uint8_t> in, size_t limit) : in(in), limit(limit) {}

  /// Decodes the whole stream into `out`; an empty string on success, else
  /// what is wrong.
  std::string run(std::vector<uint8_t> &result) {
    out.reserve(limit);
    int last;
    do {
      last = bits(1);
      int type = bits(2);
      if (!err.empty())
        break;
      if (type == 0)
        stored();
      else if (type == 1)
        fixed();
      else if (type == 2)
        dynamic();
      else
        fail("invalid block type 3");
    } while (!last && err.empty());
    if (err.empty())
      result = std::move(out);
    return err;
  }

private:
  struct Huffman {
    uint16_t count[16] = {}; // codes of each length
    uint16_t symbol[288] = {}; // symbols ordered by code
  };

  ArrayRef<uint8_t> in;
  size_t limit;
  size_t pos = 0;
  uint32_t bitBuf = 0;
  int bitCnt = 0;
  std::vector<uint8_t> out;
  std::string err;

  void fail(const std::string &msg) {
    if (err.empty())
      err = msg;
  }

  int bits(int need) {
    uint32_t val = bitBuf;
    while (bitCnt < need) {
      if (pos >= in.size()) {
        fail("unexpected end of the compressed data");
        return 0;
      }
      val |= static_cast<uint32_t>(in[pos++]) << bitCnt;
      bitCnt += 8;
    }
    bitBuf = val >> need;
    bitCnt -= need;
    return static_cast<int>(val & ((1u << need) - 1));
  }

  bool emit(uint8_t b) {
    if (out.size() >= limit) {
      fail("more data than the declared size");
      return false;
    }
    out.push_back(b);
    return true;
  }

  void stored() {
    bitBuf = 0, bitCnt = 0; // to a byte boundary
    if (in.size() - pos < 4)
      return fail("unexpected end of the compressed data");
    unsigned len = in[pos] | (in[pos + 1] << 8);
    unsigned nlen = in[pos + 2] | (in[pos + 3] << 8);
    pos += 4;
    if (len != (~nlen & 0xffffu))
      return fail("stored block length does not match its complement");
    if (in.size() - pos < len)
      return fail("unexpected end of the compressed data");
    if (limit - out.size() < len)
      return fail("more data than the declared size");
    out.insert(out.end(), in.begin() + pos, in.begin() + pos + len);
    pos += len;
  }

  /// Decodes one symbol (or -1 with err set).
  int decode(const Huffman &h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= 15; ++len) {
      code |= bits(1);
      if (!err.empty())
        return -1;
      int count = h.count[len];
      if (code - count < first)
        return h.symbol[index + (code - first)];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    fail("invalid Huffman code");
    return -1;
  }

  /// Builds a canonical code from code lengths; returns 0 for a complete
  /// code, > 0 for an incomplete one, < 0 for an over-subscribed one.
  static int construct(Huffman &h, const uint16_t *length, int n) {
    for (int len = 0; len <= 15; ++len)
      h.count[len] = 0;
    for (int s = 0; s < n; ++s)
      h.count[length[s]]++;
    if (h.count[0] == n)
      return 0; // no codes: complete, but decoding fails
    int left = 1;
    for (int len = 1; len <= 15; ++len) {
      left <<= 1;
      left -= h.count[len];
      if (left < 0)
        return left;
    }
    uint16_t offs[16];
    offs[1] = 0;
    for (int len = 1; len < 15; ++len)
      offs[len + 1] = offs[len] + h.count[len];
    for (int s = 0; s < n; ++s)
      if (length[s] != 0)
        h.symbol[offs[length[s]]++] = static_cast<uint16_t>(s);
    return left;
  }

  void codes(const Huffman &lencode, const Huffman &distcode) {
    static const uint16_t lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10,  11, 13,
                                       15, 17, 19, 23, 27, 31, 35, 43,  51, 59,
                                       67, 83, 99, 115, 131, 163, 195, 227, 258};
    static const uint16_t lext[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static const uint16_t dbase[30] = {
        1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static const uint16_t dext[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                      6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
      int sym = decode(lencode);
      if (sym < 0)
        return;
      if (sym < 256) {
        if (!emit(static_cast<uint8_t>(sym)))
          return;
        continue;
      }
      if (sym == 256)
        return; // end of block
      sym -= 257;
      if (sym >= 29)
        return fail("invalid length symbol");
      size_t len = lbase[sym] + bits(lext[sym]);
      int dsym = decode(distcode);
      if (dsym < 0)
        return;
      if (dsym >= 30)
        return fail("invalid distance symbol");
      size_t dist = dbase[dsym] + bits(dext[dsym]);
      if (!err.empty())
        return;
      if (dist > out.size())
        return fail("distance too far back");
      if (limit - out.size() < len)
        return fail("more data than the declared size");
      size_t from = out.size() - dist;
      for (size_t i = 0; i < len; ++i)
        out.push_back(out[from + i]);
    }
  }

  void fixed() {
    static Huffman lencode, distcode;
    static std::once_flag once;
    std::call_once(once, [] {
      uint16_t lengths[288];
      int s = 0;
      for (; s < 144; ++s)
        lengths[s] = 8;
      for (; s < 256; ++s)
        lengths[s] = 9;
      for (; s < 280; ++s)
        lengths[s] = 7;
      for (; s < 288; ++s)
        lengths[s] = 8;
      construct(lencode, lengths, 288);
      for (s = 0; s < 30; ++s)
        lengths[s] = 5;
      construct(distcode, lengths, 30);
    });
    codes(lencode, distcode);
  }

  void dynamic() {
    static const uint8_t order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                      11, 4,  12, 3, 13, 2, 14, 1, 15};
    int nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
    if (!err.empty())
      return;
    if (nlen > 286 || ndist > 30)
      return fail("bad code-length counts");
    uint16_t lengths[320] = {};
    for (int i = 0; i < ncode; ++i)
      lengths[order[i]] = static_cast<uint16_t>(bits(3));
    if (!err.empty())
      return;
    Huffman lencode, distcode;
    if (construct(lencode, lengths, 19) != 0)
      return fail("incomplete code-length code");
    for (int i = 0; i < nlen + ndist;) {
      int sym = decode(lencode);
      if (sym < 0)
        return;
      if (sym < 16) {
        lengths[i++] = static_cast<uint16_t>(sym);
        continue;
      }
      uint16_t len = 0;
      int repeat;
      if (sym == 16) {
        if (i == 0)
          return fail("repeat with no first length");
        len = lengths[i - 1];
        repeat = 3 + bits(2);
      } else if (sym == 17) {
        repeat = 3 + bits(3);
      } else {
        repeat = 11 + bits(7);
      }
      if (!err.empty())
        return;
      if (i + repeat > nlen + ndist)
        return fail("too many code lengths");
      while (repeat--)
        lengths[i++] = len;
    }
    if (lengths[256] == 0)
      return fail("no end-of-block code");
    int left = construct(lencode, lengths, nlen);
    if (left < 0 || (left > 0 && nlen - lencode.count[0] != 1))
      return fail("invalid literal/length code");
    left = construct(distcode, lengths + nlen, ndist);
    if (left < 0 || (left > 0 && ndist - distcode.count[0] != 1))
      return fail("invalid distance code");
    codes(lencode, distcode);
  }
};

uint16_t rd16(const uint8_t *p) { return support::endian::read16le(p); }
uint32_t rd32(const uint8_t *p) { return support::endian::read32le(p); }
uint64_t rd64(const uint8_t *p) { return support::endian::read64le(p); }

} // namespace

bool isZipFile(const std::string &path) {
  uint64_t size = 0;
  Expected<sys::fs::file_t> fdOr = openRegularFile(path, size);
  if (!fdOr) {
    consumeError(fdOr.takeError());
    return false;
  }
  FileCloser closer{*fdOr};
  char head[4];
  Expected<size_t> got = readFully(*fdOr, head, 4);
  if (!got) {
    consumeError(got.takeError());
    return false;
  }
  return *got == 4 && (std::memcmp(head, "PK\x03\x04", 4) == 0 ||
                       std::memcmp(head, "PK\x05\x06", 4) == 0);
}

Expected<std::vector<NpzMember>> readNpz(const std::string &path) {
  uint64_t fileSize = 0;
  Expected<sys::fs::file_t> fdOr = openRegularFile(path, fileSize);
  if (!fdOr)
    return fdOr.takeError();
  FileCloser closer{*fdOr};
  if (fileSize == 0)
    return npyError(path, "empty file");
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getOpenFile(
      *fdOr, path, fileSize, /*RequiresNullTerminator=*/false);
  if (!buf)
    return npyError(path, "read error: " + buf.getError().message());
  ArrayRef<uint8_t> z(reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
                      (*buf)->getBufferSize());
  auto bad = [&](const Twine &why) { return npyError(path, why); };
  auto corrupt = [&](const Twine &why) {
    return npyError(path, "not a valid zip archive: " + why);
  };

  // The end of central directory record: 22 bytes, then a comment of up to
  // 64 KiB that must reach the end of the file exactly.
  if (z.size() < 22)
    return corrupt("too short");
  std::optional<uint64_t> eocd;
  uint64_t lowest = z.size() >= 22 + 0xffff ? z.size() - 22 - 0xffff : 0;
  for (uint64_t e = z.size() - 22 + 1; e-- > lowest;)
    if (std::memcmp(z.data() + e, "PK\x05\x06", 4) == 0 &&
        e + 22 + rd16(z.data() + e + 20) == z.size()) {
      eocd = e;
      break;
    }
  if (!eocd)
    return corrupt("no end of central directory record");
  const uint8_t *e = z.data() + *eocd;
  uint64_t disk = rd16(e + 4), cdDisk = rd16(e + 6);
  uint64_t entriesHere = rd16(e + 8), entries = rd16(e + 10);
  uint64_t cdSize = rd32(e + 12), cdOffset = rd32(e + 16);
  if (entries == 0xffff || entriesHere == 0xffff || cdSize == 0xffffffff ||
      cdOffset == 0xffffffff) {
    // zip64: a locator right before the record points at the zip64 record.
    if (*eocd < 20 || std::memcmp(e - 20, "PK\x06\x07", 4) != 0)
      return corrupt("no zip64 end of central directory locator");
    uint64_t at = rd64(e - 20 + 8);
    if (at > z.size() || z.size() - at < 56 ||
        std::memcmp(z.data() + at, "PK\x06\x06", 4) != 0)
      return corrupt("bad zip64 end of central directory record");
    const uint8_t *e64 = z.data() + at;
    disk = rd32(e64 + 16), cdDisk = rd32(e64 + 20);
    entriesHere = rd64(e64 + 24), entries = rd64(e64 + 32);
    cdSize = rd64(e64 + 40), cdOffset = rd64(e64 + 48);
  }
  if (disk != 0 || cdDisk != 0 || entriesHere != entries)
    return bad("multi-disk zip archives are not supported");
  if (cdOffset > z.size() || cdSize > z.size() - cdOffset)
    return corrupt("the central directory runs past the end of the file");
  if (entries > cdSize / 46)
    return corrupt("more entries than the central directory holds");

  std::vector<NpzMember> members;
  std::set<std::string> seen;
  uint64_t p = cdOffset;
  for (uint64_t n = 0; n < entries; ++n) {
    if (cdOffset + cdSize - p < 46 || std::memcmp(z.data() + p, "PK\x01\x02", 4) != 0)
      return corrupt("bad central directory entry #" + Twine(n));
    const uint8_t *c = z.data() + p;
    unsigned flags = rd16(c + 8), method = rd16(c + 10);
    uint32_t crc = rd32(c + 16);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24);
    unsigned nameLen = rd16(c + 28), extraLen = rd16(c + 30), commentLen = rd16(c + 32);
    uint64_t startDisk = rd16(c + 34), local = rd32(c + 42);
    if (cdOffset + cdSize - p < 46ull + nameLen + extraLen + commentLen)
      return corrupt("bad central directory entry #" + Twine(n));
    std::string memberName(reinterpret_cast<const char *>(c + 46), nameLen);
    std::string where = path + ":" + escape(memberName, 200);
    // zip64 extra field: the 64-bit values of the fields saturated above.
    for (const uint8_t *x = c + 46 + nameLen, *xe = x + extraLen; xe - x >= 4;) {
      unsigned id = rd16(x), len = rd16(x + 2);
      if (static_cast<size_t>(xe - x - 4) < len)
        break;
      if (id == 0x0001) {
        const uint8_t *f = x + 4, *fe = f + len;
        auto take = [&](uint64_t &v, uint64_t saturated, int width) {
          if (v != saturated)
            return true;
          if (fe - f < width)
            return false;
          v = width == 8 ? rd64(f) : rd32(f);
          f += width;
          return true;
        };
        if (!take(usize, 0xffffffff, 8) || !take(csize, 0xffffffff, 8) ||
            !take(local, 0xffffffff, 8) || !take(startDisk, 0xffff, 4))
          return corrupt("bad zip64 extra field of '" + escape(memberName) + "'");
      }
      x += 4 + len;
    }
    p += 46ull + nameLen + extraLen + commentLen;

    if (startDisk != 0)
      return bad("multi-disk zip archives are not supported");
    if (flags & 1)
      return npyError(where, "encrypted members are not supported");
    if (method != 0 && method != 8)
      return npyError(where, "compression method " + Twine(method) +
                                 " is not supported (stored and deflated are)");
    StringRef nm(memberName);
    if (nm.ends_with("/"))
      continue; // a directory entry
    if (!nm.ends_with(".npy"))
      return npyError(where, "not a .npy member (an .npz archive holds only "
                             ".npy files)");
    std::string key = nm.drop_back(4).str();
    if (!seen.insert(key).second)
      return npyError(where, "duplicate member");

    // The local header: its own name and extra lengths place the data.
    if (local > z.size() || z.size() - local < 30 ||
        std::memcmp(z.data() + local, "PK\x03\x04", 4) != 0)
      return npyError(where, "bad local header");
    uint64_t dataStart = local + 30 + rd16(z.data() + local + 26) +
                         rd16(z.data() + local + 28);
    if (dataStart > z.size() || csize > z.size() - dataStart)
      return npyError(where, "member data runs past the end of the file");
    ArrayRef<uint8_t> data = z.slice(dataStart, csize);
    std::vector<uint8_t> inflated;
    if (method == 8) {
      // No DEFLATE stream expands more than 1032:1 (258-byte matches coded
      // in 2 bits); a bigger declared size is a lie, not an allocation.
      if (usize / 1032 > csize + 1)
        return npyError(where, "declared size " + Twine(usize) +
                                   " is impossible for " + Twine(csize) +
                                   " compressed bytes");
      std::string why = Inflater(data, usize).run(inflated);
      if (!why.empty())
        return npyError(where, "invalid deflate data: " + why);
      if (inflated.size() != usize)
        return npyError(where, "inflated to " + Twine(inflated.size()) +
                                   " bytes, the archive declares " + Twine(usize));
      data = inflated;
    } else if (usize != csize) {
      return npyError(where, "stored member of " + Twine(csize) +
                                 " bytes declares " + Twine(usize));
    }
    if (llvm::crc32(data) != crc)
      return npyError(where, "CRC-32 mismatch (the archive is damaged)");
    Expected<NpyArray> a = parseNpyArray(where, data);
    if (!a)
      return a.takeError();
    members.push_back({std::move(key), std::move(*a)});
  }
  return members;
}

} // namespace attn::runtime
