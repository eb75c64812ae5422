"""Points handed to long-lived Ray actors, one at a time each, surviving
the loss of an actor (:mod:`gemmreg.fanout.ray_sweep`).

The driver keeps the points in a queue, in the order asked; an actor that
is up and free takes the next one. An actor that dies (its process killed,
its node lost) loses only the point it held: that point goes back to the
front of the queue for the next free actor, ``retries`` time(s), and is
then given up with the reason; a replacement actor is started while points
wait, up to ``spares`` in all. An actor is handed a point only once it has
answered its ``ready`` call, so a replacement that never finds a GPU (its
node gone) holds no point: when nothing is in flight and no actor comes up
within :data:`ACTOR_START_TIMEOUT_S`, the points left are given up.

:meth:`Dispatch.stop` ends the handing out (a sweep whose storage refused
a save): the points in flight come back, no other starts, and an actor lost
after it is not replaced.

Nothing here knows what a point is: ``start`` makes an actor (with a
``ready`` and a ``close`` method), ``send`` hands it point ``i`` and
returns the reference to its result.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import attrs

if TYPE_CHECKING:
    from ray import ObjectRef

ACTOR_START_TIMEOUT_S = 900.0
"""How long the driver waits, with no point in flight, for an actor to come
up before it gives up the points left. An actor is up in the time its pool
takes to start (about 10 s on the H200); one that waits this long has no
GPU to go to (its node was lost, or other work holds every GPU), and a run
must not wait for it forever."""
CLOSE_WAIT_S = 60.0
"""How long the actors may take, together, to let their workers finish at
the end of a run before they are killed."""


class RemoteCall(Protocol):
    """One method of a Ray actor, called through Ray."""

    def remote(self) -> ObjectRef[object]:
        """Start the call: the reference to its result."""


class Actor(Protocol):
    """A Ray actor's handle, as the dispatch uses it."""

    @property
    def ready(self) -> RemoteCall:
        """Answers once the actor is up."""

    @property
    def close(self) -> RemoteCall:
        """Lets the actor's workers finish."""


A = TypeVar("A", bound=Actor)
R = TypeVar("R")


@attrs.frozen
class Lost:
    """A point given up: its index, and why, in one line."""

    index: int
    reason: str


def first_line(error: BaseException) -> str:
    """The first line of what Ray says of ``error`` (its name if it says nothing)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


@attrs.define
class Dispatch(Generic[A, R]):
    """One run's points over its actors (``A``), each point's result an ``R``;
    see the module's docstring."""

    ray: ModuleType
    start: Callable[[], A]
    """A new actor (its start-up under way)."""
    send: Callable[[A, int], ObjectRef[R]]
    """Point ``i`` handed to an actor: the reference to its result."""
    spares: int
    """Replacement actors this run may still start."""
    retries: int
    """Times a point whose actor died is handed to another."""
    start_timeout_s: float = ACTOR_START_TIMEOUT_S
    gone: str = ""
    """Why the last actor lost was lost ('' while none was)."""
    stopped: bool = False
    """No point is handed out any more (:meth:`stop`)."""

    def stop(self) -> None:
        """Hand out no more points: those in flight still arrive; those
        waiting are left untimed, neither retried nor given up."""
        self.stopped = True

    def run(
        self,
        count: int,
        actors: int,
        arrived: Callable[[int, R], None],
        retrying: Callable[[int, str], None],
        gave_up: Callable[[Lost], None],
    ) -> None:
        """Points ``0 .. count - 1`` over ``actors`` actors: each result to
        ``arrived`` as it comes back, each retry told to ``retrying``, each
        point given up to ``gave_up``; every actor closed at the end."""
        queue = collections.deque(range(count))
        tries: dict[int, int] = {}
        starting: dict[ObjectRef[object], A] = {}  # its ready call -> the actor
        busy: dict[ObjectRef[R], tuple[A, int]] = {}  # a point's result -> (actor, point)
        idle: list[A] = []
        live: list[A] = []

        def launch() -> None:
            actor = self.start()
            starting[actor.ready.remote()] = actor
            live.append(actor)

        def lost_actor(actor: A, error: BaseException) -> None:
            live.remove(actor)
            self.gone = first_line(error)
            if queue and self.spares > 0 and not self.stopped:
                self.spares -= 1
                launch()

        def give_up_the_rest(why: str) -> None:
            while queue:
                gave_up(Lost(queue.popleft(), why))

        for _ in range(actors):
            launch()
        try:
            while (queue and not self.stopped) or busy:
                while queue and idle and not self.stopped:
                    actor, index = idle.pop(0), queue.popleft()
                    busy[self.send(actor, index)] = (actor, index)
                if not busy and not starting:
                    give_up_the_rest(f"lost on the cluster: no actor left ({self.gone})")
                    break
                wait = None if busy else self.start_timeout_s
                finished, _ = self.ray.wait([*busy, *starting], num_returns=1, timeout=wait)
                if not finished:
                    give_up_the_rest(
                        f"lost on the cluster: no actor came up within {wait:g} s "
                        f"(no free GPU?{f' last lost: {self.gone}' if self.gone else ''})"
                    )
                    break
                ref = finished[0]
                if ref in starting:
                    actor = starting.pop(ref)
                    try:
                        self.ray.get(ref)
                    except self.ray.exceptions.RayError as error:  # died starting
                        lost_actor(actor, error)
                    else:
                        idle.append(actor)
                    continue
                actor, index = busy.pop(ref)
                try:
                    result = self.ray.get(ref)
                except self.ray.exceptions.RayActorError as error:  # died under the point
                    tries[index] = tries.get(index, 0) + 1
                    why = f"its actor died ({first_line(error)})"
                    if tries[index] <= self.retries and not self.stopped:
                        queue.appendleft(index)
                        retrying(index, why)
                    else:
                        gave_up(Lost(index, f"lost on the cluster: {why}, {tries[index]} times"))
                    lost_actor(actor, error)
                    continue
                except self.ray.exceptions.RayError as error:  # the point raised; the actor lives
                    idle.append(actor)
                    gave_up(Lost(index, f"error on its actor: {first_line(error)}"))
                    continue
                idle.append(actor)
                arrived(index, result)
        except BaseException:  # Ctrl-C, a full disk: the actors go now, workers with them
            for actor in live:
                self._end(actor)
            raise
        self._close(live, list(starting.values()))

    def _close(self, live: list[A], unready: list[A]) -> None:
        """Each actor that is up lets its workers finish, all at once; then
        every actor is ended (those still starting at once)."""
        up = [actor for actor in live if actor not in unready]
        closing = [actor.close.remote() for actor in up]
        if closing:
            self.ray.wait(closing, num_returns=len(closing), timeout=CLOSE_WAIT_S)
        for actor in live:
            self._end(actor)

    def _end(self, actor: A) -> None:
        with contextlib.suppress(self.ray.exceptions.RayError):  # gone already
            self.ray.kill(actor)
