"""Errors a user can act on. Each message says what is wrong and where (file, line, field)."""


class StrettoError(Exception):
    """A problem with the user's input or files; the CLI prints it as one line, no traceback."""


class InputError(StrettoError):
    """A malformed input file: the message names the file and, when known, the line."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line
        self.detail = message
