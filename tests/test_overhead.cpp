// The per-call work of the element-wise operators' runtime entry: validating
// a desc that passes, and qdml::run's SIMD path, allocate nothing (a rule's
// message is formatted only when the rule fails), while a failing rule still
// throws its message. Counted through the global operator new of this
// executable.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "qdml/qdml.hpp"

// The replacement operator new and delete below pair malloc with free;
// g++ 12 cannot see that once it inlines them into one caller.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<std::size_t> g_allocations{0};
}  // namespace

// Every unaligned form is replaced, so that none of them pairs with a
// sanitizer's own operator new or delete (ASan reports such a pair as an
// alloc-dealloc mismatch); the aligned forms stay the implementation's.
namespace {
void* counted_malloc(std::size_t n) noexcept {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n == 0 ? 1 : n);
}
}  // namespace

void* operator new(std::size_t n) {
    if (void* p = counted_malloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    if (void* p = counted_malloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using qdml::Tensor;
using qdml::TensorDataType;
using qdml::TensorDesc;

/// Heap allocations made by f().
template <class F>
std::size_t allocations_of(F&& f) {
    const std::size_t before = g_allocations.load();
    f();
    return g_allocations.load() - before;
}

constexpr std::uint32_t kN = 1000;

}  // namespace

TEST_CASE("overhead: validate and run of a 9-tensor add allocate nothing", "[overhead]") {
    std::vector<std::int8_t> a(kN, 3), b(kN, -5), out(kN, 0);
    float a_scale = 0.5f, b_scale = 0.25f, out_scale = 1.0f;
    std::int8_t a_zp = 1, b_zp = -1, out_zp = 2;
    const auto i8 = TensorDataType::Int8, f32 = TensorDataType::Float32;
    const auto one = [](TensorDataType t) { return TensorDesc::make(t, {1, 1}); };
    qdml::ElementWiseQuantizedLinearAddDesc d;
    d.ATensor = Tensor{TensorDesc::make(i8, {10, 100}), a.data()};
    d.AScaleTensor = Tensor{one(f32), &a_scale};
    d.AZeroPointTensor = Tensor{one(i8), &a_zp};
    d.BTensor = Tensor{TensorDesc::make(i8, {10, 100}), b.data()};
    d.BScaleTensor = Tensor{one(f32), &b_scale};
    d.BZeroPointTensor = Tensor{one(i8), &b_zp};
    d.OutputScaleTensor = Tensor{one(f32), &out_scale};
    d.OutputZeroPointTensor = Tensor{one(i8), &out_zp};
    d.OutputTensor = Tensor{TensorDesc::make(i8, {10, 100}), out.data()};

    CHECK(allocations_of([&] { qdml::validate(d); }) == 0);
    CHECK(allocations_of([&] { qdml::run(d); }) == 0);
    // (3 - 1) * 0.5 + (-5 + 1) * 0.25 = 0, / 1 -> Q = 0 + 2
    CHECK(out[0] == 2);
    CHECK(out[kN - 1] == 2);

    // A failing rule still formats its message.
    d.BTensor.Desc = TensorDesc::make(i8, {10, 99});
    d.BTensor.DataSizeInBytes = 0;
    try {
        qdml::validate(d);
        FAIL("validate accepted BTensor {10,99}");
    } catch (const qdml::Error& e) {
        CHECK(std::string(e.what()) ==
              "ELEMENT_WISE_QUANTIZED_LINEAR_ADD: BTensor: Sizes {10,99} must equal ATensor's Sizes {10,100} "
              "(broadcast through zero Strides)");
    }
}

TEST_CASE("overhead: validate and run of dequantize and clip allocate nothing", "[overhead]") {
    std::vector<std::uint8_t> x(kN, 7);
    std::vector<float> y(kN, 0.0f);
    float scale = 0.5f;
    std::uint8_t zp = 3;
    const auto u8 = TensorDataType::UInt8, f32 = TensorDataType::Float32;
    qdml::ElementWiseDequantizeLinearDesc dq;
    dq.InputTensor = Tensor{TensorDesc::make(u8, {kN}), x.data()};
    dq.ScaleTensor = Tensor{TensorDesc::make(f32, {kN}, {0}), &scale};
    dq.ZeroPointTensor = Tensor{TensorDesc::make(u8, {kN}, {0}), &zp};
    dq.OutputTensor = Tensor{TensorDesc::make(f32, {kN}), y.data()};
    CHECK(allocations_of([&] { qdml::validate(dq); }) == 0);
    CHECK(allocations_of([&] { qdml::run(dq); }) == 0);
    CHECK(y[0] == 2.0f);  // (7 - 3) * 0.5

    qdml::ElementWiseClipDesc clip;
    clip.InputTensor = Tensor{TensorDesc::make(f32, {kN}), y.data()};
    clip.OutputTensor = Tensor{TensorDesc::make(f32, {kN}), y.data()};  // in place
    clip.Min = -1.0f;
    clip.Max = 1.5f;
    CHECK(allocations_of([&] { qdml::validate(clip); }) == 0);
    CHECK(allocations_of([&] { qdml::run(clip); }) == 0);
    CHECK(y[kN - 1] == 1.5f);
}
