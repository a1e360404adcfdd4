// Fork-join for one proof's phases: a proof asks for T threads; each phase runs on the calling
// thread plus T - 1 helper threads that the calling thread keeps for its lifetime (its "team").
// A proof runs some twenty phases (every MSM round sorts, scatters and sums in turn), so starting
// threads per phase cost more than small phases gained: two threads were slower than one on small
// proofs. The team is per calling thread, not per process: its helpers are started by the caller
// and inherit its CPU priority (setThreadPriority), and callers never wait on each other's work.
// T = 1 runs inline, so the one-proof-per-core pool never starts a helper.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
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

namespace detail {

/**
 * The helper threads of one calling thread. A phase's parts are claimed, not assigned: helpers and
 * the caller (after its own part 0) take parts from one counter, so a helper that the OS does not
 * schedule in time (a loaded machine) leaves its part to the caller instead of stalling the phase,
 * and a proof on T threads is never much slower than on one. Part t's work depends only on t, so
 * any thread may run it. The counter carries the phase's generation in its high half, so a helper
 * that wakes late can never claim a part of a later phase with an earlier phase's job.
 */
class Team {
 public:
  ~Team() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& th : helpers_) th.join();
  }

  /** Runs job(ctx, t) for every t in [1, T), on the helpers and the caller; returns when all are done. */
  void run(int T, void (*job)(void*, int), void* ctx, std::vector<std::exception_ptr>& errors, const std::function<void()>& own) {
    while ((int)helpers_.size() < T - 1) helpers_.emplace_back([this] { loop(); });
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = job;
      ctx_ = ctx;
      errors_ = &errors;
      width_ = T;
      pending_ = T - 1;
      generation = ++generation_;
      claim_.store(generation << 32 | 1u, std::memory_order_release);
    }
    wake_.notify_all();
    own();
    for (int t; (t = take(generation, T)) > 0;) runPart(job, ctx, errors, t);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  /** Claims the next part of phase `generation`, or 0 when none is left. */
  int take(uint64_t generation, int width) {
    uint64_t c = claim_.load(std::memory_order_acquire);
    for (;;) {
      if (c >> 32 != generation || (int)(c & 0xffffffffu) >= width) return 0;
      if (claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) return (int)(c & 0xffffffffu);
    }
  }

  void runPart(void (*job)(void*, int), void* ctx, std::vector<std::exception_ptr>& errors, int t) {
    try {
      job(ctx, t);
    } catch (...) {
      errors[t] = std::current_exception();
    }
    bool last;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = --pending_ == 0;
    }
    if (last) done_.notify_one();
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      void (*job)(void*, int);
      void* ctx;
      std::vector<std::exception_ptr>* errors;
      int width;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        job = job_;
        ctx = ctx_;
        errors = errors_;
        width = width_;
      }
      for (int t; (t = take(seen, width)) > 0;) runPart(job, ctx, *errors, t);
    }
  }

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<uint64_t> claim_{0};
  uint64_t generation_ = 0;
  int width_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  void (*job_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  std::vector<std::exception_ptr>* errors_ = nullptr;
};

inline std::unique_ptr<Team>& teamSlot() {
  thread_local std::unique_ptr<Team> team;
  return team;
}

}  // namespace detail

/**
 * Ends the calling thread's team (its helpers exit); the next forkJoin starts a new one. Called
 * when the thread's priority changes, so that helpers started afterwards inherit the new one.
 */
inline void resetTeam() { detail::teamSlot().reset(); }

/** Runs fn(t) for t in [0, T) on T threads (the caller is thread 0); rethrows the first failure. */
template <class Fn>
void forkJoin(int T, Fn&& fn) {
  if (T <= 1) {
    fn(0);
    return;
  }
  auto& slot = detail::teamSlot();
  if (!slot) slot = std::make_unique<detail::Team>();
  std::vector<std::exception_ptr> errors(T);
  using F = std::remove_reference_t<Fn>;
  slot->run(T, [](void* ctx, int t) { (*static_cast<F*>(ctx))(t); }, const_cast<void*>(static_cast<const void*>(&fn)), errors, [&] {
    try {
      fn(0);
    } catch (...) {
      errors[0] = std::current_exception();
    }
  });
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/** Splits [0, n) into T nearly equal ranges; range t is [begin, end). */
inline void splitRange(size_t n, int T, int t, size_t& begin, size_t& end) {
  begin = n * (size_t)t / (size_t)T;
  end = n * (size_t)(t + 1) / (size_t)T;
}

}  // namespace mzk
