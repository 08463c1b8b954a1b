"""Errors a user can act on. Each message says what is wrong and where (file, line, field)."""


SNIPPET_CHARS = 120
"""An error quotes at most this many characters of what it read."""


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """At most `limit` characters of a text, for quoting in an error message; the rest is counted."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


class StrettoError(Exception):
    """A problem with the user's input or files; the CLI prints it as one line, no traceback."""


class InputError(StrettoError):
    """A malformed input file: the message names the file and, when known, the line."""

    MAX_MESSAGE = 1000
    """A message is cut to this many characters, whatever it quotes."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        message = snippet(message, self.MAX_MESSAGE)
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line
        self.detail = message


class OptionError(StrettoError, ValueError):
    """An option whose value cannot work (a threshold out of range, one string given for a list of
    tool names): the message names the option and quotes the value, on one line. A `ValueError`
    too, so code that checks options the Python way catches it."""
