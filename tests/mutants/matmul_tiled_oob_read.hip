// MUTANT of matmul_tiled: the A loader reads before it checks the column,
// so in the partial K tile the last row of A reads past the end of A.
//
// Caught by: compute-sanitizer memcheck ("Invalid __global__ read ... bytes
// after the nearest allocation"), with torch's caching allocator off (the
// sanitizer pass turns it off). Why the values stay right in a normal run: the
// read is at most 60 bytes past A, inside the rounding of its allocation (a
// caching-allocator segment, or cudaMalloc's granularity), so it does not
// fault; and the value read is discarded by the select below, never reaching
// C even when it is NaN. The load goes through a volatile pointer, so the
// compiler cannot make it conditional on the column check (which would be
// the correct kernel again). Rows above the last read the next row of A: in
// bounds, discarded the same way.
//
// matmul_tiled: one thread per output, 16x16 tiles of A and B staged in LDS
// (shared memory), two barriers per K step. The seed chapter's section
// 11.3.2 kernel, row-major A (MxK), B (KxN), C (MxN).
//
// Kernel-only source: it must compile under NVRTC and hiprtc, which have no
// C++ standard headers, so std::size_t from the seed becomes the 64-bit
// index_t below. The sizes arrive as 32-bit int, because the runtime
// launcher passes Python ints as C int; every offset is computed in 64 bits.

typedef unsigned long long index_t;

constexpr unsigned int kTile = 16;

extern "C" __global__ void matmul_tiled_oob_read(const float* __restrict__ a,
                                        const float* __restrict__ b,
                                        float* __restrict__ c,
                                        int m_arg,
                                        int n_arg,
                                        int k_arg) {
    __shared__ float tile_a[kTile][kTile];
    __shared__ float tile_b[kTile][kTile];

    const index_t m = static_cast<index_t>(m_arg);
    const index_t n = static_cast<index_t>(n_arg);
    const index_t k = static_cast<index_t>(k_arg);
    const index_t row = static_cast<index_t>(blockIdx.y) * kTile + threadIdx.y;
    const index_t column = static_cast<index_t>(blockIdx.x) * kTile + threadIdx.x;
    const index_t tile_count = (k + kTile - 1) / kTile;
    float accumulator = 0.0F;

    // Threads outside C must not return early: they still load their share
    // of each tile (zeros past the edge) and must reach both barriers.
    for (index_t tile = 0; tile < tile_count; ++tile) {
        const index_t a_column = tile * kTile + threadIdx.x;
        const index_t b_row = tile * kTile + threadIdx.y;
        float a_value = 0.0F;
        if (row < m) {
            // The bug: the column is not checked before the load.
            a_value = *reinterpret_cast<const volatile float*>(a + row * k + a_column);
        }
        tile_a[threadIdx.y][threadIdx.x] = a_column < k ? a_value : 0.0F;
        tile_b[threadIdx.y][threadIdx.x] =
            b_row < k && column < n ? b[b_row * n + column] : 0.0F;
        // Barrier 1: the whole tile is loaded before anyone reads it.
        __syncthreads();

#pragma unroll
        for (unsigned int inner = 0; inner < kTile; ++inner) {
            accumulator += tile_a[threadIdx.y][inner] * tile_b[inner][threadIdx.x];
        }
        // Barrier 2: everyone has finished reading before the next tile
        // overwrites LDS.
        __syncthreads();
    }

    if (row < m && column < n) {
        c[row * n + column] = accumulator;
    }
}
