// MUTANT of matmul_tiled: the second barrier of each K step is gone.
//
// Caught by: compute-sanitizer racecheck (a shared-memory race: the next
// tile's writes against this tile's reads, "Race reported between Write
// access ... and Read access"). Why the values stay right in a normal run: the
// 8 warps of a 16x16 block run nearly in step on an H200, so a warp almost
// never overwrites a tile another warp is still reading; on an H200 it gave
// max error 0.0 on the whole value matrix in a normal run, and
// 18.7 under compute-sanitizer, whose changed schedule lets warps drift apart.
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

extern "C" __global__ void matmul_tiled_no_second_barrier(const float* __restrict__ a,
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
        tile_a[threadIdx.y][threadIdx.x] =
            row < m && a_column < k ? a[row * k + a_column] : 0.0F;
        tile_b[threadIdx.y][threadIdx.x] =
            b_row < k && column < n ? b[b_row * n + column] : 0.0F;
        // Barrier 1: the whole tile is loaded before anyone reads it.
        __syncthreads();

#pragma unroll
        for (unsigned int inner = 0; inner < kTile; ++inner) {
            accumulator += tile_a[threadIdx.y][inner] * tile_b[inner][threadIdx.x];
        }
        // The bug: no second barrier, so a fast warp's next tile may
        // overwrite LDS that a slower warp is still reading.
    }

    if (row < m && column < n) {
        c[row * n + column] = accumulator;
    }
}
