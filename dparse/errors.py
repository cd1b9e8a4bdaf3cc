"""Errors that the command line turns into a clear message and exit status 2."""

from __future__ import annotations


class DparseError(Exception):
    """Bad usage or bad input: reported without a traceback, exit status 2."""


class InputError(DparseError):
    """Malformed input file: names the file, the 1-based line and the problem."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")


class ConfigError(DparseError):
    """Invalid experiment config: names the file and the key."""
