// Multi-core execution (qdml/core/executor.hpp): the executor contract, the
// adapters over OpenMP, oneTBB and pthreadpool (each built in when found),
// and the determinism contract on whole calls: qdml::run and
// Compiled::execute on every test pool give the bytes of the calling thread
// alone (which the differential tests compare with the reference), the
// task grid never depends on the pool, nested calls run inline, and each
// task computes in qdml's floating-point state whatever its thread's.
// (The differential tests of each operator run every other random case on
// a pool too: tests/support/differential.hpp, simd/test_*matrix_multiply.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "qdml/directml.hpp"
#include "qdml/qdml.hpp"
#include "support/buffers.hpp"
#include "support/executors.hpp"
#include "support/fp_state.hpp"

#if defined(QDML_TEST_OPENMP)
#include "qdml/exec/openmp.hpp"
#endif
#if defined(QDML_TEST_TBB)
#include "qdml/exec/tbb.hpp"
#endif
#if defined(QDML_TEST_PTHREADPOOL)
#include "qdml/exec/pthreadpool.hpp"
#endif

namespace {

using qtest::GuardedPool;
using qtest::Rng;
using DT = qdml::TensorDataType;

/// The adapters this build has, each over 3 threads, by name.
struct Adapters {
#if defined(QDML_TEST_TBB)
    tbb::task_arena arena{3};
#endif
#if defined(QDML_TEST_PTHREADPOOL)
    pthreadpool_t pool = pthreadpool_create(3);
    ~Adapters() { pthreadpool_destroy(pool); }
#endif
    std::vector<std::pair<std::string, qdml::Executor>> all() {
        std::vector<std::pair<std::string, qdml::Executor>> r;
#if defined(QDML_TEST_OPENMP)
        r.emplace_back("qdml::exec::openmp(3)", qdml::exec::openmp(3));
#endif
#if defined(QDML_TEST_TBB)
        r.emplace_back("qdml::exec::tbb(arena of 3)", qdml::exec::tbb(arena));
        r.emplace_back("qdml::exec::tbb()", qdml::exec::tbb());
#endif
#if defined(QDML_TEST_PTHREADPOOL)
        r.emplace_back("qdml::exec::pthreadpool(3)", qdml::exec::pthreadpool(pool));
#endif
        return r;
    }
};

Adapters& adapters() {
    static Adapters a;
    return a;
}

/// The test pools and the adapters.
std::vector<std::pair<std::string, qdml::Executor>> every_executor() {
    auto r = qtest::test_executors().all();
    for (auto& a : adapters().all()) r.push_back(a);
    return r;
}

}  // namespace

TEST_CASE("threads: the adapters this build has", "[threads]") {
    std::string names;
    for (const auto& a : adapters().all()) names += " " + a.first;
#if !defined(QDML_TEST_OPENMP)
    WARN("no OpenMP in this build: qdml/exec/openmp.hpp not tested");
#endif
#if !defined(QDML_TEST_TBB)
    WARN("no oneTBB found: qdml/exec/tbb.hpp not tested");
#endif
#if !defined(QDML_TEST_PTHREADPOOL)
    WARN("no pthreadpool found: qdml/exec/pthreadpool.hpp not tested");
#endif
    SUCCEED("adapters:" << names);
}

TEST_CASE("threads: parallel_for calls each index once, on the pool's threads, in qdml's floating-point state",
          "[threads]") {
    for (const auto& [name, ex] : every_executor()) {
        INFO("executor " << name);
        for (std::size_t n : {0, 1, 2, 3, 17, 1000}) {
            std::vector<std::atomic<int>> hits(n);
            std::atomic<bool> fp_ok{true};
            qtest::set_fp_state(qtest::FpState::Nearest);
            const std::uint64_t nearest = qtest::fp_control();
            qdml::detail::parallel_for(ex, n, [&](std::size_t i) {
                hits[i].fetch_add(1);
                if (qtest::fp_control() != nearest) fp_ok = false;
            });
            for (std::size_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
            CHECK(fp_ok.load());
            CHECK(qtest::fp_control() == nearest);  // the caller's state after the loop
        }
    }
}

TEST_CASE("threads: several threads take part, a nested loop runs inline on the task's thread", "[threads]") {
    qdml::tools::ThreadPool pool(4);
    const qdml::Executor ex = pool.executor();
    std::mutex m;
    std::vector<std::thread::id> ids;
    std::atomic<int> nested_elsewhere{0};
    // Tasks that wait for each other a little, so that every thread gets some.
    qdml::detail::parallel_for(ex, 64, [&](std::size_t) {
        const auto me = std::this_thread::get_id();
        {
            const std::lock_guard<std::mutex> lock(m);
            if (std::find(ids.begin(), ids.end(), me) == ids.end()) ids.push_back(me);
        }
        qdml::detail::parallel_for(ex, 8, [&](std::size_t) {
            if (std::this_thread::get_id() != me) nested_elsewhere.fetch_add(1);
        });
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    CHECK(ids.size() > 1);
    CHECK(nested_elsewhere.load() == 0);
}

TEST_CASE("threads: a task's exception reaches the caller after every task has returned", "[threads]") {
    for (const auto& [name, ex] : every_executor()) {
        INFO("executor " << name);
        std::atomic<int> running{0};
        bool caught = false;
        try {
            qdml::detail::parallel_for(ex, 100, [&](std::size_t i) {
                running.fetch_add(1);
                if (i == 7) {
                    running.fetch_sub(1);
                    throw std::runtime_error("task 7");
                }
                running.fetch_sub(1);
            });
        } catch (const std::runtime_error& e) {
            caught = std::string(e.what()) == "task 7";
        }
        CHECK(caught);
        CHECK(running.load() == 0);
    }
}

namespace {

/// A u8 x s8 -> u8 matmul of `batch` products M x K x N with per-tensor
/// parameters, random data, the output in a guarded buffer.
struct Matmul {
    std::vector<std::uint8_t> a, b;
    float a_scale = 0.02f, b_scale = 0.01f, out_scale = 0.5f;
    std::uint8_t a_zp = 3, out_zp = 100;
    std::int8_t b_zp = -2;
    qtest::GuardedBuffer out;
    qdml::QuantizedLinearMatrixMultiplyDesc d;

    Matmul(Rng& r, std::uint32_t batch, std::uint32_t M, std::uint32_t K, std::uint32_t N) {
        a.resize(std::size_t{batch} * M * K);
        b.resize(std::size_t{batch} * K * N);
        for (auto& v : a) v = r.byte();
        for (auto& v : b) v = r.byte();
        out.assign(std::size_t{batch} * M * N);
        const auto t = [](DT type, std::vector<std::uint32_t> s) { return qtest::make_desc(type, s); };
        d.ATensor = {t(DT::UInt8, {batch, 1, M, K}), a.data()};
        d.BTensor = {t(DT::Int8, {batch, 1, K, N}), b.data()};
        d.OutputTensor = {t(DT::UInt8, {batch, 1, M, N}), out.data()};
        d.AScaleTensor = {t(DT::Float32, {1, 1, 1, 1}), &a_scale};
        d.BScaleTensor = {t(DT::Float32, {1, 1, 1, 1}), &b_scale};
        d.OutputScaleTensor = {t(DT::Float32, {1, 1, 1, 1}), &out_scale};
        d.AZeroPointTensor = qdml::Tensor{t(DT::UInt8, {1, 1, 1, 1}), &a_zp};
        d.BZeroPointTensor = qdml::Tensor{t(DT::Int8, {1, 1, 1, 1}), &b_zp};
        d.OutputZeroPointTensor = qdml::Tensor{t(DT::UInt8, {1, 1, 1, 1}), &out_zp};
    }
};

}  // namespace

TEST_CASE("threads: the task grid depends on the shapes only, never on the pool", "[threads]") {
    Rng r(qtest::case_seed(261));
    for (const auto& shape : std::vector<std::vector<std::uint32_t>>{
             {1, 300, 200, 260}, {1, 1, 4096, 512}, {16, 40, 64, 40}, {2, 129, 77, 513}}) {
        Matmul mm(r, shape[0], shape[1], shape[2], shape[3]);
        std::vector<std::vector<std::size_t>> grids;
        for (std::size_t workers : {1, 2, 16, 64}) {
            qtest::RecordingExecutor rec;
            qdml::RunOptions o;
            o.executor = qdml::make_executor(rec, workers);
            qdml::run(mm.d, o);
            grids.push_back(rec.counts);
        }
        INFO("shape " << shape[0] << "x" << shape[1] << "x" << shape[2] << "x" << shape[3]);
        CHECK_FALSE(grids[0].empty());  // (the packing, epilogue and product loops of more than one task)
        for (const auto& g : grids) CHECK(g == grids[0]);
    }
}

TEST_CASE("threads: a call below two tasks' grain never touches the pool", "[threads]") {
    Rng r(qtest::case_seed(262));
    Matmul small(r, 1, 32, 64, 32);  // 65536 multiply-adds: under 2 * kTaskMacs
    qtest::RecordingExecutor rec;
    qdml::RunOptions o;
    o.executor = qdml::make_executor(rec, 2);
    qdml::run(small.d, o);
    CHECK(rec.counts.empty());
    std::vector<float> x(1000, 1.0f), y(1000);
    qdml::ElementWiseClipDesc clip;
    clip.InputTensor = {qtest::make_desc(DT::Float32, {1000}), x.data()};
    clip.OutputTensor = {qtest::make_desc(DT::Float32, {1000}), y.data()};
    clip.Min = 0.0f;
    clip.Max = 0.5f;
    qdml::run(clip, o);
    CHECK(rec.counts.empty());
    CHECK(y[999] == 0.5f);
}

TEST_CASE("threads: qdml::run, compile + execute and qdml::dml options on every pool give the calling thread's bytes",
          "[threads]") {
    Rng r(qtest::case_seed(263));
    for (const auto& shape : std::vector<std::vector<std::uint32_t>>{
             {1, 300, 200, 260}, {1, 1, 4096, 700}, {9, 40, 64, 40}, {3, 129, 77, 513}, {1, 64, 64, 64}}) {
        INFO("shape " << shape[0] << "x" << shape[1] << "x" << shape[2] << "x" << shape[3]);
        Matmul mm(r, shape[0], shape[1], shape[2], shape[3]);
        mm.out.reset();
        qdml::run(mm.d, {qdml::Implementation::Reference});
        const auto expected = mm.out.with_guards();
        for (const auto& [name, ex] : every_executor()) {
            INFO("executor " << name);
            qdml::RunOptions o;
            o.executor = ex;
            mm.out.reset();
            qdml::run(mm.d, o);
            REQUIRE(mm.out.with_guards() == expected);
            mm.out.reset();
            qdml::compile(mm.d).execute(mm.d, ex);
            REQUIRE(mm.out.with_guards() == expected);
            auto constant = mm.d;
            constant.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
            mm.out.reset();
            qdml::compile(constant, o).execute(constant);  // the compile's executor
            REQUIRE(mm.out.with_guards() == expected);
        }
    }
}

TEST_CASE("threads: element-wise calls of many tasks (rows, column chunks, tiles) on every pool", "[threads]") {
    Rng r(qtest::case_seed(264));
    // 1-D (column chunks of one row), 2-D rows, NHWC viewed as NCHW (tiles).
    struct Shape {
        std::vector<std::uint32_t> sizes, in_strides;
    };
    const std::vector<Shape> shapes = {
        {{1u << 19}, {}},
        {{700, 900}, {}},
        {{3, 5, 70, 70}, {}},
        {{1, 64, 80, 80}, {64 * 80 * 80, 1, 80 * 64, 64}},  // NHWC memory
        {{1, 3, 300, 300}, {3 * 300 * 300, 1, 300 * 3, 3}},
    };
    for (const auto& s : shapes) {
        GuardedPool pool;
        qdml::ElementWiseDequantizeLinearDesc d;
        d.InputTensor = pool.tensor(DT::Int8, s.sizes, s.in_strides);
        std::vector<std::uint32_t> per_channel(s.sizes.size(), 0);
        per_channel[s.sizes.size() > 1 ? 1 : 0] = 1;
        d.ScaleTensor = pool.tensor(DT::Float32, s.sizes, per_channel);
        d.ZeroPointTensor = pool.tensor(DT::Int8, s.sizes, per_channel);
        d.OutputTensor = pool.tensor(DT::Float32, s.sizes);
        qtest::fill<std::int8_t>(d.InputTensor, [&] { return static_cast<std::int8_t>(r.byte()); });
        qtest::fill<float>(d.ScaleTensor, [&] { return r.between(0.001f, 2.0f); });
        qtest::fill<std::int8_t>(*d.ZeroPointTensor, [&] { return static_cast<std::int8_t>(r.byte()); });
        qdml::run(d, {qdml::Implementation::Reference});
        const std::vector<std::uint8_t> expected(static_cast<std::uint8_t*>(d.OutputTensor.Data),
                                                 static_cast<std::uint8_t*>(d.OutputTensor.Data) +
                                                     d.OutputTensor.Desc.TotalTensorSizeInBytes);
        for (const auto& [name, ex] : every_executor()) {
            INFO("executor " << name << ", sizes " << s.sizes.size() << "-D");
            std::memset(d.OutputTensor.Data, 0xA5, d.OutputTensor.Desc.TotalTensorSizeInBytes);
            qdml::RunOptions o;
            o.executor = ex;
            qdml::run(d, o);
            REQUIRE(std::memcmp(d.OutputTensor.Data, expected.data(), expected.size()) == 0);
            REQUIRE(pool.guards_intact());
        }
    }
}

TEST_CASE("threads: qdml::dml::ExecuteOptions carries the executor to the computation", "[threads]") {
    Rng r(qtest::case_seed(265));
    Matmul mm(r, 1, 200, 100, 300);
    mm.out.reset();
    qdml::run(mm.d, {qdml::Implementation::Reference});
    const auto expected = mm.out.with_guards();
    qtest::RecordingExecutor rec;
    qdml::dml::ExecuteOptions eo;
    eo.executor = qdml::make_executor(rec, 4);
    mm.out.reset();
    qdml::run(mm.d, qdml::dml::detail::run_options(eo));
    CHECK_FALSE(rec.counts.empty());
    CHECK(mm.out.with_guards() == expected);
}

TEST_CASE("threads: the task counts docs/perf/scaling.md predicts for the benchmark shapes, on every GEMM path",
          "[threads]") {
    // The products loop's task count for each benchmark shape and GEMM
    // path (docs/perf/scaling.md's table, worked out from gemm::task_grid's
    // rule by hand: kTaskMacs = 2^17, kTargetTasks = 64, the column block
    // ~1 MiB of panels), as a pool that says it has 64 threads records it.
    struct Row {
        qdml::simd::Isa isa;
        std::uint32_t batch, m, n, k;
        std::size_t tasks;
    };
    using qdml::simd::Isa;
    const Row rows[] = {
        {Isa::Generic, 1, 1024, 1024, 1024, 256}, {Isa::Generic, 1, 256, 256, 256, 64},
        {Isa::Generic, 1, 1, 4096, 4096, 64},     {Isa::Generic, 64, 64, 64, 64, 128},
        {Isa::Avx2, 1, 1024, 1024, 1024, 512},    {Isa::Avx2, 1, 256, 256, 256, 64},
        {Isa::Avx2, 1, 1, 4096, 4096, 64},        {Isa::Avx2, 64, 64, 64, 64, 128},
        {Isa::AvxVnni, 1, 1024, 1024, 1024, 171}, {Isa::AvxVnni, 1, 256, 256, 256, 86},
        {Isa::Avx512Vnni, 1, 1024, 1024, 1024, 128}, {Isa::Avx512Vnni, 1, 256, 256, 256, 64},
        {Isa::Amx, 1, 1024, 1024, 1024, 64},      {Isa::Amx, 1, 256, 256, 256, 32},
    };
    Rng r(qtest::case_seed(266));
    std::string not_here;
    for (const Row& row : rows) {
        if (!qdml::simd::isa_available(row.isa)) {
            not_here += " " + std::string(qdml::simd::isa_name(row.isa));
            continue;
        }
        INFO(qdml::simd::isa_name(row.isa) << " " << row.batch << "x" << row.m << "x" << row.n << "x" << row.k);
        Matmul mm(r, row.batch, row.m, row.k, row.n);
        auto constant = mm.d;
        constant.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
        qdml::RunOptions o;
        o.isa = row.isa;
        const auto compiled = qdml::compile(constant, o);
        REQUIRE(compiled.path() == "simd gemm " + std::string(qdml::simd::isa_name(row.isa)));
        qtest::RecordingExecutor rec;
        compiled.execute(constant, qdml::make_executor(rec, 64));
        REQUIRE_FALSE(rec.counts.empty());
        CHECK(rec.counts.back() == row.tasks);
    }
    if (!not_here.empty()) WARN("GEMM paths this CPU cannot run, their predicted task counts not checked:" << not_here);
}
