"""Work spread beyond one timing pool: a sweep over points (on one pool, on a
pool per GPU with ``--devices``, on warm Ray actors), the workers of
``--devices`` started ahead and pinned, and check and compare on a Ray cluster;
behind one interface, :mod:`gemmreg.fanout.executors`, that every command hands
its work to.

Above reporting: a sweep saves its run after every point and prints each point
as it finishes.
"""
