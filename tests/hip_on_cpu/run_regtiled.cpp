// Runs the real matmul_regtiled.hip source on the CPU, to check its index
// arithmetic, guards and barriers where no GPU is available.
//
// The kernel text is #included unchanged; a few macros map the HIP/CUDA
// keywords onto host C++: each thread of a block is a std::thread,
// __syncthreads() is a std::barrier shared by the block's threads, and
// __shared__ arrays become function statics, which all threads of the block
// share (blocks run one after another, so one copy suffices). Built with
// AddressSanitizer + UndefinedBehaviorSanitizer, an out-of-bounds read or write
// of A, B or C, or a 16-byte load or store at an address that is not 16-byte
// aligned (the vector path taken where it is illegal), stops the run; built
// with ThreadSanitizer, two threads touching shared memory without a barrier
// between them do. A thread that returned before a barrier would leave the
// others waiting: the caller's timeout catches that.
//
// Inputs are small integers, so every product and sum is exact in fp32 and C
// must equal the float64 reference exactly. Row padding holds NaN, so a read
// of it shows in C. C starts as a NaN sentinel and its own row padding must
// keep it, so an unwritten element, or a write past a row's end, shows.
//
// usage: run_regtiled M N K LDA_PAD LDB_PAD LDC_PAD MISALIGN [last]
//   *_PAD: extra elements per row (row stride = row length + pad);
//   MISALIGN: shift A, B and C by this many floats from a 64-byte boundary;
//     those floats hold the sentinel NaN, as the core's padded views start
//     after poison, so a read before A's or B's first element shows in C
//     and a write before C's is caught;
//   last: run only the last block of the grid and check only its tile
//   (for the cases whose buffers are mapped, not filled: offsets past 2^31).
// Prints "ok" and exits 0 when every check passes.

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <thread>
#include <vector>

struct Dim3 {
    unsigned int x = 0, y = 0, z = 0;
};
thread_local Dim3 threadIdx;
thread_local Dim3 blockIdx;
static std::barrier<>* block_barrier = nullptr;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#include KERNEL_SOURCE

namespace {

constexpr std::uint32_t kSentinelBits = 0x7fc0dead;  // a NaN arithmetic never makes

float sentinel() {
    float f;
    std::memcpy(&f, &kSentinelBits, sizeof f);
    return f;
}

bool is_sentinel(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits == kSentinelBits;
}

// Small integers in [-3, 3], the same for the same (seed, row, col).
float value(std::uint64_t seed, std::uint64_t row, std::uint64_t col) {
    std::uint64_t h = seed * 0x9e3779b97f4a7c15ULL ^ (row * 0xbf58476d1ce4e5b9ULL + col);
    h ^= h >> 31;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 29;
    return static_cast<float>(static_cast<int>(h % 7) - 3);
}

// A buffer of `count` floats starting `misalign` floats past a 64-byte
// boundary, the sentinel NaN in those `misalign` floats. Small buffers come
// from the allocator, sized exactly, so the sanitizer flags any access past
// the end; huge ones are mapped lazily and only the pages touched cost memory.
struct Buffer {
    float* base = nullptr;
    float* data = nullptr;
    std::size_t bytes = 0;
    bool mapped = false;

    Buffer(std::size_t count, std::size_t misalign) {
        bytes = (count + misalign) * sizeof(float);
        mapped = bytes > (std::size_t{1} << 30);
        if (mapped) {
            void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED) {
                std::perror("mmap");
                std::exit(2);
            }
            base = static_cast<float*>(p);
        } else {
            void* p = nullptr;
            if (posix_memalign(&p, 64, bytes) != 0) {
                std::perror("posix_memalign");
                std::exit(2);
            }
            base = static_cast<float*>(p);
        }
        data = base + misalign;
        for (std::size_t i = 0; i < misalign; ++i) base[i] = sentinel();
    }
    ~Buffer() {
        if (mapped) {
            munmap(base, bytes);
        } else {
            std::free(base);
        }
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 8) {
        std::fprintf(stderr, "usage: %s M N K LDA_PAD LDB_PAD LDC_PAD MISALIGN [last]\n", argv[0]);
        return 2;
    }
    const std::int64_t m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
    const std::int64_t lda = k + std::atoll(argv[4]);
    const std::int64_t ldb = n + std::atoll(argv[5]);
    const std::int64_t ldc = n + std::atoll(argv[6]);
    const std::size_t misalign = static_cast<std::size_t>(std::atoll(argv[7]));
    const bool last_only = argc > 8 && std::strcmp(argv[8], "last") == 0;

    // The kernel's own constants (its source is included above).
    const std::int64_t blocks_m = (m + kBlockM - 1) / kBlockM;
    const std::int64_t blocks_n = (n + kBlockN - 1) / kBlockN;
    const std::int64_t blocks = blocks_m * blocks_n;
    const std::int64_t first_block = last_only ? blocks - 1 : 0;
    // The rows and columns of C this run computes and checks.
    std::int64_t row0 = 0, row1 = m, col0 = 0, col1 = n;
    if (last_only) {
        row0 = (first_block / blocks_n) * kBlockM;
        row1 = std::min(m, row0 + kBlockM);
        col0 = (first_block % blocks_n) * kBlockN;
        col1 = std::min(n, col0 + kBlockN);
    }

    // Exactly the extent a strided view needs: the last row ends the buffer.
    Buffer a((m - 1) * lda + k, misalign), b((k - 1) * ldb + n, misalign),
        c((m - 1) * ldc + n, misalign);
    const float nan = std::nanf("");
    for (std::int64_t i = row0; i < row1; ++i) {
        for (std::int64_t p = 0; p < k; ++p) a.data[i * lda + p] = value(1, i, p);
        const std::int64_t pad_end = i + 1 < m ? std::min(lda, k + 64) : k;
        for (std::int64_t p = k; p < pad_end; ++p) a.data[i * lda + p] = nan;
    }
    for (std::int64_t p = 0; p < k; ++p) {
        for (std::int64_t j = col0; j < col1; ++j) b.data[p * ldb + j] = value(2, p, j);
        // Padding right after this block's columns (all of it when small).
        const std::int64_t pad_end = p + 1 < k ? std::min(ldb, col1 + 64) : n;
        for (std::int64_t j = n; j < pad_end; ++j) b.data[p * ldb + j] = nan;
    }
    for (std::int64_t i = row0; i < row1; ++i) {
        const std::int64_t end = i + 1 < m ? std::min(ldc, col1 + 64) : n;
        for (std::int64_t j = col0; j < end; ++j) c.data[i * ldc + j] = sentinel();
    }

    for (std::int64_t block = first_block; block < blocks; ++block) {
        std::barrier<> barrier(kThreads);
        block_barrier = &barrier;
        std::vector<std::thread> threads;
        for (unsigned int t = 0; t < static_cast<unsigned int>(kThreads); ++t) {
            threads.emplace_back([&, t] {
                threadIdx.x = t;
                blockIdx.x = static_cast<unsigned int>(block);
                matmul_regtiled(a.data, b.data, c.data, static_cast<int>(m), static_cast<int>(n),
                                static_cast<int>(k), static_cast<int>(lda),
                                static_cast<int>(ldb), static_cast<int>(ldc));
            });
        }
        for (auto& thread : threads) thread.join();
    }

    std::int64_t bad = 0;
    for (std::int64_t i = row0; i < row1; ++i) {
        for (std::int64_t j = col0; j < col1; ++j) {
            double expected = 0.0;
            for (std::int64_t p = 0; p < k; ++p) {
                expected += static_cast<double>(value(1, i, p)) * value(2, p, j);
            }
            const float got = c.data[i * ldc + j];
            if (!(static_cast<double>(got) == expected) && bad++ < 5) {
                std::printf("C[%lld][%lld] = %g%s, expected %g\n", static_cast<long long>(i),
                            static_cast<long long>(j), got,
                            is_sentinel(got) ? " (never written)" : "", expected);
            }
        }
        const std::int64_t end = i + 1 < m ? std::min(ldc, col1 + 64) : n;
        for (std::int64_t j = n; j < end; ++j) {
            if (!is_sentinel(c.data[i * ldc + j]) && bad++ < 5) {
                std::printf("C's row padding [%lld][%lld] was written\n",
                            static_cast<long long>(i), static_cast<long long>(j));
            }
        }
    }
    for (std::size_t i = 0; i < misalign; ++i) {
        if (!is_sentinel(c.base[i]) && bad++ < 5) {
            std::printf("C's memory %zu floats before its start was written\n", misalign - i);
        }
    }
    if (bad) {
        std::printf("%lld bad elements\n", static_cast<long long>(bad));
        return 1;
    }
    std::printf("ok\n");
    return 0;
}
