// libFuzzer target: desc validation followed by execution on small buffers.
// The fuzzer picks an operator (QUANTIZED_LINEAR_AVERAGE_POOLING, QUANTIZE
// and DEQUANTIZE with 4-bit tensors among them), every tensor's type, sizes, strides,
// TotalTensorSizeInBytes, alignment and bound buffer size, and the
// operator's parameters. Each buffer is its own heap block of exactly
// DataSizeInBytes bytes, so AddressSanitizer reports any access validation
// should have prevented. Validation must throw qdml::Error or the run must
// complete; nothing else. The DML-struct entry (qdml/directml.hpp) must agree
// on every desc DirectML's structs can say: same verdict, same message,
// identical output bits.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/dml_structs.hpp"

namespace {

using qdml::Tensor;
using qdml::TensorDataType;

constexpr TensorDataType kTypes[] = {TensorDataType::Float32, TensorDataType::Float16, TensorDataType::UInt32,
                                     TensorDataType::UInt16,  TensorDataType::UInt8,   TensorDataType::Int32,
                                     TensorDataType::Int16,   TensorDataType::Int8,    TensorDataType::Float64,
                                     TensorDataType::UInt64,  TensorDataType::Int64,   TensorDataType::Unknown};

class Builder {
public:
    explicit Builder(FuzzedDataProvider& p) : p_(p) {}

    /// A tensor of `preferred` type most of the time, `rank` dimensions
    /// (sometimes another count), small sizes and sometimes odd strides.
    Tensor tensor(TensorDataType preferred, std::uint32_t rank, const std::vector<std::uint32_t>& like = {}) {
        qdml::TensorDesc d;
        d.DataType = p_.ConsumeIntegralInRange(0, 15) == 0 ? p_.PickValueInArray(kTypes) : preferred;
        d.DimensionCount = p_.ConsumeIntegralInRange(0, 31) == 0 ? p_.ConsumeIntegralInRange<std::uint32_t>(0, 9) : rank;
        for (std::uint32_t i = 0; i < qdml::kMaxDimensions; ++i) {
            const bool copy = i < like.size() && p_.ConsumeIntegralInRange(0, 7) != 0;
            d.Sizes[i] = copy ? like[i] : p_.ConsumeIntegralInRange<std::uint32_t>(p_.ConsumeBool() ? 1 : 0, 4);
        }
        if (p_.ConsumeBool()) {
            d.Strides.emplace();
            for (auto& s : *d.Strides) s = p_.ConsumeIntegralInRange<std::uint32_t>(0, 9);
        }
        d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
        if (p_.ConsumeIntegralInRange(0, 7) == 0) d.TotalTensorSizeInBytes += p_.ConsumeIntegralInRange<std::int64_t>(-8, 8);
        if (p_.ConsumeIntegralInRange(0, 7) == 0) d.GuaranteedBaseOffsetAlignment = p_.ConsumeIntegralInRange<std::uint32_t>(0, 32);
        std::uint64_t bytes = d.TotalTensorSizeInBytes;
        if (p_.ConsumeIntegralInRange(0, 7) == 0) bytes = p_.ConsumeIntegralInRange<std::uint64_t>(0, bytes + 8);
        if (bytes > (1u << 16)) bytes = 1u << 16;  // a smaller binding than the desc: must be rejected
        if (bytes == 0) bytes = 1;  // DataSizeInBytes 0 means "not stated" (the caller vouches), so always state it
        const std::size_t offset = p_.ConsumeIntegralInRange(0, 7) == 0 ? p_.ConsumeIntegralInRange<std::size_t>(0, 3) : 0;
        auto& buf = buffers_.emplace_back(offset + bytes);
        for (auto& b : buf) b = p_.ConsumeIntegral<std::uint8_t>();
        Tensor t{d, p_.ConsumeIntegralInRange(0, 63) == 0 ? nullptr : buf.data() + offset, bytes};
        return t;
    }
    std::optional<Tensor> maybe(TensorDataType t, std::uint32_t rank, const std::vector<std::uint32_t>& like = {}) {
        if (p_.ConsumeBool()) return std::nullopt;
        return tensor(t, rank, like);
    }
    TensorDataType q8() { return p_.ConsumeBool() ? TensorDataType::Int8 : TensorDataType::UInt8; }
    std::uint32_t rank(std::uint32_t lo, std::uint32_t hi) { return p_.ConsumeIntegralInRange(lo, hi); }
    std::vector<std::uint32_t> sizes(std::uint32_t rank) {
        std::vector<std::uint32_t> s(rank);
        for (auto& x : s) x = p_.ConsumeIntegralInRange<std::uint32_t>(1, 4);
        return s;
    }
    std::vector<std::uint32_t> ones(std::uint32_t rank) { return std::vector<std::uint32_t>(rank, 1); }
    std::uint32_t small(std::uint32_t lo, std::uint32_t hi) { return p_.ConsumeIntegralInRange(lo, hi); }
    float number() {
        switch (p_.ConsumeIntegralInRange(0, 5)) {
            case 0: return 0.0f;
            case 1: return -1e30f;
            case 2: return 1e30f;
            default: return p_.ConsumeFloatingPoint<float>();
        }
    }

private:
    FuzzedDataProvider& p_;
    std::deque<std::vector<std::uint8_t>> buffers_;
};

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const qdml::Error& e) {
        if (std::string(e.what()).empty()) std::abort();
        return e.what();
    }
    return {};
}

/// The same desc as DirectML structs (qdml/directml.hpp) must get the same
/// verdict, and the same message unless a check only the DML entry makes
/// fires first (a DimensionCount outside 1..8, a null buffer: an empty
/// binding); a valid one is computed through both entries with identical
/// bits (the DML entry into a copy of the output block, first).
/// Whether DirectML's structs can say the same desc: QUANTIZE/DEQUANTIZE's
/// QuantizationTensors are a leading list there (QuantizationTensorCount), so
/// a zero point given without a scale has no DML form (qdml rejects it).
template <class Desc>
bool dml_expressible(const Desc& d) {
    if constexpr (std::is_base_of_v<qdml::QuantizationDescBase, Desc>)
        return d.QuantizationTensors[0] || !d.QuantizationTensors[1];
    else
        return true;
}

template <class Desc>
void attempt(const Desc& d) {
    // (The verdict of the profile qdml::run and the DML entry compute by
    // default: directml's refusals included, docs/semantics.md section 10.)
    const std::string expected =
        error_of([&] { qdml::validate(d, qdml::FeatureLevel::Latest, qdml::RunOptions{}.fidelity); });
    Desc copy = d;
    const std::size_t out_bytes = d.OutputTensor.DataSizeInBytes;
    void* out_copy = nullptr;
    if (expected.empty()) {
        out_copy = ::operator new(out_bytes, std::align_val_t{64});
        std::memcpy(out_copy, d.OutputTensor.Data, out_bytes);
        copy.OutputTensor.Data = out_copy;
    }
    if (dml_expressible(d)) {
        qtest::DmlOp op(copy);
        bool dml_only = false;
        for (std::size_t i = 0; i < op.bindings.size(); ++i)
            if (const auto* b = op.buffer_desc(i))
                dml_only |= b->DimensionCount == 0 || b->DimensionCount > 8 || op.bindings[i].Data == nullptr;
        const std::string got = error_of([&] { qdml::dml::execute(op.op, op.bindings); });
        if (expected.empty() != got.empty() || (!dml_only && expected != got)) std::abort();
    }
    if (expected.empty()) {
        qdml::run(d);
        const bool same = std::memcmp(out_copy, d.OutputTensor.Data, out_bytes) == 0;
        ::operator delete(out_copy, std::align_val_t{64});
        if (!same) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider p(data, size);
    Builder b(p);
    const auto F = TensorDataType::Float32;
    const int which = p.ConsumeIntegralInRange(0, 13);
    switch (which) {
        case 0: {
            const auto r = b.rank(1, 8);
            const auto s = b.sizes(r);
            const auto in = p.ConsumeBool() ? TensorDataType::Int32 : b.q8();
            const auto out = p.ConsumeBool() ? TensorDataType::Float16 : F;
            qdml::ElementWiseDequantizeLinearDesc d{b.tensor(in, r, s), b.tensor(out, r, s), b.maybe(in, r, s),
                                                    b.tensor(out, r, s)};
            attempt(d);
            break;
        }
        case 1: {
            const auto r = b.rank(1, 8);
            const auto s = b.sizes(r);
            const auto ta = b.q8(), tb = b.q8(), to = b.q8();
            qdml::ElementWiseQuantizedLinearAddDesc d{b.tensor(ta, r, s), b.tensor(F, r, b.ones(r)), b.maybe(ta, r, b.ones(r)),
                                                      b.tensor(tb, r, s), b.tensor(F, r, b.ones(r)), b.maybe(tb, r, b.ones(r)),
                                                      b.tensor(F, r, b.ones(r)), b.maybe(to, r, b.ones(r)), b.tensor(to, r, s)};
            attempt(d);
            break;
        }
        case 2: {
            const auto r = b.rank(2, 4);
            const std::uint32_t m = b.small(1, 5), k = b.small(1, 5), n = b.small(1, 5);
            std::vector<std::uint32_t> a(r, 1), bb(r, 1), o(r, 1);
            a[r - 2] = m, a[r - 1] = k, bb[r - 2] = k, bb[r - 1] = n, o[r - 2] = m, o[r - 1] = n;
            if (r >= 3) a[r - 3] = bb[r - 3] = o[r - 3] = b.small(1, 2);
            const auto ta = b.q8(), tb = b.q8(), to = b.q8();
            qdml::QuantizedLinearMatrixMultiplyDesc d{b.tensor(ta, r, a), b.tensor(F, r, b.ones(r)), b.maybe(ta, r, b.ones(r)),
                                                      b.tensor(tb, r, bb), b.tensor(F, r, b.ones(r)), b.maybe(tb, r, b.ones(r)),
                                                      b.tensor(F, r, b.ones(r)), b.maybe(to, r, b.ones(r)), b.tensor(to, r, o)};
            attempt(d);
            break;
        }
        case 3:
        case 8: {  // QUANTIZED_LINEAR_CONVOLUTION (3) and CONVOLUTION_INTEGER (8): the same geometry
            // One spatial dimension at times (DimensionCount 1: {N, C, W}, the arrays' first entry the width's).
            const bool one_d = b.small(0, 3) == 0;
            const std::uint32_t g = b.small(1, 3), cin = g * b.small(1, 2), cout = g * b.small(1, 2);
            const std::uint32_t h = one_d ? 1 : b.small(1, 6), w = b.small(1, 6), kh = one_d ? 1 : b.small(1, 3),
                                kw = b.small(1, 3);
            std::uint32_t groups = b.small(0, 8) == 0 ? b.small(0, 4) : g;
            std::array<std::uint32_t, 2> strides{1, 1}, dilations{1, 1}, start{}, end{};
            for (int i = one_d ? 1 : 0; i < 2; ++i) {
                strides[i] = b.small(0, 3);
                dilations[i] = b.small(0, 3);
                start[i] = b.small(0, 2);
                end[i] = b.small(0, 2);
            }
            const std::uint32_t ext_h = 1 + (kh - 1) * (dilations[0] ? dilations[0] : 1);
            const std::uint32_t ext_w = 1 + (kw - 1) * (dilations[1] ? dilations[1] : 1);
            const std::uint32_t ph = h + start[0] + end[0], pw = w + start[1] + end[1];
            const std::uint32_t sh = strides[0] ? strides[0] : 1, sw = strides[1] ? strides[1] : 1;
            const std::uint32_t oh = ph >= ext_h ? 1 + (ph - ext_h) / sh : 1, ow = pw >= ext_w ? 1 + (pw - ext_w) / sw : 1;
            const auto ti = b.q8(), tf = b.q8(), to = b.q8();
            const std::uint32_t nb = b.small(1, 2);
            const std::uint32_t R = one_d ? 3 : 4;  // the main tensors' rank
            const auto shape = [&](std::vector<std::uint32_t> v) {
                if (one_d) v.erase(v.begin() + 2);
                return v;
            };
            // A per-channel parameter: {1, Cout, 1, 1}, or {1, Cout, 1} with one spatial dimension at times.
            const std::uint32_t pr = one_d && p.ConsumeBool() ? 3 : 4;
            const auto channel = [&](bool per_channel) {
                std::vector<std::uint32_t> v(pr, 1);
                v[1] = per_channel ? cout : 1;
                return v;
            };
            const auto geometry = [&](auto& d) {
                d.GroupCount = groups;
                d.DimensionCount = b.small(0, 15) == 0 ? b.small(0, 3) : R - 2;
                d.Strides = one_d ? std::array<std::uint32_t, 2>{strides[1], b.small(0, 3)} : strides;
                d.Dilations = one_d ? std::array<std::uint32_t, 2>{dilations[1], b.small(0, 3)} : dilations;
                d.StartPadding = one_d ? std::array<std::uint32_t, 2>{start[1], 0} : start;
                d.EndPadding = one_d ? std::array<std::uint32_t, 2>{end[1], 0} : end;
                d.InputTensor = b.tensor(ti, R, shape({nb, cin, h, w}));
                d.FilterTensor = b.tensor(tf, R, shape({cout, cin / g, kh, kw}));
            };
            if (which == 8) {
                qdml::ConvolutionIntegerDesc d;
                geometry(d);
                d.InputZeroPointTensor = b.maybe(ti, pr, channel(false));
                d.FilterZeroPointTensor = b.maybe(tf, pr, channel(p.ConsumeBool()));
                d.OutputTensor = b.tensor(p.ConsumeBool() ? TensorDataType::Int32 : to, R, shape({nb, cout, oh, ow}));
                attempt(d);
                break;
            }
            qdml::QuantizedLinearConvolutionDesc d;
            geometry(d);
            d.InputScaleTensor = b.tensor(F, 4, b.ones(4));
            d.InputZeroPointTensor = b.maybe(ti, 4, b.ones(4));
            d.FilterScaleTensor = b.tensor(F, pr, channel(p.ConsumeBool()));
            d.FilterZeroPointTensor = b.maybe(tf, pr, channel(p.ConsumeBool()));
            d.BiasTensor = b.maybe(TensorDataType::Int32, pr, channel(true));
            d.OutputScaleTensor = b.tensor(F, 4, b.ones(4));
            d.OutputZeroPointTensor = b.maybe(to, 4, b.ones(4));
            d.OutputTensor = b.tensor(to, R, shape({nb, cout, oh, ow}));
            attempt(d);
            break;
        }
        case 4: {  // MATRIX_MULTIPLY_INTEGER: zero points per tensor, per row / column, or of another rank
            const auto r = b.rank(2, 4);
            const std::uint32_t m = b.small(1, 5), k = b.small(1, 5), n = b.small(1, 5);
            std::vector<std::uint32_t> a(r, 1), bb(r, 1), o(r, 1);
            a[r - 2] = m, a[r - 1] = k, bb[r - 2] = k, bb[r - 1] = n, o[r - 2] = m, o[r - 1] = n;
            if (r >= 3) a[r - 3] = bb[r - 3] = o[r - 3] = b.small(1, 2);
            const auto ta = b.q8(), tb = b.q8();
            const auto zr = b.rank(1, 4);
            std::vector<std::uint32_t> az(zr, 1), bz(zr, 1);
            if (zr >= 2 && p.ConsumeBool()) az[zr - 2] = m;
            if (p.ConsumeBool()) bz[zr - 1] = n;
            qdml::MatrixMultiplyIntegerDesc d{b.tensor(ta, r, a), b.maybe(ta, zr, az), b.tensor(tb, r, bb), b.maybe(tb, zr, bz),
                                              b.tensor(p.ConsumeBool() ? TensorDataType::Int32 : b.q8(), r, o)};
            attempt(d);
            break;
        }
        case 9: {  // MATRIX_MULTIPLY_INTEGER_TO_FLOAT: any integer operands, scales and zero points of any shape
            const auto r = b.rank(2, 4);
            const std::uint32_t m = b.small(1, 5), k = b.small(1, 5), n = b.small(1, 5);
            std::vector<std::uint32_t> a(r, 1), bb(r, 1), o(r, 1);
            a[r - 2] = m, a[r - 1] = k, bb[r - 2] = k, bb[r - 1] = n, o[r - 2] = m, o[r - 1] = n;
            if (r >= 3) a[r - 3] = bb[r - 3] = o[r - 3] = b.small(1, 2);
            constexpr TensorDataType ints[] = {TensorDataType::Int8,   TensorDataType::UInt8, TensorDataType::Int16,
                                               TensorDataType::UInt16, TensorDataType::Int32, TensorDataType::UInt32};
            const auto pick = [&] { return p.ConsumeIntegralInRange(0, 7) == 0 ? p.PickValueInArray(kTypes) : p.PickValueInArray(ints); };
            const auto ta = pick(), tb = p.ConsumeBool() ? ta : pick();
            const auto tf = p.ConsumeIntegralInRange(0, 7) == 0 ? p.PickValueInArray(kTypes)
                            : p.ConsumeBool()                   ? TensorDataType::Float16
                                                                : F;
            const auto pr = b.rank(1, 4);
            std::vector<std::uint32_t> as(pr, 1), bs(pr, 1);
            if (pr >= 2 && p.ConsumeBool()) as[pr - 2] = m;
            if (p.ConsumeBool()) bs[pr - 1] = n;
            const auto zr = p.ConsumeIntegralInRange(0, 3) == 0 ? b.rank(1, 4) : pr;
            std::vector<std::uint32_t> az = zr == pr ? as : std::vector<std::uint32_t>(zr, 1);
            std::vector<std::uint32_t> bz = zr == pr ? bs : std::vector<std::uint32_t>(zr, 1);
            qdml::MatrixMultiplyIntegerToFloatDesc d{b.tensor(ta, r, a),  b.tensor(tf, pr, as), b.maybe(ta, zr, az),
                                                     b.tensor(tb, r, bb), b.tensor(tf, pr, bs), b.maybe(tb, zr, bz),
                                                     b.maybe(tf, r, o),   b.tensor(tf, r, o)};
            attempt(d);
            break;
        }
        case 5: {  // ELEMENT_WISE_QUANTIZE_LINEAR: FLOAT32/FLOAT16/INT32 in, a scale of the input's or another type
            const auto r = b.rank(1, 8);
            const auto s = b.sizes(r);
            const auto in = p.ConsumeBool() ? TensorDataType::Int32 : p.ConsumeBool() ? TensorDataType::Float16 : F;
            const auto scale = p.ConsumeBool() ? TensorDataType::Float16 : F;
            const auto out = b.q8();
            qdml::ElementWiseQuantizeLinearDesc d{b.tensor(in, r, s), b.tensor(scale, r, s), b.maybe(out, r, s),
                                                  b.tensor(out, r, s)};
            attempt(d);
            break;
        }
        case 10: {  // DYNAMIC_QUANTIZE_LINEAR: FLOAT32/FLOAT16 in, three outputs; scale and zero point mostly one element
            const auto r = b.rank(1, 8);
            const auto s = b.sizes(r);
            const std::vector<std::uint32_t> one(r, 1);
            const auto out = b.q8();
            qdml::DynamicQuantizeLinearDesc d{b.tensor(p.ConsumeBool() ? TensorDataType::Float16 : F, r, s),
                                              b.tensor(out, r, s), b.tensor(F, r, one), b.tensor(out, r, one)};
            attempt(d);
            break;
        }
        case 11: {  // QUANTIZED_LINEAR_AVERAGE_POOLING: 1-4 spatial dimensions asked, windows, strides and dilations of 0 at times
            const std::uint32_t spatial = b.small(0, 7) == 0 ? b.small(0, 4) : b.small(2, 3);
            const std::uint32_t r = spatial + 2, c = b.small(1, 3);
            qdml::QuantizedLinearAveragePoolingDesc d;
            d.DimensionCount = spatial;
            std::vector<std::uint32_t> in{b.small(1, 2), c}, out{in[0], c};
            for (std::uint32_t k = 0; k < 3; ++k) {
                d.WindowSize[k] = b.small(0, 7) == 0 ? 0 : b.small(1, 3);
                d.Strides[k] = b.small(0, 7) == 0 ? 0 : b.small(1, 3);
                d.Dilations[k] = b.small(0, 7) == 0 ? 0 : b.small(1, 2);
                d.StartPadding[k] = b.small(0, 2);
                d.EndPadding[k] = b.small(0, 2);
                if (k >= spatial) continue;
                const std::uint32_t i = b.small(1, 6), w = d.WindowSize[k] ? d.WindowSize[k] : 1;
                const std::uint32_t ext = 1 + (w - 1) * (d.Dilations[k] ? d.Dilations[k] : 1);
                const std::uint32_t padded = i + d.StartPadding[k] + d.EndPadding[k];
                in.push_back(i);
                out.push_back(padded >= ext ? 1 + (padded - ext) / (d.Strides[k] ? d.Strides[k] : 1) : 1);
            }
            d.IncludePadding = p.ConsumeBool();
            const auto t = b.q8();
            // Parameters: one element, per channel ({1,C,1,1}), or of fewer dimensions ({1,C}).
            const auto param = [&](TensorDataType pt) {
                const std::uint32_t pr = b.small(0, 3) == 0 ? b.rank(1, r) : r;
                std::vector<std::uint32_t> s(pr, 1);
                if (pr >= 2 && p.ConsumeBool()) s[1] = c;
                return b.tensor(pt, pr, s);
            };
            d.InputTensor = b.tensor(t, r, in);
            d.InputScaleTensor = param(F);
            if (p.ConsumeBool()) d.InputZeroPointTensor = param(t);
            d.OutputScaleTensor = param(F);
            if (p.ConsumeBool()) d.OutputZeroPointTensor = param(t);
            d.OutputTensor = b.tensor(t, r, out);
            attempt(d);
            break;
        }
        case 12:
        case 13: {  // QUANTIZE (12) and DEQUANTIZE (13): FLOAT32/FLOAT16 and INT8/UINT8/INT4/UINT4, blockwise parameters
            constexpr TensorDataType q[] = {TensorDataType::Int8, TensorDataType::UInt8, TensorDataType::Int4,
                                            TensorDataType::UInt4};
            const auto r = b.rank(1, 4);
            const auto s = b.sizes(r);
            const auto real = p.ConsumeBool() ? TensorDataType::Float16 : F;
            const auto qt = b.small(0, 7) == 0 ? p.PickValueInArray(kTypes) : p.PickValueInArray(q);
            std::vector<std::uint32_t> ps(r);  // per tensor, per element or blockwise along each dimension
            for (std::uint32_t k = 0; k < r; ++k) ps[k] = p.ConsumeBool() ? 1 : s[k] % 2 == 0 && p.ConsumeBool() ? s[k] / 2 : s[k];
            const std::uint32_t pr = b.small(0, 7) == 0 ? b.rank(1, 4) : r;
            const auto kind = static_cast<qdml::QuantizationType>(b.small(0, 7) == 0 ? b.small(0, 3) : b.small(1, 2));
            const bool quantize = which == 12;
            qdml::QuantizationDescBase base;
            base.InputTensor = b.tensor(quantize ? real : qt, r, s);
            base.QuantizationType = kind;
            if (b.small(0, 15) != 0) base.QuantizationTensors[0] = b.tensor(real, pr, ps);
            if (kind == qdml::QuantizationType::ScaleZeroPoint ? b.small(0, 15) != 0 : b.small(0, 15) == 0)
                base.QuantizationTensors[1] = b.tensor(qt, pr, ps);
            base.OutputTensor = b.tensor(quantize ? qt : real, r, s);
            if (quantize) {
                qdml::QuantizeDesc d;
                static_cast<qdml::QuantizationDescBase&>(d) = base;
                attempt(d);
            } else {
                qdml::DequantizeDesc d;
                static_cast<qdml::QuantizationDescBase&>(d) = base;
                attempt(d);
            }
            break;
        }
        case 6: {  // ELEMENT_WISE_CLIP1: typed bounds as any bit pattern, MinMaxDataType mostly the output's
            const auto r = b.rank(1, 8);
            const auto s = b.sizes(r);
            const auto t = p.PickValueInArray(kTypes);
            qdml::ElementWiseClip1Desc d;
            d.InputTensor = b.tensor(t, r, s);
            d.OutputTensor = p.ConsumeIntegralInRange(0, 7) == 0 ? d.InputTensor : b.tensor(t, r, s);
            if (p.ConsumeBool()) d.ScaleBias = qdml::ScaleBiasDesc{b.number(), b.number()};
            d.MinMaxDataType = p.ConsumeIntegralInRange(0, 7) == 0 ? p.PickValueInArray(kTypes) : t;
            d.Min.UInt64 = p.ConsumeIntegral<std::uint64_t>();
            d.Max.UInt64 = p.ConsumeIntegral<std::uint64_t>();
            attempt(d);
            break;
        }
        default: {
            const auto r = b.rank(1, 8);
            const auto s = b.sizes(r);
            const auto t = p.PickValueInArray(kTypes);
            qdml::ElementWiseClipDesc d;
            d.InputTensor = b.tensor(t, r, s);
            d.OutputTensor = p.ConsumeIntegralInRange(0, 7) == 0 ? d.InputTensor : b.tensor(t, r, s);
            if (p.ConsumeBool()) d.ScaleBias = qdml::ScaleBiasDesc{b.number(), b.number()};
            d.Min = b.number();
            d.Max = b.number();
            attempt(d);
            break;
        }
    }
    return 0;
}
