"""A ``--shapes`` file read strictly (:mod:`gemmreg.timing.shape_documents`)
and its points made once each (:mod:`gemmreg.timing.points`): every file
that would time another shape than the one written, time a point twice,
fill the memory or wait forever is refused in one line naming the file
(and the row, where one is at fault), before any work."""

from __future__ import annotations

import os

import pytest
from gemmreg.contract.options import UsageError
from gemmreg.timing import shape_documents
from gemmreg.timing.points import points
from gemmreg.timing.shape_files import read_shapes
from offline_cli import forbid_work, run_main

BIG = "1" + "0" * 400


def _refusal(tmp_path, name: str, text: str, dtypes=("fp32",)) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as refused:
        points([], read_shapes(path), list(dtypes), ["rowmajor"])
    message = str(refused.value)
    assert str(path) in message and "\n" not in message and len(message) < 400, message
    return message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- {m: 010, n: 16, k: 16}\n", "'010' is not a plain decimal number"),
        ("- {m: 16, n: 16, k: 16, weight: 1:30}\n", "'1:30' is not a plain decimal number"),
        ("- {m: 0x10, n: 16, k: 16}\n", "'0x10' is not a plain decimal number"),
        ("- {m: 1_6, n: 16, k: 16}\n", "'1_6' is not a plain decimal number"),
        ("- {m: 16, n: 16, k: 16, weight: 1_0.5}\n", "'1_0.5' is not a plain decimal number"),
        ("- {m: 16, n: 16, k: 16, weight: .inf}\n", "'.inf' is not a plain decimal number"),
        ("- {m: !!int 16.0, n: 16, k: 16}\n", "'16.0' is not a plain decimal number"),
    ],
)
def test_yaml_numbers_are_decimal_only(tmp_path, text, says):
    pytest.importorskip("yaml")
    message = _refusal(tmp_path, "s.yaml", text)
    assert says in message and "not valid YAML" in message and "line 1, column" in message


def test_yaml_decimal_numbers_read_as_written(tmp_path):
    pytest.importorskip("yaml")
    path = tmp_path / "s.yaml"
    path.write_text(
        "- {m: 16, n: +8, k: 4, weight: 2.5e+1, dtype: ~, name: yes}\n"
        "- {m: 8, n: 8, k: 8, weight: 0.5, layout: null}\n"
    )
    first, second = read_shapes(path)
    assert (first.shape, first.weight, first.dtype, first.name) == ((16, 8, 4), 25.0, None, "yes")
    assert (second.shape, second.weight, second.layout) == ((8, 8, 8), 0.5, None)


def test_a_weight_written_as_text_is_ascii_decimal(tmp_path):
    message = _refusal(tmp_path, "s.csv", "m,n,k,weight\n16,16,16,1_0\n")
    assert "row 1: weight must be a number" in message


def test_yaml_anchors_and_aliases_are_refused_before_anything_is_built(tmp_path):
    pytest.importorskip("yaml")
    rows = ['- {m: 16, n: 16, k: 16, name: &a ["lol","lol","lol","lol","lol"]}']
    # Three levels here (9^3 items) show the refusal; nine (600 bytes) would be 9^9.
    for index, (name, before) in enumerate(zip("bcd", "abc", strict=True)):
        rows.append(
            f"- {{m: {17 + index}, n: 16, k: 16, name: &{name} [{','.join([f'*{before}'] * 9)}]}}"
        )
    message = _refusal(tmp_path, "bomb.yaml", "\n".join(rows) + "\n")
    assert "anchors and aliases (&name, *name) are not taken in a shapes file" in message
    assert "line 1, column" in message
    alias_only = _refusal(tmp_path, "alias.yaml", "- {m: 16, n: 16, k: 16}\n- *x\n")
    assert "anchors and aliases" in alias_only


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("s.json", '[{"m": 16, "n": 16, "k": 16, "m": 32}]'),
        ("s.yaml", "- {m: 16, n: 16, k: 16, m: 32}\n"),
        ("s.yml", "- m: 16\n  n: 16\n  k: 16\n  m: 32\n"),
    ],
)
def test_a_key_twice_in_a_row_is_refused_naming_the_row(tmp_path, name, text):
    if name != "s.json":
        pytest.importorskip("yaml")
    assert "row 1: names 'm' twice" in _refusal(tmp_path, name, text)


def test_the_shapes_key_twice_is_refused(tmp_path):
    text = '{"shapes": [{"m": 8, "n": 8, "k": 8}], "shapes": [{"m": 9, "n": 8, "k": 8}]}'
    assert "names 'shapes' twice" in _refusal(tmp_path, "s.json", text)


@pytest.mark.parametrize(
    ("cell", "says"),
    [
        ("NaN", "not valid JSON: NaN is not a number"),
        ("Infinity", "not valid JSON: Infinity is not a number"),
        ("1e400", "not valid JSON: 1e400 is too large"),
        (BIG, "row 1: weight must be a number above 0 up to 1e+12"),
    ],
)
def test_json_weights_must_be_finite_numbers(tmp_path, cell, says):
    text = f'[{{"m": 16, "n": 16, "k": 16, "weight": {cell}}}]'
    assert says in _refusal(tmp_path, "s.json", text)


@pytest.mark.parametrize("key", ["m", "n", "k", "batch", "weight"])
@pytest.mark.parametrize("name", ["s.json", "s.yaml"])
def test_a_huge_integer_in_any_cell_is_one_line(tmp_path, key, name):
    if name == "s.yaml":
        pytest.importorskip("yaml")
    cells = {"m": 16, "n": 16, "k": 16, key: BIG}
    text = "[" + "{" + ", ".join(f'"{k}": {v}' for k, v in cells.items()) + "}]"
    message = _refusal(tmp_path, name, text)
    assert f"row 1: {key} must be" in message


def test_huge_groups_are_one_line(tmp_path):
    message = _refusal(tmp_path, "s.json", f'[{{"n": 16, "k": 16, "groups": [1, {BIG}]}}]')
    assert "row 1: groups: a member's size is a row count from 0" in message


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('["lol", "lol"]', "name must be text of at most 200 characters, got ['lol', 'lol']"),
        ("7", "name must be text"),
        ('"' + "x" * 201 + '"', "name must be text of at most 200 characters"),
        ("[" * 50 + "]" * 50, "name must be text"),
    ],
)
def test_a_name_is_text_of_bounded_length(tmp_path, value, says):
    text = f'[{{"m": 16, "n": 16, "k": 16, "name": {value}}}]'
    assert says in _refusal(tmp_path, "s.json", text)


def test_a_device_or_a_fifo_is_refused_unread(tmp_path):
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(UsageError, match="is a character device, not a regular file: refused"):
        read_shapes(tmp_path / "zero.json")
    os.mkfifo(tmp_path / "f.yaml")  # opening it for reading would wait for a writer
    with pytest.raises(UsageError, match=r"is a named pipe \(FIFO\), not a regular file"):
        read_shapes(tmp_path / "f.yaml")


def test_a_file_larger_than_any_list_of_shapes_is_refused_unread(tmp_path, monkeypatch):
    path = tmp_path / "s.csv"
    path.write_text("m,n,k\n" + "# padding\n" * 10)
    monkeypatch.setattr(shape_documents, "MAX_SHAPES_BYTES", 64)
    with pytest.raises(UsageError, match="refused unread"):
        read_shapes(path)


@pytest.mark.parametrize(
    ("name", "text", "dtypes"),
    [
        (
            "s.yaml",
            "- {m: 16, n: 16, k: 16, dtype: fp32, weight: 2}\n"
            "- {m: 16, n: 16, k: 16, dtype: fp32, layout: rowmajor, weight: 3}\n",
            ["fp32"],
        ),
        (
            "s.json",
            '[{"m": 16, "n": 16, "k": 16}, {"m": 16, "n": 16, "k": 16, "dtype": "fp32"}]',
            ["fp32"],
        ),
        (
            "s.csv",
            "m,n,k,batch,batch_layout\n16,16,16,1,strided\n16,16,16,,\n",
            ["fp32"],
        ),
    ],
)
def test_two_rows_of_one_point_are_refused_naming_both(tmp_path, name, text, dtypes):
    if name == "s.yaml":
        pytest.importorskip("yaml")
    message = _refusal(tmp_path, name, text, dtypes)
    assert (
        "rows 1 and 2 make the same point fp32-rowmajor-16x16x16: keep one, with their" in message
    )


def test_a_shape_named_twice_is_refused():
    with pytest.raises(UsageError, match="the shapes make the point fp32-rowmajor-16x16x16 twice"):
        points([(16, 16, 16), (16, 16, 16)], [], ["fp32"], ["rowmajor"])


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["bench", "torch_ref", "--shape", "16,16x16x16", "--dtype", "fp32"], "twice"),
        (
            ["compare", "torch_ref", "torch_ref_tf32", "--shapes", "twice.json", "--dtype", "fp32"],
            "rows 1 and 2 make the same point fp32-rowmajor-16x16x16",
        ),
        (["bench", "torch_ref", "--shapes", "fp8.csv"], "row 1: Problem: a batched problem"),
    ],
)
def test_the_commands_refuse_a_point_twice_before_any_work(
    argv, says, tmp_path, monkeypatch, capsys
):
    (tmp_path / "twice.json").write_text(
        '[{"m": 16, "n": 16, "k": 16}, {"m": 16, "n": 16, "k": 16, "dtype": "fp32"}]'
    )
    (tmp_path / "fp8.csv").write_text("m,n,k,dtype,batch\n16,16,16,fp8e4m3,2\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMMREG_PLUGINS", "torch_ref,torch_ref_tf32")
    forbid_work(monkeypatch)
    outcome = run_main(argv, capsys)
    outcome.assert_refused()
    assert says in outcome.err


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ("16,16,16,fp8e4m3,2,", "row 2: Problem: a batched problem is fp32, fp16, bf16"),
        (',16,16,int8,,"1,15"', "row 2: Problem: a grouped problem is fp32, fp16, bf16, not int8"),
        (',16,16,fp32,2,"1,15"', "row 2: Problem: a grouped problem is not also batched"),
    ],
)
def test_a_row_that_makes_no_problem_is_refused_naming_the_row(tmp_path, row, says):
    text = f"m,n,k,dtype,batch,groups\n8,8,8,,,\n{row}\n"
    assert says in _refusal(tmp_path, "s.csv", text)
