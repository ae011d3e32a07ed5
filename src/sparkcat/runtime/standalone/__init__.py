"""Standalone mode: one worker, state in memory and an offsets file."""
