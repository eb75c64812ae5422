"""Worker processes and what runs in them: isolation, sessions, the worker,
the timing protocol and its loops, device monitors, the check and the
sanitizer pass, a comparison, the manifest of what ran.
"""
