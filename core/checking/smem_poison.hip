// smem_poison: fill a block's dynamic shared memory with 0xFF bytes.
//
// The sanitizer pass's own check (`gemmreg check --sanitize smempoison`):
// launched right before the kernel under test, on enough blocks, each asking
// for all the shared memory a block may opt into, to cover every multiprocessor.
// 0xFF bytes read as NaN in fp32, fp16 and bf16, so a kernel that reads shared
// memory it never wrote, and multiplies it by zero padding, now gets NaN into C
// instead of the harmless finite leftovers of an earlier kernel.
//
// The stores go through a volatile pointer: nothing reads them in this kernel,
// and a compiler may drop stores that nothing reads.
//
// Kernel-only source: compiled at run time by NVRTC or hiprtc (gemmreg.gpu_compile).

extern "C" __global__ void smem_poison(unsigned int words) {
    extern __shared__ unsigned int poison_words[];
    volatile unsigned int* poison = poison_words;
    for (unsigned int i = threadIdx.x; i < words; i += blockDim.x) {
        poison[i] = 0xFFFFFFFFu;
    }
}
