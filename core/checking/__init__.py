"""Is a kernel right: the correctness matrix, the float64 reference and the
guards around C (is one output right, and is an exception a refusal), the check
run in workers (on this host, or its kernels shared out over GPUs), a case that
ran out of memory retried, and the sanitizer pass with its tools, its poison
and its report.

Below timing: a timing process checks what its kernels left in C with this
room's judge, before and after it times them.
"""
