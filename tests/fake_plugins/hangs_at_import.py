"""A plugin whose import never finishes (an hour's sleep, in Python: the
watchdog thread still gets the GIL)."""

import time

time.sleep(3600)
