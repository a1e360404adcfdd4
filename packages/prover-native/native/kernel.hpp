// The boundary between the Node-API glue (addon.cpp) and the arithmetic kernels. The kernel
// (fields, curves, MSM, NTT, zkey parsing, the Groth16 prover) is compiled twice: once for any
// x86-64 / any 64-bit CPU ("generic") and once with BMI2 + ADX enabled ("adx"); addon.cpp picks one
// at run time from the CPU's features. Nothing here depends on a kernel's types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel.hpp"

namespace mzk {

/** A malformed input (zkey, witness, test arguments): reported to JavaScript as an Error. */
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LoadOptions {
  /** Threads for building the precomputed tables. */
  int threads = 1;
  /** Most bytes the precomputed MSM tables of one zkey may take. */
  size_t tableBudget = (size_t)1 << 30;
  /** Testing and tuning: force the digit width / the number of copies (0: automatic). */
  int forceC = 0;
  int forceCopies = 0;
};

struct ProveOptions {
  int threads = 1;
  Cancel cancel;
};

struct ZKeyInfo {
  uint32_t nVars = 0, nPublic = 0, domainSize = 0;
  size_t tableBytes = 0;
  /** Per MSM (A, B1, B2, C, H): digit width, copies, rounds. */
  struct Plan { int c, copies, rounds; };
  Plan plans[5];
};

struct ProofOut {
  std::vector<std::string> piA, piC;
  std::vector<std::vector<std::string>> piB;
  std::vector<std::string> publicSignals;
  /** Milliseconds per phase: witness checks, ABC, NTT, MSM A, B1, B2, C, H, finish. */
  double phaseMs[9] = {0};
};

class ZKeyImpl {
 public:
  virtual ~ZKeyImpl() = default;
  virtual ZKeyInfo info() const = 0;
  virtual void prove(const uint8_t* wtns, size_t length, const ProveOptions& options, ProofOut& out) const = 0;
};

struct Bytes {
  const uint8_t* data;
  size_t length;
};

struct Kernel {
  const char* name;
  std::shared_ptr<ZKeyImpl> (*load)(const uint8_t* data, size_t length, const LoadOptions& options);
  /** Test-only arithmetic entry points (see kernel_impl.hpp, `testOp`). */
  std::vector<uint8_t> (*test)(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints);
};

const Kernel& kernelGeneric();
/** nullptr where the build has no ADX kernel (not x86-64). */
const Kernel* kernelAdx();

}  // namespace mzk
