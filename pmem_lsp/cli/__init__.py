"""The `pmem` command line: prints and prompts; all decisions are the engine's."""
