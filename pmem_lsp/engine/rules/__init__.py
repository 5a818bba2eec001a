"""The rules, one module per family. Each takes engine data and returns Findings."""
