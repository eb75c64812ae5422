"""One launch configuration of triton_tuned's kernels (:class:`Config`): its
fields, its short name (the key of timings and skip reasons in the tuning
cache) and the config a name stands for, and the checks a config read back from that cache must pass.
Which configs are candidates, and for which shapes, is :mod:`.configs`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import attrs

KernelPath = Literal[
    "tiled", "persistent_tma", "gluon_ws", "gluon_tf32", "split_k", "tma_split_k", "gemv"
]
PATHS: tuple[KernelPath, ...] = (
    "tiled",
    "persistent_tma",
    "gluon_ws",
    "gluon_tf32",
    "split_k",
    "tma_split_k",
    "gemv",
)
SPLIT_PATHS: tuple[KernelPath, ...] = ("split_k", "tma_split_k", "gemv")
"""The paths that cut K over several programs per tile (``Config.split_k``)."""

MAX_PIECES = 3
"""A tile's columns in at most three pieces: ``block_n``, its half, its quarter."""


def piece_widths(block_n: int, pieces: int) -> list[int]:
    """The widths of a tile's pieces (``Config.pieces``): ``block_n`` and,
    with 2 or 3, its half and then its quarter (64, 32, 16)."""
    return [block_n >> piece for piece in range(pieces)]


GROUP_M = 8
"""Tile rows walked down one column of B before moving on: L2 reuse of B."""
MIN_BLOCK = 16
"""``tl.dot`` needs every block edge >= 16."""


_NAME_FLAGS: dict[str, tuple[str, Any]] = {"flat": ("flatten", True), "ws": ("ws", True), "tb": ("transpose_b", True), "sk": ("stream_k", True), "swap": ("swap_ab", True), "vs": ("vector_store", True), "pertile": ("persistent", False), "split": ("epilogue_parts", 2)}  # fmt: skip
"""The flags of :attr:`Config.name`, each the field and value it stands for."""
_NAME_NUMBERS = {"split": "epilogue_parts", "s": "num_stages", "w": "num_warps", "g": "group_m", "k": "split_k", "p": "pieces"}  # fmt: skip
"""The numbered parts of :attr:`Config.name`, each the field it sets."""


@attrs.frozen(kw_only=True, order=True)
class Config:
    """One launch configuration. ``ws`` (warp specialisation of the tile loop)
    and ``flatten`` only mean something on the persistent path; on the Gluon
    path (:mod:`.gluon_ws`) ``num_warps`` is each consumer's warps (4: one
    warpgroup) and ``num_stages`` the depth of the operand ring."""

    path: KernelPath
    block_m: int
    """Rows of C per tile; on the split-K path with ``swap_ab`` and on the
    GEMV path, rows of C^T (along N)."""
    block_n: int
    """Columns of C per tile; with ``swap_ab``, columns of C^T (along M); on
    the GEMV path M rounded up to a power of two (1 for decode)."""
    block_k: int
    num_stages: int
    num_warps: int
    group_m: int = GROUP_M
    flatten: bool = False
    ws: bool = False
    epilogue_parts: int = 1
    """TMA path: store C in this many boxes of ``block_n / epilogue_parts``
    columns (1, 2 or 4): the epilogue's shared memory shrinks with the box."""
    persistent: bool = True
    """TMA path only: False launches one program per tile instead of one per SM."""
    transpose_b: bool = False
    """TMA path, fp32 as TF32 with a row-major B: copy B K-major first
    (:mod:`.transpose`) instead of taking B^T through registers."""
    stream_k: bool = False
    """TMA path, persistent: one program per SM, the last rounds' tiles shared
    out by K steps (:mod:`.stream_k`) instead of fewer programs in whole rounds.
    TMA split-K path, K unsplit: one program per SM where the tiles are fewer,
    every tile's K steps shared out (:mod:`.tma_stream_k`)."""
    split_k: int = 1
    """Split-K and GEMV paths: K cut into this many ranges, one program each
    per tile (:mod:`.split_k`, :mod:`.gemv`); the last range of a tile to
    finish adds them up."""
    swap_ab: bool = False
    """Split-K path: compute C^T = B^T A^T, so that a small M sits on the
    tile's column side and N fills its rows (:mod:`.split_k`)."""
    vector_store: bool = False
    """TF32 Gluon path: C is stored 16 bytes a thread, the accumulator first
    converted through shared memory (:func:`.gluon_tf32._store_c_t`)."""
    pieces: int = 1
    """TMA split-K path, K unsplit: a tile's columns are ``block_n`` and, with 2
    or 3, its half and then its quarter beside it (64 + 32 + 16 = 112 columns
    for ``block_n`` 64): a tile width no power of two gives, as
    :mod:`.tma_pieces_kernel` explains."""

    @property
    def columns(self) -> int:
        """Columns of C per tile: ``block_n``, or the sum of its ``pieces``."""
        return sum(piece_widths(self.block_n, self.pieces))

    @property
    def name(self) -> str:
        """A short, stable label: the key of timings and skip reasons in the cache."""
        extras = "".join(
            [
                f"g{self.group_m}",
                "-flat" if self.flatten else "",
                "-ws" if self.ws else "",
                {1: "", 2: "-split"}.get(self.epilogue_parts, f"-split{self.epilogue_parts}"),
                "" if self.persistent or self.path == "tiled" else "-pertile",
                "-tb" if self.transpose_b else "",
                "-sk" if self.stream_k else "",
                f"-k{self.split_k}" if self.path in SPLIT_PATHS else "",
                "-swap" if self.swap_ab else "",
                "-vs" if self.vector_store else "",
                f"-p{self.pieces}" if self.pieces > 1 else "",
            ]
        )
        return (
            f"{self.path}:{self.block_m}x{self.block_n}x{self.block_k}"
            f"-s{self.num_stages}-w{self.num_warps}-{extras}"
        )

    @classmethod
    def from_name(cls, text: str) -> Config:
        """The config :attr:`name` labels (``-g8``, the default group, may be
        left out), for naming configs by hand (``scripts/probe_decode_kernels.py
        --extra``); ``ValueError`` on anything else."""
        path, colon, rest = text.strip().partition(":")
        parts = rest.split("-")
        sizes = parts[0].split("x")
        if not colon or len(sizes) != 3 or not all(s.isdigit() for s in sizes):
            raise ValueError(f"not a config name: {text!r} (like split_k:64x16x128-s4-w4-k4-swap)")
        fields: dict[str, Any] = {"path": path, "block_m": int(sizes[0]), "block_n": int(sizes[1])}
        fields["block_k"] = int(sizes[2])
        for part in parts[1:]:
            number = re.fullmatch(r"(split|s|w|g|k|p)(\d+)", part)
            if part in _NAME_FLAGS:
                fields[_NAME_FLAGS[part][0]] = _NAME_FLAGS[part][1]
            elif number:
                fields[_NAME_NUMBERS[number.group(1)]] = int(number.group(2))
            else:
                raise ValueError(f"{text!r}: unknown part {part!r}")
        if "num_stages" not in fields or "num_warps" not in fields:
            raise ValueError(f"{text!r}: needs -s<stages> and -w<warps>")
        return cls.from_dict(fields)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        """Rebuild a config read from the cache; raises ``ValueError`` (or
        ``TypeError``) on anything that is not one, so a foreign entry is a miss."""
        config = cls(**dict(data))
        if config.path not in PATHS:
            raise ValueError(f"unknown kernel path {config.path!r}")
        # The GEMV path multiplies without tl.dot: its M side (block_n) may be
        # any power of two, 1 included.
        least = (MIN_BLOCK, 1 if config.path == "gemv" else MIN_BLOCK, MIN_BLOCK)
        for size, low in zip((config.block_m, config.block_n, config.block_k), least, strict=True):
            if not isinstance(size, int) or size < low or size & (size - 1):
                raise ValueError(f"block sizes must be powers of two >= {low}: {config}")
        if not all(isinstance(v, int) and v >= 1 for v in (config.num_stages, config.num_warps)):
            raise ValueError(f"num_stages and num_warps must be positive: {config}")
        if not isinstance(config.group_m, int) or config.group_m < 1:
            raise ValueError(f"group_m must be positive: {config}")
        if config.epilogue_parts not in (1, 2, 4):
            raise ValueError(f"epilogue_parts must be 1, 2 or 4: {config}")
        whole_tiles = config.path == "tma_split_k" and config.split_k == 1 and config.pieces == 1
        persistent = config.path == "persistent_tma" and config.persistent
        if config.stream_k and not (persistent or whole_tiles):
            raise ValueError(
                f"stream_k needs the persistent TMA path or TMA split-K's whole tiles: {config}"
            )
        if not isinstance(config.split_k, int) or config.split_k < 1:
            raise ValueError(f"split_k must be a positive count: {config}")
        if config.split_k > 1 and config.path not in SPLIT_PATHS:
            raise ValueError(f"split_k belongs to the split-K and GEMV paths: {config}")
        if not 1 <= config.pieces <= MAX_PIECES:
            raise ValueError(f"pieces must be 1 to {MAX_PIECES}: {config}")
        if config.pieces > 1 and (config.path != "tma_split_k" or config.split_k > 1):
            raise ValueError(f"pieces belong to the TMA split-K path, K unsplit: {config}")
        if config.pieces > 1 and config.block_n >> (config.pieces - 1) < MIN_BLOCK:
            raise ValueError(f"each piece needs {MIN_BLOCK} columns or more: {config}")
        if config.swap_ab and config.path != "split_k":
            raise ValueError(f"swap_ab belongs to the split-K path: {config}")
        if config.vector_store and config.path != "gluon_tf32":
            raise ValueError(f"vector_store belongs to the TF32 Gluon path: {config}")
        if config.path in ("gluon_ws", "gluon_tf32") and (
            config.num_warps != 4 or config.block_m % 128
        ):
            # Each consumer is one warpgroup, its half of a tile whole wgmma rows (64).
            raise ValueError(f"the Gluon kernel takes 4 warps and 128-row multiples: {config}")
        return config
