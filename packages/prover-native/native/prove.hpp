// The Groth16 prover on one kernel: a witness and a parsed key (zkey.hpp) in, snarkjs's proof out.
// The witness's polynomials A, B and C = A∘B on the domain, h = A·B − C on the odd coset (ntt.hpp),
// the five MSMs over the key's tables (msm.hpp), then the blinding with fresh r and s, as snarkjs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "codec.hpp"
#include "random.hpp"
#include "witness.hpp"
#include "zkey.hpp"

namespace mzk {
namespace MZK_KERNEL {

struct Workspace {
  MsmWorkspace msm;
  std::vector<Fr> a, b, c;
  std::vector<u64> scalars, h;
};

// Phase timings: wall-clock milliseconds (MZK_PHASE_CPU_TIME: the calling thread's CPU time, for
// profiling single-threaded proofs on a noisy machine).
#ifdef MZK_PHASE_CPU_TIME
struct PhaseClock {
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  }
};
#else
struct PhaseClock {
  static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
};
#endif
inline double msSince(double t) { return PhaseClock::now() - t; }

inline void ZKey::prove(const uint8_t* wtns, size_t length, const ProveOptions& options, ProofOut& out) const {
  thread_local Workspace ws;
  const int T = std::max(1, options.threads);
  const Cancel& cancel = options.cancel;
  double t0 = PhaseClock::now();

  // The witness: checked against this key before anything is computed.
  readWitness(wtns, length, nVars, ws.scalars);
  const u64* w = ws.scalars.data();
  out.phaseMs[0] = msSince(t0);

  // A, B (and C = A∘B) evaluated on the domain, in Montgomery form.
  t0 = PhaseClock::now();
  const size_t n = domainSize;
  ws.a.assign(n, Fr::zero());
  ws.b.assign(n, Fr::zero());
  ws.c.resize(n);
  for (int m = 0; m < 2; m++) {
    Fr* dst = m == 0 ? ws.a.data() : ws.b.data();
    for (const Coef& k : coefs[m]) dst[k.constraint] += k.value * Fr::raw(w + 4 * (size_t)k.signal);
  }
  for (size_t i = 0; i < n; i++) ws.c[i] = ws.a[i] * ws.b[i];
  out.phaseMs[1] = msSince(t0);
  checkCancel(cancel);

  // On the odd coset: h = A·B - C, out of Montgomery form, as the H MSM's scalars.
  t0 = PhaseClock::now();
  {
    Fr* polys[3] = {ws.a.data(), ws.b.data(), ws.c.data()};
    const int TN = std::min(T, 3);
    forkJoin(TN, [&](int t) {
      for (int k = t; k < 3; k += TN) domain.toCoset(polys[k]);
    });
    ws.h.resize(n * 4);
    for (size_t i = 0; i < n; i++) (ws.a[i] * ws.b[i] - ws.c[i]).toPlain(ws.h.data() + 4 * i);
  }
  out.phaseMs[2] = msSince(t0);
  checkCancel(cancel);

  t0 = PhaseClock::now();
  G1Jac pa = msm<G1>(A, w, nVars, T, ws.msm, cancel);
  out.phaseMs[3] = msSince(t0);
  t0 = PhaseClock::now();
  G1Jac pb1 = msm<G1>(B1, w, nVars, T, ws.msm, cancel);
  out.phaseMs[4] = msSince(t0);
  t0 = PhaseClock::now();
  G2Jac pb = msm<G2>(B2, w, nVars, T, ws.msm, cancel);
  out.phaseMs[5] = msSince(t0);
  t0 = PhaseClock::now();
  G1Jac pc = msm<G1>(C, w + 4 * ((size_t)nPublic + 1), (size_t)nVars - nPublic - 1, T, ws.msm, cancel);
  out.phaseMs[6] = msSince(t0);
  t0 = PhaseClock::now();
  const G1Jac ph = msm<G1>(H, ws.h.data(), n, T, ws.msm, cancel);
  out.phaseMs[7] = msSince(t0);

  // Blinding with fresh r, s (zero knowledge), as snarkjs:
  //   A = Σ + α + rδ,  B = Σ + β + sδ (G2, and its G1 twin for C),  C = Σ + H + sA + rB₁ - rsδ.
  t0 = PhaseClock::now();
  u64 r[4], s[4], rs[4], rb[5], sb[5], rsb[5];
  randomScalar(r);
  randomScalar(s);
  (-(Fr::fromPlain(r) * Fr::fromPlain(s))).toPlain(rs);
  blindScalar(r, rb);
  blindScalar(s, sb);
  blindScalar(rs, rsb);
  pa = pa.addAffine(alpha1).add(delta1Table.mul(rb, 5));
  blindScalar(s, sb);
  pb = pb.addAffine(beta2).add(delta2Table.mul(sb, 5));
  blindScalar(s, sb);
  pb1 = pb1.addAffine(beta1).add(delta1Table.mul(sb, 5));
  blindScalar(s, sb);
  blindScalar(r, rb);
  pc = pc.add(ph).add(pa.mulPlus(sb, pb1, rb, 5)).add(delta1Table.mul(rsb, 5));
  for (u64* secret : {r, s, rs, rb, sb, rsb}) std::memset(secret, 0, sizeof(u64) * 4);
  std::memset(rb + 4, 0, 8);
  std::memset(sb + 4, 0, 8);
  std::memset(rsb + 4, 0, 8);

  const auto g1Object = [](const G1Jac& p) {
    if (p.isInfinity()) return std::vector<std::string>{"0", "1", "0"};
    const G1Affine a = p.toAffine();
    return std::vector<std::string>{decimalOf(a.x), decimalOf(a.y), "1"};
  };
  out.piA = g1Object(pa);
  out.piC = g1Object(pc);
  if (pb.isInfinity()) {
    out.piB = {{"0", "0"}, {"1", "0"}, {"0", "0"}};
  } else {
    const G2Affine b = pb.toAffine();
    out.piB = {{decimalOf(b.x.c0), decimalOf(b.x.c1)}, {decimalOf(b.y.c0), decimalOf(b.y.c1)}, {"1", "0"}};
  }
  out.publicSignals.clear();
  for (uint32_t i = 1; i <= nPublic; i++) out.publicSignals.push_back(toDecimal(w + 4 * (size_t)i));
  out.phaseMs[8] = msSince(t0);
}

inline std::shared_ptr<ZKeyImpl> load(const uint8_t* data, size_t length, const LoadOptions& options) {
  return std::make_shared<ZKey>(data, length, options);
}

}  // namespace MZK_KERNEL
}  // namespace mzk
