"""Lifecycle operations: the safety contract, plans with previews, and the filesystem applier."""
