// The boundary between the Node-API glue (bindings_setup.cpp) and the native phase 2 (phase2_impl.hpp):
// snarkjs's `zkey new` from a circuit's r1cs and an operator's prepared powers of tau, compiled
// once per kernel (phase2_generic.cpp, phase2_adx.cpp) like the prover.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace mzk {

class R1cs;

/** Where the zkey goes: the caller sizes and maps the file, so the kernel does no I/O of its own. */
struct Phase2Output {
  virtual ~Phase2Output() = default;
  /** A writable mapping of exactly `size` bytes (the whole zkey); throws on failure. */
  virtual uint8_t* map(size_t size) = 0;
};

struct Phase2Info {
  uint32_t nVars = 0, nPublic = 0, nConstraints = 0, domainSize = 0, power = 0;
  uint64_t bytes = 0;
  /** snarkjs's circuit hash (BLAKE2b-512 of the key's points), also written in section 10. */
  uint8_t csHash[64] = {0};
};

/**
 * Writes the zkey snarkjs's `zKey.newZKey(r1cs, ptau)` writes, byte for byte, reading only the
 * ptau's header, its first α/β points, the Lagrange sections 12–15 at the circuit's domain size
 * (and section 12 at twice it, for H) and the τ powers the circuit hash covers. Throws InputError
 * for a ptau or r1cs that cannot serve (another curve, too small, not prepared, truncated).
 *
 * `pastEnd` (64 bytes, or null): where the circuit's domain is the ptau's whole power and above
 * 2^14, snarkjs's circuit hash takes one point from past the end of the τ section (the next
 * section's header and first bytes, subtracted as if a point in its WebAssembly arithmetic); the
 * caller computes that hashed point with snarkjs's own code and passes it here (phase2.mjs).
 * Without it such a ptau is refused.
 */
using NewZkey = Phase2Info (*)(const R1cs& r1cs, const uint8_t* ptau, size_t ptauLength, Phase2Output& out, int threads, const uint8_t* pastEnd);

/** The public part of a contribution, points as the zkey stores them (Montgomery little-endian). */
struct Phase2Contribution {
  uint8_t g1s[64], g1sx[64], deltaAfter[64], g2spx[128];
};

/**
 * snarkjs's hashToG2 of the contribution's transcript, which covers g1_s and g1_sx (given): writes
 * g2_sp (128 bytes). A callback because the transcript and the record are the caller's.
 */
using HashToG2 = std::function<void(const uint8_t* g1s, const uint8_t* g1sx, uint8_t* g2sp)>;

/**
 * One phase-2 contribution applied in place to a mapped zkey, as snarkjs's `zkey contribute` does
 * it: a fresh δ from the OS CSPRNG; δ₁ and δ₂ multiplied by δ, every point of C (section 8) and H
 * (section 9) by δ⁻¹; the proof of knowledge (g1_s random, g1_sx = δ·g1_s, g2_spx = δ·g2_sp) out.
 * δ and δ⁻¹ are wiped before returning. Section 10 (the record) is left to the caller.
 */
using Contribute = void (*)(uint8_t* zkey, size_t length, const HashToG2& hashToG2, int threads, Phase2Contribution& out);

NewZkey newZkeyGeneric();
Contribute contributeGeneric();
/** nullptr where the build has no ADX kernel (not x86-64). */
Contribute contributeAdx();
/** nullptr where the build has no ADX kernel (not x86-64). */
NewZkey newZkeyAdx();

}  // namespace mzk
