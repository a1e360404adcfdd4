// The boundary between the Node-API glue (bindings_verify.cpp) and the Groth16 verifier (verifier.hpp), which,
// like the prover, is compiled once per kernel (verify_generic.cpp, verify_adx.cpp). Points cross it
// as plain 256-bit integers in snarkjs's JSON shape; the kernel checks that each is below its modulus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mzk {

/** A plain (not Montgomery) integer below 2^256, little-endian 64-bit words. */
struct U256 {
  uint64_t w[4];
};

/** snarkjs's [x, y, z]: z = 1 affine, z = 0 the point at infinity, otherwise Jacobian (x/z², y/z³). */
struct G1Input {
  U256 x, y, z;
};
/** The same over Fq2, each coordinate [c0, c1] = c0 + c1·u. */
struct G2Input {
  U256 x[2], y[2], z[2];
};

struct VerifyingKeyInput {
  G1Input alpha;
  G2Input beta, gamma, delta;
  std::vector<G1Input> ic;
};

struct ProofInput {
  G1Input a;
  G2Input b;
  G1Input c;
};

class PreparedVerifyingKey {
 public:
  virtual ~PreparedVerifyingKey() = default;
  /** Public signals the key takes: IC has one point more. */
  virtual size_t nPublic() const = 0;
  /**
   * The Groth16 check; false (never an exception) for a proof that is not valid for any reason:
   * the wrong number of signals, a signal ≥ r, a coordinate ≥ q, a point off its curve, π_B outside
   * G2, or a failed pairing equation.
   */
  virtual bool verify(const ProofInput& proof, const U256* signals, size_t n) const = 0;
};

/** Checks and prepares a verification key; throws InputError naming the first bad point. */
using PrepareVerifyingKey = std::shared_ptr<PreparedVerifyingKey> (*)(const VerifyingKeyInput& key);

PrepareVerifyingKey prepareVerifyingKeyGeneric();
/** nullptr where the build has no ADX kernel (not x86-64). */
PrepareVerifyingKey prepareVerifyingKeyAdx();

}  // namespace mzk
