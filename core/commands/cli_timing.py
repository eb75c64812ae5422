"""``gemmreg compare`` and ``bench``: the timing commands (``report`` reads
their saved runs: :mod:`gemmreg.commands.cli_report`). Here the options are
parsed once into a request (:mod:`gemmreg.commands.cli_points`), handed to
the work the Python API calls too (:mod:`gemmreg.commands.compare_command`,
:mod:`gemmreg.commands.bench_command`) with what the command line adds
(GPUs, a Ray cluster, profilers, a progress bar: :class:`Launch`), and the
result printed; the tables are :mod:`gemmreg.reporting.render_compare`'s."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from gemmreg.commands import cli_device, cli_points, cli_profiler, cli_resume, document_output
from gemmreg.commands.cli_common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NOT_SAVED,
    EXIT_OK,
    _error,
    _progress,
)
from gemmreg.commands.launching import Launch
from gemmreg.commands.request_values import option_spelling
from gemmreg.contract.options import UsageError
from gemmreg.workers import temp_folders


def _launch(args: argparse.Namespace, profilers: list[tuple[str, str]], **more: Any) -> Launch:
    """Where the command line runs a timing request: ``--devices``, ``--ray``,
    a meter on stderr, and the checks of ``--device`` and the profilers once
    the backend is known."""
    ray_address = cli_device.ray_address(args)
    cli_profiler.refuse_with_ray(ray_address, profilers)

    def on_backend(info: Any) -> None:
        cli_device.require_gpu(args, info)
        cli_profiler.refuse_on(info.kind, profilers)

    return Launch(
        spell=option_spelling,
        devices=cli_device.several(args),
        ray=ray_address,
        meter=True,
        on_backend=on_backend,
        **more,
    )


def cmd_compare(args: argparse.Namespace) -> int:
    from gemmreg.commands import compare_command

    request = cli_points.compare_request(args)
    profilers = cli_profiler.chosen(args)
    kept = temp_folders.temporary_folder("profiled-caches") if profilers else None

    def profile(reports: Any, manifest: dict[str, Any], chosen: Any) -> None:
        assert kept is not None
        env = cli_profiler.worker_env(Path(kept.name), chosen)
        per_point = len(reports) > 1  # several dtypes: each profile's files named by its point
        # Interrupted: the last report alone, for run_after to say the profilers were skipped.
        for report in reports[-1:] if reports[-1].partial else reports:
            cli_profiler.run_after(profilers, report, manifest, args.out, _progress, env, per_point)

    with kept if kept is not None else contextlib.nullcontext():
        more = {} if kept is None else {"keep_cache": Path(kept.name), "after": profile}
        result = compare_command.compare(request, _progress, _launch(args, profilers, **more))
    document_output.emit(result.table(args.format))
    if result.nothing_timed:
        _error("nothing was timed: " + result.nothing_timed)
    compare_command.save(result, _progress)
    if result.partial:
        return EXIT_INTERRUPTED
    return _gated(result.reports, args.fail_on, EXIT_FAILURE if result.failed else EXIT_OK)


def _gated(reports: Any, fail_on: Any, code: int) -> int:
    """``code``, or exit 1 with one line where a pair fails ``--fail-on``."""
    from gemmreg.commands import gates

    line = gates.gate_line(reports, fail_on)
    if line:
        _error(line)
        return EXIT_FAILURE
    return code


def _not_saved(done: Any, out: Path, fmt: str) -> int:
    """A sweep whose save the storage refused (on one GPU, several or a
    cluster): every finished point's table (their figures were printed as
    each finished), one line naming the file and what the folder keeps,
    exit 4. The folder's run is partial unless its last save held every
    point (only the closing save, with the GPU state after, was refused)."""
    from gemmreg.reporting import formats, render_sweep

    if formats.get(fmt).writes == "records":  # a sweep's records are its run: not saved
        fmt = formats.default()
    document_output.emit(render_sweep.sweep_table(done.reports, fmt))
    kept = f"{out}/ keeps the run as last saved{' (partial)' if done.partial else ''}"
    _error(f"{done.not_saved}; {kept}; every point's figures are printed above")
    return EXIT_NOT_SAVED


def cmd_bench(args: argparse.Namespace) -> int:
    from gemmreg.commands import bench_command
    from gemmreg.reporting import formats, render_compare, speedup_means

    if args.fail_on and len(args.names) < 2:  # it gates pairs: one kernel makes none
        raise UsageError(
            f"--fail-on {','.join(args.fail_on)} gates pairs: one kernel makes no pair; "
            "name a baseline first"
        )
    resumed: list[str] = []  # what a resumed sweep times, said once it starts
    if args.resume is not None:
        request, resumed = cli_resume.bench_request(args)
    else:
        request = cli_points.bench_request(args)
    profilers = cli_profiler.chosen(args)

    def on_start() -> None:
        for line in resumed:
            _progress(line)

    result = bench_command.bench(request, _progress, _launch(args, profilers, on_start=on_start))
    out = result.out
    assert out is not None  # a sweep is always saved
    if result.not_saved:
        return _not_saved(result, out, args.format)
    if not result.partial:  # before the output: `--format json` prints the run as saved
        cli_profiler.run_after_sweep(profilers, out, _progress)
    formatter = formats.get(args.format)
    if formatter.writes == "records":  # the run as saved: `report OUT` prints the same
        from gemmreg.reporting import runs

        manifest, reports, partial = runs.load_run(out)
        document_output.emit(render_compare.run_output(manifest, reports, partial, args.format))
    else:
        document_output.emit(result.table(args.format))
    means = speedup_means.mean_lines(result.reports)
    if means:
        wide = speedup_means.sweep_wide_command([str(out)])
        means += speedup_means.sweep_level_lines(result.reports, wide)
    if means and not formatter.document_only:
        document_output.emit("\n" + "\n".join(means))
    elif means:  # csv and json keep stdout to the document
        _progress("\n".join(means))
    _progress(f"run saved to {out}/")
    if result.partial:
        return EXIT_INTERRUPTED
    return _gated(result.reports, args.fail_on, EXIT_FAILURE if result.failed else EXIT_OK)
