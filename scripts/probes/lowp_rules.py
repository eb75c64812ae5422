"""What torch._scaled_mm (fp8) and torch._int_mm (int8) accept on this GPU, and
how far cuBLASLt's fp8 accumulation lands from the float64 sum: the figures
behind gemmreg_plugins.torch_lowp's declarations and the standard fp8 tolerance.

Run on the GPU machine: python3 scripts/probes/lowp_rules.py
"""

import itertools

import torch

dev = "cuda"
print("torch", torch.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_capability())
F8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
OUT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def lay(x, how):
    if how == "row":
        return x.contiguous()
    if how == "col":
        return x.t().contiguous().t()
    if how == "pad":
        w = torch.zeros(x.shape[0], x.shape[1] + 16, dtype=x.dtype, device=x.device)
        w[:, : x.shape[1]] = x
        return w[:, : x.shape[1]]


def scaled(m, n, k, la="row", lb="col", out="bf16", scaling="tensor", f8="e4m3", fast=False):
    a = lay((torch.randn(m, k, device=dev) * 8).to(F8[f8]), la)
    b = lay((torch.randn(k, n, device=dev) * 8).to(F8[f8]), lb)
    if scaling == "tensor":
        sa = torch.tensor(0.37, device=dev)
        sb = torch.tensor(1.9, device=dev)
    else:
        sa = torch.rand(m, 1, device=dev) + 0.3
        sb = torch.rand(1, n, device=dev) + 0.3
    try:
        c = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=OUT[out], use_fast_accum=fast)
    except Exception as e:
        return "ERR " + str(e).splitlines()[0][:160]
    ref = (a.double() * sa.double()) @ (b.double() * sb.double())
    return f"ok {float((c.double() - ref).abs().max() / ref.abs().max()):.2e}"


print("== _scaled_mm layouts (64^3, bf16, tensor)")
for la, lb in itertools.product(["row", "col", "pad"], repeat=2):
    print(la, lb, scaled(64, 64, 64, la, lb))
print("== _scaled_mm shapes (row, col)")
for m, n, k in [
    (16, 16, 16),
    (17, 16, 16),
    (16, 17, 16),
    (16, 16, 17),
    (8, 16, 16),
    (1, 16, 16),
    (16, 8, 16),
    (16, 16, 8),
    (32, 32, 24),
    (65, 64, 64),
    (1, 1, 16),
]:
    print(m, n, k, scaled(m, n, k), scaled(m, n, k, scaling="rowwise"))
print("== _scaled_mm outputs and scalings")
for f8, out, sc in itertools.product(F8, OUT, ["tensor", "rowwise"]):
    print(f8, out, sc, scaled(128, 128, 128, out=out, scaling=sc, f8=f8))
print("== accumulation error / (|A|@|B|), e4m3, fp32 out, tensor scales")
for k in (256, 4096, 16384, 65536):
    for kind in ("normal", "positive"):
        for fast in (False, True):
            g = torch.Generator(device=dev).manual_seed(k)
            m = n = 256
            a = torch.randn(m, k, device=dev, generator=g) * 64
            b = torch.randn(n, k, device=dev, generator=g) * 64
            if kind == "positive":
                a, b = a.abs(), b.abs()
            a8, b8 = a.to(F8["e4m3"]), b.to(F8["e4m3"]).t()
            one = torch.tensor(1.0, device=dev)
            c = torch._scaled_mm(
                a8, b8, scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=fast
            )
            ref = a8.double() @ b8.double()
            s = a8.double().abs() @ b8.double().abs()
            err = ((c.double() - ref).abs() / s).max()
            print(f"k={k} {kind} fast_accum={fast}: max err/S {float(err):.2e}")


def intmm(m, n, k, la="row", lb="row"):
    a = lay(torch.randint(-128, 128, (m, k), dtype=torch.int8, device=dev), la)
    b = lay(torch.randint(-128, 128, (k, n), dtype=torch.int8, device=dev), lb)
    try:
        c = torch._int_mm(a, b)
    except Exception as e:
        return "ERR " + str(e).splitlines()[0][:160]
    return "ok exact" if torch.equal(c.double(), a.double() @ b.double()) else "ok WRONG"


print("== _int_mm layouts (64^3)")
for la, lb in itertools.product(["row", "col", "pad"], repeat=2):
    print(la, lb, intmm(64, 64, 64, la, lb))
print("== _int_mm shapes")
for m, n, k in [
    (16, 16, 16),
    (17, 16, 16),
    (17, 17, 16),
    (17, 16, 17),
    (32, 8, 8),
    (32, 8, 12),
    (1, 8, 8),
    (17, 19, 23),
    (64, 64, 65536),
]:
    print(m, n, k, intmm(m, n, k))
