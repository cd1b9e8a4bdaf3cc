"""The parse-time cache of character vectors: equal to the character CNN's output (padding
zeros included), emptied when the weights change, correct when it overflows."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from neural_tiny import tiny_neural_fixture  # noqa: E402, F401

import dparse.neural.charcache as charcache  # noqa: E402
from dparse.conll import read_conll  # noqa: E402
from dparse.neural.model import NeuralModel  # noqa: E402
from dparse.neural.network import Batch  # noqa: E402


def _chunks(tiny_neural: Path) -> tuple[NeuralModel, list]:
    model = NeuralModel.read_files(tiny_neural / "model")
    encoded = [model.vocab.encode(s) for s in read_conll(tiny_neural / "dev.conllu")]
    return model, [encoded[i:i + 7] for i in range(0, len(encoded), 7)]


def _check(model: NeuralModel, cache: charcache.CharVectorCache, chunk: list) -> None:
    cnn = model.network.encoder.chars
    with torch.inference_mode():
        batch = Batch.of(chunk, model.device)
        expected = cnn(batch.chars)
        got = cache.vectors(cnn, chunk, batch.words.shape[1], model.device)
    assert got.shape == expected.shape
    assert torch.allclose(got, expected, atol=1e-6)
    padding = batch.chars.sum(dim=2) == 0
    assert padding.any() and bool((got[padding] == 0).all())


def test_cached_vectors_equal_the_cnn_batch_after_batch(tiny_neural: Path) -> None:
    model, chunks = _chunks(tiny_neural)
    cache = charcache.CharVectorCache()
    for chunk in chunks + chunks:
        _check(model, cache, chunk)
    distinct = {bytes(row[row != 0].tobytes()) for c in chunks for s in c for row in s.chars}
    assert len(cache.rows) == len(distinct)


def test_the_cache_empties_when_the_weights_change(tiny_neural: Path) -> None:
    model, chunks = _chunks(tiny_neural)
    cache = charcache.CharVectorCache()
    _check(model, cache, chunks[0])
    with torch.no_grad():
        model.network.encoder.chars.conv.bias.add_(1.0)
    _check(model, cache, chunks[0])
    model.weights = {k: v * 0.5 for k, v in model.weights.items()}
    _check(model, cache, chunks[0])


def test_a_full_cache_starts_afresh(tiny_neural: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, chunks = _chunks(tiny_neural)
    monkeypatch.setattr(charcache, "CACHE_WORDS", 60)
    cache = charcache.CharVectorCache()
    for chunk in chunks:
        _check(model, cache, chunk)
        assert len(cache.rows) <= max(60, len({r.tobytes() for s in chunk for r in s.chars}))
