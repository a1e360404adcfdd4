// A snarkjs witness (".wtns"), checked against the key it is for before a proof computes anything.
//
// Sections (iden3 binary file, magic "wtns"): 1 header: n8 u32, the field's prime (n8 bytes LE),
// the number of values u32; 2 the values, n8 bytes each, plain (not Montgomery), LE.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "binfile.hpp"
#include "codec.hpp"
#include "field.hpp"

namespace mzk {
namespace MZK_KERNEL {

constexpr BinFormat WTNS_FILE{"wtns", "a wtns file", 2, "witness"};

/**
 * The nVars values of a witness for a circuit of nVars signals, into `out` as 4 plain limbs each;
 * InputError for a witness of another curve or circuit, or a value that is not canonical.
 */
inline void readWitness(const uint8_t* wtns, size_t length, uint32_t nVars, std::vector<u64>& out) {
  const BinFile file(wtns, length, WTNS_FILE);
  {
    const BinSection& s = file.section(1, "header");
    if (s.size < 4) file.fail(": truncated section 1 (header)");
    const uint32_t n8 = le32(s.data);
    if (n8 != 32 || s.size < 36 || !sameModulus<FrParams>(s.data + 4)) {
      file.fail(": its field is not BN254's scalar field (a witness for another curve)");
    }
    file.section(1, 40, "header");
    const uint32_t n = le32(s.data + 36);
    if (n != nVars) file.fail(": " + std::to_string(n) + " values for a circuit of " + std::to_string(nVars) + " (a witness for another circuit)");
  }
  const BinSection& values = file.section(2, (uint64_t)nVars * 32, "values");
  out.resize((size_t)nVars * 4);
  u64* w = out.data();
  std::memcpy(w, values.data, (size_t)nVars * 32);
  for (uint32_t i = 0; i < nVars; i++) {
    if (!limbsBelowModulus<FrParams>(w + 4 * i)) file.fail(": value " + std::to_string(i) + " is not below the field prime");
  }
  if (w[0] != 1 || w[1] != 0 || w[2] != 0 || w[3] != 0) file.fail(": value 0 must be 1 (a witness for another circuit?)");
}

}  // namespace MZK_KERNEL
}  // namespace mzk
