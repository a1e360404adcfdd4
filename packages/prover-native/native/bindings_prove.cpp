// The bindings that prove: prove (on the calling thread, for worker threads), proveAsync (on
// libuv's thread pool) and setThreadPriority (for the threads that prove). A proof comes back in
// snarkjs's JSON shape.
#include <napi.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "kernel.hpp"
#include "parallel.hpp"
#include "zkey_handle.hpp"

namespace mzk {
namespace node {
namespace {

Napi::Array strings(Napi::Env env, const std::vector<std::string>& xs) {
  Napi::Array a = Napi::Array::New(env, xs.size());
  for (size_t i = 0; i < xs.size(); i++) a.Set((uint32_t)i, Napi::String::New(env, xs[i]));
  return a;
}

Napi::Object proofObject(Napi::Env env, const ProofOut& out, bool timings) {
  Napi::Object proof = Napi::Object::New(env);
  proof.Set("pi_a", strings(env, out.piA));
  Napi::Array b = Napi::Array::New(env, out.piB.size());
  for (size_t i = 0; i < out.piB.size(); i++) b.Set((uint32_t)i, strings(env, out.piB[i]));
  proof.Set("pi_b", b);
  proof.Set("pi_c", strings(env, out.piC));
  proof.Set("protocol", "groth16");
  proof.Set("curve", "bn128");
  Napi::Object result = Napi::Object::New(env);
  result.Set("proof", proof);
  result.Set("publicSignals", strings(env, out.publicSignals));
  if (timings) {
    Napi::Object t = Napi::Object::New(env);
    const char* names[9] = {"witness", "abc", "ntt", "msmA", "msmB1", "msmB2", "msmC", "msmH", "finish"};
    for (int k = 0; k < 9; k++) t.Set(names[k], out.phaseMs[k]);
    result.Set("timings", t);
  }
  return result;
}

struct ProveArgs {
  ProveOptions options;
  bool timings = false;
  Napi::Reference<Napi::Int32Array> cancelRef;
};

void readProveOptions(const Napi::CallbackInfo& info, size_t i, ProveArgs& args) {
  const Napi::Object o = optionsArg(info, i);
  args.options.threads = (int)intOption(o, "threads", 1, 1, 1024);
  args.timings = o.Has("timings") && o.Get("timings").ToBoolean();
  if (hasOption(o, "cancel")) {
    const Napi::Value v = o.Get("cancel");
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array || v.As<Napi::Int32Array>().ElementLength() < 1) {
      throw invalid(info.Env(), "option cancel must be an Int32Array (on a SharedArrayBuffer)");
    }
    const Napi::Int32Array flag = v.As<Napi::Int32Array>();
    args.options.cancel.flag = flag.Data();
    args.cancelRef = Napi::Persistent(flag);
  }
}

/** prove(zkey, wtns, { threads?, cancel?, timings? }): synchronous; for worker threads. */
Napi::Value Prove(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Handle& h = handleArg(info);
    const Napi::Uint8Array wtns = bytesArg(info, 1, "witness");
    ProveArgs args;
    readProveOptions(info, 2, args);
    ProofOut out;
    h.impl->prove(wtns.Data(), wtns.ByteLength(), args.options, out);
    return proofObject(env, out, args.timings);
  });
}

class ProveWorker : public Napi::AsyncWorker {
 public:
  ProveWorker(Napi::Env env, std::shared_ptr<ZKeyImpl> impl, std::vector<uint8_t> wtns, ProveArgs&& args)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), impl_(std::move(impl)), wtns_(std::move(wtns)),
        args_(std::move(args)) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      impl_->prove(wtns_.data(), wtns_.size(), args_.options, out_);
    } catch (const InputError& e) {
      code_ = "MZK_INVALID_INPUT";
      SetError(e.what());
    } catch (const Cancelled& e) {
      code_ = "MZK_CANCELLED";
      SetError(e.what());
    } catch (const std::bad_alloc&) {
      code_ = "MZK_OUT_OF_MEMORY";
      SetError("out of memory");
    } catch (const std::exception& e) {
      code_ = "MZK_INTERNAL";
      SetError(e.what());
    }
  }
  void OnOK() override {
    try {
      deferred_.Resolve(proofObject(Env(), out_, args_.timings));
    } catch (...) {
    }
  }
  void OnError(const Napi::Error& e) override {
    try {
      deferred_.Reject(errorWithCode(Env(), e.Message(), code_).Value());
    } catch (...) {
    }
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<ZKeyImpl> impl_;
  std::vector<uint8_t> wtns_;  // a copy: the caller's buffer may change or be detached meanwhile
  ProveArgs args_;
  ProofOut out_;
  const char* code_ = "MZK_INTERNAL";
};

/** proveAsync(zkey, wtns, options): the same on the libuv thread pool; resolves with the proof. */
Napi::Value ProveAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Handle& h = handleArg(info);
    const Napi::Uint8Array wtns = bytesArg(info, 1, "witness");
    ProveArgs args;
    readProveOptions(info, 2, args);
    auto* worker = new ProveWorker(env, h.impl, std::vector<uint8_t>(wtns.Data(), wtns.Data() + wtns.ByteLength()), std::move(args));
    Napi::Promise p = worker->promise();
    worker->Queue();
    return p;
  });
}

/**
 * setThreadPriority(nice, idle?): lowers the calling thread's CPU priority (Linux: per-thread nice,
 * and SCHED_IDLE when idle is true); its proof helpers are restarted, so they have it too. Returns false where the
 * platform does not allow it. Raising priority back is not possible without privileges.
 */
Napi::Value SetThreadPriority(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsNumber()) throw invalid(env, "nice must be a number");
    const int nice = info[0].As<Napi::Number>().Int32Value();
    const bool idle = info.Length() > 1 && info[1].ToBoolean();
    // Helpers already started keep the priority they were started with.
    resetTeam();
#if defined(__linux__)
    const pid_t tid = (pid_t)syscall(SYS_gettid);
    bool ok = setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0;
    if (idle) {
      sched_param param{};
      param.sched_priority = 0;
      ok = sched_setscheduler(tid, SCHED_IDLE, &param) == 0 && ok;
    }
    return Napi::Boolean::New(env, ok);
#else
    (void)nice;
    (void)idle;
    return Napi::Boolean::New(env, false);
#endif
  });
}

}  // namespace

void registerProve(Napi::Env env, Napi::Object exports) {
  exports.Set("prove", Napi::Function::New(env, Prove, "prove"));
  exports.Set("proveAsync", Napi::Function::New(env, ProveAsync, "proveAsync"));
  exports.Set("setThreadPriority", Napi::Function::New(env, SetThreadPriority, "setThreadPriority"));
}

}  // namespace node
}  // namespace mzk
