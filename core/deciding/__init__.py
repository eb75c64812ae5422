"""What to run, decided in the parent before any work starts: the user's
options, the correctness matrix, preflight refusals, task time limits, the
timing defaults and budgets, the sanitizer tools.
"""
