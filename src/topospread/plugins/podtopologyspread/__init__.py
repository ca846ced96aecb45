"""plugins/podtopologyspread."""
