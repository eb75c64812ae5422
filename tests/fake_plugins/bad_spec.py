"""A plugin that declares nonsense: a tolerance for fp32 only, but fp16 declared too."""

import gemmreg


@gemmreg.hookimpl
def gemmreg_register_kernels(register):
    register(
        gemmreg.KernelSpec(
            name="fake_bad_spec",
            summary="declares fp16 without a tolerance for it",
            prepare=lambda problem: None,
            capabilities=gemmreg.Capabilities(
                dtypes={"fp32", "fp16"},
                backends={"cpu"},
                precision={
                    "fp32": gemmreg.Precision(math="ieee_fp32"),
                    "fp16": gemmreg.Precision(math="fp16"),
                },
            ),
            tolerances={"fp32": gemmreg.Tolerance(rtol=1e-5)},
        )
    )
