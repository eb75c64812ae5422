// matmul_regtiled: register-tiled IEEE fp32 GEMM, C (MxN) = A (MxK) @ B (KxN),
// all three row-major with row strides lda, ldb, ldc (elements).
//
// Design (the classic register-tiled SGEMM):
// - A block of 256 threads computes a 128x128 tile of C, stepping through K
//   8 at a time. The 128x8 slice of A is stored TRANSPOSED in shared memory
//   (tile_a[k][m]), so that for each k a thread reads its A values as float4
//   along M, exactly as it reads B's values as float4 along N.
// - Each thread owns 8x8 outputs in registers, split 2x(4x4): rows
//   ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns tx*4 + {0..3} and
//   64 + tx*4 + {0..3} (tx, ty = thread index mod / div 16). Per k it does
//   four 16-byte shared loads and 64 FMAs. Splitting the 8 columns into two
//   groups 64 apart keeps each quarter-warp's float4 reads of B on 32
//   consecutive words (all 32 banks, no conflict); a thread's A reads are
//   shared by the 16 threads of its row group (broadcast).
// - tile_a rows are padded from 128 to 132 floats: the transposed stores
//   (one float per k) then land on 32 distinct banks per warp, and every row
//   start stays 16-byte aligned for the float4 reads.
// - Double buffering: two shared buffers. While the block computes from one,
//   each thread's global loads for the next K step are already in flight into
//   registers, and are written to the other buffer after the FMAs, so there
//   is one barrier per K step instead of two.
// - Global loads: each thread loads one float4-sized piece of A (4 consecutive
//   k of one row) and one of B (4 consecutive columns of one k row) per K step.
//   A piece is loaded as one 16-byte load only when that is legal: the
//   operand's base pointer is 16-byte aligned and its row stride a multiple
//   of 4 elements (then every piece starts on a 16-byte boundary), and the
//   whole piece lies inside the matrix. Otherwise it is four guarded scalar
//   loads, with zeros past the edge; zeros in the K tail of both A and B add
//   nothing, and zero rows/columns past M and N are computed but never
//   stored. The same test, on C, picks float4 or guarded scalar stores.
//   Padding between rows (lda > K) is never read: every load is bounded by K
//   (or N), never by the stride.
// - Every thread, inside C or not, runs the same number of K steps and
//   reaches every barrier; the only early-out is on the stores, after the
//   last barrier.
// - A 1-D grid: block b computes block row b / ceil(N/128) and block column
//   b % ceil(N/128), so neither M nor N meets the 65535 limit of gridDim.y.
//
// Kernel-only source: it must compile under NVRTC and hiprtc, which have no
// C++ standard headers, so sizes use the 64-bit index_t below, and the
// 16-byte vector type is our own struct rather than float4 from a header.
// The sizes arrive as 32-bit int, because the runtime launcher passes Python
// ints as C int; every offset is computed in 64 bits. Nothing depends on the
// warp (wavefront) size: 32 only enters the bank-conflict reasoning above.

typedef unsigned long long index_t;

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 8;
constexpr int kThreads = 256;
constexpr int kThreadsN = 16;                // threads along N; 256 / 16 = 16 along M
constexpr int kHalfM = kBlockM / 2;          // offset of a thread's second group of 4 rows
constexpr int kHalfN = kBlockN / 2;          // offset of a thread's second group of 4 columns
constexpr int kStrideTileA = kBlockM + 4;    // padded row of the transposed A tile
constexpr int kPiecesAK = kBlockK / 4;       // 4-element pieces per row of the A tile
constexpr int kPiecesBN = kBlockN / 4;       // 4-element pieces per row of the B tile
constexpr int kLoadsA = kBlockM * kPiecesAK / kThreads;  // pieces of A per thread per K step
constexpr int kLoadsB = kBlockK * kPiecesBN / kThreads;  // pieces of B per thread per K step

static_assert(kThreads == kThreadsN * (kBlockM / 8), "8 rows per thread");
static_assert(kBlockN == kThreadsN * 8, "8 columns per thread");
static_assert(kLoadsA * kThreads == kBlockM * kPiecesAK, "A tile splits evenly");
static_assert(kLoadsB * kThreads == kBlockK * kPiecesBN, "B tile splits evenly");

struct alignas(16) Vec4 {
    float x, y, z, w;
};

// Four consecutive elements ptr[0..3], of which the first `valid` exist
// (valid may be <= 0). One 16-byte load when all four exist and ptr is 16-byte
// aligned (the caller's `vector_ok`), else guarded scalar loads with zeros in
// place of missing elements.
__device__ __forceinline__ void load_piece(const float* __restrict__ ptr,
                                           int valid,
                                           bool vector_ok,
                                           float (&out)[4]) {
    if (vector_ok && valid >= 4) {
        const Vec4 v = *reinterpret_cast<const Vec4*>(ptr);
        out[0] = v.x;
        out[1] = v.y;
        out[2] = v.z;
        out[3] = v.w;
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            out[i] = i < valid ? ptr[i] : 0.0F;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256, 2)
    matmul_regtiled(const float* __restrict__ a,
                    const float* __restrict__ b,
                    float* __restrict__ c,
                    int m_arg,
                    int n_arg,
                    int k_arg,
                    int lda_arg,
                    int ldb_arg,
                    int ldc_arg) {
    __shared__ __align__(16) float tile_a[2][kBlockK][kStrideTileA];  // [buffer][k][m]
    __shared__ __align__(16) float tile_b[2][kBlockK][kBlockN];       // [buffer][k][n]

    const index_t m = static_cast<index_t>(m_arg);
    const index_t n = static_cast<index_t>(n_arg);
    const index_t lda = static_cast<index_t>(lda_arg);
    const index_t ldb = static_cast<index_t>(ldb_arg);
    const index_t ldc = static_cast<index_t>(ldc_arg);

    const int tid = static_cast<int>(threadIdx.x);
    const int tx = tid % kThreadsN;
    const int ty = tid / kThreadsN;

    // n_arg <= 2^31 - 1, so the sum fits in 32 unsigned bits.
    const unsigned int blocks_n =
        (static_cast<unsigned int>(n_arg) + kBlockN - 1) / static_cast<unsigned int>(kBlockN);
    const index_t block_row = static_cast<index_t>(blockIdx.x / blocks_n) * kBlockM;
    const index_t block_col = static_cast<index_t>(blockIdx.x % blocks_n) * kBlockN;

    // 16-byte loads and stores are legal when the base is 16-byte aligned and
    // the row stride is a multiple of 4: every piece then starts at
    // row * ld + (multiple of 4) elements from an aligned base.
    const bool vector_a = reinterpret_cast<index_t>(a) % 16 == 0 && lda % 4 == 0;
    const bool vector_b = reinterpret_cast<index_t>(b) % 16 == 0 && ldb % 4 == 0;
    const bool vector_c = reinterpret_cast<index_t>(c) % 16 == 0 && ldc % 4 == 0;

    // This thread's pieces of the A tile: row a_tile_row, k a_tile_k..+3 of
    // the current K step; of the B tile: k row b_tile_k, columns b_tile_col..+3.
    // Each piece keeps a pointer that advances one K step at a time, so the
    // loop carries no 64-bit multiply. A row past M gets a_row_ok false and a
    // pointer never dereferenced; B's column count inside N is fixed per piece.
    int a_tile_row[kLoadsA];
    int a_tile_k[kLoadsA];
    bool a_row_ok[kLoadsA];
    const float* a_piece[kLoadsA];
#pragma unroll
    for (int l = 0; l < kLoadsA; ++l) {
        const int piece = tid + l * kThreads;
        a_tile_row[l] = piece / kPiecesAK;
        a_tile_k[l] = (piece % kPiecesAK) * 4;
        const index_t row = block_row + a_tile_row[l];
        a_row_ok[l] = row < m;
        a_piece[l] = a + (row * lda + a_tile_k[l]);
    }
    int b_tile_k[kLoadsB];
    int b_tile_col[kLoadsB];
    int b_cols_valid[kLoadsB];  // columns of this piece inside N: 0..4
    const float* b_piece[kLoadsB];
#pragma unroll
    for (int l = 0; l < kLoadsB; ++l) {
        const int piece = tid + l * kThreads;
        b_tile_k[l] = piece / kPiecesBN;
        b_tile_col[l] = (piece % kPiecesBN) * 4;
        const index_t col = block_col + b_tile_col[l];
        b_cols_valid[l] = col >= n ? 0 : (n - col >= 4 ? 4 : static_cast<int>(n - col));
        b_piece[l] = b + (static_cast<index_t>(b_tile_k[l]) * ldb + col);
    }
    const index_t b_step = ldb * kBlockK;  // elements between one K step's B rows and the next

    float piece_a[kLoadsA][4];
    float piece_b[kLoadsB][4];

    // Global -> registers for the K step whose first k leaves `k_left` of K
    // (k_left = K - k0 >= 1), then advance the pointers one K step. A piece's
    // valid count is how many of its 4 k lie below K, or 0 for a row past M;
    // B's is how many of its 4 columns lie inside N, or 0 for a k row past K.
    auto load_step = [&](int k_left) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            const int valid = a_row_ok[l] ? k_left - a_tile_k[l] : 0;
            load_piece(a_piece[l], valid, vector_a, piece_a[l]);
            a_piece[l] += kBlockK;
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            const int valid = b_tile_k[l] < k_left ? b_cols_valid[l] : 0;
            load_piece(b_piece[l], valid, vector_b, piece_b[l]);
            b_piece[l] += b_step;
        }
    };

    // Registers -> shared buffer `buffer`: A transposed, B as one 16-byte store.
    auto store_step = [&](int buffer) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                tile_a[buffer][a_tile_k[l] + i][a_tile_row[l]] = piece_a[l][i];
            }
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            Vec4 v;
            v.x = piece_b[l][0];
            v.y = piece_b[l][1];
            v.z = piece_b[l][2];
            v.w = piece_b[l][3];
            *reinterpret_cast<Vec4*>(&tile_b[buffer][b_tile_k[l]][b_tile_col[l]]) = v;
        }
    };

    float accumulator[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            accumulator[i][j] = 0.0F;
        }
    }

    // k_left = K - k0 for the current step; K <= 2^31 - 1, so it fits in int
    // and only decreases. The loop runs ceil(K / 8) >= 1 times for every
    // thread of the block alike.
    int k_left = k_arg;
    load_step(k_left);
    store_step(0);
    // Barrier 0: buffer 0 is complete before anyone reads it.
    __syncthreads();

    for (int current = 0; k_left > 0; current ^= 1, k_left -= kBlockK) {
        const bool more = k_left > kBlockK;  // the same for every thread of the block
        if (more) {
            load_step(k_left - kBlockK);  // in flight during the FMAs below
        }

#pragma unroll
        for (int kk = 0; kk < kBlockK; ++kk) {
            const Vec4 a_lo = *reinterpret_cast<const Vec4*>(&tile_a[current][kk][ty * 4]);
            const Vec4 a_hi = *reinterpret_cast<const Vec4*>(&tile_a[current][kk][kHalfM + ty * 4]);
            const Vec4 b_lo = *reinterpret_cast<const Vec4*>(&tile_b[current][kk][tx * 4]);
            const Vec4 b_hi = *reinterpret_cast<const Vec4*>(&tile_b[current][kk][kHalfN + tx * 4]);
            const float fa[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float fb[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    accumulator[i][j] += fa[i] * fb[j];
                }
            }
        }

        if (more) {
            // The other buffer was last read in the previous step, and every
            // thread has passed that step's barrier, so it is free.
            store_step(current ^ 1);
        }
        // Barrier: the next buffer is complete, and this one has been read by
        // everyone, before the next step reads one and overwrites the other.
        __syncthreads();
    }

    // Stores: no barrier below, so threads outside C may skip their rows.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const index_t row = block_row + (i < 4 ? ty * 4 + i : kHalfM + ty * 4 + (i - 4));
        if (row < m) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const index_t col = block_col + h * kHalfN + tx * 4;
                const index_t offset = row * ldc + col;
                if (vector_c && col + 4 <= n) {
                    Vec4 v;
                    v.x = accumulator[i][h * 4 + 0];
                    v.y = accumulator[i][h * 4 + 1];
                    v.z = accumulator[i][h * 4 + 2];
                    v.w = accumulator[i][h * 4 + 3];
                    *reinterpret_cast<Vec4*>(c + offset) = v;
                } else {
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        if (col + j < n) {
                            c[offset + j] = accumulator[i][h * 4 + j];
                        }
                    }
                }
            }
        }
    }
}
