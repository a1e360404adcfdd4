// The boundary between the Node-API glue (bindings_*.cpp) and the arithmetic kernels. The kernel
// (fields, curves, MSM, NTT, zkey parsing, the Groth16 prover) is compiled twice: once for any
// x86-64 / any 64-bit CPU ("generic") and once with BMI2 + ADX enabled ("adx"); the glue picks one
// at run time from the CPU's features (bindings.hpp). Nothing here depends on a kernel's types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "parallel.hpp"

namespace mzk {

/** A malformed input (zkey, witness, r1cs, ptau, test arguments): reported to JavaScript as an Error. */
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/**
 * Where a key's MSM tables are kept between processes (table_cache.hpp implements it, by the zkey's
 * SHA-256). `plan` names the table layout; a file made for another plan, kernel or layout is never
 * returned.
 */
struct TableStore {
  virtual ~TableStore() = default;
  /** The body of a checked cache file of exactly `bytes`, mapped read-only and kept mapped while the
   *  returned pointer lives; empty when there is none (a file that does not check out is deleted). */
  virtual std::shared_ptr<const uint8_t> map(const std::string& plan, size_t bytes) = 0;
  /** Writes a cache file of these parts, in order (best effort: a failure only means no file). */
  virtual void write(const std::string& plan, const std::vector<std::pair<const void*, size_t>>& parts) = 0;
  /** Deletes the file for this plan (its body did not hold the key's points). */
  virtual void discard(const std::string& plan) = 0;
  /** What the last map or write did, for memoryStats and the tests: "mapped", "written", "rebuilt"... */
  std::string status = "off";
};

struct LoadOptions {
  /** Threads for building the precomputed tables. */
  int threads = 1;
  /** Most bytes the precomputed MSM tables of one zkey may take. */
  size_t tableBudget = (size_t)1 << 30;
  /**
   * Most bytes the key may hold in all (0: no ceiling but tableBudget): resident sections, the
   * MSMs' bases, their extra shifted copies and `proofsInFlight` proofs' scratch (see memoryPlan).
   * A key whose bases and scratch alone exceed it is refused (OutOfBudget).
   */
  size_t memoryBudget = 0;
  /** False: a key over the budget is loaded anyway with the least plan (ZKeyInfo::overBudget). */
  bool refuseOverBudget = true;
  int proofsInFlight = 1;
  /** Tables from / to this store when set. */
  std::shared_ptr<TableStore> tableStore;
  /** The input is a private file mapping the kernel may drop pages of once they are parsed. */
  bool releaseInput = false;
  /** Testing and tuning: force the digit width / the number of copies (0: automatic). */
  int forceC = 0;
  int forceCopies = 0;
};

/** Even the key's bases and one proof's scratch do not fit LoadOptions::memoryBudget. */
struct OutOfBudget : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ProveOptions {
  int threads = 1;
  Cancel cancel;
};

struct ZKeyInfo {
  uint32_t nVars = 0, nPublic = 0, domainSize = 0;
  size_t tableBytes = 0;
  /** The tables' bytes that are a read-only mapping of the table cache (the rest were built here). */
  size_t tableBytesMapped = 0;
  /** Held besides the tables: coefficients, twiddles, fixed-base tables of δ. */
  size_t residentBytes = 0;
  /** Scratch one proof of this key uses at most (NTT buffers, digits, bucket entries). */
  size_t scratchBytes = 0;
  /** What the table cache did for this key: "off", "mapped", "written", "rebuilt", "unwritable". */
  std::string tableCache = "off";
  /** Loaded with the least plan although that exceeds LoadOptions::memoryBudget. */
  bool overBudget = false;
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

struct Kernel {
  const char* name;
  std::shared_ptr<ZKeyImpl> (*load)(const uint8_t* data, size_t length, const LoadOptions& options);
};

const Kernel& kernelGeneric();
/** nullptr where the build has no ADX kernel (not x86-64). */
const Kernel* kernelAdx();

}  // namespace mzk
