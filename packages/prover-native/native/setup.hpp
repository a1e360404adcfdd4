// The boundary between the Node-API glue (bindings_setup.cpp) and the native development setup
// (setup_dev.hpp), which, like the prover, is compiled once per kernel (setup_generic.cpp,
// setup_adx.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace mzk {

struct DevSetupOptions {
  std::string r1csPath, zkeyPath;
  /** Also write the prepared powers of tau of the same τ, α, β here (small circuits only); empty: none. */
  std::string ptauPath;
  int threads = 1;
  /**
   * snarkjs's hashToG2 of a contribution's 64-byte transcript: the G2 point its proof of knowledge is
   * checked against, as 128 bytes LEM. Public data (a function of the transcript); the caller
   * computes it with snarkjs's own routine so that `snarkjs zkey verify` derives the same point.
   */
  std::function<void(const uint8_t* transcript, uint8_t* g2LEM)> hashToG2;
  /** The contribution's name in the MPC-params section (at most 64 bytes are kept). */
  std::string contributionName = "mzk development setup";
};

struct DevSetupResult {
  uint32_t nVars = 0, nPublic = 0, nConstraints = 0, domainSize = 0, ptauPower = 0;
  uint8_t csHash[64] = {0};
  /** Milliseconds: read + scalars, tables, points (and writing), ptau. */
  double msScalars = 0, msTables = 0, msPoints = 0, msPtau = 0;
};

using SetupDevelopment = DevSetupResult (*)(const DevSetupOptions& options);

SetupDevelopment setupDevelopmentGeneric();
/** nullptr where the build has no ADX kernel (not x86-64). */
SetupDevelopment setupDevelopmentAdx();

}  // namespace mzk
