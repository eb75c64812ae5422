"""A kernel's inputs as the checker watches them: every byte of each
operand's storage, not just the view handed over.

A view of A in the ``padded`` layout sits inside a wider buffer, at a
storage offset; a kernel that writes before a row's start or past its end
writes memory no view comparison sees, and one that writes NaN over a 0 (or
0 over a NaN) is equal to the old value under ``nan_to_num``. So the
storage of each operand is copied whole, byte for byte, when the core makes
it; after the launch the storage the core made (never the tensor the kernel
may have re-pointed) must hold exactly that copy, with the view's elements
replaced by the values they should hold now. The copy's view elements are
also what the reference is computed from (:attr:`InputStorages.before`), so
watching the padding costs only the padding's bytes beyond the copies the
check kept before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    import torch

Geometry = tuple[int, int, tuple[int, ...], tuple[int, ...], str, str]
"""Where a tensor's elements are: its storage's address, its offset in
elements, its shape, its strides, its dtype and its device."""


def geometry(x: torch.Tensor) -> Geometry:
    return (
        x.untyped_storage().data_ptr(),
        int(x.storage_offset()),
        tuple(x.shape),
        tuple(x.stride()),
        str(x.dtype),
        str(x.device),
    )


def moved(x: torch.Tensor, recorded: Geometry) -> str:
    """What differs in ``x``'s :func:`geometry` from ``recorded``: ``""``, or
    a phrase naming it (``storage``, ``storage offset``, ``shape``...)."""
    names = ("storage", "storage offset", "shape", "strides", "dtype", "device")
    return ", ".join(
        n for n, now, then in zip(names, geometry(x), recorded, strict=True) if now != then
    )


def _alias(storage: torch.UntypedStorage, like: torch.Tensor) -> torch.Tensor:
    """``like``'s elements in ``storage``: a tensor of the core's own, with
    ``like``'s dtype, offset, shape and strides."""
    import torch

    alias = torch.empty(0, dtype=like.dtype, device=like.device)
    return alias.set_(storage, like.storage_offset(), like.size(), like.stride())


def _bytes(storage: torch.UntypedStorage, device: torch.device) -> torch.Tensor:
    import torch

    return torch.empty(0, dtype=torch.uint8, device=device).set_(storage)


@attrs.define
class InputStorages:
    """The operands handed to a kernel, where they were, and (for
    :meth:`take`) a copy of every byte of their storages."""

    handed: tuple[torch.Tensor, ...]
    geometries: tuple[Geometry, ...]
    storages: tuple[torch.UntypedStorage, ...]
    """The storages the core made: judged even if the kernel re-points a tensor."""
    copies: tuple[torch.Tensor, ...] | None
    """Each storage's bytes when taken (for a further placement, the
    prechecked placement's, where its bytes were the same: :meth:`watch`);
    None: only the views are watched."""

    @classmethod
    def take(cls, operands: tuple[torch.Tensor, ...]) -> InputStorages:
        """Watch ``operands`` whole: their storages copied byte for byte."""
        watched = cls.watch(operands)
        watched.copies = tuple(
            _bytes(s, x.device).clone() for s, x in zip(watched.storages, operands, strict=True)
        )
        return watched

    @classmethod
    def watch(
        cls, operands: tuple[torch.Tensor, ...], like: InputStorages | None = None
    ) -> InputStorages:
        """Watch where ``operands`` are, without a copy of their own: a further
        placement of the same values (timing), whose views are checked against
        the prechecked copies and whose storage must stay where it is.

        Where each storage holds, byte for byte, what ``like``'s copy holds
        (a clone of its bytes, :meth:`copied`: padding included) and
        the views sit at the same offsets, ``like``'s copies watch this
        placement's padding too, at no memory cost; otherwise (operands made
        some other way, whose padding may differ) only the views are watched."""
        import torch

        watched = cls(
            handed=tuple(operands),
            geometries=tuple(geometry(x) for x in operands),
            storages=tuple(x.untyped_storage() for x in operands),
            copies=None,
        )
        if like is not None and like.copies is not None and len(like.copies) == len(operands):
            same = all(
                g[1:] == h[1:] and copy.numel() == storage.nbytes()
                and torch.equal(_bytes(storage, x.device), copy)
                for x, g, h, storage, copy in zip(
                    operands, watched.geometries, like.geometries, watched.storages,
                    like.copies, strict=True,
                )
            )  # fmt: skip
            if same:
                watched.copies = like.copies
        return watched

    def copied(self) -> tuple[torch.Tensor, ...]:
        """A further placement of the values taken: each storage's copy cloned
        into fresh memory (every byte the same, padding included), viewed as
        the operands were handed. Operands that shared a storage share its
        clone. Why not the generator drawn again: a draw runs on the host
        (seconds for a large fp8 problem, times every placement of every
        kernel of every process), and a generator that is not deterministic
        would give a placement values its reference was not computed from."""
        assert self.copies is not None, "watch() keeps no copy"
        clones: dict[int, torch.UntypedStorage] = {}
        placed = []
        for x, storage, copy in zip(self.handed, self.storages, self.copies, strict=True):
            key = storage.data_ptr()
            if key not in clones:
                clones[key] = copy.clone().untyped_storage()
            placed.append(_alias(clones[key], x))
        return tuple(placed)

    @property
    def before(self) -> tuple[torch.Tensor, ...]:
        """The operands' values when taken: views into the copies, which
        nothing handed to a kernel can reach."""
        assert self.copies is not None, "watch() keeps no copy"
        return tuple(
            _alias(copy.untyped_storage(), x)
            for copy, x in zip(self.copies, self.handed, strict=True)
        )

    def written(self, expected: tuple[torch.Tensor, ...], names: tuple[str, ...]) -> str:
        """``""`` when every input is where it was and holds, bit for bit,
        ``expected`` in its view and what it held when taken everywhere else
        in its storage; else one line naming the first input that is not."""
        import torch

        for x, recorded, name in zip(self.handed, self.geometries, names, strict=True):
            changed = moved(x, recorded)
            if changed:
                return f"replaced its input {name}'s memory ({changed} changed)"
        for i in range(len(names)):
            storage, x, want = self.storages[i], self.handed[i], expected[i]
            if self.copies is None:
                now = _alias(storage, x)
                if not _same_bits(now, want):
                    return "wrote into its inputs"
                continue
            should = self.copies[i].clone()
            _alias(should.untyped_storage(), x).copy_(want)
            if not torch.equal(_bytes(storage, x.device), should):
                return "wrote into its inputs"
        return ""


def _same_bits(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Equal bit for bit: NaN equals the same NaN, and never 0."""
    import torch

    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    int_type = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    return bool(torch.equal(x.contiguous().view(int_type), y.contiguous().view(int_type)))
