// Minimal fork-join helpers: a proof asks for T threads; phases run on the calling thread plus
// T - 1 short-lived std::threads, joined before the phase returns. T = 1 runs inline, so the
// one-proof-per-core pool never starts a thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

namespace mzk {

/** A proof's cooperative cancellation flag (the pool's timeout sets it from another thread). */
struct Cancel {
  const int32_t* flag = nullptr;
  bool requested() const { return flag != nullptr && __atomic_load_n(flag, __ATOMIC_RELAXED) != 0; }
};

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("proof cancelled") {}
};

inline void checkCancel(const Cancel& cancel) {
  if (cancel.requested()) throw Cancelled();
}

/** Runs fn(t) for t in [0, T) on T threads (the caller is thread 0); rethrows the first failure. */
template <class Fn>
void forkJoin(int T, Fn&& fn) {
  if (T <= 1) {
    fn(0);
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(T);
  threads.reserve(T - 1);
  for (int t = 1; t < T; t++) {
    threads.emplace_back([&, t] {
      try {
        fn(t);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  try {
    fn(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& th : threads) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/** Splits [0, n) into T nearly equal ranges; range t is [begin, end). */
inline void splitRange(size_t n, int T, int t, size_t& begin, size_t& end) {
  begin = n * (size_t)t / (size_t)T;
  end = n * (size_t)(t + 1) / (size_t)T;
}

}  // namespace mzk
