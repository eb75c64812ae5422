"""A worker that never says it is ready: a start-up that hangs."""

import time

time.sleep(3600)
