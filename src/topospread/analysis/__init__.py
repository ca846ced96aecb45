"""Analyses over the scheduler: explain, verify, design, rebalance."""
