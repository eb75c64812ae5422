"""A plugin whose import calls os._exit(3): no exception, the process just ends."""

import os

os._exit(3)
