"""A GPU kernel that makes an illegal address access, poisoning the CUDA
context of the worker it runs in (every later CUDA call there fails).

For the H200 evidence run: ``gemmreg check fake_gpu_poison torch_ref`` and
``gemmreg compare torch_ref fake_gpu_poison`` must report it on its own row
and keep torch_ref's results. Declared for GPUs only: on the CPU it is listed
as unavailable (Triton's interpreter would segfault, not poison a context).
"""

import gemmreg

from fake_plugins import fp32_spec

FAR_AWAY_ELEMENTS = 1 << 40
"""4 TiB past C in fp32: no allocation reaches that far."""
GPU_ONLY = gemmreg.Capabilities(
    dtypes={"fp32"},
    backends={"cuda", "rocm"},
    precision={"fp32": gemmreg.Precision(math="ieee_fp32", detail="a fault, not a GEMM")},
)


def prepare(problem):
    from fake_plugins.gpu_kernels import store_far_away

    def launch(a, b, out):
        store_far_away[(1,)](out, FAR_AWAY_ELEMENTS)

    return launch


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(fp32_spec("fake_gpu_poison", None, prepare=prepare, capabilities=GPU_ONLY))
