"""Is a kernel faster: the timing options and the points of a run, the
clocks, rounds and loops of one timing process, fresh operands and their
placements, the device's work recorded and profiled, a comparison's processes
(one after another or a lane per GPU) and their pool, and the judging of what
they measured: statistics, sequential looks, regimes, vetoes, peaks, summaries
and verdicts.
"""
