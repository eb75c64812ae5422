"""Patch an installed copy of triton_tuned for programmatic dependent launch (probe only)."""
import sys, pathlib
root = pathlib.Path(sys.argv[1]) / "gemmreg_plugins" / "triton_tuned"
k = root / "kernels.py"; s = k.read_text()
marker = "        TF32_SWAP: tl.constexpr = False,\n    ):\n"
assert marker in s
s = s.replace(marker, marker + "        tl.extra.cuda.gdc_wait()\n", 1); k.write_text(s)
t = root / "transpose.py"; s = t.read_text()
m2 = '        """dst[c, r] = src[r, c]; both row-major with the given row strides."""\n'
assert m2 in s
s = s.replace(m2, m2 + "        tl.extra.cuda.gdc_launch_dependents()\n", 1); t.write_text(s)
l = root / "launchers.py"; s = l.read_text()
m3 = "        kernel[grid](\n            a_desc,"
assert m3 in s
s = s.replace(m3, "        kernel[grid](\n            a_desc,", 1)
s = s.replace("            TF32_SWAP=", "            launch_pdl=True,\n            TF32_SWAP=", 1) if "TF32_SWAP=" in s else s
assert "launch_pdl=True" in s, "no TF32_SWAP kwarg to hang launch_pdl on"
l.write_text(s)
print("patched", root)
