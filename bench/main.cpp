// qdml-bench's main: Google Benchmark's, plus the machine in the context
// (CPU model and the flags the rows depend on, and what the `/threads:N`
// rows run on), so that a JSON result says where it was measured. Rows
// register themselves from their own files.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>

#include "cpu.hpp"
#include "models.hpp"

// Peers built on OpenMP (oneDNN) run on one thread, like every row (BENCH.md);
// weak, so the binary needs no OpenMP when no peer brings it.
extern "C" void omp_set_num_threads(int) __attribute__((weak));

int main(int argc, char** argv) {
    if (omp_set_num_threads) omp_set_num_threads(1);
    benchmark::AddCustomContext("qdml_threads", omp_set_num_threads ? "1 (OpenMP peers set to 1)" : "1");
    // What the qdml `/threads:N` rows compute on (support.hpp, executor_of).
    benchmark::AddCustomContext("qdml_thread_pool", "qdml::tools::ThreadPool (std::thread, condition variable)");
    benchmark::AddCustomContext("qdml_cpu_model", qdml_bench::cpu_model());
    benchmark::AddCustomContext("qdml_cpu_flags", qdml_bench::cpu().flags());
#if defined(__OPTIMIZE__)
    benchmark::AddCustomContext("qdml_build", "optimized");
#endif
    try {
        qdml_bench::register_model_rows();  // (after every file's own rows and registry entries)
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
