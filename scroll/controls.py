"""Control characters made visible wherever a text is SHOWN (the model's exposure, the console, the
viewer), never where it is STORED (the event log keeps every byte verbatim).

    show_controls("ok\\x1b[2J\\x00")  -> 'ok\\\\x1b[2J\\\\x00'   (an ANSI escape cannot clear a terminal,
                                                          a NUL cannot cut a prompt or a page short)

Newlines and tabs stay; a lone carriage return (which would overwrite a console line) is shown as
\\r; "\\r\\n" is a newline. Standard library only.
"""
from __future__ import annotations

import re

# C0 controls but \t and \n, DEL, the C1 controls (U+0080..U+009F), and a \r that is not part of \r\n
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def show_controls(text: str) -> str:
    """`text` with every control character but newline and tab written as its escape (\\x1b, \\x00, \\r)."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: "\\r" if m.group() == "\r" else f"\\x{ord(m.group()):02x}", text)
