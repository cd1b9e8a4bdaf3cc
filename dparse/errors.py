"""Errors that the command line turns into a clear message and exit status 2."""

from __future__ import annotations


class DparseError(Exception):
    """Bad usage or bad input: reported without a traceback, exit status 2. Every error the
    API (:mod:`dparse`) raises on purpose is one.

    Example::

        try:
            dparse.load("models/missing")
        except dparse.DparseError as error:
            print(error)
    """


class InputError(DparseError):
    """Malformed input file: names the file, the 1-based line and the problem.

    >>> str(InputError("test.conllu", 7, "HEAD is not a number"))
    'test.conllu:7: HEAD is not a number'
    """

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")


class ConfigError(DparseError):
    """Invalid experiment config: names the file and the key (also a model directory that
    cannot be loaded, or an option that does not apply to it).

    Example::

        dparse.train("configs/en_ewt/o1-cle.yaml", overrides={"training.epochs": "x"})
        # ConfigError: configs/en_ewt/o1-cle.yaml: training.epochs ...
    """
