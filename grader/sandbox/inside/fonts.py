"""fontconfig quiet in the worker: it reads an empty configuration of ours. Where the system's
is walled off (bubblewrap, Landlock), a library that loads fontconfig (matplotlib, which
Keras imports with TensorFlow) would say "Fontconfig error" on stderr, in the student's
output. Standard library only; imported inside the sandbox (display.py, preload.py)."""

from __future__ import annotations

import os
import tempfile


def quiet_fonts() -> None:
    """Before a framework is preloaded (Keras imports matplotlib, which loads fontconfig):
    fontconfig reads an empty configuration of ours, in a new folder of this process's own
    (mkdtemp: a fork server's TMPDIR may be a /tmp that others write to)."""
    try:
        quiet_fonts_in(tempfile.mkdtemp(prefix="grader-fonts-"))
    except OSError:
        pass  # (fontconfig then says it found no configuration: the report leaves no line out)


def quiet_fonts_in(folder: str) -> None:
    """fontconfig reads an empty configuration written in ``folder``: where the system's
    is walled off it would say "Fontconfig error" on stderr, in the student's output."""
    fonts = os.path.join(folder, "fonts.conf")
    with open(fonts, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0"?>\n<fontconfig></fontconfig>\n')
    os.environ["FONTCONFIG_FILE"] = fonts
