// qdml/simd/tuning.hpp - every tuning constant of the fast paths in one place:
// cache blocks, chunk and tile sizes, the non-temporal store threshold,
// prefetch distance, and the size guards past which a path hands over to a
// simpler one. None changes a result bit (the differential tests run every
// path on either side of each); each says what chose it. The measurements
// are logged in docs/perf/history.md.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qdml::simd {

// --- GEMM engine and convolution -------------------------------------------

/// Column block of the GEMM driver (gemm::multiply): about 1 MiB of packed
/// right-operand panels, so a block stays in L2 while every row block of the
/// left operand walks it (the VNNI k loops ran at 92-94% of the vpdpbusd
/// peak with the 1 MiB of panels in L2, 96-100% from L1: history.md, 1024^3).
inline constexpr std::size_t kGemmBlockBytes = std::size_t{1} << 20;

/// Column block of the convolution's implicit-GEMM (NCHW) form: about
/// 512 KiB of panels materialised at a time (half of kGemmBlockBytes: the
/// padded input rows the panels are packed from share L2 with them).
inline constexpr std::size_t kConvBlockBytes = std::size_t{1} << 19;

/// Pixel block of the vector NHWC convolution form: about 64 KiB of patch
/// rows (L2), clamped to [16, 512] pixels and a multiple of 16 (every
/// micro-kernel's row block divides it).
inline constexpr std::size_t kNhwcBlockBytes = std::size_t{1} << 16;
inline constexpr std::size_t kNhwcBlockMinPixels = 16, kNhwcBlockMaxPixels = 512;

/// Size guard (a bound, not a measurement): the convolution forms that copy
/// padded planes or index "wide" pixels keep every such count below 2^26
/// elements, so no product of them overflows; a larger (huge padding or
/// dilation) convolution takes the gathering form instead.
inline constexpr std::uint64_t kMaxCopyElements = std::uint64_t{1} << 26;

/// Size guard (a bound, not a measurement): the longest input row buffer the
/// depthwise path builds; a longer one runs the reference instead.
inline constexpr std::size_t kMaxRowElements = std::size_t{1} << 24;

// --- Element-wise loops -----------------------------------------------------

/// Non-temporal stores: a call whose output spans at least kStreamBytes
/// stores it around the caches (it would evict everything else and be
/// written back later anyway), in rows of at least kStreamRowBytes (a row's
/// unaligned head and tail take normal stores). 8 MiB is the crossover
/// measured by bench/stream_crossover.cpp (normal against non-temporal
/// stores: slower up to 1 MiB, even from 8 MiB, 1.2-2x faster from 16 MiB).
inline constexpr std::uint64_t kStreamBytes = std::uint64_t{8} << 20;
inline constexpr std::uint64_t kStreamRowBytes = 4096;

/// Bytes ahead of the current block that a streaming add prefetches A and B
/// (without it the 2^24 add ran about 2x the CPU time of the dequantize
/// moving the same bytes; 0.5-4 KiB ahead measured alike).
inline constexpr std::size_t kPrefetchAhead = 1024;

/// Elements per chunk of the gathered (general strided) form: big enough to
/// amortise a row kernel call, small enough that the staging of every
/// operand stays in L1.
inline constexpr std::size_t kChunk = 256;

/// Rows per tile of the transposed form (run_rows), and the bytes of a tile
/// of the widest operand (its rows' chunk: 8 KiB / 16 / element size elements,
/// so a call's tiles stay in L1 while each row kernel call gets 64-512
/// elements).
inline constexpr std::size_t kTileRows = 16;
inline constexpr std::size_t kTileBytes = 8192;

// Multi-core (core/executor.hpp). Tasks are cut by these constants and the
// shapes only, never by the number of workers (the determinism contract).
/// Multiply-adds per GEMM task, at least (ruy 32K, MLAS 64K, twice MLAS
/// here: a task also streams its panels once); a product below two of them
/// stays on the calling thread.
inline constexpr std::uint64_t kTaskMacs = std::uint64_t{1} << 17;
/// The convolution's task grid (conv/tasks.hpp):
/// - kConvTaskMacs: multiply-adds per task, at least: eight GEMM grains (a
///   task is a convolution of its own: it prepares its epilogue and pads
///   its input rows, a few microseconds that a smaller task would not
///   amortise); a convolution below two of them stays on the calling thread;
/// - kDepthwiseTaskMacs: the same for depthwise tasks, 2^19 (a depthwise
///   multiply-add reuses no input across output channels: several times a
///   GEMM one's time; with 2^17 the tasks of a 112^2 x 32 3x3, run one
///   after another, took 9-15% over the single call on Zen 2);
/// - kConvTaskPixels, kConvTaskRows: output pixels and rows per row block,
///   at least (four panels of the NCHW form's columns, four NHWC row blocks
///   of 16 pixels; the depthwise NHWC forms compute rows in pairs);
/// - kConvTaskChannels: output channels per channel block, at least (a
///   channel block builds and packs its pixels' patches again).
/// (QDML_TEST_CONV_TASK_GRAIN, a testing aid, sets both grains and the
/// least pixels, rows and channels to 1: the convolution tests cut their
/// small random shapes into many tasks with it.)
#if defined(QDML_TEST_CONV_TASK_GRAIN)
inline constexpr std::uint64_t kConvTestGrain = QDML_TEST_CONV_TASK_GRAIN;
#else
inline constexpr std::uint64_t kConvTestGrain = 0;  ///< (0: the real constants)
#endif
inline constexpr std::uint64_t kConvTaskMacs = kConvTestGrain ? kConvTestGrain : std::uint64_t{1} << 20;
inline constexpr std::uint64_t kDepthwiseTaskMacs = kConvTestGrain ? kConvTestGrain : std::uint64_t{1} << 19;
inline constexpr std::uint64_t kConvTaskPixels = kConvTestGrain ? 1 : 64;
inline constexpr std::uint32_t kConvTaskRows = kConvTestGrain ? 1 : 2;
inline constexpr std::uint64_t kConvTaskChannels = kConvTestGrain ? 1 : 64;
/// Tasks a large product is cut into, at least, where each keeps two grains
/// (so that a 64-core machine gets work on every core; gemm::task_grid).
inline constexpr std::size_t kTargetTasks = 64;
/// Output bytes per element-wise task, at least (XNNPACK's 16 KiB, times
/// four: a task's start costs a wake-up, ~10 us in a condition-variable
/// pool).
inline constexpr std::uint64_t kTaskBytes = std::uint64_t{64} << 10;
/// An element-wise call of fewer output bytes stays on the calling thread.
/// (Two tasks' grain was too little where the call itself is fast: Zen 5,
/// AVX-512, `clip/simd/f32/65536` took 2.4 us on one thread and 4.2 us on
/// two, the pool's wake-up longer than the work; 1 MiB is about 10 us of
/// clip there, 4 times what two threads lose.)
inline constexpr std::uint64_t kMinThreadedBytes = std::uint64_t{1} << 20;
/// ... and of a call that streams its output (kStreamBytes and more: each
/// task ends with a fence that waits for its non-temporal stores).
inline constexpr std::uint64_t kStreamTaskBytes = std::uint64_t{1} << 20;

}  // namespace qdml::simd

