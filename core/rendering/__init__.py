"""Records in, text out: tables, legends, plots."""
