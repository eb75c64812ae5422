"""Generated malformed command lines and saved runs, thrown at the
command line in-process. Each must end in exit 2 with exactly one line on
stderr, no traceback, nothing on stdout, and no work started (every entry to
workers, timing and plotting is made to fail the test, see ``offline_cli``).

Each generated case damages exactly one thing in an otherwise valid input, so
that it is malformed for a known reason. ~300 examples in all, well under a
minute: the CLI runs in this process, not in subprocesses.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import attrs
import pytest
from gemmreg.checking.sanitizer_tools import TOOLS as SANITIZER_TOOLS
from gemmreg.contract.records import ALL_DTYPES, DTYPES, LAYOUTS, Problem
from gemmreg.reporting import runs
from gemmreg.reporting.formats import FORMATS
from gemmreg.timing.stats import Interval
from gemmreg.timing.timing_records import (
    ColdStart,
    CompareReport,
    KernelSummary,
    ProcessRecord,
    ProcessRun,
    RegimeResult,
    Verdict,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offline_cli import forbid_work, run_main

PROPERTY_SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
COMMAND_EXAMPLES = 200
RUN_EXAMPLES = 120

KNOWN = {"torch_ref", "triton_baseline", "triton_grouped", "triton_tuned"}
UNAVAILABLE = {"hip_naive", "hip_tiled"}
TOOLS = {"all", *SANITIZER_TOOLS}
COMMANDS = ("list", "check", "compare", "bench", "report")

# ---------------------------------------------------------------------------
# Malformed values
# ---------------------------------------------------------------------------

UNICODE_DIGITS = "²³¹٠١٢٣٤٥٦٧٨٩۴۵०१२३੩௩๓໓༣၃１２３𝟑"
"""Characters that ``str.isdigit`` or ``int`` accept but gemmreg must not."""

unicode_number = st.text(alphabet=UNICODE_DIGITS, min_size=1, max_size=4)
mixed_number = st.tuples(st.integers(1, 99), unicode_number).map(lambda t: f"{t[0]}{t[1]}")
garbage = st.text(min_size=1, max_size=12).filter(
    lambda t: any(c not in "0123456789xX:*, \t" and not c.isspace() for c in t)
)
"""Text with at least one character no shape or name list may hold."""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


not_a_number = garbage.filter(lambda t: not _is_number(t))
"""Garbage that not even Python's float() reads ("1e1" and "1_0" it does)."""
dimension = st.integers(1, 64).map(str)
bad_dimension = st.one_of(
    st.just("0"),
    st.integers(-999, -1).map(str),
    unicode_number,
    mixed_number,
    st.just(""),
    st.just("1.5"),
    st.just("1e3"),
    st.integers(10**15, 10**30).map(str),
)


@st.composite
def bad_shape(draw: Any) -> str:
    """MxNxK with one bad dimension, or a wrong number of them, or garbage."""
    dims = [draw(dimension) for _ in range(3)]
    dims[draw(st.integers(0, 2))] = draw(bad_dimension)
    wrong_count = draw(st.lists(dimension, min_size=0, max_size=5).filter(lambda d: len(d) != 3))
    return draw(
        st.sampled_from(
            ["x".join(dims), "x".join(wrong_count), draw(garbage), "100000000x100000000x1", ""]
        )
    )


@st.composite
def bad_sweep(draw: Any) -> str:
    """A bench --shape list with one bad item among good ones."""
    good = draw(st.lists(st.sampled_from(["8", "8x8x8", "8:16:8"]), max_size=2))
    bad = draw(
        st.one_of(
            bad_shape().filter(lambda s: not re.fullmatch(r"\s*[0-9]+\s*", s)),  # N is a square
            bad_dimension.filter(lambda d: d != "" and not d.startswith("-")),
            st.tuples(st.integers(2, 99), st.integers(0, 1)).map(lambda t: f"{t[0]}:1:{t[1]}"),
            st.tuples(unicode_number, dimension).map(lambda t: f"{t[1]}:{t[0]}:1"),
            st.just("1:100000:1"),
            bad_ranged_shape(),
        )
    )
    return ",".join(draw(st.permutations([*good, bad])))


@st.composite
def bad_ranged_shape(draw: Any) -> str:
    """MxNxK with ranges per dimension, one of them broken: a
    backwards range, a step of 0, a factor below 2, a bad number in it, or
    dimensions whose product passes the sweep's bound."""
    dims = [draw(st.sampled_from(["8", "8:16:8", "2:64:*2"])) for _ in range(3)]
    dims[draw(st.integers(0, 2))] = draw(
        st.one_of(
            st.tuples(st.integers(2, 99), st.integers(1, 1)).map(lambda t: f"{t[0]}:{t[1]}:1"),
            st.integers(1, 64).map(lambda n: f"1:{n}:0"),
            st.sampled_from(["1:64:*1", "1:64:*0", "1:64:*", "1:64:**2", "1:64:2*", "0:8:1"]),
            st.tuples(unicode_number, dimension).map(lambda t: f"1:{t[0]}:*{t[1]}"),
            st.just("1:1001:1"),
        )
    )
    too_many = "1:32:1x1:32:1x1:2:1"  # 32 x 32 x 2 = 2048 shapes
    return draw(st.sampled_from(["x".join(dims), too_many]))


def bad_integer(low: int, high: int) -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(max_value=low - 1).map(str),
        st.integers(min_value=high + 1).map(str),
        unicode_number,
        st.sampled_from(["", " ", "1.5", "nan", "inf", "1e3", "0x10", "one"]),
        not_a_number,
    )


def bad_number(low: float, high: float, low_open: bool = False) -> st.SearchStrategy[str]:
    below = st.floats(max_value=low if low_open else low - 1e-9, allow_nan=False)
    return st.one_of(
        below.map(repr),
        st.floats(min_value=high, exclude_min=True, allow_nan=False).map(repr),
        st.sampled_from(["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "", " ", "1,5"]),
        unicode_number,
        not_a_number,
    )


def unknown(known: set[str] | tuple[str, ...]) -> st.SearchStrategy[str]:
    """A name outside ``known``. ``known`` must be every name the option
    accepts (the code's own vocabularies, never a hand-written subset):
    Hypothesis also draws the string literals of the modules loaded from
    outside site-packages (these tests, and gemmreg where it is installed
    editable), so a valid name left out of ``known`` (an fp8 dtype for
    ``check --dtype``) is drawn, makes a valid command, and fails the test."""
    return st.text(min_size=1, max_size=12).filter(
        lambda t: t.strip() and t.strip() not in known and not t.startswith("-") and "," not in t
    )


# ---------------------------------------------------------------------------
# Malformed command lines: a valid command with one thing broken
# ---------------------------------------------------------------------------

COMPARE = ["compare", "torch_ref", "triton_grouped"]
BENCH = ["bench", "torch_ref", "--shape", "8"]
TIMING_BOUNDS = {
    "--processes": bad_integer(1, 64),
    "--repeats": bad_integer(1, 100_000),
    "--warmup": bad_integer(0, 100_000),
    "--seed": bad_integer(0, 2**32 - 1),
    "--max-time": bad_number(0.0, 3600.0, low_open=True),
}


def option(base: list[str], name: str, values: st.SearchStrategy[str]) -> Any:
    return values.map(lambda value: [*base, f"{name}={value}"])


malformed_command = st.one_of(
    option(COMPARE, "--shape", bad_shape()),
    option(["bench", "torch_ref"], "--shape", bad_ranged_shape()),
    option([*BENCH, "--dtype", "fp32"], "--layout", unknown(LAYOUTS)),
    option(COMPARE, "--layout", st.one_of(unknown(LAYOUTS), st.just("rowmajor,padded"))),
    option(["bench", "torch_ref"], "--shape", bad_sweep()),
    *(option(COMPARE, name, values) for name, values in TIMING_BOUNDS.items()),
    *(option(BENCH, name, values) for name, values in TIMING_BOUNDS.items()),
    option(["check"], "--seed", TIMING_BOUNDS["--seed"]),
    option(["report", "RUN", "RUN"], "--threshold", bad_number(0.0, 1000.0)),
    option(COMPARE, "--dtype", st.one_of(unknown(ALL_DTYPES), st.sampled_from(["", ",", "fp32,"]))),
    option(BENCH, "--dtype", st.one_of(unknown(ALL_DTYPES), st.just("fp16,fp16"), st.just(""))),
    option(
        ["check"], "--dtype", st.one_of(unknown(ALL_DTYPES), st.just(""), st.just("fp32,,bf16"))
    ),
    option(["check"], "--layout", st.one_of(unknown(LAYOUTS), st.just(""))),
    option(["check"], "--format", unknown(FORMATS)),
    option(["check"], "--sanitize", unknown(TOOLS)),
    st.tuples(
        st.sampled_from(["check", "compare torch_ref", "bench"]), unknown(KNOWN | UNAVAILABLE)
    ).map(lambda t: [*t[0].split(), t[1], *(["--shape", "8"] if t[0] == "bench" else [])]),
    unknown(COMMANDS).map(lambda name: [name]),
    st.sampled_from(COMMANDS[1:]).map(lambda c: [c, "--frobnicate"]),
    st.sampled_from(
        [
            ["compare", "torch_ref"],
            ["compare", "torch_ref", "torch_ref"],
            ["compare", "torch_ref", "hip_tiled"],
            ["bench", "hip_naive", "--shape", "8"],
            ["bench", "torch_ref"],
            ["report"],
            ["report", "RUN", "RUN", "RUN"],
        ]
    ),
    st.sampled_from(
        [[*COMPARE, "--out"], ["check", "--out"], [*BENCH, "--out"], ["report", "RUN", "--plot"]]
    ).flatmap(
        lambda base: st.sampled_from(["FILE", "FILE/inside", "/proc/gemmreg-no", ""]).map(
            lambda path: [*base, path]
        )
    ),
    st.sampled_from(["MISSING", "FILE", "EMPTY", "RUN/run.json", ""]).map(
        lambda path: ["report", "RUN", path]
    ),
)


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Real paths the generated command lines name: a valid run, a file, an
    empty directory, and a path that does not exist."""
    root = tmp_path_factory.mktemp("places")
    (root / "file").write_text("a file where a directory belongs")
    (root / "empty").mkdir()
    runs.write_run(root / "run", {"device_name": "cpu"}, [valid_report()], partial=False)
    return {
        "RUN": str(root / "run"),
        "FILE": str(root / "file"),
        "EMPTY": str(root / "empty"),
        "MISSING": str(root / "missing"),
    }


def place(argument: str, places: dict[str, str]) -> str:
    for name, path in places.items():
        if argument == name or argument.startswith(name + "/"):
            return path + argument[len(name) :]
    return argument


@settings(PROPERTY_SETTINGS, max_examples=COMMAND_EXAMPLES)
@given(argv=malformed_command)
def test_a_malformed_command_line_is_one_line_exit_2_and_starts_nothing(
    argv, places, monkeypatch, capsys
):
    with monkeypatch.context() as patch, tempfile.TemporaryDirectory() as cwd:
        patch.chdir(cwd)
        patch.setenv("GEMMREG_PLUGINS", ",".join(sorted(KNOWN | UNAVAILABLE)))
        forbid_work(patch)
        outcome = run_main([place(a, places) for a in argv], capsys)
        outcome.assert_refused()
        assert not os.listdir(cwd), "a refused command left files behind"


# ---------------------------------------------------------------------------
# Malformed saved runs: a valid run.json with one thing broken
# ---------------------------------------------------------------------------


def valid_report() -> CompareReport:
    problem = Problem(m=8, n=8, k=8)
    check = {"passed": True, "max_error": 1e-7, "reason": "", "worst": [0.5, -1.5]}
    process_runs = tuple(
        ProcessRun(
            kernel=name,
            process=p,
            status="timed",
            round_ms=(1.0 + p, 1.1 + p, 0.9 + p),
            samples=30,
            exposure_s=0.3,
            prepare_s=0.2,
            first_call_s=0.01,
            regime_ms={"graph replay": 0.8},
            precheck=check,
            postcheck=check,
        )
        for name in ("a", "b")
        for p in range(2)
    )
    summaries = tuple(
        KernelSummary(
            kernel=name,
            package="p 1.0",
            precision="ieee_fp32 (test)",
            math="ieee_fp32",
            generator="normal",
            status="timed",
            process_medians_ms=(1.0, 2.0),
            center_ms=1.5,
            low_ms=1.0,
            high_ms=2.0,
            tflops=0.001,
            peak_tflops=67.0,
            percent_of_peak=0.01,
            regime_ms={"graph replay": 0.8},
            tile_efficiency=1.0,
            cold_prepare_s=0.2,
            warm_prepare_s=0.1,
            samples=6,
            max_error=1e-7,
            flags=("note",),
        )
        for name in ("a", "b")
    )
    interval = Interval(estimate=1.0, low=0.9, high=1.1, confidence=0.995, units=3)
    verdict = Verdict(
        baseline="a",
        kernel="b",
        verdict="inconclusive",
        speedup=1.0,
        interval=(0.9, 1.1),
        explanation="interval includes 1",
        confidence=0.995,
        regimes=(
            RegimeResult(regime="end-to-end", word="inconclusive", interval=interval, estimate=1.0),
        ),
        notes=("n",),
    )
    records = tuple(
        ProcessRecord(
            process=p,
            status="ok",
            stop_reason="round cap (3)",
            rounds=3,
            soak_s=0.25,
            log_ratios={"end-to-end": {"a|b": 0.01}},
        )
        for p in range(2)
    )
    return CompareReport(
        problem=problem,
        processes=2,
        seed=1,
        clock="test",
        device_name="cpu",
        summaries=summaries,
        verdicts=(verdict,),
        runs=process_runs,
        cold=(ColdStart(kernel="a", status="ok", prepare_s=0.3, first_call_s=0.1),),
        records=records,
        repeats=3,
        warmup=2,
    )


FREE_FORM = {"manifest", "precheck", "postcheck", "clock_trace", "profiles", "log_ratios"}
"""Objects whose contents the records do not type: replaced whole, never entered."""
BY_NAME = {"regime_ms"}
"""Objects whose keys are names (of regimes) and whose values are typed: entered
for their values, which are times when the object's name says so, but no
record (any key may be there, none must)."""
REQUIRED = {
    cls: [f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING]
    for cls in (
        CompareReport,
        KernelSummary,
        ProcessRun,
        Verdict,
        Problem,
        ProcessRecord,
        RegimeResult,
        Interval,
        ColdStart,
    )
}
"""The fields each record cannot do without, from the records themselves."""


def locations(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every typed place in a run's JSON, as a path of keys and indices."""
    found = [path] if path else []
    if isinstance(value, dict) and (not path or path[-1] not in FREE_FORM):
        for key, item in value.items():
            found += locations(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += locations(item, (*path, index))
    return found


def get(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def is_time(path: tuple[Any, ...]) -> bool:
    names = [step for step in path if isinstance(step, str)]
    if len(names) >= 2 and names[-2] in BY_NAME:
        names = names[:-1]  # a value of a mapping by name: a time when the mapping's name says so
    return bool(names) and names[-1].endswith(("_ms", "_s"))


@st.composite
def damaged_json(draw: Any, data: dict[str, Any]) -> str:
    data = json.loads(json.dumps(data))
    spots = locations(data)
    numbers = [p for p in spots if isinstance(get(data, p), (int, float))]
    numbers = [p for p in numbers if not isinstance(get(data, p), bool)]
    times = [p for p in numbers if is_time(p)]
    records = [
        p
        for p in spots
        if isinstance(get(data, p), dict) and p[-1] not in FREE_FORM and p[-1] not in BY_NAME
    ]
    how = draw(st.sampled_from(["type", "non-finite", "negative time", "unknown", "missing"]))
    if how == "type":  # a value no field of that place can hold
        path = draw(st.sampled_from(spots))
        original = get(data, path)
        replacement = {"?": []} if isinstance(original, list) else [{"?": []}]
        get(data, path[:-1])[path[-1]] = replacement
    elif how == "non-finite":
        path = draw(st.sampled_from(numbers))
        literal = draw(st.sampled_from(["nan", "inf", "-inf", math.nan, math.inf, -math.inf]))
        get(data, path[:-1])[path[-1]] = literal
    elif how == "negative time":
        path = draw(st.sampled_from(times))
        get(data, path[:-1])[path[-1]] = -abs(get(data, path)) - draw(st.floats(1e-9, 1e9))
    elif how == "unknown":
        path = draw(st.sampled_from(records))  # the top level may gain fields
        get(data, path)[draw(st.sampled_from(["colour", "x", "processes_"]))] = 1
    else:
        path = draw(st.sampled_from(records))
        record = get(data, path)
        required = {"reports"} if not path else _required_here(path)
        if not required & set(record):
            required = {"reports"}
            record, path = data, ()
        del record[draw(st.sampled_from(sorted(required & set(record))))]
    return json.dumps(data, allow_nan=True)


def _required_here(path: tuple[Any, ...]) -> set[str]:
    names = [step for step in path if isinstance(step, str)]
    if not names or names[-1] == "reports":
        return set(REQUIRED[CompareReport])
    kind = {
        "problem": Problem,
        "summaries": KernelSummary,
        "runs": ProcessRun,
        "verdicts": Verdict,
        "records": ProcessRecord,
        "regimes": RegimeResult,
        "interval": Interval,
        "cold": ColdStart,
    }
    return set(REQUIRED[kind[names[-1]]])


@st.composite
def malformed_run_file(draw: Any, text: str) -> bytes:
    """The bytes of a broken run.json."""
    encoded = text.encode()
    how = draw(st.sampled_from(["json", "truncated", "bad utf-8", "not an object", "empty"]))
    if how == "json":
        return draw(damaged_json(json.loads(text))).encode()
    if how == "truncated":
        return encoded[: draw(st.integers(0, len(text.rstrip()) - 1))]
    if how == "bad utf-8":
        at = draw(st.integers(0, len(encoded)))
        bad = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80", b"\xf8\x88"]))
        return encoded[:at] + bad + encoded[at:]
    if how == "not an object":
        return draw(st.sampled_from([b"[]", b"null", b"3", b'"run"', b"[{}]"]))
    return draw(st.sampled_from([b"", b" \n", b"{}", b'{"reports": []}']))


@pytest.fixture(scope="module")
def valid_run_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    directory = tmp_path_factory.mktemp("valid")
    runs.write_run(directory, {"device_name": "cpu"}, [valid_report()], partial=False)
    runs.load_run(directory)  # the base is valid: every refusal below is the damage's
    return (directory / runs.RUN_FILE).read_text()


@settings(PROPERTY_SETTINGS, max_examples=RUN_EXAMPLES)
@given(data=st.data())
def test_a_malformed_saved_run_is_one_line_exit_2(
    data, valid_run_text, places, monkeypatch, capsys
):
    content = data.draw(malformed_run_file(valid_run_text))
    with monkeypatch.context() as patch, tempfile.TemporaryDirectory() as directory:
        forbid_work(patch)
        (Path(directory) / runs.RUN_FILE).write_bytes(content)
        alone = run_main(["report", directory], capsys)
        beside = run_main(["report", places["RUN"], directory], capsys)
    alone.assert_refused()
    beside.assert_refused()
    assert directory in alone.err


# ---------------------------------------------------------------------------
# Malformed shapes files: a valid file with one thing broken
# ---------------------------------------------------------------------------

SHAPES_EXAMPLES = 100
FILE_KINDS = ("json", "csv", "yaml")
odd_name = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=10
)
"""A cell's text: anything a user may type on one line."""


@st.composite
def damaged_shapes(draw: Any) -> tuple[str, list[dict[str, Any]]]:
    """(file kind, rows) with exactly one damage among valid rows."""
    count = draw(st.integers(1, 4))
    rows: list[dict[str, Any]] = [
        {"m": i + 1, "n": draw(st.integers(1, 64)), "k": draw(st.integers(1, 64))}
        for i in range(count)
    ]
    for row in rows:
        if draw(st.booleans()):
            row["dtype"] = draw(st.sampled_from(DTYPES))
        if draw(st.booleans()):
            row["weight"] = draw(st.floats(0.01, 1000))
    row = rows[draw(st.integers(0, count - 1))]
    how = draw(
        st.sampled_from(
            ["missing", "dimension", "dtype", "layout", "weight", "twin", "column", "empty"]
        )
    )
    if how == "missing":
        del row[draw(st.sampled_from(["m", "n", "k"]))]
    elif how == "dimension":
        row[draw(st.sampled_from(["m", "n", "k"]))] = draw(bad_dimension)
    elif how in ("dtype", "layout"):
        known = ALL_DTYPES if how == "dtype" else LAYOUTS
        row[how] = draw(odd_name.filter(lambda t: t.strip() and t.strip() not in known))
    elif how == "weight":
        row["weight"] = draw(
            st.one_of(
                st.floats(max_value=0.0),
                st.floats(min_value=1e12, exclude_min=True),
                st.sampled_from(["nan", "inf", "-inf", "one", "1,5", "½"]),
            )
        )
    elif how == "twin":
        rows.append(dict(row))
    elif how == "column":
        row[draw(st.sampled_from(["tokens", "M", "wieght", "dtype "]))] = 1
    else:
        rows.clear()
    return draw(st.sampled_from(FILE_KINDS)), rows


def write_shapes(directory: Path, kind: str, rows: list[dict[str, Any]]) -> Path:
    path = directory / f"shapes.{kind}"
    if kind == "json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    elif kind == "yaml":
        import yaml

        path.write_text(yaml.safe_dump({"shapes": rows}), encoding="utf-8")
    else:
        import csv
        import io

        columns = list(dict.fromkeys(key for row in rows for key in ("m", "n", "k", *row)))
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


@settings(PROPERTY_SETTINGS, max_examples=SHAPES_EXAMPLES)
@given(damaged=damaged_shapes())
def test_a_malformed_shapes_file_is_one_line_exit_2_naming_the_file(damaged, monkeypatch, capsys):
    kind, rows = damaged
    if kind == "yaml":
        pytest.importorskip("yaml")
    with monkeypatch.context() as patch, tempfile.TemporaryDirectory() as directory:
        patch.setenv("GEMMREG_PLUGINS", "torch_ref")
        forbid_work(patch)
        path = write_shapes(Path(directory), kind, rows)
        outcome = run_main(["bench", "torch_ref", "--shapes", str(path)], capsys)
    outcome.assert_refused()
    assert str(path) in outcome.err
