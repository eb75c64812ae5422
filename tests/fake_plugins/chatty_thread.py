"""A plugin that starts a thread at import which goes on writing to stdout,
through ``print`` and straight to descriptor 1, long after it has loaded."""

import os
import threading
import time

import torch

from fake_plugins import fp32_spec

LINE = "chatty thread says hello"


def _chatter():
    while True:
        print(LINE, flush=True)
        os.write(1, f"{LINE} (fd 1)\n".encode())
        time.sleep(0.02)


threading.Thread(target=_chatter, daemon=True).start()

SPEC = fp32_spec("fake_chatty", lambda a, b, out: torch.mm(a, b, out=out))
