"""Stands in for the user pressing Ctrl-C while plugins load: a real SIGINT
delivered to the process, which must still stop gemmreg."""

import os
import signal
import time

os.kill(os.getpid(), signal.SIGINT)
time.sleep(5)  # the signal arrives here; never reached in full
