"""Server start → first diagnostics, RSS, keystroke latency on ROOT (reuses run.py's bench)."""
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import run
root = Path(sys.argv[1])
out = run.bench_server(root, keystrokes=int(sys.argv[2]) if len(sys.argv) > 2 else 60)
print(json.dumps(out, indent=1))
