"""A one-line progress display on stderr (no dependency)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``[#####.....] 5/10 3m12s label``: redrawn in place on a terminal, one line otherwise."""

    def __init__(
        self, total: int, *, stream: TextIO | None = None, enabled: bool = True, width: int = 24
    ) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.width = width
        self.started = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self, label: str) -> str:
        """Return the text shown after ``done`` steps."""
        filled = int(self.width * min(self.done, self.total) / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        spent = int(time.monotonic() - self.started)
        return f"[{bar}] {self.done}/{self.total} {spent // 60}m{spent % 60:02d}s {label}"

    def step(self, label: str, advance: int = 1) -> None:
        """Show ``label`` for the step about to run, counting ``advance`` finished steps."""
        self.done += advance
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r\x1b[K" + self.line(label)[:160])
        else:
            self.stream.write(self.line(label) + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line on a terminal."""
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
