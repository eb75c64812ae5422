// matmul_naive: one thread per output element, 16x16 thread blocks.
// The seed chapter's section 11.3.1 kernel, row-major A (MxK), B (KxN), C (MxN).
//
// Kernel-only source: it must compile under NVRTC and hiprtc, which have no
// C++ standard headers, so std::size_t from the seed becomes the 64-bit
// index_t below. The sizes arrive as 32-bit int, because the runtime
// launcher passes Python ints as C int; every offset is computed in 64 bits,
// so m*k and k*n past 2^31 do not wrap.

typedef unsigned long long index_t;

extern "C" __global__ void matmul_naive(const float* __restrict__ a,
                                        const float* __restrict__ b,
                                        float* __restrict__ c,
                                        int m_arg,
                                        int n_arg,
                                        int k_arg) {
    const index_t m = static_cast<index_t>(m_arg);
    const index_t n = static_cast<index_t>(n_arg);
    const index_t k = static_cast<index_t>(k_arg);
    const index_t row = static_cast<index_t>(blockIdx.y) * blockDim.y + threadIdx.y;
    const index_t column = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // No barrier in this kernel, so out-of-range threads may leave at once.
    if (row >= m || column >= n) {
        return;
    }

    float accumulator = 0.0F;
    for (index_t inner = 0; inner < k; ++inner) {
        accumulator += a[row * k + inner] * b[inner * n + column];
    }
    c[row * n + column] = accumulator;
}
