"""What the Gluon cluster probes share (``tf32_cluster_kernel.py``,
``f16_cluster_kernel.py``): a CTA's rank in its cluster, the pause that keeps
a polled shared load inside its loop, the two shared-memory layouts for
per-CTA words, and the counters the follower hands stages back on. Needs
Triton 3.9 (``cga_layout``), as they do.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

PER_CTA = gl.constexpr(gl.SwizzledSharedLayout(1, 1, 1, [0], cga_layout=[[1]]))  # [r] in CTA r
OWN = gl.constexpr(gl.SwizzledSharedLayout(1, 1, 1, [0], cga_layout=[[0]]))  # a CTA's own copy


@gluon.jit
def rank():
    """This CTA's rank in its cluster (0: the leader), a scalar."""
    # a layout both CTAs hold whole: each reads its own rank into its copy
    zero = gl.full([32], 0, gl.int32, gl.BlockedLayout([1], [32], [1], [0], cga_layout=[[0]]))
    value = gl.inline_asm_elementwise(
        "mov.u32 $0, %cluster_ctarank;", "=r,r", [zero], dtype=gl.int32, is_pure=True, pack=1
    )
    return gl.max(value, axis=0)


@gluon.jit
def pause(x):
    """x, after a short sleep; an asm with side effects, so that the shared
    load before it is not hoisted out of the loop that polls."""
    return gl.inline_asm_elementwise(
        "nanosleep.u32 20;\n mov.b32 $0, $1;", "=r,r", [x], dtype=gl.int32, is_pure=False, pack=1
    )


@gluon.jit
def hand_back_counters():
    """The K steps each of the follower's two consumers has handed back, one
    word each per CTA (only the leader's are added to), both 0 in both CTAs
    before either CTA goes on (a cluster barrier)."""
    released_first = gl.allocate_shared_memory(gl.int32, [2], PER_CTA)
    released_second = gl.allocate_shared_memory(gl.int32, [2], PER_CTA)
    zero = gl.full([1], 0, gl.int32, gl.BlockedLayout([1], [32], [4], [0], cga_layout=[[0]]))
    released_first.reinterpret(shape=[1], layout=OWN).store(zero)
    released_second.reinterpret(shape=[1], layout=OWN).store(zero)
    gl.barrier(cluster=True)  # both counters at 0 before either CTA adds to the leader's
    return released_first, released_second
