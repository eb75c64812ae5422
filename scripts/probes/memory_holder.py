"""Run by oom_retry.sh (beside it): python3 memory_holder.py CHECK_STDERR_FILE

A co-tenant on the GPU for the out-of-memory retry of ``check`` (d651b14).

Takes all but HEADROOM_GIB of the card's free memory, then watches the
check's progress (its -v lines, ``[DONE/TOTAL cases``) and lets the memory go
once every case but one has settled, so the case held back for its second
try (the 65600x64x32768 one) finds the memory free. Gives up holding after
LIMIT_S in any case. Writes what it did to stdout.
"""

import re
import sys
import time

import torch

HEADROOM_GIB = 3
LIMIT_S = 140

log = sys.argv[1]
free, total = torch.cuda.mem_get_info()
held = torch.empty(free - HEADROOM_GIB * 2**30, dtype=torch.uint8, device="cuda")
print(f"holding {held.numel() / 2**30:.2f} GiB of {total / 2**30:.2f} GiB; {HEADROOM_GIB} GiB left free", flush=True)
open("/tmp/held", "w").close()
start = time.monotonic()
done = total_cases = 0
while time.monotonic() - start < LIMIT_S:
    try:
        counts = re.findall(r"\[(\d+)/(\d+) cases", open(log).read())
    except FileNotFoundError:
        counts = []
    if counts:
        done, total_cases = map(int, counts[-1])
        if done >= total_cases - 1:
            break
    time.sleep(0.2)
del held
torch.cuda.empty_cache()
print(f"released after {time.monotonic() - start:.1f} s at {done}/{total_cases} cases settled", flush=True)
