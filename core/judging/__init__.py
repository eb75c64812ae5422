"""The rules that turn figures into answers, and the records of those answers:
statistics, the rounds' design and stop rule, is an output right (and is an
exception a refusal), verdicts, summaries, regressions; and the typed tasks
and results that cross the worker boundary, with their wire format.

Nothing here starts a process, times a call or writes a file. It sits below
running: the runners call the judges while they run, a judge never calls a
runner.
"""
