"""A stand-in for gemmreg.commands.worker that speaks the same protocol, to test the
runner's handling of a worker that retires (as after a poisoned GPU context)
or exits in the middle of a task (as after a segfault), or whose kernel
forks a process that keeps running (``fork``; its pid is the reason).

Its tasks are values tasks whose ``kernel`` names the action (conftest's
``fake_worker_task``); a task that completes passes, with the worker's pid as
its reason, so a test can tell which process ran it."""

import json
import os
import sys
import time


def main():
    events = os.fdopen(int(sys.argv[1]), "w", buffering=1)
    tasks = json.load(sys.stdin)["tasks"]
    events.write(json.dumps({"event": "ready"}) + "\n")
    for position, task in enumerate(tasks):
        events.write(json.dumps({"event": "start", "task": position}) + "\n")
        action = task["kernel"]
        if action == "retire":
            done = {
                "event": "done",
                "task": position,
                "status": "error",
                "error": "illegal address",
            }
            events.write(json.dumps(done) + "\n")
            events.write(json.dumps({"event": "retire", "reason": "context poisoned"}) + "\n")
            return
        if action == "exit":
            os._exit(3)
        if action == "hang":
            time.sleep(3600)
        reason = str(os.getpid())
        if action == "fork":  # a child that outlives the task, holding the event pipe
            child = os.fork()
            if child == 0:
                time.sleep(60)
                os._exit(0)
            reason = str(child)
        result = {"passed": True, "reason": reason}
        done = {"event": "done", "task": position, "status": "ok", "result": result}
        events.write(json.dumps(done) + "\n")


main()
