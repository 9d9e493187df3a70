// Differential test of QUANTIZE and DEQUANTIZE (docs/semantics.md section
// 18): random cases through the reference and the SIMD path (stateless and
// compiled), identical bytes required over the whole output buffer (a
// 4-bit output's nibbles that no element addresses included: they keep the
// sentinel). FLOAT32 and FLOAT16 against INT8, UINT8, INT4 and UINT4; 1-8
// dimensions; the quantization tensors per tensor, per axis, blockwise along
// one or several dimensions (blocks of 2 to the whole size), packed or with
// random strides and broadcasts; SCALE (implied zero point) and
// SCALE_ZERO_POINT; the float and 8-bit tensors in random layouts (the
// input broadcast too), the 4-bit ones mostly packed (the vector path's
// form: odd lengths and odd row starts, where a byte holds two rows'
// nibbles) and sometimes strided (the reference's loop). Values: NaN,
// infinities, subnormal and huge scales, ties (x = (k + 1/2) * s with s a
// power of two), quotients far beyond the range (saturation).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "support/differential.hpp"

namespace {
using namespace qtest::diff;

/// A random quantization-tensor shape for `sizes`: each dimension per
/// tensor (1), per element (its size) or blockwise (size / block, a
/// divisor); `why` names the form.
std::vector<std::uint32_t> scale_sizes(Rng& r, const std::vector<std::uint32_t>& sizes, std::string& why) {
    std::vector<std::uint32_t> s(sizes.size(), 1);
    const auto blocked = [&](std::size_t d) {  // sizes[d] / block, block a divisor of sizes[d] (often a power of two)
        std::vector<std::uint32_t> divisors;
        for (std::uint32_t b = 1; b <= sizes[d]; ++b)
            if (sizes[d] % b == 0) divisors.push_back(b);
        return sizes[d] / r.pick(divisors);
    };
    const auto axis = static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(sizes.size()) - 1));
    switch (r.range(0, 3)) {
        case 0: why = "per-tensor"; break;
        case 1:
            why = "per-axis " + std::to_string(axis);
            s[axis] = sizes[axis];
            break;
        case 2:
            s[axis] = blocked(axis);
            why = "blocks along " + std::to_string(axis);
            break;
        default:
            for (std::size_t d = 0; d < sizes.size(); ++d) s[d] = r.chance(30) ? sizes[d] : r.chance(50) ? blocked(d) : 1;
            why = "per dimension: any";
    }
    std::string dims = " {";
    for (std::size_t d = 0; d < s.size(); ++d) dims += (d ? "," : "") + std::to_string(s[d]);
    why += dims + "}";
    return s;
}

bool is4(DT t) { return qdml::is_4bit(t); }

/// A copy of `t` (any type, 4-bit included) in a new buffer with the same misalignment.
Tensor clone(GuardedPool& pool, const Tensor& t) {
    auto& b = pool.buffer(static_cast<std::size_t>(t.Desc.TotalTensorSizeInBytes), reinterpret_cast<std::uintptr_t>(t.Data) % 64);
    std::memcpy(b.data(), t.Data, static_cast<std::size_t>(t.Desc.TotalTensorSizeInBytes));
    return Tensor{t.Desc, b.data()};
}

/// A tensor of `t` in a new buffer: a 4-bit one `misalign` bytes past a 64-byte boundary.
Tensor new_tensor(GuardedPool& pool, DT t, const std::vector<std::uint32_t>& sizes, const std::vector<std::uint32_t>& strides,
                  std::size_t misalign) {
    if (!is4(t)) return pool.tensor(t, sizes, strides, misalign);
    const auto d = qtest::make_desc(t, sizes, strides);
    REQUIRE(d.TotalTensorSizeInBytes > 0);
    return Tensor{d, pool.buffer(static_cast<std::size_t>(d.TotalTensorSizeInBytes), misalign).data()};
}

/// Random bytes through the whole buffer of a 4-bit or 8-bit tensor (every nibble pattern).
void fill_bytes(Rng& r, const Tensor& t) {
    auto* p = static_cast<std::uint8_t*>(t.Data);
    for (std::uint64_t i = 0; i < t.Desc.TotalTensorSizeInBytes; ++i) p[i] = r.byte();
}

/// Byte-for-byte comparison of two 4-bit outputs (compare() takes whole-byte elements).
void compare4(const GuardedPool& pool, const Tensor& ref, const Tensor& got, const std::string& context) {
    if (!pool.guards_intact()) {
        pool.check_guards(context);
        return;
    }
    const auto* a = static_cast<const std::uint8_t*>(ref.Data);
    const auto* b = static_cast<const std::uint8_t*>(got.Data);
    for (std::uint64_t i = 0; i < ref.Desc.TotalTensorSizeInBytes; ++i)
        if (a[i] != b[i]) {
            FAIL_CHECK("4-bit output differs at byte " << i << " (nibbles " << 2 * i << ", " << 2 * i + 1 << "): "
                                                       << std::hex << int(a[i]) << " (reference) vs " << int(b[i])
                                                       << " (simd)\n"
                                                       << context);
            return;
        }
}

/// One case: QUANTIZE (Quantize true) from TFloat to `q`, or DEQUANTIZE from `q` to TFloat.
template <bool Quantize, class TFloat>
void one_case(Rng& r, std::uint64_t seed, DT q) {
    using Desc = std::conditional_t<Quantize, qdml::QuantizeDesc, qdml::DequantizeDesc>;
    const DT f = qdml::data_type_of<TFloat>;
    GuardedPool pool;
    const auto rank = static_cast<std::uint32_t>(r.range(1, 8));
    const auto sizes = case_sizes(r, rank);
    std::string l_in, l_out, l_scale, l_zp = "absent", form;
    const auto qsizes = scale_sizes(r, sizes, form);
    // The 4-bit tensor packed in most cases (the vector path's form), else strided; the others random.
    const auto layout = [&](bool is_input, DT t, std::string& why) {
        if ((is4(t) && r.chance(75)) || r.chance(30)) {
            why = "packed";
            return std::vector<std::uint32_t>{};
        }
        return random_strides(r, sizes, is_input, why);
    };
    Desc d;
    const DT in_t = Quantize ? f : q, out_t = Quantize ? q : f;
    d.InputTensor = new_tensor(pool, in_t, sizes, layout(true, in_t, l_in), static_cast<std::size_t>(r.range(0, 7)));
    d.OutputTensor = new_tensor(pool, out_t, sizes, layout(false, out_t, l_out), static_cast<std::size_t>(r.range(0, 7)));
    const auto qstrides = [&](std::string& why) {
        if (r.chance(60)) {
            why = "packed";
            return std::vector<std::uint32_t>{};
        }
        return random_strides(r, qsizes, true, why);
    };
    d.QuantizationTensors[0] = new_tensor(pool, f, qsizes, qstrides(l_scale), static_cast<std::size_t>(r.range(0, 3)));
    d.QuantizationType = qdml::QuantizationType::Scale;
    if (r.chance(70)) {
        d.QuantizationType = qdml::QuantizationType::ScaleZeroPoint;
        d.QuantizationTensors[1] = new_tensor(pool, q, qsizes, qstrides(l_zp), static_cast<std::size_t>(r.range(0, 7)));
        if (is4(q))
            fill_bytes(r, *d.QuantizationTensors[1]);
        else if (q == DT::Int8)
            fill<std::int8_t>(*d.QuantizationTensors[1], [&] { return r.value<std::int8_t>(); });
        else
            fill<std::uint8_t>(*d.QuantizationTensors[1], [&] { return r.value<std::uint8_t>(); });
    }
    // Scales about 2^k (subnormal ones and huge ones included), exactly 2^k
    // in 30% of the elements (ties); quantize inputs about the scale (ties:
    // (j + 1/2) * scale), 16 times it or 1000 times it (saturation).
    const int k = static_cast<int>(r.range(-140, 60));
    const float mag = std::ldexp(1.0f, std::is_same_v<TFloat, float> ? k : std::max(-24, std::min(k, 14)));
    fill<TFloat>(*d.QuantizationTensors[0], [&] { return r.chance(30) ? TFloat(mag) : r.value<TFloat>(mag); });
    if constexpr (Quantize) {
        const float in_mag = mag * r.pick(std::vector<float>{1.0f, 16.0f, 1000.0f});
        fill<TFloat>(d.InputTensor, [&] { return r.value<TFloat>(in_mag); });
    } else if (is4(q)) {
        fill_bytes(r, d.InputTensor);
    } else if (q == DT::Int8) {
        fill<std::int8_t>(d.InputTensor, [&] { return r.value<std::int8_t>(); });
    } else {
        fill<std::uint8_t>(d.InputTensor, [&] { return r.value<std::uint8_t>(); });
    }

    Desc s = d, c = d;  // c: compiled on d, executed with its own output
    s.OutputTensor = clone(pool, d.OutputTensor);
    c.OutputTensor = clone(pool, d.OutputTensor);
    const auto fidelity = r.chance(50) ? qdml::Fidelity::DirectML : qdml::Fidelity::Exact;
    std::string path_s, path_c;
    run_three(d, s, c, seed, fidelity, path_s, path_c);
    std::ostringstream ctx;
    ctx << Desc::OperatorName << " seed " << seed << "; fidelity " << qdml::to_string(fidelity) << "; "
        << qdml::name(d.QuantizationType) << ", " << form << "; input " << l_in << ", output " << l_out << ", scale "
        << l_scale << ", zero point " << l_zp << "\n"
        << describe("InputTensor", d.InputTensor) << describe("QuantizationTensors[0]", *d.QuantizationTensors[0])
        << (d.QuantizationTensors[1] ? describe("QuantizationTensors[1]", *d.QuantizationTensors[1]) : "")
        << describe("OutputTensor", d.OutputTensor);
    if (is4(out_t)) {
        compare4(pool, d.OutputTensor, s.OutputTensor, "path " + path_s + "; " + ctx.str());
        compare4(pool, d.OutputTensor, c.OutputTensor, "compiled form, path " + path_c + "; " + ctx.str());
    } else {
        compare(pool, d.OutputTensor, s.OutputTensor, "path " + path_s + "; " + ctx.str());
        compare(pool, d.OutputTensor, c.OutputTensor, "compiled form, path " + path_c + "; " + ctx.str());
    }
}

constexpr DT kQuantized[] = {DT::Int8, DT::UInt8, DT::Int4, DT::UInt4};

/// A large packed DEQUANTIZE or QUANTIZE of `sizes` (past simd::kStreamBytes
/// of float output: streamed rows), blocks of `block` along the last
/// dimension `axis` (0: per tensor), on the calling thread and on a pool.
void large_case(Rng& r, std::uint64_t seed, bool quantize, DT q, const std::vector<std::uint32_t>& sizes, std::size_t axis,
                std::uint32_t block) {
    GuardedPool pool;
    std::vector<std::uint32_t> qsizes(sizes.size(), 1);
    if (block) qsizes[axis] = sizes[axis] / block;
    qdml::QuantizationDescBase d;
    const DT in_t = quantize ? DT::Float32 : q, out_t = quantize ? q : DT::Float32;
    d.InputTensor = new_tensor(pool, in_t, sizes, {}, 3);
    d.OutputTensor = new_tensor(pool, out_t, sizes, {}, 1);
    d.QuantizationType = qdml::QuantizationType::ScaleZeroPoint;
    d.QuantizationTensors[0] = new_tensor(pool, DT::Float32, qsizes, {}, 0);
    d.QuantizationTensors[1] = new_tensor(pool, q, qsizes, {}, 0);
    fill<float>(*d.QuantizationTensors[0], [&] { return r.chance(50) ? 0.25f : r.value<float>(1.0f); });
    fill_bytes(r, *d.QuantizationTensors[1]);
    if (quantize) fill<float>(d.InputTensor, [&] { return r.value<float>(4.0f); });
    else fill_bytes(r, d.InputTensor);
    for (int threads = 0; threads < 2; ++threads) {
        qdml::QuantizationDescBase s = d;
        s.OutputTensor = clone(pool, d.OutputTensor);
        qdml::RunOptions o_r{qdml::Implementation::Reference}, o_s = next_elementwise_options(nullptr);
        std::string ex = "the calling thread";
        if (threads) o_s.executor = case_executor(1 + 2 * seed, &ex);
        const std::string ctx = std::string(quantize ? "QUANTIZE" : "DEQUANTIZE") + " large, seed " +
                                std::to_string(seed) + ", " + ex + "\n" + describe("InputTensor", d.InputTensor) +
                                describe("OutputTensor", d.OutputTensor);
        const auto run = [&](const qdml::QuantizationDescBase& x, const qdml::RunOptions& o) {
            if (quantize) qdml::run(qdml::QuantizeDesc{x}, o);
            else qdml::run(qdml::DequantizeDesc{x}, o);
        };
        run(d, o_r);
        run(s, o_s);
        if (is4(out_t)) compare4(pool, d.OutputTensor, s.OutputTensor, ctx);
        else compare(pool, d.OutputTensor, s.OutputTensor, ctx);
    }
}
}  // namespace

TEST_CASE("SIMD QUANTIZE equals the reference: FLOAT32 and FLOAT16 to INT8, UINT8, INT4 and UINT4, random layouts and blocks",
          "[simd][quantize4]") {
    for_each_case(31, 8000, [](Rng& r, std::uint64_t seed) {
        const DT q = kQuantized[r.range(0, 3)];
        if (r.chance(50))
            one_case<true, float>(r, seed, q);
        else
            one_case<true, qdml::float16>(r, seed, q);
    });
}

TEST_CASE("SIMD DEQUANTIZE equals the reference: INT8, UINT8, INT4 and UINT4 to FLOAT32 and FLOAT16, random layouts and blocks",
          "[simd][quantize4]") {
    for_each_case(37, 8000, [](Rng& r, std::uint64_t seed) {
        const DT q = kQuantized[r.range(0, 3)];
        if (r.chance(50))
            one_case<false, float>(r, seed, q);
        else
            one_case<false, qdml::float16>(r, seed, q);
    });
}

TEST_CASE("SIMD QUANTIZE and DEQUANTIZE equal the reference on large packed 4-bit and 8-bit tensors, threads",
          "[simd][quantize4]") {
    std::uint64_t k = 0;
    for (const DT q : kQuantized) {
        Rng r(case_seed(41, k));
        large_case(r, k++, false, q, {2049, 1024}, 1, 32);  // 8.4 MB of floats: streamed; blocks along the rows
        large_case(r, k++, false, q, {1025, 2047}, 0, 5);   // blocks of rows; odd rows: rows share bytes
        large_case(r, k++, true, q, {513, 1023}, 0, 1);     // per row; odd rows: one task
        large_case(r, k++, true, q, {1024, 512}, 1, 16);
        large_case(r, k++, true, q, {64, 4095}, 0, 0);      // per tensor: one odd row
    }
}
