// libFuzzer target: the differential test of the fast paths. The fuzzer
// picks an operator (dequantize, quantized add, clip, quantize, dynamic
// quantize, matmul, integer matmul, average pooling, QUANTIZE and
// DEQUANTIZE with 4-bit tensors), its types, a
// shape of 1-8 dimensions with sizes around the vector widths, each
// operand's layout (dimension order, padding, stride-0 broadcast, base
// misalignment), in-place clip, parameters and values (extremes, NaN,
// infinities, subnormals, ties). A desc that validation rejects ends the
// input (fuzz_desc covers rejection). A valid one is computed by the
// reference, by the SIMD path (stateless run()) and by the compiled form
// (qdml::compile on the desc, executed on its own output buffer); the three
// outputs must agree byte for byte over the whole output buffer (any NaN
// equals any NaN), else the target aborts. Each buffer is an exact-size heap
// block, so AddressSanitizer reports any access outside a tensor.
// Each fast run takes an ISA cap from the input (the element-wise loops and
// the GEMM engine choose their path at run time under it). Built twice:
// fuzz_diff (the build's flags: baseline x86-64 in tools/fuzz.sh) and
// fuzz_diff_native (-march=native).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <vector>

#include "qdml/qdml.hpp"

namespace {

using qdml::Tensor;
using DT = qdml::TensorDataType;

/// The bytes of one element, 1 for the 4-bit types (handled as bytes here:
/// the two elements of a byte are compared and copied together).
std::size_t unit_size(DT t) { return std::max<std::size_t>(1, qdml::element_size(t)); }

class Builder {
public:
    explicit Builder(FuzzedDataProvider& p) : p_(p), rng_(p.ConsumeIntegral<std::uint64_t>()) {}

    std::uint32_t pick(std::uint32_t lo, std::uint32_t hi) { return p_.ConsumeIntegralInRange(lo, hi); }
    bool chance(int percent) { return p_.ConsumeIntegralInRange(0, 99) < percent; }
    FuzzedDataProvider& p() { return p_; }
    DT q8() { return p_.ConsumeBool() ? DT::Int8 : DT::UInt8; }

    /// Sizes of `rank` dimensions around the vector widths, at most ~`max_elements` in all.
    std::vector<std::uint32_t> sizes(std::uint32_t rank, std::uint64_t max_elements = 3000) {
        static constexpr std::uint32_t kSizes[] = {1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129, 1030};
        std::vector<std::uint32_t> s(rank);
        std::uint64_t n = 1;
        for (auto& v : s) {
            v = p_.PickValueInArray(kSizes);
            while (v > 1 && n * v > max_elements) v /= 2;
            n *= v;
        }
        return s;
    }

    /// Strides for `sizes`: a dimension order, padding, and (inputs) stride 0 on some dimensions.
    std::vector<std::uint32_t> strides(const std::vector<std::uint32_t>& sizes, bool may_broadcast) {
        const std::size_t n = sizes.size();
        std::vector<std::size_t> order(n);
        for (std::size_t i = 0; i < n; ++i) order[i] = i;
        if (chance(30))
            for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[pick(0, static_cast<std::uint32_t>(i - 1))]);
        const bool pad = chance(25);
        const bool broadcast = may_broadcast && chance(40);
        std::vector<std::uint32_t> st(n, 0);
        std::uint64_t acc = 1;
        for (std::size_t j = n; j-- > 0;) {
            const std::size_t d = order[j];
            if (broadcast && chance(40)) continue;  // stride 0
            st[d] = static_cast<std::uint32_t>(acc);
            acc *= sizes[d] + (pad ? pick(0, 2) : 0u);
        }
        return st;
    }

    /// A tensor with its own exact-size heap block (placed `misalign` elements
    /// into it), every element of the block filled.
    Tensor tensor(DT type, const std::vector<std::uint32_t>& sizes, const std::vector<std::uint32_t>& strides) {
        const auto d = qdml::TensorDesc::make(type, sizes, strides);
        const std::size_t es = unit_size(type);
        const std::size_t misalign = chance(20) ? pick(1, 3) : 0;
        auto& block = blocks_.emplace_back(misalign * es + d.TotalTensorSizeInBytes);
        std::uint8_t* data = block.data() + misalign * es;
        fill(type, data, d.TotalTensorSizeInBytes / es);
        return Tensor{d, data, d.TotalTensorSizeInBytes};
    }
    Tensor tensor(DT type, const std::vector<std::uint32_t>& sizes, bool may_broadcast) {
        return tensor(type, sizes, strides(sizes, may_broadcast));
    }
    Tensor one(DT type, std::uint32_t rank) { return tensor(type, std::vector<std::uint32_t>(rank, 1), {}); }
    qdml::OptionalTensor maybe_one(DT type, std::uint32_t rank) {
        if (chance(25)) return std::nullopt;
        return one(type, rank);
    }

    /// A new exact-size block holding a copy of `t`'s bytes, at the same misalignment.
    Tensor copy(const Tensor& t) {
        const std::size_t es = unit_size(t.Desc.DataType);
        const std::size_t misalign = (reinterpret_cast<std::uintptr_t>(t.Data) / es) % 4;
        auto& block = blocks_.emplace_back(misalign * es + t.Desc.TotalTensorSizeInBytes);
        std::memcpy(block.data() + misalign * es, t.Data, t.Desc.TotalTensorSizeInBytes);
        return Tensor{t.Desc, block.data() + misalign * es, t.Desc.TotalTensorSizeInBytes};
    }

    /// A clip bound (never NaN: validation rejects it).
    float bound() {
        static constexpr float kBounds[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 127.0f, -128.0f, 255.0f, 1.5f, 2.5f,
                                            32767.5f, -32768.0f, 65535.0f, 1e10f, -1e10f, 3e38f, 1.00048828125f};
        if (chance(10)) return std::numeric_limits<float>::infinity() * (p_.ConsumeBool() ? 1.0f : -1.0f);
        if (chance(60)) return p_.PickValueInArray(kBounds);
        const float v = p_.ConsumeFloatingPoint<float>();
        return std::isnan(v) ? 0.0f : v;
    }
    /// A CLIP1 bound of type t: any bit pattern (NaN included), or a clip
    /// bound converted to t.
    qdml::ScalarUnion typed_bound(DT t) {
        qdml::ScalarUnion u{};
        if (chance(25)) {
            u.UInt64 = p_.ConsumeIntegral<std::uint64_t>();
            return u;
        }
        const float v = bound();
        qdml::visit_data_type(t, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same_v<T, qdml::float16>)
                u = qdml::scalar_union(qdml::float16(v));
            else if constexpr (std::is_floating_point_v<T>)
                u = qdml::scalar_union(v);
            else
                u = qdml::scalar_union(qdml::truncate_saturate<T>(v));
        });
        return u;
    }
    /// A scale: a power of two or a small multiple (ties), or any value.
    float scale() {
        if (chance(70)) return std::ldexp(1.0f, static_cast<int>(pick(0, 12)) - 8) * static_cast<float>(pick(1, 5));
        return special_float();
    }
    void set_float(const Tensor& t, float v) { std::memcpy(t.Data, &v, sizeof v); }
    /// Every element of a FLOAT32 or FLOAT16 tensor's block set to scale().
    void set_scales(const Tensor& t) {
        const auto count = t.Desc.TotalTensorSizeInBytes / unit_size(t.Desc.DataType);
        for (std::uint64_t i = 0; i < count; ++i) {
            const float v = scale();
            if (t.Desc.DataType == DT::Float16) {
                const std::uint16_t h = qdml::float16(v).bits;
                std::memcpy(static_cast<std::uint16_t*>(t.Data) + i, &h, sizeof h);
            } else {
                std::memcpy(static_cast<float*>(t.Data) + i, &v, sizeof v);
            }
        }
    }

private:
    float special_float() {
        switch (rng_() % 12) {
            case 0: return std::numeric_limits<float>::quiet_NaN();
            case 1: return std::numeric_limits<float>::infinity();
            case 2: return -std::numeric_limits<float>::infinity();
            case 3: return std::numeric_limits<float>::denorm_min() * static_cast<float>(rng_() % 1000 + 1);
            case 4: return -0.0f;
            case 5: return (static_cast<float>(static_cast<int>(rng_() % 257) - 128) + 0.5f);
            case 6: {
                const auto b = static_cast<std::uint32_t>(rng_());
                float f;
                std::memcpy(&f, &b, sizeof f);
                return f;
            }
            default: return static_cast<float>(static_cast<std::int64_t>(rng_() % 2000001) - 1000000) / 1000.0f;
        }
    }

    void fill(DT type, std::uint8_t* data, std::uint64_t n) {
        const std::size_t es = unit_size(type);
        const bool is_float = type == DT::Float32 || type == DT::Float16;
        for (std::uint64_t i = 0; i < n; ++i) {
            std::uint64_t bits = rng_();
            if (is_float && bits % 4 == 0) {
                const float f = special_float();
                if (type == DT::Float32) {
                    std::memcpy(data + i * es, &f, 4);
                } else {
                    const std::uint16_t h = qdml::float16(f).bits;
                    std::memcpy(data + i * es, &h, 2);
                }
                continue;
            }
            if (!is_float && bits % 5 == 0) bits = (bits >> 8) % 2 ? ~std::uint64_t{0} >> 1 : std::uint64_t{1} << 63;  // extremes
            if (!is_float && bits % 7 == 0) bits = bits >> 60;  // small
            std::memcpy(data + i * es, &bits, es);
        }
        // The fuzzer steers the first bytes directly.
        const std::size_t steer = std::min<std::size_t>(static_cast<std::size_t>(n * es), pick(0, 16));
        for (std::size_t i = 0; i < steer; ++i) data[i] = p_.ConsumeIntegral<std::uint8_t>();
    }

    FuzzedDataProvider& p_;
    std::mt19937_64 rng_;
    std::deque<std::vector<std::uint8_t>> blocks_;
};

bool is_nan_at(DT t, const std::uint8_t* p) {
    if (t == DT::Float32) {
        float f;
        std::memcpy(&f, p, 4);
        return std::isnan(f);
    }
    if (t == DT::Float16) {
        std::uint16_t h;
        std::memcpy(&h, p, 2);
        return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    }
    return false;
}

/// Aborts unless the two output buffers agree on every byte (NaN = NaN).
void require_same(const Tensor& ref, const Tensor& got, const char* what) {
    const std::size_t es = unit_size(ref.Desc.DataType);
    const auto* r = static_cast<const std::uint8_t*>(ref.Data);
    const auto* g = static_cast<const std::uint8_t*>(got.Data);
    for (std::size_t i = 0; i < ref.Desc.TotalTensorSizeInBytes; i += es) {
        if (std::memcmp(r + i, g + i, es) == 0 || (is_nan_at(ref.Desc.DataType, r + i) && is_nan_at(ref.Desc.DataType, g + i)))
            continue;
        std::fprintf(stderr, "fuzz_diff: %s differs from the reference at output element offset %zu\n", what,
                     i / es);
        std::abort();
    }
}

/// Computes `d` (the reference's output), a copy through run() with the SIMD
/// path and a copy through the compiled form, each into its own copy of the
/// output block (an in-place clip: its input too); compares.
template <class Desc>
void differential(Builder& b, const Desc& d, qdml::Fidelity f = qdml::RunOptions{}.fidelity) {
    try {  // (in profile f, the one every run below computes: its refusals included)
        qdml::validate(d, qdml::FeatureLevel::Latest, f);
    } catch (const qdml::Error&) {
        return;
    }
    Desc s = d, c = d;
    s.OutputTensor = b.copy(d.OutputTensor);
    c.OutputTensor = b.copy(d.OutputTensor);
    if constexpr (std::is_same_v<Desc, qdml::ElementWiseClipDesc> || std::is_same_v<Desc, qdml::ElementWiseClip1Desc>)
        if (d.InputTensor.Data == d.OutputTensor.Data) s.InputTensor = s.OutputTensor, c.InputTensor = c.OutputTensor;
    constexpr bool kDynamic = std::is_same_v<Desc, qdml::DynamicQuantizeLinearDesc>;
    if constexpr (kDynamic)  // its other two outputs
        for (Desc* x : {&s, &c}) {
            x->OutputScaleTensor = b.copy(d.OutputScaleTensor);
            x->OutputZeroPointTensor = b.copy(d.OutputZeroPointTensor);
        }
    // Each of the two fast runs on an ISA cap the input picks (every path the
    // CPU runs is reachable: a cap above the CPU's best selects its best).
    const auto cap = [&] { return qdml::RunOptions{qdml::Implementation::Simd, qdml::FeatureLevel::Latest,
                                                   b.p().PickValueInArray(qdml::simd::kAllIsas), f}; };
    const auto compiled = qdml::compile(d, cap());
    qdml::run(d, {qdml::Implementation::Reference, qdml::FeatureLevel::Latest, qdml::simd::Isa::Best, f});
    qdml::run(s, cap());
    compiled.execute(c);
    require_same(d.OutputTensor, s.OutputTensor, "the SIMD path (run)");
    require_same(d.OutputTensor, c.OutputTensor, "the compiled form (compile, execute)");
    if constexpr (kDynamic) {
        require_same(d.OutputScaleTensor, s.OutputScaleTensor, "OutputScaleTensor of the SIMD path (run)");
        require_same(d.OutputScaleTensor, c.OutputScaleTensor, "OutputScaleTensor of the compiled form");
        require_same(d.OutputZeroPointTensor, s.OutputZeroPointTensor, "OutputZeroPointTensor of the SIMD path (run)");
        require_same(d.OutputZeroPointTensor, c.OutputZeroPointTensor, "OutputZeroPointTensor of the compiled form");
    }
}

constexpr DT kDequantizeInputs[] = {DT::Int8, DT::UInt8, DT::Int16, DT::UInt16, DT::Int32, DT::UInt32};
constexpr DT kQuantizeInputs[] = {DT::Float32, DT::Float16, DT::Int32};
constexpr DT kClipTypes[] = {DT::Float32, DT::Float16, DT::Int8,   DT::UInt8, DT::Int16,
                             DT::UInt16,  DT::Int32,   DT::UInt32, DT::Int64, DT::UInt64};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider p(data, size);
    Builder b(p);
    const int which = p.ConsumeIntegralInRange(0, 11);
    switch (which) {
        case 0: {
            const auto rank = b.pick(1, 8);
            const auto s = b.sizes(rank);
            const DT in = p.PickValueInArray(kDequantizeInputs);
            const DT out = p.ConsumeBool() ? DT::Float16 : DT::Float32;
            qdml::ElementWiseDequantizeLinearDesc d;
            d.InputTensor = b.tensor(in, s, true);
            d.ScaleTensor = b.tensor(out, s, true);
            if (b.chance(75)) d.ZeroPointTensor = b.tensor(in, s, true);
            d.OutputTensor = b.tensor(out, s, false);
            differential(b, d);
            break;
        }
        case 1: {
            const auto rank = b.pick(1, 8);
            const auto s = b.sizes(rank);
            const DT ta = b.q8(), tb = b.q8(), to = b.q8();
            qdml::ElementWiseQuantizedLinearAddDesc d;
            d.ATensor = b.tensor(ta, s, true);
            d.BTensor = b.tensor(tb, s, true);
            d.AScaleTensor = b.one(DT::Float32, rank);
            d.BScaleTensor = b.one(DT::Float32, rank);
            d.OutputScaleTensor = b.one(DT::Float32, rank);
            for (auto* t : {&d.AScaleTensor, &d.BScaleTensor, &d.OutputScaleTensor}) b.set_float(*t, b.scale());
            d.AZeroPointTensor = b.maybe_one(ta, rank);
            d.BZeroPointTensor = b.maybe_one(tb, rank);
            d.OutputZeroPointTensor = b.maybe_one(to, rank);
            d.OutputTensor = b.tensor(to, s, false);
            differential(b, d);
            break;
        }
        case 2: {
            const auto rank = b.pick(1, 8);
            const auto s = b.sizes(rank);
            const DT t = p.PickValueInArray(kClipTypes);
            qdml::ElementWiseClipDesc d;
            const bool in_place = b.chance(20);
            d.InputTensor = b.tensor(t, s, !in_place);
            d.OutputTensor = in_place ? d.InputTensor : b.tensor(t, s, false);
            d.Min = b.bound();
            d.Max = b.chance(10) ? d.Min : b.bound();
            if (b.chance(50)) d.ScaleBias = qdml::ScaleBiasDesc{b.chance(50) ? b.bound() : b.scale(), b.bound()};
            differential(b, d);
            break;
        }
        case 6: {  // ELEMENT_WISE_CLIP1: typed bounds (any bit pattern at times), ScaleBias (1, 0) at times
            const auto rank = b.pick(1, 8);
            const auto s = b.sizes(rank);
            const DT t = p.PickValueInArray(kClipTypes);
            qdml::ElementWiseClip1Desc d;
            const bool in_place = b.chance(20);
            d.InputTensor = b.tensor(t, s, !in_place);
            d.OutputTensor = in_place ? d.InputTensor : b.tensor(t, s, false);
            d.MinMaxDataType = t;
            d.Min = b.typed_bound(t);
            d.Max = b.chance(10) ? d.Min : b.typed_bound(t);
            if (b.chance(10)) d.ScaleBias = qdml::ScaleBiasDesc{1.0f, b.chance(50) ? 0.0f : -0.0f};
            else if (b.chance(40)) d.ScaleBias = qdml::ScaleBiasDesc{b.chance(50) ? b.bound() : b.scale(), b.bound()};
            differential(b, d);
            break;
        }
        case 7: {  // MATRIX_MULTIPLY_INTEGER_TO_FLOAT, both profiles: 8-bit (the engine) or wider operands
            const auto rank = b.pick(2, 4);
            const std::uint32_t m = b.pick(1, 30), k = b.pick(1, 70), n = b.pick(1, 30);
            std::vector<std::uint32_t> sa(rank, 1), sb(rank, 1), so(rank, 1);
            sa[rank - 2] = m, sa[rank - 1] = k, sb[rank - 2] = k, sb[rank - 1] = n, so[rank - 2] = m, so[rank - 1] = n;
            for (std::uint32_t i = 0; i + 2 < rank; ++i) sa[i] = sb[i] = so[i] = b.pick(1, 3);
            const DT ta = b.chance(70) ? b.q8() : p.PickValueInArray(kDequantizeInputs);
            const DT tb = b.chance(70) ? b.q8() : p.PickValueInArray(kDequantizeInputs);
            const DT tf = b.chance(25) ? DT::Float16 : DT::Float32;
            std::vector<std::uint32_t> row(rank, 1), col(rank, 1);
            row[rank - 2] = m;
            col[rank - 1] = n;
            const bool a_rows = b.chance(40), b_cols = b.chance(40);
            qdml::MatrixMultiplyIntegerToFloatDesc d;
            d.ATensor = b.tensor(ta, sa, true);
            d.BTensor = b.tensor(tb, sb, true);
            d.AScaleTensor = b.tensor(tf, a_rows ? row : std::vector<std::uint32_t>(rank, 1), true);
            d.BScaleTensor = b.tensor(tf, b_cols ? col : std::vector<std::uint32_t>(rank, 1), true);
            if (b.chance(75)) d.AZeroPointTensor = b.tensor(ta, a_rows ? row : std::vector<std::uint32_t>(rank, 1), {});
            if (b.chance(75)) d.BZeroPointTensor = b.tensor(tb, b_cols ? col : std::vector<std::uint32_t>(rank, 1), {});
            if (b.chance(60)) d.BiasTensor = b.tensor(tf, so, true);
            d.OutputTensor = b.tensor(tf, so, false);
            differential(b, d, qdml::Fidelity::Exact);
            differential(b, d, qdml::Fidelity::DirectML);
            break;
        }
        case 8: {  // DYNAMIC_QUANTIZE_LINEAR, both profiles: FLOAT32/FLOAT16 in any layout, three outputs
            const auto rank = b.pick(1, 8);
            const auto s = b.sizes(rank);
            const DT out = b.q8();
            qdml::DynamicQuantizeLinearDesc d;
            d.InputTensor = b.tensor(b.chance(50) ? DT::Float16 : DT::Float32, s, true);
            d.OutputTensor = b.tensor(out, s, false);
            d.OutputScaleTensor = b.one(DT::Float32, rank);
            d.OutputZeroPointTensor = b.one(out, rank);
            differential(b, d, qdml::Fidelity::Exact);
            differential(b, d, qdml::Fidelity::DirectML);
            break;
        }
        case 9: {  // QUANTIZED_LINEAR_AVERAGE_POOLING, both profiles: NHWC (channels as lanes), NCHW (columns), any layout
            static constexpr std::uint32_t kChannels[] = {1, 2, 3, 7, 8, 9, 16, 17, 31, 32, 33, 64, 65};
            const std::uint32_t spatial = b.pick(2, 3), C = p.PickValueInArray(kChannels);
            std::vector<std::uint32_t> in{b.pick(1, 2), C}, out{in[0], C};
            qdml::QuantizedLinearAveragePoolingDesc d;
            d.DimensionCount = spatial;
            for (std::uint32_t k = 0; k < spatial; ++k) {
                const std::uint32_t i = b.pick(1, spatial == 3 ? 6 : 20), dil = b.chance(25) ? b.pick(2, 3) : 1;
                d.Strides[k] = b.chance(40) ? b.pick(2, 3) : 1;
                d.StartPadding[k] = b.pick(0, 3);
                d.EndPadding[k] = b.pick(0, 3);
                std::uint32_t w = b.pick(1, 4);
                if (1 + (w - 1) * dil > i + d.StartPadding[k] + d.EndPadding[k]) w = 1;
                d.WindowSize[k] = w;
                d.Dilations[k] = dil;
                in.push_back(i);
                out.push_back(1 + (i + d.StartPadding[k] + d.EndPadding[k] - (1 + (w - 1) * dil)) / d.Strides[k]);
            }
            d.IncludePadding = p.ConsumeBool();
            const auto nhwc = [](const std::vector<std::uint32_t>& sz) {  // channels innermost
                std::vector<std::uint32_t> st(sz.size());
                std::uint32_t acc = sz[1];
                st[1] = 1;
                for (std::size_t k = sz.size(); k-- > 2;) st[k] = acc, acc *= sz[k];
                st[0] = acc;
                return st;
            };
            const int in_form = b.pick(0, 2), out_form = b.chance(70) ? in_form : b.pick(0, 2);  // 0 nchw, 1 nhwc, 2 any
            const DT t = b.q8();
            d.InputTensor = b.tensor(t, in, in_form == 1 ? nhwc(in) : in_form == 2 ? b.strides(in, true) : std::vector<std::uint32_t>{});
            d.OutputTensor = b.tensor(t, out, out_form == 1 ? nhwc(out) : out_form == 2 ? b.strides(out, false) : std::vector<std::uint32_t>{});
            const auto param = [&](DT pt) {  // one element or per channel
                std::vector<std::uint32_t> s(spatial + 2, 1);
                if (b.chance(50)) s[1] = C;
                return b.tensor(pt, s, std::vector<std::uint32_t>{});
            };
            d.InputScaleTensor = param(DT::Float32);
            d.OutputScaleTensor = param(DT::Float32);
            for (const Tensor* s : {&d.InputScaleTensor, &d.OutputScaleTensor}) b.set_scales(*s);
            if (b.chance(75)) d.InputZeroPointTensor = param(t);
            if (b.chance(75)) d.OutputZeroPointTensor = param(t);
            differential(b, d, qdml::Fidelity::Exact);
            differential(b, d, qdml::Fidelity::DirectML);
            break;
        }
        case 10:
        case 11: {  // QUANTIZE (10) and DEQUANTIZE (11): INT8/UINT8/INT4/UINT4, per tensor, per element or blockwise
            constexpr DT kQ[] = {DT::Int8, DT::UInt8, DT::Int4, DT::UInt4};
            const auto rank = b.pick(1, 6);
            const auto s = b.sizes(rank);
            const DT real = b.chance(30) ? DT::Float16 : DT::Float32, q = p.PickValueInArray(kQ);
            std::vector<std::uint32_t> ps(rank);
            for (std::uint32_t k = 0; k < rank; ++k) {
                const std::uint32_t v = s[k];
                ps[k] = b.chance(40) ? 1 : b.chance(50) || v == 1 ? v : v % 2 == 0 ? v / 2 : v % 3 == 0 ? v / 3 : v;
            }
            const bool zero_point = b.chance(70);
            qdml::QuantizationDescBase base;
            base.QuantizationType = zero_point ? qdml::QuantizationType::ScaleZeroPoint : qdml::QuantizationType::Scale;
            base.QuantizationTensors[0] = b.tensor(real, ps, true);
            b.set_scales(*base.QuantizationTensors[0]);
            if (zero_point) base.QuantizationTensors[1] = b.tensor(q, ps, true);
            if (which == 10) {
                qdml::QuantizeDesc d;
                static_cast<qdml::QuantizationDescBase&>(d) = base;
                d.InputTensor = b.tensor(real, s, true);
                d.OutputTensor = b.tensor(q, s, false);
                differential(b, d);
            } else {
                qdml::DequantizeDesc d;
                static_cast<qdml::QuantizationDescBase&>(d) = base;
                d.InputTensor = b.tensor(q, s, true);
                d.OutputTensor = b.tensor(real, s, false);
                differential(b, d);
            }
            break;
        }
        case 3: {  // ELEMENT_WISE_QUANTIZE_LINEAR: random scales and zero points, per element or broadcast
            const auto rank = b.pick(1, 8);
            const auto s = b.sizes(rank);
            const DT in = p.PickValueInArray(kQuantizeInputs);
            const DT out = b.q8();
            qdml::ElementWiseQuantizeLinearDesc d;
            d.InputTensor = b.tensor(in, s, true);
            d.ScaleTensor = b.tensor(in == DT::Float16 ? DT::Float16 : DT::Float32, s, true);
            if (b.chance(75)) d.ZeroPointTensor = b.tensor(out, s, true);
            d.OutputTensor = b.tensor(out, s, false);
            differential(b, d);
            break;
        }
        default: {  // matmuls through the GEMM engine: 2-4 dimensions, per-tensor/row/column parameters
            // (4: QUANTIZED_LINEAR_MATRIX_MULTIPLY; 5: MATRIX_MULTIPLY_INTEGER, the engine's int32 store)
            const auto rank = b.pick(2, 4);
            const std::uint32_t m = b.pick(1, 40), k = b.pick(1, 70), n = b.pick(1, 40);
            std::vector<std::uint32_t> sa(rank, 1), sb(rank, 1), so(rank, 1);
            sa[rank - 2] = m, sa[rank - 1] = k, sb[rank - 2] = k, sb[rank - 1] = n, so[rank - 2] = m, so[rank - 1] = n;
            for (std::uint32_t i = 0; i + 2 < rank; ++i) sa[i] = sb[i] = so[i] = b.pick(1, 3);
            const DT ta = b.q8(), tb = b.q8(), to = b.q8();
            std::vector<std::uint32_t> row(rank, 1), col(rank, 1);
            row[rank - 2] = m;
            col[rank - 1] = n;
            const auto param = [&](DT t, bool per_row, bool per_col) {
                return b.tensor(t, per_row ? row : per_col ? col : std::vector<std::uint32_t>(rank, 1), {});
            };
            const bool a_rows = b.chance(30), b_cols = b.chance(30), o_rows = b.chance(20);
            if (which == 5) {
                qdml::MatrixMultiplyIntegerDesc d;
                d.ATensor = b.tensor(ta, sa, true);
                d.BTensor = b.tensor(tb, sb, true);
                if (b.chance(75)) d.AZeroPointTensor = param(ta, a_rows, false);
                if (b.chance(75)) d.BZeroPointTensor = param(tb, false, b_cols);
                d.OutputTensor = b.tensor(DT::Int32, so, false);
                differential(b, d);
                break;
            }
            qdml::QuantizedLinearMatrixMultiplyDesc d;
            d.ATensor = b.tensor(ta, sa, true);
            d.BTensor = b.tensor(tb, sb, true);
            if (b.chance(30)) d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;  // compiled: packed once
            d.AScaleTensor = param(DT::Float32, a_rows, false);
            d.BScaleTensor = param(DT::Float32, false, b_cols);
            d.OutputScaleTensor = param(DT::Float32, o_rows, false);
            for (auto* t : {&d.AScaleTensor, &d.BScaleTensor, &d.OutputScaleTensor}) {
                const auto count = *qdml::min_buffer_elements(t->Desc);
                for (std::uint64_t i = 0; i < count; ++i) {
                    const float v = b.scale();
                    std::memcpy(static_cast<float*>(t->Data) + i, &v, sizeof v);
                }
            }
            if (b.chance(75)) d.AZeroPointTensor = param(ta, a_rows, false);
            if (b.chance(75)) d.BZeroPointTensor = param(tb, false, b_cols);
            if (b.chance(75)) d.OutputZeroPointTensor = param(to, o_rows, false);
            d.OutputTensor = b.tensor(to, so, false);
            differential(b, d);
            break;
        }
    }
    return 0;
}
