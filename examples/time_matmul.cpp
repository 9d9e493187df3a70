// One u8 x i8 -> u8 matmul of N^3 (default 1024) through qdml::run, timed:
// the median and the fastest of R runs (default 20) after one warm-up run,
// on one thread, with the ISA path qdml::describe names. A program with no
// dependency but qdml, so that the same source gives comparable figures
// wherever qdml builds (docs/windows.md: the MinGW-w64 build under wine
// beside the Linux build). Built on demand:
//
//     meson compile -C build examples/time_matmul
//     build/examples/time_matmul [N [R]]         # QDML_ISA caps the path as usual
#include <qdml/qdml.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    const long n_arg = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1024;
    const long r_arg = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 20;
    if (argc > 3 || n_arg < 1 || n_arg > 8192 || r_arg < 1 || r_arg > 10000) {
        std::fprintf(stderr, "usage: time_matmul [N (1-8192, default 1024) [runs (1-10000, default 20)]]\n");
        return 2;
    }
    const auto n = static_cast<std::uint32_t>(n_arg);
    const auto runs = static_cast<std::size_t>(r_arg);
    std::vector<std::uint8_t> a(std::size_t{n} * n), out(std::size_t{n} * n);
    std::vector<std::int8_t> b(std::size_t{n} * n);
    std::uint32_t x = 12345;  // a fixed pseudo-random fill (xorshift32)
    const auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        return x;
    };
    for (auto& v : a) v = static_cast<std::uint8_t>(next());
    for (auto& v : b) v = static_cast<std::int8_t>(next());
    const float a_scale = 0.02f, b_scale = 0.01f, out_scale = 4.0f;
    const std::uint8_t a_zp = 128, out_zp = 128;

    using qdml::TensorDataType;
    using qdml::TensorDesc;
    qdml::QuantizedLinearMatrixMultiplyDesc desc;
    desc.ATensor = {TensorDesc::make(TensorDataType::UInt8, {n, n}), a.data()};
    desc.AScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &a_scale};
    desc.AZeroPointTensor = {TensorDesc::make(TensorDataType::UInt8, {1, 1}), &a_zp};
    desc.BTensor = {TensorDesc::make(TensorDataType::Int8, {n, n}), b.data()};
    desc.BScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &b_scale};
    desc.OutputScaleTensor = {TensorDesc::make(TensorDataType::Float32, {1, 1}), &out_scale};
    desc.OutputZeroPointTensor = {TensorDesc::make(TensorDataType::UInt8, {1, 1}), &out_zp};
    desc.OutputTensor = {TensorDesc::make(TensorDataType::UInt8, {n, n}), out.data()};

    try {
        qdml::run(desc);  // warm-up (and validation's message, if any)
        std::vector<double> ms(runs);
        for (auto& t : ms) {
            const auto t0 = std::chrono::steady_clock::now();
            qdml::run(desc);
            t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        }
        std::sort(ms.begin(), ms.end());
        std::uint64_t sum = 0;  // the output's checksum: the same on every path and platform
        for (auto v : out) sum = sum * 31 + v;
        std::printf("%s: %ux%ux%u u8 x i8 -> u8, %zu runs: median %.3f ms, min %.3f ms, checksum %016llx\n",
                    qdml::describe(desc).c_str(), n, n, n, runs, ms[runs / 2], ms[0],
                    static_cast<unsigned long long>(sum));
    } catch (const qdml::Error& e) {
        std::fprintf(stderr, "time_matmul: %s\n", e.what());
        return 1;
    }
    return 0;
}
