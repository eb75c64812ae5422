"""The plugin author's contract: the hooks a gemmreg plugin may implement.

A plugin is a module (or object) with ``@gemmreg.hookimpl`` functions, exposed
through an entry point in the ``gemmreg`` group of its distribution::

    [project.entry-points.gemmreg]
    my_gemm = "my_package.plugin"

and in ``my_package/plugin.py`` (gemmreg's own tests run this example)::

    import functools

    import gemmreg
    import triton
    import triton.language as tl

    BLOCK = 32


    @triton.jit  # at module level: importing gemmreg decided Triton's interpreter
    def matmul(a, b, c, m, n, k, sam, sak, sbk, sbn, scm, scn,
               BLOCK: tl.constexpr, PRECISION: tl.constexpr):
        rm = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        rn = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k0 in range(0, k, BLOCK):
            rk = (k0 + tl.arange(0, BLOCK)).to(tl.int64)
            x = tl.load(a + rm[:, None] * sam + rk[None, :] * sak,
                        mask=(rm[:, None] < m) & (rk[None, :] < k), other=0.0)
            y = tl.load(b + rk[:, None] * sbk + rn[None, :] * sbn,
                        mask=(rk[:, None] < k) & (rn[None, :] < n), other=0.0)
            acc += tl.dot(x, y, input_precision=PRECISION)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty),
                 mask=(rm[:, None] < m) & (rn[None, :] < n))


    def prepare(caps, precision, problem: gemmreg.Problem) -> gemmreg.Launch:
        # Once per problem, outside any timing: refuse, compile, fix the grid.
        caps.require(problem)  # refuse, clearly, what is not declared
        grid = (triton.cdiv(problem.m, BLOCK), triton.cdiv(problem.n, BLOCK))
        m, n, k = problem.mnk

        def launch(a, b, out):  # enqueue out = a @ b: no allocation, no sync
            matmul[grid](a, b, out, m, n, k, *a.stride(), *b.stride(), *out.stride(),
                         BLOCK=BLOCK, PRECISION=precision)

        return launch


    @gemmreg.hookimpl
    def gemmreg_register_kernels(register):
        # This hook runs where the kernels run, after gemmreg decided the backend:
        # declare the arithmetic that really runs here. fp32 tl.dot with 'tf32'
        # is TF32 on NVIDIA; the interpreter ignores it and multiplies in IEEE fp32.
        tf32 = gemmreg.where().triton_target == "cuda"
        precision = {
            "fp32": gemmreg.Precision(math="tf32" if tf32 else "ieee_fp32",
                                      detail="tl.dot input_precision='tf32'" if tf32 else "tl.dot"),
            "fp16": gemmreg.Precision(math="fp16", detail="tl.dot, fp32 accumulator"),
        }
        caps = gemmreg.Capabilities(
            precision=precision,  # the dtypes it runs: fp32 and fp16
            layouts=gemmreg.LAYOUTS,  # strides, not shapes, address A, B and C
            triton=True,  # Triton's known limits come from the core
        )  # backends: CUDA, ROCm and the CPU, the default
        register(gemmreg.KernelSpec(
            name="my_gemm",
            summary="Triton GEMM, 32x32 tiles",
            prepare=functools.partial(prepare, caps, "tf32" if tf32 else "ieee"),
            capabilities=caps,
            # gemmreg's standard figure for the math declared: TF32's where it runs
            tolerances=gemmreg.standard_tolerances(precision),
        ))  # sources: the file defining prepare is hashed into every run's manifest

Everything a plugin uses comes from ``gemmreg`` itself (``gemmreg.__all__``);
its other modules are the core's own and change without notice.

Rules the core relies on:

- Importing the module must be cheap: compile kernels in ``prepare`` or on the
  first launch, never at import. A module-level ``@triton.jit`` compiles
  nothing, and is decorated the right way: importing ``gemmreg`` turns Triton's
  interpreter on where no GPU can be here, and where a GPU device node exists,
  discovery decides, with torch, before it imports any plugin (a host with a
  device node but no GPU torch can use runs ``GEMMREG_DEVICE=cpu`` to import
  such a module itself, before discovery).
- A plugin never times itself, prints pass/fail or chooses shapes.
- A launch addresses A, B and C from each tensor's own start
  (``x.data_ptr()``, which includes its storage offset) and its strides: the
  ``padded`` layout hands views that start inside their buffers, as slices
  of a fused projection's output do, with NaN before and after every row.
- A plugin never sets torch's global switches (TF32, matmul precision,
  default dtype, stream): the core pins them per kernel from its declared
  precision. A kernel whose fp32 ``Precision.math`` is ``"tf32"`` runs its
  prepare and launches with TF32 matmuls allowed (``torch.mm`` is then cuBLAS
  TF32), every other one with IEEE fp32; a switch its code flips fails its case.
- Where the kernels run comes from :func:`gemmreg.where`, never from the
  environment: the backend, the device to allocate on, the GPU's name,
  compute capability and multiprocessors, and whether Triton runs
  interpreted. Declarations that differ by backend (precision, tolerance)
  are made in the hook from it, as above: the hook runs in every process
  that runs kernels, after the backend is decided.
- ``Capabilities(triton=True)`` marks a Triton kernel: the core then applies
  Triton's known limits (:mod:`gemmreg.contract.known_limits`): bf16 under the
  interpreter is unsupported, and with no Triton installed the kernel is
  unavailable. Declare your own limits with ``constraint``.
- fp8 and int8 kernels declare ``Capabilities(out_dtypes=..., scalings=...)``;
  an fp8 launch is ``launch(a, b, out, scale_a, scale_b)`` (docs/plugins.md,
  "Low-precision kernels").
- Grouped kernels (an MoE layer's experts: members of ``problem.groups[i]``
  rows sharing n and k) declare ``Capabilities(grouped=True)``; a grouped
  launch is ``launch(a, b, out, offsets)``: A (sum m_i x k) and C (sum m_i x n)
  the members' rows stacked, B (groups x k x n) one weight per member, and
  ``offsets`` an int32 tensor of groups + 1 entries on the device, member i's
  rows ``offsets[i]:offsets[i + 1]`` (empty members included: equal entries).
  The sizes are ``problem.groups`` too, known in ``prepare``
  (:mod:`gemmreg.contract.grouping`).
- A launch that runs different code per problem (a tuned config, a dispatch
  to a split-K or GEMV kernel) may name it: ``return gemmreg.variant(launch,
  "128x256x64, 4 stages")`` in ``prepare``. The name rides on the launch (no
  wrapper, nothing a call), the core records it for every timed process, and
  ``gemmreg report RUN --kernels`` shows it beside the device kernels the
  calls launched.
- Kernels compiled at run time from HIP/CUDA source use
  :func:`gemmreg.compile_kernel`, with ``available=gemmreg.compile_unavailable``.
- A plugin that keeps anything on disk between processes (autotuning choices,
  say) keeps it under ``gemmreg.where().cache_dir`` (``$GEMMREG_CACHE_DIR``).
  ``gemmreg compare`` points that at an empty directory for its first process,
  so tuning is reported as cold start and reused, as warm start, by the others.
- Under ``gemmreg check --sanitize``, ``gemmreg.where().sanitizer`` names the
  tool: kernels run 10-100x slower there and timings mean nothing, so skip
  speed-only work such as benchmarking candidate configs.
- Several kernels of one module under entry-point names of their own (so
  each can be selected or blocked alone): point each entry point at a
  module-level ``KernelSpec`` (or a tuple of them) instead of at the module::

      [project.entry-points.gemmreg]
      my_gemm = "my_package.plugin:MY_GEMM"
      my_gemm_small = "my_package.plugin:MY_GEMM_SMALL"

  pluggy registers any one object once, so two entry points naming the
  module itself cannot both load; gemmreg wraps each spec in a plugin of its
  own. A module with a hook may register several kernels under one name.
- Hook implementations may accept fewer arguments than the spec lists, so a
  spec can gain arguments without breaking existing plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from gemmreg.contract.records import KernelSpec

PROJECT_NAME = "gemmreg"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)

# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


@hookspec
def gemmreg_register_kernels(register: Callable[[KernelSpec], None]) -> None:
    """Register this plugin's kernels, calling ``register(spec)`` once for each.

    :param register: Validates a :class:`gemmreg.KernelSpec`, rejects a name
        already taken (naming both packages) and records the plugin's origin.
    :returns: Nothing; a returned value is ignored.
    """
