"""Run every benchmark in sequence, each in its own process: .venv/bin/python bench/run_all.py"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = (
    "ws_relay.py",
    "pane_bytes.py",
    "stream_memory.py",
    "https_large_message.py",
    "sources_file.py",
    "many_sources.py",
    "many_panes.py",
    "pane_states.py",
    "pane_open_browser.py",
    "live_panes_cost.py",
    "live_panes_cost.py --remote-viewers",
    "plot_state_cost.py",
    "server_responsiveness.py",
    "kernel_preload.py",
    "history_store.py",
    "history_recorder.py",
    "history_hostile_pages.py",
    "alerts_cost.py",
)


def main() -> int:
    failed = []
    for script in SCRIPTS:
        print(f"\n######## {script}", flush=True)
        start = time.monotonic()
        name, *arguments = script.split()
        code = subprocess.call([sys.executable, str(HERE / name), *arguments], cwd=HERE.parent)
        print(f"######## {script}: exit {code}, {time.monotonic() - start:.0f} s", flush=True)
        if code:
            failed.append(script)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
