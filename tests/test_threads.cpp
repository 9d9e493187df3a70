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
        // (A busy wait: Windows' sleep rounds 200 us to nothing, and the 64
        // tasks then ended before a worker woke.)
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
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

/// The task counts of every parallel loop of qdml::run(d) on recording
/// executors that say they have 1, 2, 16 and 64 threads, one list each.
template <class Desc>
std::vector<std::vector<std::size_t>> grids_on_pools(const Desc& d) {
    std::vector<std::vector<std::size_t>> grids;
    for (std::size_t workers : {1, 2, 16, 64}) {
        qtest::RecordingExecutor rec;
        qdml::RunOptions o;
        o.executor = qdml::make_executor(rec, workers);
        qdml::run(d, o);
        grids.push_back(rec.counts);
    }
    return grids;
}

}  // namespace

TEST_CASE("threads: the task grid depends on the shapes only, never on the pool", "[threads]") {
    Rng r(qtest::case_seed(261));
    for (const auto& shape : std::vector<std::vector<std::uint32_t>>{
             {1, 300, 200, 260}, {1, 1, 4096, 512}, {16, 40, 64, 40}, {2, 129, 77, 513}}) {
        Matmul mm(r, shape[0], shape[1], shape[2], shape[3]);
        const auto grids = grids_on_pools(mm.d);
        INFO("shape " << shape[0] << "x" << shape[1] << "x" << shape[2] << "x" << shape[3]);
        CHECK_FALSE(grids[0].empty());  // (the packing, epilogue and product loops of more than one task)
        for (const auto& g : grids) CHECK(g == grids[0]);
    }
}

TEST_CASE("threads: DYNAMIC_QUANTIZE_LINEAR's two passes, the same tasks and bytes on every pool", "[threads]") {
    // {33, 130, 250} FLOAT32 (4.3 MB) read transposed (the range pass reads it
    // in memory order, the quantize pass through the tile form) into UINT8.
    Rng r(qtest::case_seed(264));
    const std::vector<std::uint32_t> sizes{33, 130, 250};
    std::vector<float> x(33 * 130 * 250);
    for (auto& v : x) v = r.between(-3.0f, 7.0f);
    x[12345] = -9.5f;  // the minimum, in a task of its own
    std::vector<std::uint8_t> y(x.size());
    float scale = 0;
    std::uint8_t zp = 0;
    qdml::DynamicQuantizeLinearDesc d;
    d.InputTensor = {qtest::make_desc(DT::Float32, sizes, {130 * 250, 1, 130}), x.data()};
    d.OutputTensor = {qtest::make_desc(DT::UInt8, sizes), y.data()};
    d.OutputScaleTensor = {qtest::make_desc(DT::Float32, {1, 1, 1}), &scale};
    d.OutputZeroPointTensor = {qtest::make_desc(DT::UInt8, {1, 1, 1}), &zp};
    const auto grids = grids_on_pools(d);
    REQUIRE(grids[0].size() == 2);  // the range, then the quantize step
    CHECK(grids[0][0] > 1);
    for (const auto& g : grids) CHECK(g == grids[0]);
    qdml::run(d, {qdml::Implementation::Reference});
    const auto expected = y;
    const float expected_scale = scale;
    const std::uint8_t expected_zp = zp;
    for (const auto& [name, ex] : every_executor()) {
        INFO("executor " << name);
        std::fill(y.begin(), y.end(), 0xA5);
        scale = 0;
        zp = 0;
        qdml::RunOptions o;
        o.executor = ex;
        qdml::run(d, o);
        CHECK(y == expected);
        CHECK(scale == expected_scale);
        CHECK(zp == expected_zp);
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
    // 2^18 - 1 floats: one element short of kMinThreadedBytes (1 MiB) of
    // output, sixteen tasks' grain: still the calling thread; 2^18: the pool.
    for (const std::uint32_t n : {(1u << 18) - 1, 1u << 18}) {
        std::vector<float> big_x(n, 1.0f), big_y(n);
        clip.InputTensor = {qtest::make_desc(DT::Float32, {n}), big_x.data()};
        clip.OutputTensor = {qtest::make_desc(DT::Float32, {n}), big_y.data()};
        qtest::RecordingExecutor big_rec;
        o.executor = qdml::make_executor(big_rec, 2);
        qdml::run(clip, o);
        CHECK(big_rec.counts.empty() == (n < (1u << 18)));
        CHECK(big_y[n - 1] == 0.5f);
    }
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
        {{3, 5, 140, 140}, {}},  // (1.18 MB of output: over kMinThreadedBytes)
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
    // ~1 MiB of panels; a batch of products under four grains each: tasks
    // of whole products, kTaskMacs / (M N K) of them a task, at least one:
    // 64 x 64^3 is 64 tasks of one product), as a pool that says it has 64
    // threads records it.
    struct Row {
        qdml::simd::Isa isa;
        std::uint32_t batch, m, n, k;
        std::size_t tasks;
    };
    using qdml::simd::Isa;
    const Row rows[] = {
        {Isa::Generic, 1, 1024, 1024, 1024, 256}, {Isa::Generic, 1, 256, 256, 256, 64},
        {Isa::Generic, 1, 1, 4096, 4096, 64},     {Isa::Generic, 64, 64, 64, 64, 64},
        {Isa::Avx2, 1, 1024, 1024, 1024, 512},    {Isa::Avx2, 1, 256, 256, 256, 64},
        {Isa::Avx2, 1, 1, 4096, 4096, 64},        {Isa::Avx2, 64, 64, 64, 64, 64},
        {Isa::AvxVnni, 1, 1024, 1024, 1024, 171}, {Isa::AvxVnni, 1, 256, 256, 256, 86},
        {Isa::AvxVnni, 64, 64, 64, 64, 64},
        {Isa::Avx512Vnni, 1, 1024, 1024, 1024, 128}, {Isa::Avx512Vnni, 1, 256, 256, 256, 64},
        {Isa::Avx512Vnni, 64, 64, 64, 64, 64},    {Isa::Avx512Vnni, 16, 32, 32, 32, 4},
        {Isa::Amx, 1, 1024, 1024, 1024, 64},      {Isa::Amx, 1, 256, 256, 256, 32},
        {Isa::Amx, 64, 64, 64, 64, 64},
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

namespace {

/// A convolution of u8 input, s8 filter (per-channel scales and zero
/// points, a bias) and u8 output in guarded buffers, NCHW or NHWC by strides.
struct Conv {
    GuardedPool pool;
    qdml::QuantizedLinearConvolutionDesc d;

    /// sizes: N, Cin, H, W, Cout, kH (= kW), stride, padding, groups.
    Conv(Rng& r, const std::vector<std::uint32_t>& s, bool nhwc) {
        const std::uint32_t N = s[0], C = s[1], H = s[2], W = s[3], Co = s[4], k = s[5], st = s[6], p = s[7], G = s[8];
        const std::uint32_t oH = (H + 2 * p - k) / st + 1, oW = (W + 2 * p - k) / st + 1;
        const auto layout = [nhwc](std::uint32_t n, std::uint32_t c, std::uint32_t h, std::uint32_t w) {
            return nhwc ? std::vector<std::uint32_t>{c * h * w, 1, w * c, c} : std::vector<std::uint32_t>{};
            (void)n;
        };
        d.InputTensor = pool.tensor(DT::UInt8, {N, C, H, W}, layout(N, C, H, W));
        d.FilterTensor = pool.tensor(DT::Int8, {Co, C / G, k, k});
        d.OutputTensor = pool.tensor(DT::UInt8, {N, Co, oH, oW}, layout(N, Co, oH, oW));
        d.InputScaleTensor = pool.tensor(DT::Float32, {1, 1, 1, 1});
        d.InputZeroPointTensor = pool.tensor(DT::UInt8, {1, 1, 1, 1});
        d.FilterScaleTensor = pool.tensor(DT::Float32, {1, Co, 1, 1});
        d.FilterZeroPointTensor = pool.tensor(DT::Int8, {1, Co, 1, 1});
        d.BiasTensor = pool.tensor(DT::Int32, {1, Co, 1, 1});
        d.OutputScaleTensor = pool.tensor(DT::Float32, {1, 1, 1, 1});
        d.OutputZeroPointTensor = pool.tensor(DT::UInt8, {1, 1, 1, 1});
        qtest::fill<std::uint8_t>(d.InputTensor, [&] { return r.byte(); });
        qtest::fill<std::int8_t>(d.FilterTensor, [&] { return static_cast<std::int8_t>(r.byte()); });
        qtest::fill<float>(d.InputScaleTensor, [] { return 0.02f; });
        qtest::fill<std::uint8_t>(*d.InputZeroPointTensor, [] { return std::uint8_t{5}; });
        qtest::fill<float>(d.FilterScaleTensor, [&] { return r.between(0.001f, 0.01f); });
        qtest::fill<std::int8_t>(*d.FilterZeroPointTensor, [&] { return static_cast<std::int8_t>(r.byte() % 5); });
        qtest::fill<std::int32_t>(*d.BiasTensor, [&] { return static_cast<std::int32_t>(r.byte()) * 40 - 5000; });
        qtest::fill<float>(d.OutputScaleTensor, [&] { return 0.2f + 0.05f * C * k * k / G; });
        qtest::fill<std::uint8_t>(*d.OutputZeroPointTensor, [] { return std::uint8_t{128}; });
        d.Strides = {st, st};
        d.StartPadding = {p, p};
        d.EndPadding = {p, p};
        d.GroupCount = G;
    }
    std::vector<std::uint8_t> output() const {
        const auto* o = static_cast<const std::uint8_t*>(d.OutputTensor.Data);
        return {o, o + d.OutputTensor.Desc.TotalTensorSizeInBytes};
    }
};

/// The benchmark-like convolutions of the conv tests below: N, Cin, H, W,
/// Cout, k, stride, padding, groups.
const std::vector<std::vector<std::uint32_t>> kConvShapes = {
    {1, 64, 28, 28, 64, 3, 1, 1, 1},   // 3x3 (NHWC form on vector paths)
    {1, 3, 56, 56, 32, 7, 2, 3, 1},    // the first layer: 7x7 stride 2, padding 3
    {1, 256, 14, 14, 64, 1, 1, 0, 1},  // 1x1 (NCHW form for channel planes)
    {2, 64, 20, 20, 128, 3, 2, 1, 4},  // groups, stride 2, two images
    {1, 32, 112, 112, 32, 3, 1, 1, 32},  // depthwise
    {1, 16, 9, 9, 64, 3, 1, 9, 1},     // padding beyond the kernel: row blocks that read no input row
};

}  // namespace

TEST_CASE("threads: convolutions (every form) on every pool give the reference's bytes, stateless and compiled",
          "[threads][conv]") {
    Rng r(qtest::case_seed(267));
    for (const auto& s : kConvShapes)
        for (const bool nhwc : {false, true}) {
            INFO("conv " << s[0] << "x" << s[1] << "x" << s[2] << "x" << s[3] << " -> " << s[4] << " k" << s[5] << " s"
                         << s[6] << " p" << s[7] << " g" << s[8] << (nhwc ? " NHWC" : " NCHW"));
            Conv c(r, s, nhwc);
            qdml::validate(c.d);
            qdml::run(c.d, {qdml::Implementation::Reference});
            const auto expected = c.output();
            auto constant = c.d;
            constant.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
            const auto compiled = qdml::compile(constant);
            INFO("path " << compiled.path());
            for (const auto& [name, ex] : every_executor()) {
                INFO("executor " << name);
                qdml::RunOptions o;
                o.executor = ex;
                std::memset(c.d.OutputTensor.Data, 0xA5, expected.size());
                qdml::run(c.d, o);
                REQUIRE(c.output() == expected);
                std::memset(c.d.OutputTensor.Data, 0xA5, expected.size());
                compiled.execute(constant, ex);
                REQUIRE(c.output() == expected);
                REQUIRE(c.pool.guards_intact());
            }
        }
}

TEST_CASE("threads: a convolution's task grid depends on the shapes only, never on the pool", "[threads][conv]") {
    Rng r(qtest::case_seed(268));
    for (const auto& s : kConvShapes) {
        Conv c(r, s, true);
        const auto grids = grids_on_pools(c.d);
        INFO("conv " << s[1] << " -> " << s[4] << " k" << s[5] << " at " << s[2] << "x" << s[3]);
        REQUIRE(grids[0].size() == 1);  // one loop: the tasks of conv/tasks.hpp
        CHECK(grids[0][0] > 1);
        for (const auto& g : grids) CHECK(g == grids[0]);
    }
}

TEST_CASE("threads: the convolution task counts worked out by hand from conv_task_grid's rule", "[threads][conv]") {
    // kConvTaskMacs = 2^20 (two grains: 2,097,152 MACs), kDepthwiseTaskMacs =
    // 2^19 (1,048,576), kTargetTasks = 64; row blocks of 64 pixels and 2 rows
    // at least; channel blocks of 64 at least. Halve the group block, then
    // the rows, then the channels, while under 64 tasks of two grains.
    // - 3x3 64 -> 64 at 56^2, NHWC form (AVX2): 115.6M MACs; rows 56, 28,
    //   14, 7, 4, 2 (28 tasks of 4.1M); 2 rows is the least, 64 channels
    //   cannot be halved: 28.
    // - 3x3 64 -> 256 at 14^2 (NHWC): 28.9M MACs; rows 14, 7 (min rows:
    //   64 / 14 -> 5; 2 tasks), then channels 128, 64 (8 tasks of 3.6M): 8.
    // - depthwise 3x3 x32 at 112^2: 3,612,672 MACs; rows 56 (2 tasks of
    //   1.8M), 28 (4 of 903,168: under two grains, stop): 4.
    // - 1x1 256 -> 64 at 14^2 (NCHW form, AVX2: 4-row kernel): 3.2M MACs;
    //   rows 14 -> 7 (min rows 5; 2 tasks of 1.6M: stop): 2.
    Rng r(qtest::case_seed(269));
    struct Row {
        std::vector<std::uint32_t> shape;
        bool nhwc;
        std::string path;
        std::size_t tasks;
    };
    const Row rows[] = {
        {{1, 64, 56, 56, 64, 3, 1, 1, 1}, true, "simd gemm-nhwc avx2", 28},
        {{1, 64, 14, 14, 256, 3, 1, 1, 1}, true, "simd gemm-nhwc avx2", 8},
        {{1, 32, 112, 112, 32, 3, 1, 1, 32}, true, "simd depthwise-nhwc-pairs avx2", 4},
        {{1, 256, 14, 14, 64, 1, 1, 0, 1}, false, "simd gemm-nchw avx2", 2},
    };
    if (!qdml::simd::isa_available(qdml::simd::Isa::Avx2)) {
        WARN("no AVX2 here: the convolution task counts of the AVX2 path not checked");
        return;
    }
    for (const Row& row : rows) {
        Conv c(r, row.shape, row.nhwc);
        qdml::RunOptions o;
        o.isa = qdml::simd::Isa::Avx2;
        auto constant = c.d;
        constant.FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
        const auto compiled = qdml::compile(constant, o);
        INFO("path " << compiled.path());
        REQUIRE(compiled.path() == row.path);
        qtest::RecordingExecutor rec;
        compiled.execute(constant, qdml::make_executor(rec, 64));
        REQUIRE(rec.counts.size() == 1);
        CHECK(rec.counts[0] == row.tasks);
    }
}

TEST_CASE("threads: the task grids' tasks are near-equal, so the scaling model's ceil(N_t / n) * T_1 / N_t holds",
          "[threads][conv]") {
    // docs/perf/scaling.md's model takes a call's tasks as equal. Here the
    // multiply-adds of every task of the benchmark shapes' grids, on every
    // GEMM path this CPU runs (matmul) and with the GEMM forms' 64-channel
    // unit (conv), from the grids' own rules:
    // the largest task within 1.25x of the mean, and the 64-worker makespan
    // (largest tasks first, each to the least loaded worker) within 1.25x of
    // the model's.
    const auto check = [](const std::string& what, const std::vector<std::uint64_t>& work) {
        INFO(what << ": " << work.size() << " tasks");
        REQUIRE(work.size() > 1);
        std::uint64_t total = 0, largest = 0;
        for (auto w : work) {
            total += w;
            largest = std::max(largest, w);
        }
        const double mean = static_cast<double>(total) / static_cast<double>(work.size());
        CHECK(static_cast<double>(largest) <= 1.25 * mean);
        std::vector<std::uint64_t> sorted = work, load(64, 0);
        std::sort(sorted.rbegin(), sorted.rend());
        for (auto w : sorted) *std::min_element(load.begin(), load.end()) += w;
        const double makespan = static_cast<double>(*std::max_element(load.begin(), load.end()));
        const double model = static_cast<double>((work.size() + 63) / 64) * mean;
        CHECK(makespan <= 1.25 * model);
    };
    using qdml::simd::Isa;
    for (const Isa isa : {Isa::Generic, Isa::Avx2, Isa::AvxVnni, Isa::Avx512Vnni, Isa::Amx})
        for (const auto& s : std::vector<std::vector<std::size_t>>{{1024, 1024, 1024}, {256, 256, 256}, {1, 4096, 4096}}) {
            if (!qdml::simd::isa_available(isa)) continue;  // (the packer of a path this CPU runs)
            const std::size_t M = s[0], N = s[1], K = s[2];
            // B packed as the product packs it, for its column block (gemm::block_panels).
            const std::vector<std::int8_t> b(K * N, 1);
            qdml::simd::gemm::PackedRight pb;
            qdml::simd::gemm::pack_right(qdml::simd::gemm::Matrix<std::int8_t>{b.data(), N, 1}, K, N, isa, pb, {M > 1});
            const std::size_t panels = pb.panels;
            const auto g = qdml::simd::gemm::task_grid(M, panels, K, isa, qdml::simd::gemm::block_panels(pb));
            std::vector<std::uint64_t> work;
            for (std::size_t t = 0; t < g.tasks(); ++t) {
                const std::size_t pb = t / g.m_blocks, mb = t % g.m_blocks;
                const std::size_t rows = std::min(M, mb * g.rows + g.rows) - mb * g.rows;
                const std::size_t cols = std::min(panels, pb * g.panels_per + g.panels_per) - pb * g.panels_per;
                work.push_back(std::uint64_t{rows} * cols * 16 * K);
            }
            check("matmul " + std::string(qdml::simd::isa_name(isa)) + " " + std::to_string(M) + "x" +
                      std::to_string(N) + "x" + std::to_string(K),
                  work);
        }
    // The conv benchmark shapes (N, Cin, H, Cout, k, stride, padding, groups) as the AVX2 path cuts them.
    for (const auto& s : std::vector<std::vector<std::uint32_t>>{{1, 64, 56, 64, 3, 1, 1, 1},
                                                                  {1, 256, 56, 64, 1, 1, 0, 1},
                                                                  {1, 32, 112, 32, 3, 1, 1, 32},
                                                                  {1, 128, 28, 128, 3, 2, 1, 1},
                                                                  {1, 3, 224, 64, 7, 2, 3, 1}}) {
        const std::uint32_t oH = (s[2] + 2 * s[6] - s[4]) / s[5] + 1, G = s[7];
        const bool dw = G == s[1];
        const std::uint64_t K = std::uint64_t{s[1] / G} * s[4] * s[4];
        const auto g = qdml::simd::conv::conv_task_grid(s[0], dw ? 1 : G, oH, oH, dw ? s[3] : s[3] / G, K,
                                                        dw ? 0 : 64, dw ? qdml::simd::kDepthwiseTaskMacs
                                                                    : qdml::simd::kConvTaskMacs);
        std::vector<std::uint64_t> work;
        for (std::uint32_t r = 0; r < g.row_blocks(); ++r)
            for (std::uint32_t c = 0; c < g.chan_blocks(); ++c) {
                const std::uint32_t rows = std::min(g.oH, r * g.rows_per + g.rows_per) - r * g.rows_per;
                const std::uint32_t chans = std::min(g.cout_g, c * g.chans_per + g.chans_per) - c * g.chans_per;
                for (std::uint32_t b = 0; b < s[0] * g.group_blocks(); ++b) work.push_back(std::uint64_t{rows} * oH * chans * K);
            }
        check("conv " + std::to_string(s[1]) + " -> " + std::to_string(s[3]) + " k" + std::to_string(s[4]) + " at " +
                  std::to_string(s[2]),
              work);
    }
}
