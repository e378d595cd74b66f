"""Publishing a model folder built in a temporary directory: readable by other users (the
kernel sandbox's uid, a container's vLLM user), then swapped into place in one rename."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def publish_folder(tmp: Path, dest: Path) -> Path:
    """Make `tmp` (mkdtemp: 0700; safetensors: 0600) world-readable and move it to `dest`,
    replacing whatever folder was there."""
    tmp.chmod(0o755)
    for f in tmp.iterdir():
        f.chmod(0o644)
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest
