"""The parts of dparse.serve that need no server: the extra (not imported by the core, named
when missing), model names and their prefixes, and the work queue's admission and 503s."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from paths import REPO

from dparse.errors import DparseError
from dparse.serve.errors import BUSY, RequestError
from dparse.serve.limits import Limits, WorkQueue
from dparse.serve.models import ModelSet, ServedModel, model_argument


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_the_core_imports_no_serve_package() -> None:
    done = run_python("import sys, dparse, dparse.api, dparse.cli; from dparse.cli import cli; "
                      "cli.list_commands(None); "
                      "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                      "('starlette', 'uvicorn', 'httpx', 'anyio') or m.startswith("
                      "'dparse.serve')))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_the_extra_serve_names_it() -> None:
    done = run_python("import sys; sys.modules['uvicorn'] = None\n"
                      "from dparse.cli import main; sys.argv = ['dparse', 'serve', '.']; main()")
    assert done.returncode == 2
    assert "pip install 'dparse[serve]'" in done.stderr and "uvicorn" in done.stderr
    assert "Traceback" not in done.stderr


def test_model_arguments(tmp_path: Path) -> None:
    (tmp_path / "en_ewt-o1-cle").mkdir()
    (tmp_path / "odd=name").mkdir()
    assert model_argument(f"en={tmp_path / 'en_ewt-o1-cle'}") == (
        "en", str(tmp_path / "en_ewt-o1-cle"))
    assert model_argument(str(tmp_path / "en_ewt-o1-cle"))[0] == "en_ewt-o1-cle"
    assert model_argument(f"x={tmp_path / 'odd=name'}") == ("x", str(tmp_path / "odd=name"))
    with pytest.raises(DparseError, match="model name 'odd=name' .* NAME=DIR"):
        model_argument(str(tmp_path / "odd=name"))  # a directory taken whole: name it
    with pytest.raises(DparseError, match="no model directory"):
        model_argument(f"en={tmp_path / 'missing'}")
    with pytest.raises(DparseError, match="model name 'a b'"):
        model_argument(f"a b={tmp_path / 'en_ewt-o1-cle'}")


def served(name: str) -> ServedModel:
    return ServedModel(name, "/nowhere", parser=None, tags=name.endswith("tagged"))  # type: ignore[arg-type]


def test_models_by_name_prefix_and_default() -> None:
    models = ModelSet([served("en-o1-cle"), served("en-o2-tagged"), served("de")])
    assert models.find("").name == "en-o1-cle"  # the default: the first
    assert models.find("en-o2-tagged").name == "en-o2-tagged"
    assert models.find("en").name == "en-o1-cle"  # a prefix: the first that has it
    assert models.find("en-o2").name == "en-o2-tagged"
    with pytest.raises(RequestError, match=r"'en-o3' does not exist \(models: en-o1-cle, "):
        models.find("en-o3")
    assert models.describe() == {"models": {"en-o1-cle": ["parser"], "en-o2-tagged":
                                            ["tagger", "parser"], "de": ["parser"]},
                                 "default_model": "en-o1-cle"}
    shadowing = ModelSet([served("en-x"), served("en")])  # a name beats another's prefix
    assert shadowing.find("en").name == "en"
    with pytest.raises(DparseError, match="two models are named 'de'"):
        ModelSet([served("de"), served("de")])


def test_a_refused_decoder_is_refused_again_without_loading(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import dparse.serve.models as models

    loads: list[str | None] = []

    def refuse(directory: str, decoder: str | None, tags: str) -> None:
        loads.append(decoder)
        raise DparseError(f"unknown decoder {decoder!r}")

    monkeypatch.setattr(models, "load", refuse)
    monkeypatch.setattr(models, "MAX_REFUSED", 2)
    model = ServedModel("tiny", "/nowhere", parser=SimpleNamespace(decoder="cle"),  # type: ignore[arg-type]
                        tags=False)
    for decoder in ["a", "a", "b", "b", "c", "c"]:
        with pytest.raises(RequestError, match=f"decoder '{decoder}'.*unknown decoder"):
            model.parser_for(decoder, "auto")
    assert loads == ["a", "b", "c", "c"]  # a and b remembered; c beyond MAX_REFUSED


def test_the_queue_admits_holds_and_refuses() -> None:
    async def scenario() -> list[str]:
        queue = WorkQueue(Limits(concurrency=1, queue=1, queue_timeout=0.2))
        events: list[str] = []
        first_in, release = asyncio.Event(), asyncio.Event()

        async def first() -> None:
            async with queue.slot():
                events.append("first working")
                first_in.set()
                await release.wait()
            events.append("first done")

        async def second() -> None:
            async with queue.slot():
                events.append("second working")

        task1 = asyncio.create_task(first())
        await first_in.wait()
        task2 = asyncio.create_task(second())
        while queue.waiting == 0:  # the second is queued
            await asyncio.sleep(0)
        try:  # a third finds the queue full
            async with queue.slot():
                events.append("third working")
        except RequestError as error:
            assert error.status == BUSY and "1 requests working and 1 waiting" in error.message
            events.append("third refused")
        release.set()
        await asyncio.gather(task1, task2)
        assert queue.working == queue.waiting == 0
        # the queue's timeout: a slot held longer than a waiter waits
        hold = asyncio.Event()

        async def holder() -> None:
            async with queue.slot():
                await hold.wait()

        task3 = asyncio.create_task(holder())
        while queue.working == 0:
            await asyncio.sleep(0)
        try:
            async with queue.slot():
                events.append("late working")
        except RequestError as error:
            assert error.status == BUSY and "waited 0.2s" in error.message
            events.append("late refused")
        hold.set()
        await task3
        return events

    assert asyncio.run(scenario()) == ["first working", "third refused", "first done",
                                       "second working", "late refused"]
