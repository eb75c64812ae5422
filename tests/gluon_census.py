"""What the Gluon kernels' native tests read from a compiled kernel, as
source their scripts begin with (a script runs in a fresh Python,
:func:`gemmreg.testing.native_compile`): ``census(compiled)``, the facts of
its PTX and cubin the tests assert on, so the dense and the grouped kernel
are read alike."""

CENSUS = """
import re, subprocess, tempfile
from pathlib import Path
import triton
from gemmreg.testing import ptxas_report

CUOBJDUMP = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"


def census(compiled):
    ptx = compiled.asm["ptx"]
    cubin = Path(tempfile.mkdtemp()) / "k.cubin"
    cubin.write_bytes(compiled.asm["cubin"])
    usage = subprocess.run([str(CUOBJDUMP), "--dump-resource-usage", str(cubin)],
                           capture_output=True, text=True, check=True).stdout
    wgmma = re.findall(r"wgmma\\.mma_async\\.sync\\.aligned\\.(\\w+)\\.f32\\.(\\w+)\\.\\w+ "
                       r"[^;]*?, *(-?\\d+), *(-?\\d+), *(-?\\d+), *(-?\\d+);", ptx)
    return {
        "shared": compiled.metadata.shared,
        "warps": compiled.metadata.num_warps,
        "setmaxnreg": sorted(set(re.findall(
            r"setmaxnreg\\.(inc|dec)\\.sync\\.aligned\\.u32\\s+(\\d+)", ptx))),
        "wgmma": sorted(set(wgmma)),
        "tma_loads": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.shared::\\w+\\.global", ptx)),
        "tma_stores": len(re.findall(r"cp\\.async\\.bulk\\.tensor\\.2d\\.global\\.shared", ptx)),
        "shared_loads": len(re.findall(r"\\bld\\.shared|\\bldmatrix", ptx)),
        "shared_stores": len(re.findall(r"\\bst\\.shared|\\bstmatrix", ptx)),
        "masked_stores": len(re.findall(r"@%p\\d+ st\\.global", ptx)),
        "local": len(re.findall(r"\\bst\\.local|\\bld\\.local", ptx)),
        "serialized": ptxas_report(ptx)["serialized"],
        "stack": int(re.search(r"STACK:(\\d+)", usage).group(1)),
        "local_bytes": int(re.search(r"LOCAL:(\\d+)", usage).group(1)),
    }
"""
