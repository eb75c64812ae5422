// MUTANT of matmul_tiled: the A loader skips the tile entries past the edge
// of A instead of writing zeros there.
//
// Caught by: gemmreg's smempoison only (no compute-sanitizer tool checks
// shared memory for initialisation: initcheck covers global memory). The
// stale entry tile_a[y][i] for a column past K is multiplied by tile_b[i][x],
// which is a zero (B's row past K), so whatever finite value an earlier
// kernel left in shared memory adds 0 to C. smempoison fills shared memory with
// 0xFF (NaN) before the launch: NaN * 0 = NaN reaches C and the value check
// fails. Only when the partial K tile is the first one (K < 16, as in the
// sanitize subset's 65x67x7) are the stale entries an earlier kernel's; in a
// later partial tile they are this block's own previous tile, finite.
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

extern "C" __global__ void matmul_tiled_uninit_shared(const float* __restrict__ a,
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
        if (row < m && a_column < k) {
            // The bug: past the edge nothing is written, where zeros belong.
            tile_a[threadIdx.y][threadIdx.x] = a[row * k + a_column];
        }
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
