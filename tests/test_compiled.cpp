// The compiled form (qdml/runtime/compiled.hpp): one compile, many executes
// with new buffers, each result identical in bits to the reference and to
// the stateless run(); execute's refusals (a desc or parameter that differs
// from the compiled one names the member; a bad binding gives validation's
// own message). The random element-wise layouts are covered by the
// differential tests (tests/simd), which compile every case too.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "support/differential.hpp"

namespace {

using namespace qtest::diff;
using qdml::Implementation;

/// Fills every element of `t`'s buffer with random values of its type.
void fill_random(Rng& r, const Tensor& t) {
    qdml::visit_data_type(t.Desc.DataType, [&](auto tag) {
        using T = typename decltype(tag)::type;
        fill<T>(t, [&] { return r.value<T>(); });
    });
}

/// A tensor of `type` with `sizes` and `strides` (packed when empty), random contents.
Tensor random_tensor(GuardedPool& a, Rng& r, DT type, const std::vector<std::uint32_t>& sizes,
                     const std::vector<std::uint32_t>& strides = {}) {
    Tensor t = a.tensor(type, sizes, strides, static_cast<std::size_t>(r.range(0, 3)));
    fill_random(r, t);
    return t;
}

Tensor& mutable_member(const qdml::detail::BoundMember& m) { return *const_cast<Tensor*>(m.tensor); }

bool is_weight(std::string_view m) { return m == "BTensor" || m == "BScaleTensor" || m == "BZeroPointTensor"; }

/// Compiles `d` (SIMD and reference), then `n` times: new buffers for every
/// tensor with fresh inputs (a matmul's constant weights excepted: they stay,
/// and the SIMD compiled form gets them as null Data), computed by run()
/// with each implementation and by both compiled forms: identical bits.
template <class Desc>
void check_reuse(const Desc& d, std::uint64_t seed, int n) {
    const auto simd = qdml::compile(d);
    const auto ref = qdml::compile(d, {Implementation::Reference});
    bool constant_weights = false;
    if constexpr (std::is_same_v<Desc, qdml::QuantizedLinearMatrixMultiplyDesc>)
        constant_weights = (d.BTensor.Desc.Flags & qdml::kTensorFlagOwnedByDml) != 0;
    Rng r(seed);
    for (int k = 0; k < n; ++k) {
        GuardedPool pool;
        Desc e = d;
        const auto m = qdml::detail::members(e);
        const std::size_t first_out = m.size() - qdml::detail::output_count<Desc>;  // the outputs are last
        for (std::size_t i = 0; i < first_out; ++i) {
            if (m[i].tensor == nullptr || (constant_weights && is_weight(m[i].name))) continue;
            mutable_member(m[i]) = pool.clone(*m[i].tensor);
            fill_random(r, *m[i].tensor);
        }
        Desc outs[3] = {e, e, e};  // stateless SIMD, compiled SIMD, compiled reference
        for (std::size_t j = first_out; j < m.size(); ++j) {
            mutable_member(m[j]) = pool.clone(*m[j].tensor);
            for (auto& o : outs) mutable_member(qdml::detail::members(o)[j]) = pool.clone(*m[j].tensor);
        }
        if constexpr (std::is_same_v<Desc, qdml::QuantizedLinearMatrixMultiplyDesc>)
            if (constant_weights) {  // execute never reads the weights' Data
                outs[1].BTensor.Data = outs[1].BScaleTensor.Data = nullptr;
                if (outs[1].BZeroPointTensor) outs[1].BZeroPointTensor->Data = nullptr;
            }
        qdml::run(e, {Implementation::Reference});
        qdml::run(outs[0], {Implementation::Simd});
        simd.execute(outs[1]);
        ref.execute(outs[2]);
        const std::string ctx = std::string(Desc::OperatorName) + ", execute " + std::to_string(k);
        const char* what[3] = {"stateless simd", "compiled simd", "compiled reference"};
        for (int o = 0; o < 3; ++o)
            for (std::size_t j = first_out; j < m.size(); ++j)
                if (!compare(pool, *m[j].tensor, *qdml::detail::members(outs[o])[j].tensor,
                             ctx + ", " + what[o] + ", " + std::string(m[j].name)))
                    return;
    }
}

qdml::ElementWiseDequantizeLinearDesc dequantize_desc(GuardedPool& a, Rng& r) {
    qdml::ElementWiseDequantizeLinearDesc d;
    const std::vector<std::uint32_t> s = {4, 1, 67};
    d.InputTensor = random_tensor(a, r, DT::Int16, s, {80, 80, 1});               // padded rows
    d.ScaleTensor = random_tensor(a, r, DT::Float16, s, {1, 0, 0});               // one scale per row
    d.ZeroPointTensor = random_tensor(a, r, DT::Int16, s, {0, 0, 0});             // per tensor
    d.OutputTensor = a.tensor(DT::Float16, s, {}, 1);
    return d;
}

qdml::ElementWiseQuantizedLinearAddDesc add_desc(GuardedPool& a, Rng& r) {
    qdml::ElementWiseQuantizedLinearAddDesc d;
    const std::vector<std::uint32_t> s = {3, 2, 130}, one = {1, 1, 1};
    d.ATensor = random_tensor(a, r, DT::UInt8, s);
    d.BTensor = random_tensor(a, r, DT::Int8, s, {0, 130, 1});  // repeated along dimension 0
    d.AScaleTensor = a.tensor(DT::Float32, one, {}, 0);
    d.BScaleTensor = a.tensor(DT::Float32, one, {}, 0);
    d.OutputScaleTensor = a.tensor(DT::Float32, one, {}, 0);
    for (auto* t : {&d.AScaleTensor, &d.BScaleTensor, &d.OutputScaleTensor}) *static_cast<float*>(t->Data) = 0.25f;
    d.AZeroPointTensor = random_tensor(a, r, DT::UInt8, one);
    d.OutputZeroPointTensor = random_tensor(a, r, DT::UInt8, one);
    d.OutputTensor = a.tensor(DT::UInt8, s, {1, 3, 6}, 0);  // permuted output
    return d;
}

qdml::ElementWiseClipDesc clip_desc(GuardedPool& a, Rng& r) {
    qdml::ElementWiseClipDesc d;
    d.InputTensor = random_tensor(a, r, DT::Int16, {5, 33}, {1, 5});  // transposed
    d.OutputTensor = a.tensor(DT::Int16, {5, 33}, {}, 0);
    d.ScaleBias = qdml::ScaleBiasDesc{0.75f, -3.5f};
    d.Min = -1000.5f;
    d.Max = 20000.0f;
    return d;
}

qdml::QuantizedLinearMatrixMultiplyDesc matmul_desc(GuardedPool& a, Rng& r, bool constant_b) {
    qdml::QuantizedLinearMatrixMultiplyDesc d;
    d.ATensor = random_tensor(a, r, DT::UInt8, {2, 5, 19});
    d.AScaleTensor = a.tensor(DT::Float32, {1, 1, 1}, {}, 0);
    *static_cast<float*>(d.AScaleTensor.Data) = 0.02f;
    d.AZeroPointTensor = random_tensor(a, r, DT::UInt8, {1, 1, 1});
    d.BTensor = random_tensor(a, r, DT::Int8, {2, 19, 7}, {0, 7, 1});  // one B for both batches
    if (constant_b) d.BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    d.BScaleTensor = a.tensor(DT::Float32, {1, 1, 7}, {}, 0);
    fill<float>(d.BScaleTensor, [&] { return static_cast<float>(r.range(1, 9)) / 64.0f; });
    d.BZeroPointTensor = random_tensor(a, r, DT::Int8, {1, 1, 7});
    d.OutputScaleTensor = a.tensor(DT::Float32, {1, 1, 1}, {}, 0);
    *static_cast<float*>(d.OutputScaleTensor.Data) = 0.5f;
    d.OutputTensor = a.tensor(DT::Int8, {2, 5, 7}, {}, 0);
    return d;
}

qdml::QuantizedLinearConvolutionDesc conv_desc(GuardedPool& a, Rng& r) {
    qdml::QuantizedLinearConvolutionDesc d;
    const std::vector<std::uint32_t> one = {1, 1, 1, 1};
    d.InputTensor = random_tensor(a, r, DT::UInt8, {1, 4, 6, 5});
    d.InputScaleTensor = a.tensor(DT::Float32, one, {}, 0);
    *static_cast<float*>(d.InputScaleTensor.Data) = 0.05f;
    d.FilterTensor = random_tensor(a, r, DT::Int8, {4, 2, 3, 3});
    d.FilterScaleTensor = a.tensor(DT::Float32, {1, 4, 1, 1}, {}, 0);
    fill<float>(d.FilterScaleTensor, [&] { return static_cast<float>(r.range(1, 9)) / 128.0f; });
    d.BiasTensor = random_tensor(a, r, DT::Int32, {1, 4, 1, 1});
    d.OutputScaleTensor = a.tensor(DT::Float32, one, {}, 0);
    *static_cast<float*>(d.OutputScaleTensor.Data) = 0.25f;
    d.OutputTensor = a.tensor(DT::UInt8, {1, 4, 6, 5}, {}, 0);
    d.StartPadding = {1, 1};
    d.EndPadding = {1, 1};
    d.GroupCount = 2;
    return d;
}

qdml::DynamicQuantizeLinearDesc dynamic_quantize_desc(GuardedPool& a, Rng& r) {
    qdml::DynamicQuantizeLinearDesc d;
    const std::vector<std::uint32_t> one = {1, 1};
    d.InputTensor = random_tensor(a, r, DT::Float16, {9, 37}, {1, 9});  // transposed
    d.OutputTensor = a.tensor(DT::Int8, {9, 37}, {}, 0);
    d.OutputScaleTensor = a.tensor(DT::Float32, one, {}, 0);
    d.OutputZeroPointTensor = a.tensor(DT::Int8, one, {}, 0);
    return d;
}

qdml::QuantizedLinearAveragePoolingDesc average_pooling_desc(GuardedPool& a, Rng& r) {
    qdml::QuantizedLinearAveragePoolingDesc d;
    const std::vector<std::uint32_t> channel = {1, 3, 1, 1};
    d.InputTensor = random_tensor(a, r, DT::Int8, {2, 3, 7, 6}, {126, 1, 18, 3});  // NHWC memory
    d.InputScaleTensor = a.tensor(DT::Float32, channel, {}, 0);
    fill<float>(d.InputScaleTensor, [&] { return static_cast<float>(r.range(1, 9)) / 10.0f; });
    d.InputZeroPointTensor = random_tensor(a, r, DT::Int8, channel);
    d.OutputScaleTensor = a.tensor(DT::Float32, channel, {}, 0);
    fill<float>(d.OutputScaleTensor, [&] { return static_cast<float>(r.range(1, 9)) / 7.0f; });
    d.OutputZeroPointTensor = random_tensor(a, r, DT::Int8, channel);
    d.OutputTensor = a.tensor(DT::Int8, {2, 3, 4, 6}, {}, 0);  // 3x3 window, strides {2,1}, padding 1
    d.WindowSize = {3, 3, 1};
    d.Strides = {2, 1, 1};
    d.StartPadding = {1, 1, 0};
    d.EndPadding = {1, 1, 0};
    d.IncludePadding = true;
    return d;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const qdml::Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("compiled: each operator, executed 200 times on new buffers, equals run() and the reference", "[compiled]") {
    GuardedPool a;
    Rng r(case_seed(70, 0));
    check_reuse(dequantize_desc(a, r), r.bits(), 200);
    check_reuse(add_desc(a, r), r.bits(), 200);
    check_reuse(clip_desc(a, r), r.bits(), 200);
    check_reuse(matmul_desc(a, r, /*constant_b=*/true), r.bits(), 200);
    check_reuse(matmul_desc(a, r, /*constant_b=*/false), r.bits(), 50);
    check_reuse(conv_desc(a, r), r.bits(), 50);
    check_reuse(dynamic_quantize_desc(a, r), r.bits(), 50);
    check_reuse(average_pooling_desc(a, r), r.bits(), 50);

    qdml::ElementWiseClipDesc f;  // float clip, in place
    f.InputTensor = random_tensor(a, r, DT::Float32, {7, 9});
    f.OutputTensor = f.InputTensor;
    f.Min = -0.0f;
    f.Max = 2.5f;
    const auto c = qdml::compile(f);
    for (int k = 0; k < 50; ++k) {
        GuardedPool b;
        qdml::ElementWiseClipDesc e = f, s = f;
        e.InputTensor = e.OutputTensor = b.clone(f.InputTensor);
        fill_random(r, e.InputTensor);
        s.InputTensor = s.OutputTensor = b.clone(e.InputTensor);
        qdml::run(e, {Implementation::Reference});
        c.execute(s);
        if (!compare(b, e.OutputTensor, s.OutputTensor, "in-place clip, execute " + std::to_string(k))) break;
    }
}

TEST_CASE("compiled: a desc or parameter that differs from the compiled one is refused, naming the member",
          "[compiled]") {
    GuardedPool a;
    Rng r(case_seed(71, 0));
    const auto add = add_desc(a, r);
    const auto c = qdml::compile(add);
    auto e = add;
    e.BTensor.Desc.Sizes[2] = 129;
    CHECK(error_of([&] { c.execute(e); }) ==
          "ELEMENT_WISE_QUANTIZED_LINEAR_ADD: BTensor: differs from the compiled desc (execute may change only Data "
          "and DataSizeInBytes)");
    e = add;
    e.OutputTensor.Desc.Strides = std::nullopt;  // packed instead of permuted
    CHECK(error_of([&] { c.execute(e); }).rfind("ELEMENT_WISE_QUANTIZED_LINEAR_ADD: OutputTensor: differs", 0) == 0);
    e = add;
    e.BZeroPointTensor = e.AZeroPointTensor;  // present, compiled absent
    e.BZeroPointTensor->Desc.DataType = DT::Int8;
    CHECK(error_of([&] { c.execute(e); }).rfind("ELEMENT_WISE_QUANTIZED_LINEAR_ADD: BZeroPointTensor: differs", 0) == 0);
    e = add;
    e.AZeroPointTensor = std::nullopt;  // absent, compiled present
    CHECK(error_of([&] { c.execute(e); }).rfind("ELEMENT_WISE_QUANTIZED_LINEAR_ADD: AZeroPointTensor: differs", 0) == 0);
    e = add;
    e.ATensor.Desc.TotalTensorSizeInBytes += 1;
    CHECK(error_of([&] { c.execute(e); }).rfind("ELEMENT_WISE_QUANTIZED_LINEAR_ADD: ATensor: differs", 0) == 0);

    const auto clip = clip_desc(a, r);
    const auto cc = qdml::compile(clip);
    auto f = clip;
    f.Min = -1000.0f;
    CHECK(error_of([&] { cc.execute(f); }) ==
          "ELEMENT_WISE_CLIP: Min: differs from the compiled desc (execute may change only Data and DataSizeInBytes)");
    f = clip;
    f.ScaleBias = std::nullopt;
    CHECK(error_of([&] { cc.execute(f); }).rfind("ELEMENT_WISE_CLIP: ScaleBias: differs", 0) == 0);
    f = clip;
    f.InputTensor.Desc.DataType = DT::UInt16;
    CHECK(error_of([&] { cc.execute(f); }).rfind("ELEMENT_WISE_CLIP: InputTensor: differs", 0) == 0);

    const auto conv = conv_desc(a, r);
    const auto cv = qdml::compile(conv);
    auto g = conv;
    g.Strides = {2, 1};
    CHECK(error_of([&] { cv.execute(g); }).rfind("QUANTIZED_LINEAR_CONVOLUTION: Strides: differs", 0) == 0);
    g = conv;
    g.GroupCount = 1;
    CHECK(error_of([&] { cv.execute(g); }).rfind("QUANTIZED_LINEAR_CONVOLUTION: GroupCount: differs", 0) == 0);

    const auto mm = matmul_desc(a, r, true);
    const auto cm = qdml::compile(mm);
    auto h = mm;
    h.BTensor.Desc.Flags = 0;
    CHECK(error_of([&] { cm.execute(h); }).rfind("QUANTIZED_LINEAR_MATRIX_MULTIPLY: BTensor: differs", 0) == 0);
}

TEST_CASE("compiled: bad bindings at execute give validation's message; compile validates", "[compiled]") {
    GuardedPool a;
    Rng r(case_seed(72, 0));
    const auto add = add_desc(a, r);
    const auto c = qdml::compile(add);
    // Each binding error: execute's message is run()'s (the same validation text).
    const auto same_as_run_of = [&](const auto& compiled, const auto& e, const std::string& start) {
        const std::string got = error_of([&] { compiled.execute(e); });
        CHECK(got == error_of([&] { qdml::run(e); }));
        CHECK(got.rfind(start, 0) == 0);
    };
    const auto same_as_run = [&](const qdml::ElementWiseQuantizedLinearAddDesc& e, const std::string& start) {
        same_as_run_of(c, e, start);
    };
    auto e = add;
    e.BTensor.Data = nullptr;
    same_as_run(e, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD: BTensor: Data is null");
    e = add;
    e.AScaleTensor.Data = static_cast<char*>(e.AScaleTensor.Data) + 1;
    same_as_run(e, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD: AScaleTensor: Data is not aligned");
    e = add;
    e.ATensor.DataSizeInBytes = e.ATensor.Desc.TotalTensorSizeInBytes - 1;
    same_as_run(e, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD: ATensor: the bound buffer holds");
    e = add;
    e.OutputTensor = qdml::Tensor{e.OutputTensor.Desc, static_cast<const void*>(e.OutputTensor.Data)};
    same_as_run(e, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD: OutputTensor: Data was bound through a const pointer");
    e = add;
    e.OutputTensor.Data = e.ATensor.Data;  // same layout, but only clip may run in place
    same_as_run(e, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD: OutputTensor: overlaps ATensor");
    e = add;
    e.OutputTensor.DataSizeInBytes = e.OutputTensor.Desc.TotalTensorSizeInBytes;  // stated and enough: fine
    CHECK_NOTHROW(c.execute(e));

    // Clip: in place on the identical region only (the compiled desc was not in place).
    const auto clip = clip_desc(a, r);
    const auto cc = qdml::compile(clip);
    auto f = clip;
    f.OutputTensor.Data = f.InputTensor.Data;
    CHECK(error_of([&] { cc.execute(f); }) == error_of([&] { qdml::run(f); }));
    CHECK(error_of([&] { cc.execute(f); }).rfind("ELEMENT_WISE_CLIP: OutputTensor: overlaps InputTensor", 0) == 0);

    // DYNAMIC_QUANTIZE_LINEAR's three outputs: each checked against the input and the outputs before it.
    const auto dq = dynamic_quantize_desc(a, r);
    const auto cd = qdml::compile(dq);
    auto q = dq;
    q.OutputZeroPointTensor.Data = q.OutputTensor.Data;
    same_as_run_of(cd, q, "DYNAMIC_QUANTIZE_LINEAR: OutputZeroPointTensor: overlaps OutputTensor");
    q = dq;
    q.OutputScaleTensor = qdml::Tensor{q.OutputScaleTensor.Desc, static_cast<const void*>(q.OutputScaleTensor.Data)};
    same_as_run_of(cd, q, "DYNAMIC_QUANTIZE_LINEAR: OutputScaleTensor: Data was bound through a const pointer");
    q = dq;
    q.OutputZeroPointTensor.Data = q.OutputScaleTensor.Data;
    same_as_run_of(cd, q, "DYNAMIC_QUANTIZE_LINEAR: OutputZeroPointTensor: overlaps OutputScaleTensor");
    q = dq;
    q.OutputTensor.Data = q.InputTensor.Data;
    same_as_run_of(cd, q, "DYNAMIC_QUANTIZE_LINEAR: OutputTensor: overlaps InputTensor");

    // Constant matmul weights: their Data is not read at execute, A's is.
    const auto mm = matmul_desc(a, r, true);
    const auto cm = qdml::compile(mm);
    auto h = mm;
    h.BTensor.Data = nullptr;
    CHECK_NOTHROW(cm.execute(h));
    h.ATensor.Data = nullptr;
    CHECK(error_of([&] { cm.execute(h); }).rfind("QUANTIZED_LINEAR_MATRIX_MULTIPLY: ATensor: Data is null", 0) == 0);

    // compile() validates, with the feature level of its options.
    e = add;
    e.OutputTensor.Desc.Sizes[0] = 2;
    CHECK(error_of([&] { qdml::compile(e); }) == error_of([&] { qdml::validate(e); }));
    CHECK(error_of([&] { qdml::compile(add, {Implementation::Simd, qdml::FeatureLevel::L3_0}); })
              .rfind("ELEMENT_WISE_QUANTIZED_LINEAR_ADD: operator: requires DML_FEATURE_LEVEL 4.0", 0) == 0);
    // A matmul compiled for the reference does not need the flag's packing, and reads B at execute.
    const auto cr = qdml::compile(mm, {Implementation::Reference});
    h = mm;
    h.BTensor.Data = nullptr;
    CHECK(error_of([&] { cr.execute(h); }).rfind("QUANTIZED_LINEAR_MATRIX_MULTIPLY: BTensor: Data is null", 0) == 0);
}
