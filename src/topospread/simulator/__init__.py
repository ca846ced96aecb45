"""Simulation: the scheduler loop, controllers and events."""
