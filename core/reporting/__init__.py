"""What a run leaves and how it reads: saved runs and checks (written whole,
read back checked, older schemas upgraded), runs compared for regressions and
as a history (each device model apart, with what changed besides the code),
and every view of the records: tables, legends, formats, plots, and a long
command's progress lines.

Above checking and timing, whose records it writes and renders; nothing here
measures or decides.
"""
