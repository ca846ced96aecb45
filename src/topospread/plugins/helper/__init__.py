"""plugins/helper."""
