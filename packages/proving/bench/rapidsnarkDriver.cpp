// rapidsnark beside mzk, for packages/proving/bench/large.ts (rapidsnark itself is never part of mzk).
// Its C API keeps the key loaded (groth16_prover_create once on the mapped file, then groth16_prover_prove),
// which is the fair comparison with mzk's warm engine. Prints one JSON line: key load, each
// proof's wall and CPU time (the process's, all threads), RSS, peak RSS. The peak is the kernel's
// VmHWM of this process, as largeChild.ts reads it for mzk: getrusage's ru_maxrss keeps, across
// exec, the peak of the Node process that spawned it (a 328 MB parent reads as 290 MB here).
//
// Build: rapidsnark's sources with their submodules (ffiasm, circom_runtime, nlohmann/json),
// libgmp-dev and nasm, the Release build of its `rapidsnarkStatic` target, after sizing its pool
// from the environment in depends/ffiasm/c/misc.hpp's ThreadPool::defaultThreadCount
// (`if (const char* e = std::getenv("RAPIDSNARK_THREADS")) n = std::atoi(e);`: stock rapidsnark
// sizes it from the CPU count and ignores taskset):
//   g++ -O3 -DNDEBUG -I<rapidsnark>/src rapidsnarkDriver.cpp -o rsbench -lgmp \
//     <build>/src/librapidsnark.a <build>/src/libfr.a <build>/src/libfq.a -lgmp -fopenmp -lpthread
//   rsbench <zkey> <wtns> <runs> <outdir>     (outdir gets the first proof.json and public.json)
#include <prover.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
static double cpuMs() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static double nowMs() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static long statusKb(const char* field) {
  std::ifstream f("/proc/self/status"); std::string l; const std::string key(field);
  while (std::getline(f, l)) if (l.rfind(key, 0) == 0) return std::atol(l.c_str() + key.size());
  return 0;
}
static long rssKb() { return statusKb("VmRSS:"); }
int main(int argc, char** argv) {
  if (argc < 5) { fprintf(stderr, "rsbench zkey wtns runs outdir\n"); return 2; }
  char err[1024];
  std::ifstream w(argv[2], std::ios::binary); std::stringstream ws; ws << w.rdbuf(); std::string wtns = ws.str();
  const double rss0 = rssKb();
  double t0 = nowMs(), c0 = cpuMs();
  void* prover = nullptr;
  // groth16_prover_create_zkey_file unmaps the file when it returns while the prover still points
  // into it; map it here for the prover's lifetime, as rapidsnark's own CLI does.
  const int fd = open(argv[1], O_RDONLY); struct stat st; fstat(fd, &st);
  void* zkey = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (zkey == MAP_FAILED) { perror("mmap"); return 1; }
  if (groth16_prover_create(&prover, zkey, st.st_size, err, sizeof err) != PROVER_OK) { fprintf(stderr, "create: %s\n", err); return 1; }
  const double loadMs = nowMs() - t0, loadCpu = cpuMs() - c0;
  const double rssLoaded = rssKb();
  const int runs = std::atoi(argv[3]);
  std::vector<double> wall, cpu;
  unsigned long long ps = 0; groth16_proof_size(&ps);
  std::vector<char> proof(ps + 1), pub(1 << 20);
  for (int i = 0; i < runs; i++) {
    unsigned long long psz = proof.size(), pubsz = pub.size();
    double t = nowMs(), c = cpuMs();
    if (groth16_prover_prove(prover, wtns.data(), wtns.size(), proof.data(), &psz, pub.data(), &pubsz, err, sizeof err) != PROVER_OK) { fprintf(stderr, "prove: %s\n", err); return 1; }
    wall.push_back(nowMs() - t); cpu.push_back(cpuMs() - c);
    if (i == 0) {
      std::ofstream(std::string(argv[4]) + "/proof.json") << std::string(proof.data(), psz);
      std::ofstream(std::string(argv[4]) + "/public.json") << std::string(pub.data(), pubsz);
    }
  }
  printf("{\"loadMs\":%.1f,\"loadCpuMs\":%.1f,\"rssBeforeKb\":%.0f,\"rssLoadedKb\":%.0f,\"peakRssKb\":%ld,\"proveMs\":[", loadMs, loadCpu, rss0, rssLoaded, statusKb("VmHWM:"));
  for (size_t i = 0; i < wall.size(); i++) printf("%s%.1f", i ? "," : "", wall[i]);
  printf("],\"proveCpuMs\":[");
  for (size_t i = 0; i < cpu.size(); i++) printf("%s%.1f", i ? "," : "", cpu[i]);
  printf("]}\n");
  groth16_prover_destroy(prover);
  return 0;
}
