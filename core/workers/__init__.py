"""Worker processes, whatever they run: started isolated and tied to their
parent, kept as sessions fed one task at a time, pinned to one GPU of this host
(``--devices``), timed out when hung; the typed tasks and results that cross the
process boundary, with their wire format; temporary folders, tracing, the quick
exit.

The worker's own main, which hands each task to the room that knows its work,
is :mod:`gemmreg.commands.worker`: nothing here knows what a task computes.
"""
