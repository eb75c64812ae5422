"""The hand-out of points to Ray actors (:mod:`gemmreg.fanout.ray_dispatch`)
against a stand-in for Ray whose actors do as each test scripts: what it
decides when an actor dies, never starts, or its point raises. Ray itself
is exercised in tests/test_ray_sweep.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest
from gemmreg.fanout.ray_dispatch import Dispatch, Lost


class RayError(Exception):
    pass


class RayActorError(RayError):
    pass


class Exceptions:
    RayError = RayError
    RayActorError = RayActorError


@attrs.define(eq=False)
class Ref:
    outcome: Callable[[], Any] | None
    """What ``get`` gives (or raises); None: never comes back."""


@attrs.define(eq=False)
class Method:
    call: Callable[..., Ref]

    def remote(self, *args: Any) -> Ref:
        return self.call(*args)


def _value(value: Any) -> Callable[[], Any]:
    return lambda: value


def _raise(error: BaseException) -> Callable[[], Any]:
    def get() -> Any:
        raise error

    return get


@attrs.define(eq=False)
class Actor:
    """``up``: False never starts, an exception dies starting; ``points``:
    point -> an exception its call raises (else it returns the point)."""

    name: str
    up: bool | BaseException = True
    points: dict[int, BaseException] = attrs.field(factory=dict)

    @property
    def ready(self) -> Method:
        if self.up is True:
            return Method(lambda: Ref(_value(self.name)))
        if self.up is False:
            return Method(lambda: Ref(None))
        return Method(lambda: Ref(_raise(self.up)))  # type: ignore[arg-type]

    @property
    def close(self) -> Method:
        return Method(lambda: Ref(_value(None)))


@attrs.define
class FakeRay:
    exceptions = Exceptions
    killed: list[str] = attrs.field(factory=list)
    timeouts: list[float | None] = attrs.field(factory=list)

    def wait(self, refs: list[Ref], num_returns: int, timeout: float | None = None) -> Any:
        self.timeouts.append(timeout)
        back = [ref for ref in refs if ref.outcome is not None][:num_returns]
        return back, [ref for ref in refs if ref not in back]

    def get(self, ref: Ref) -> Any:
        assert ref.outcome is not None
        return ref.outcome()

    def kill(self, actor: Actor) -> None:
        self.killed.append(actor.name)


def _run(actors: list[Actor], points: int, gpus: int, spares: int, retries: int = 1):
    ray = FakeRay()
    made = iter(actors)
    seen: dict[str, list[Any]] = {"arrived": [], "retried": [], "lost": []}

    def send(actor: Actor, index: int) -> Ref:
        error = actor.points.get(index)
        return Ref(_raise(error) if error else _value((actor.name, index)))

    dispatch = Dispatch(
        ray=ray,
        start=lambda: next(made),
        send=send,
        spares=spares,
        retries=retries,
        start_timeout_s=123.0,
    )
    dispatch.run(
        points,
        gpus,
        lambda i, result: seen["arrived"].append(result),
        lambda i, why: seen["retried"].append((i, why)),
        lambda lost: seen["lost"].append(lost),
    )
    return ray, seen


def test_a_point_whose_actor_dies_goes_to_another_actor_once_then_is_given_up():
    died = RayActorError("The actor died unexpectedly\nmore")
    a = Actor("a", points={0: died})
    b = Actor("b", points={0: died})
    ray, seen = _run([a, b, Actor("c"), Actor("d")], points=3, gpus=2, spares=4)
    # a died under point 0: retried on b (the next free actor), which died too.
    assert seen["retried"] == [(0, "its actor died (The actor died unexpectedly)")]
    assert seen["lost"] == [
        Lost(0, "lost on the cluster: its actor died (The actor died unexpectedly), 2 times")
    ]
    # The points behind it were timed, by c, the replacement started for a.
    assert sorted(seen["arrived"]) == [("c", 1), ("c", 2)]
    # The live actors are ended with the run (d, started for b, still starting).
    assert sorted(ray.killed) == ["c", "d"]


def test_with_no_retry_the_point_is_given_up_at_its_first_loss():
    a = Actor("a", points={1: RayActorError("node lost")})
    ray, seen = _run([a, Actor("b")], points=2, gpus=1, spares=1, retries=0)
    assert seen["retried"] == []
    assert seen["lost"] == [Lost(1, "lost on the cluster: its actor died (node lost), 1 times")]
    assert seen["arrived"] == [("a", 0)]
    assert ray.killed == []  # a died; no replacement started (no point was waiting)


def test_a_point_that_raises_is_given_up_and_its_actor_serves_the_next():
    a = Actor("a", points={0: RayError("ValueError: bad shape")})
    ray, seen = _run([a], points=2, gpus=1, spares=0)
    assert seen["lost"] == [Lost(0, "error on its actor: ValueError: bad shape")]
    assert seen["retried"] == []
    assert seen["arrived"] == [("a", 1)]
    assert ray.killed == ["a"]  # alive to the end


def test_actors_that_die_starting_are_replaced_within_the_spares_then_points_are_given_up():
    broken = [Actor(name, up=RayActorError(f"{name}: ImportError in a plugin")) for name in "abc"]
    ray, seen = _run(broken, points=2, gpus=1, spares=2)
    assert seen["arrived"] == []
    why = "lost on the cluster: no actor left (c: ImportError in a plugin)"
    assert seen["lost"] == [Lost(0, why), Lost(1, why)]
    assert ray.killed == []  # all three died starting


def test_with_nothing_in_flight_an_actor_that_never_starts_is_waited_for_a_bounded_time():
    ray, seen = _run([Actor("a", up=False)], points=2, gpus=1, spares=0)
    assert ray.timeouts == [123.0]
    assert [lost.index for lost in seen["lost"]] == [0, 1]
    assert seen["lost"][0].reason == (
        "lost on the cluster: no actor came up within 123 s (no free GPU?)"
    )
    assert ray.killed == ["a"]  # the actor still waiting for a GPU is ended too


def test_while_a_point_is_in_flight_the_driver_waits_without_a_bound():
    ray, seen = _run([Actor("a"), Actor("b", up=False)], points=1, gpus=2, spares=0)
    assert seen["arrived"] == [("a", 0)]
    assert None in ray.timeouts  # a point may take minutes: no give-up while one runs
    assert sorted(ray.killed) == ["a", "b"]


class LatestFirstRay(FakeRay):
    """Gives back the most recent of the refs that have come back: actors up
    before a point arrives, so that two points are in flight at once."""

    def wait(self, refs: list[Ref], num_returns: int, timeout: float | None = None) -> Any:
        back, rest = super().wait(list(reversed(refs)), num_returns, timeout)
        return back, rest


@pytest.mark.parametrize("dies", [False, True])
def test_once_stopped_the_points_in_flight_arrive_and_no_other_is_handed_out_or_retried(dies):
    """A sweep whose storage refused a save stops the hand-out: the point in
    flight on another actor still arrives; one whose actor dies is given up,
    not retried, and no replacement starts; the points waiting are left."""
    died = RayActorError("The actor died unexpectedly")
    actors = iter([Actor("a"), Actor("b", points={0: died} if dies else {}), Actor("c")])
    ray = LatestFirstRay()
    seen: dict[str, list[Any]] = {"arrived": [], "retried": [], "lost": []}

    def send(actor: Actor, index: int) -> Ref:
        error = actor.points.get(index)
        return Ref(_raise(error) if error else _value((actor.name, index)))

    dispatch = Dispatch(ray=ray, start=lambda: next(actors), send=send, spares=1, retries=1)

    def arrived(index: int, result: Any) -> None:
        seen["arrived"].append(result)
        dispatch.stop()  # as a refused save does

    dispatch.run(
        4,
        2,
        arrived,
        lambda i, why: seen["retried"].append((i, why)),
        lambda lost: seen["lost"].append(lost),
    )
    # b took point 0, a point 1; point 1 arrived and stopped the hand-out;
    # point 0, in flight, came back; points 2 and 3 were never handed out.
    assert seen["retried"] == []
    if not dies:
        assert seen["arrived"] == [("a", 1), ("b", 0)] and seen["lost"] == []
        assert sorted(ray.killed) == ["a", "b"]
        return
    assert seen["arrived"] == [("a", 1)]
    assert seen["lost"] == [  # given up at once: no other point is handed out
        Lost(0, "lost on the cluster: its actor died (The actor died unexpectedly), 1 times")
    ]
    assert ray.killed == ["a"]
    assert next(actors).name == "c"  # b's replacement was never started
