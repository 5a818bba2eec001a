"""editors/emacs/pmem-eglot.el in a real Emacs with eglot (Debian's emacs-nox and elpa-eglot;
`.ci/run` installs them): the trial script of editors/emacs/README.md, run in batch mode."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from roots import REPO, demo_copy


def test_emacs_eglot_shows_diagnostics_and_archives_complete_on_disk(emacs: str, installed_server: Path,
                                                                      tmp_path: Path):
    root = tmp_path / "memory"
    demo_copy(root)
    route = next(line for line in (root / "_index.md").read_text(encoding="utf-8").splitlines()
                 if "projects/garden-sensors.md" in line)
    env = {**os.environ, "PMEM_EMACS_DIR": str(REPO / "editors" / "emacs"), "PMEM_SERVER": str(installed_server),
           "PMEM_ROOT_UNDER_TEST": str(root), "HOME": str(tmp_path)}
    done = subprocess.run([emacs, "--batch", "-l", str(REPO / "editors/emacs/try-eglot.el")], env=env,
                          capture_output=True, text=True, timeout=180)
    out = done.stdout
    assert "diagnostic line 6: pmem [PM102]: the summary has 2 bullets; it needs 3 to 6" in out, out + done.stderr
    assert "reading-list.md: 1 diagnostics" in out, out  # a file opened after the scan
    assert 'CHOICES: ("Archive" "Cancel")' in out
    assert ':applied t :message "Archived projects/garden-sensors.md to _archive/projects/garden-sensors.md."' in out
    # Complete on disk when the command answered; Emacs saved nothing.
    assert (root / "_archive/projects/garden-sensors.md").exists() and not (root / "projects/garden-sensors.md").exists()
    assert route not in (root / "_index.md").read_text(encoding="utf-8")
    assert f"- index-line: {route}\n" in (root / "_archive/_index.md").read_text(encoding="utf-8")
