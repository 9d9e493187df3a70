// Every data type combination DirectML lists for each operator, through the
// runtime entry (qdml::run: validate, then one dispatch) and, for the same
// desc, the typed entry (visit_typed + the reference), with expectations
// derived by hand from docs/semantics.md on values every type can hold. Catches a
// combination the dispatch forgets or sends to the wrong instantiation.
#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <vector>

#include "qdml/qdml.hpp"

namespace {

using qdml::Tensor;
using qdml::TensorDataType;
using qdml::TensorDesc;

/// Owns typed buffers; each tensor gets its own vector.
struct Buffers {
    std::deque<std::vector<std::uint64_t>> storage;

    template <class T>
    Tensor make(std::initializer_list<std::uint32_t> sizes, const std::vector<T>& values,
                std::initializer_list<std::uint32_t> strides = {}) {
        const TensorDesc d = TensorDesc::make(qdml::data_type_of<T>, sizes, strides);
        auto& s = storage.emplace_back((d.TotalTensorSizeInBytes + 7) / 8, 0);
        REQUIRE(values.size() * sizeof(T) <= d.TotalTensorSizeInBytes);
        std::memcpy(s.data(), values.data(), values.size() * sizeof(T));
        return Tensor{d, s.data(), s.size() * 8};
    }
    template <class T>
    Tensor output(std::initializer_list<std::uint32_t> sizes) {
        const TensorDesc d = TensorDesc::make(qdml::data_type_of<T>, sizes);
        auto& s = storage.emplace_back((d.TotalTensorSizeInBytes + 7) / 8, 0);
        return Tensor{d, s.data(), s.size() * 8};
    }
};

template <class T>
std::vector<T> read(const Tensor& t, std::size_t n) {
    std::vector<T> v(n);
    std::memcpy(v.data(), t.Data, n * sizeof(T));
    return v;
}

template <class T>
T val(double v) {
    if constexpr (std::is_same_v<T, qdml::float16>) return qdml::float16(static_cast<float>(v));
    else return static_cast<T>(v);
}

template <class T>
double as_double(T v) {
    if constexpr (std::is_same_v<T, qdml::float16>) return static_cast<float>(v);
    else return static_cast<double>(v);
}

/// Runs `d` through the runtime entry, then through the typed entry into a
/// second output buffer, and checks both outputs are equal.
template <class Desc, class Ref>
std::vector<std::uint8_t> run_both(Desc d, std::size_t out_bytes, Ref&& reference) {
    qdml::run(d);
    const auto* p = static_cast<const std::uint8_t*>(d.OutputTensor.Data);
    std::vector<std::uint8_t> first(p, p + out_bytes);
    std::vector<std::uint64_t> second_buf((d.OutputTensor.Desc.TotalTensorSizeInBytes + 7) / 8, 0);
    d.OutputTensor.Data = second_buf.data();
    qdml::validate(d);
    qdml::visit_typed(d, reference);
    const auto* q = reinterpret_cast<const std::uint8_t*>(second_buf.data());
    CHECK(std::vector<std::uint8_t>(q, q + out_bytes) == first);
    return first;
}

template <class... Ts>
struct TypeList {};

template <class... Ts, class F>
void for_each_type(TypeList<Ts...>, F&& f) {
    (f(Ts{}), ...);
}

using Q8 = TypeList<std::int8_t, std::uint8_t>;

}  // namespace

TEST_CASE("dispatch: dequantize, every input x output type and every rank", "[dispatch]") {
    // (7 - 3) * 0.5 = 2, (5 - 3) * 0.5 = 1 for every type; per-tensor scale and
    // zero point broadcast through zero strides.
    for_each_type(TypeList<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t>{},
                  [](auto in) {
        using TIn = decltype(in);
        for_each_type(TypeList<float, qdml::float16>{}, [](auto out) {
            using TOut = decltype(out);
            for (std::uint32_t rank = 1; rank <= 8; ++rank) {
                INFO(qdml::name(qdml::data_type_of<TIn>) << " -> " << qdml::name(qdml::data_type_of<TOut>) << ", rank " << rank);
                Buffers b;
                qdml::ElementWiseDequantizeLinearDesc d;
                auto shaped = [&](auto t, std::uint32_t last, bool broadcast) {
                    TensorDesc& x = t.Desc;
                    x.DimensionCount = rank;
                    x.Sizes.fill(1);
                    x.Sizes[rank - 1] = last;
                    x.Strides.emplace();
                    x.Strides->fill(broadcast ? 0 : 1);
                    x.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(x).value_or(0);
                    return t;
                };
                d.InputTensor = shaped(b.make<TIn>({2}, {val<TIn>(7), val<TIn>(5)}), 2, false);
                d.ScaleTensor = shaped(b.make<TOut>({1}, {val<TOut>(0.5)}), 2, true);
                d.ZeroPointTensor = shaped(b.make<TIn>({1}, {val<TIn>(3)}), 2, true);
                d.OutputTensor = shaped(b.output<TOut>({2}), 2, false);
                const auto bytes = run_both(d, 2 * sizeof(TOut),
                                            [](const auto& op) { qdml::reference::element_wise_dequantize_linear(op); });
                TOut r[2];
                std::memcpy(r, bytes.data(), sizeof r);
                CHECK(as_double(r[0]) == 2.0);
                CHECK(as_double(r[1]) == 1.0);
            }
        });
    });
}

TEST_CASE("dispatch: quantized add, every A x B x Output type", "[dispatch]") {
    // (6 - 2) * 0.5 + (9 - 1) * 0.25 = 4, / 0.5 = 8, + OutputZP 3 = 11.
    for_each_type(Q8{}, [](auto a) {
        for_each_type(Q8{}, [&](auto bt) {
            for_each_type(Q8{}, [&](auto o) {
                using TA = decltype(a);
                using TB = decltype(bt);
                using TO = decltype(o);
                Buffers b;
                qdml::ElementWiseQuantizedLinearAddDesc d;
                d.ATensor = b.make<TA>({1, 1}, {6});
                d.AScaleTensor = b.make<float>({1, 1}, {0.5f});
                d.AZeroPointTensor = b.make<TA>({1, 1}, {2});
                d.BTensor = b.make<TB>({1, 1}, {9});
                d.BScaleTensor = b.make<float>({1, 1}, {0.25f});
                d.BZeroPointTensor = b.make<TB>({1, 1}, {1});
                d.OutputScaleTensor = b.make<float>({1, 1}, {0.5f});
                d.OutputZeroPointTensor = b.make<TO>({1, 1}, {3});
                d.OutputTensor = b.output<TO>({1, 1});
                const auto r = run_both(d, 1, [](const auto& op) { qdml::reference::element_wise_quantized_linear_add(op); });
                CHECK(static_cast<TO>(r[0]) == 11);
            });
        });
    });
}

TEST_CASE("dispatch: matmul and convolution, every A/Input x B/Filter x Output type", "[dispatch]") {
    // matmul: [5 4] x [[3] [2]] with zero points 1 and 1: (4*2 + 3*1) = 11;
    // scales 0.5 * 0.5 / 0.25 = 1 -> 11, + OutputZP 2 = 13.
    // conv: 1x1x1x2 input [5 4], filter 1x1x1x2 [3 2] with zero points 1 and 1,
    // no padding: the same sum 11 plus Bias 4 = 15, + 2 = 17.
    for_each_type(Q8{}, [](auto a) {
        for_each_type(Q8{}, [&](auto bt) {
            for_each_type(Q8{}, [&](auto o) {
                using TA = decltype(a);
                using TB = decltype(bt);
                using TO = decltype(o);
                INFO(qdml::name(qdml::data_type_of<TA>) << " x " << qdml::name(qdml::data_type_of<TB>) << " -> "
                                                        << qdml::name(qdml::data_type_of<TO>));
                Buffers b;
                qdml::QuantizedLinearMatrixMultiplyDesc m;
                m.ATensor = b.make<TA>({1, 2}, {5, 4});
                m.AScaleTensor = b.make<float>({1, 1}, {0.5f});
                m.AZeroPointTensor = b.make<TA>({1, 1}, {1});
                m.BTensor = b.make<TB>({2, 1}, {3, 2});
                m.BScaleTensor = b.make<float>({1, 1}, {0.5f});
                m.BZeroPointTensor = b.make<TB>({1, 1}, {1});
                m.OutputScaleTensor = b.make<float>({1, 1}, {0.25f});
                m.OutputZeroPointTensor = b.make<TO>({1, 1}, {2});
                m.OutputTensor = b.output<TO>({1, 1});
                const auto r = run_both(m, 1, [](const auto& op) { qdml::reference::quantized_linear_matrix_multiply(op); });
                CHECK(static_cast<TO>(r[0]) == 13);

                qdml::QuantizedLinearConvolutionDesc c;
                c.InputTensor = b.make<TA>({1, 1, 1, 2}, {5, 4});
                c.InputScaleTensor = b.make<float>({1, 1, 1, 1}, {0.5f});
                c.InputZeroPointTensor = b.make<TA>({1, 1, 1, 1}, {1});
                c.FilterTensor = b.make<TB>({1, 1, 1, 2}, {3, 2});
                c.FilterScaleTensor = b.make<float>({1, 1, 1, 1}, {0.5f});
                c.FilterZeroPointTensor = b.make<TB>({1, 1, 1, 1}, {1});
                c.BiasTensor = b.make<std::int32_t>({1, 1, 1, 1}, {4});
                c.OutputScaleTensor = b.make<float>({1, 1, 1, 1}, {0.25f});
                c.OutputZeroPointTensor = b.make<TO>({1, 1, 1, 1}, {2});
                c.OutputTensor = b.output<TO>({1, 1, 1, 1});
                const auto rc = run_both(c, 1, [](const auto& op) { qdml::reference::quantized_linear_convolution(op); });
                CHECK(static_cast<TO>(rc[0]) == 17);
            });
        });
    });
}

TEST_CASE("dispatch: clip, every data type and every rank", "[dispatch]") {
    // [1, 50, 100] clipped to [10, 60] -> [10, 50, 60] for every type.
    for_each_type(TypeList<float, qdml::float16, std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t,
                           std::uint32_t, std::int64_t, std::uint64_t>{},
                  [](auto t) {
        using T = decltype(t);
        for (std::uint32_t rank = 1; rank <= 8; ++rank) {
            INFO(qdml::name(qdml::data_type_of<T>) << ", rank " << rank);
            Buffers b;
            qdml::ElementWiseClipDesc d;
            d.InputTensor = b.make<T>({3}, {val<T>(1), val<T>(50), val<T>(100)});
            d.OutputTensor = b.output<T>({3});
            for (Tensor* x : {&d.InputTensor, &d.OutputTensor}) {
                x->Desc.DimensionCount = rank;
                x->Desc.Sizes.fill(1);
                x->Desc.Sizes[rank - 1] = 3;
            }
            d.Min = 10;
            d.Max = 60;
            const auto bytes = run_both(d, 3 * sizeof(T), [](const auto& op) { qdml::reference::element_wise_clip(op); });
            T r[3];
            std::memcpy(r, bytes.data(), sizeof r);
            CHECK(as_double(r[0]) == 10);
            CHECK(as_double(r[1]) == 50);
            CHECK(as_double(r[2]) == 60);
        }
    });
}
