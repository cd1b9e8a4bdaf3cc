"""UDPipe's REST API against a running ``dparse serve``: a client written to UDPipe's
documentation (GET /models; GET and POST /process with model, data, input, tagger, parser,
output; urlencoded and multipart bodies) gets byte for byte the CoNLL-U that ``dparse
parse`` writes for the same input and model, with dparse's own options too."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pytest
from click.testing import CliRunner
from servers import Server, require_serving

from dparse.cli.parse import parse
from dparse.conll import read_conll, write_conll

require_serving()


@pytest.fixture(scope="module")
def tiny_model(tiny_first_order: Path) -> str:
    return str(tiny_first_order / "model")


@pytest.fixture(scope="module")
def server(tiny_model: str) -> Iterator[Server]:
    """The tiny model served as ``tiny`` (the default) and as ``tiny-eisner`` (the same
    directory again)."""
    running = Server(f"tiny={tiny_model}", f"tiny-eisner={tiny_model}")
    yield running
    running.finish()


@pytest.fixture(scope="module")
def inputs(tiny_first_order: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``in.conllu`` (20 dev sentences, comments, MISC, a multiword token among them),
    ``in.txt`` (their words, a sentence a line) and ``in.vert`` (a word a line)."""
    folder = tmp_path_factory.mktemp("serve-inputs")
    sentences = list(islice(read_conll(tiny_first_order / "dev.conllu"), 20))
    write_conll(sentences, folder / "in.conllu")
    (folder / "in.txt").write_text("".join(" ".join(s.form) + "\n" for s in sentences))
    (folder / "in.vert").write_text("".join("".join(f"{w}\t_\n" for w in s.form) + "\n"
                                            for s in sentences))
    return folder


def dparse_parse(*args: str) -> bytes:
    """What ``dparse parse ARGS`` writes on stdout."""
    result = CliRunner().invoke(parse, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def udpipe_result(server: Server, method: str, **params: str) -> bytes:
    """A UDPipe client's call of /process: the JSON answer's result, as UTF-8."""
    if method == "GET":
        response = server.client.get("/process", params=params)
    elif method == "multipart":
        response = server.client.post("/process", files={k: (None, v) for k, v in
                                                         params.items()})
    else:
        response = server.client.post("/process", data=params)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert set(answer) == {"model", "acknowledgements", "result"}
    assert answer["model"] == "tiny" and isinstance(answer["acknowledgements"], list)
    return answer["result"].encode("utf-8")


def test_models_lists_every_model_and_the_default(server: Server) -> None:
    answer = server.client.get("/models").json()
    assert answer == {"models": {"tiny": ["parser"], "tiny-eisner": ["parser"]},
                      "default_model": "tiny"}


@pytest.mark.parametrize("method", ["POST", "GET", "multipart"])
def test_conllu_input_gives_the_bytes_of_dparse_parse(server: Server, tiny_model: str,
                                                      inputs: Path, method: str) -> None:
    expected = dparse_parse(tiny_model, str(inputs / "in.conllu"))
    data = (inputs / "in.conllu").read_text()
    assert "SpaceAfter=No" in data and data.count("\n# ") > 20  # MISC and comments kept
    got = udpipe_result(server, method, model="tiny", data=data, input="conllu",
                        parser="", output="conllu")
    assert got == expected


@pytest.mark.parametrize("fmt", ["horizontal", "vertical"])
def test_words_give_the_bytes_of_dparse_parse_format_text(server: Server, tiny_model: str,
                                                          inputs: Path, fmt: str) -> None:
    expected = dparse_parse(tiny_model, str(inputs / "in.txt"), "--format", "text")
    data = (inputs / ("in.txt" if fmt == "horizontal" else "in.vert")).read_text()
    assert udpipe_result(server, "POST", data=data, input=fmt, parser="") == expected


def test_model_by_prefix_default_and_the_answer_names_it(server: Server) -> None:
    by_prefix = server.client.post("/process", data={"model": "tiny-eisner", "data": "a b\n",
                                                     "input": "horizontal", "parser": ""})
    assert by_prefix.json()["model"] == "tiny-eisner"
    default = server.client.post("/process", data={"data": "a b\n", "input": "horizontal",
                                                   "parser": ""})
    assert default.json()["model"] == "tiny"


def test_without_parser_the_input_comes_back_unparsed(server: Server, inputs: Path) -> None:
    data = (inputs / "in.conllu").read_text()
    assert udpipe_result(server, "POST", data=data) == data.encode()
    words = udpipe_result(server, "POST", data="The dog barks\n", input="horizontal")
    assert words == b"# sent_id = 1\n# text = The dog barks\n" + b"".join(
        f"{i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_\n".encode()
        for i, w in enumerate(["The", "dog", "barks"], 1)) + b"\n"


@pytest.mark.parametrize(("params", "args"), [
    ({"decoder": "eisner"}, ["--decoder", "eisner"]),
    ({"kbest": "3"}, ["--kbest", "3"]),
    ({"marginals": "1", "marginals_threshold": "0.05", "temperature": "2"},
     ["--marginals", "--marginals-threshold", "0.05", "--temperature", "2"]),
    ({"constraints": "keep"}, ["--constraints", "keep"]),
])
def test_dparse_options_give_the_bytes_of_dparse_parse(server: Server, tiny_model: str,
                                                       inputs: Path, params: dict[str, str],
                                                       args: list[str]) -> None:
    source = inputs / "in.conllu"
    if "constraints" in params:  # half the heads given, the others to predict
        source = inputs / "partial.conllu"
        lines = []
        for k, line in enumerate((inputs / "in.conllu").read_text().splitlines(True)):
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit() and k % 2:
                cols[6] = cols[7] = "_"
            lines.append("\t".join(cols))
        source.write_text("".join(lines))
    expected = dparse_parse(tiny_model, str(source), *args)
    got = udpipe_result(server, "POST", data=source.read_text(), parser="", **params)
    assert got == expected
    if "kbest" in params:
        assert got.count(b"# kbest = 1\n") == 20 and got.count(b"# kbest = 3\n") > 10
