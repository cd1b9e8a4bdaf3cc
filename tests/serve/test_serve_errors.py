"""Every bad request to ``dparse serve`` gets its status (UDPipe's 400, 413 for a body over
the limit, 404, 405) and a message naming the problem; the server goes on answering and logs
no internal error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import Server, require_serving

require_serving()

CONLLU = ("# sent_id = a\n1\tDogs\t_\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"
          "2\tbark\t_\tVERB\tVBP\t_\t0\troot\t_\t_\n\n")


@pytest.fixture(scope="module")
def limited(tiny_first_order: Path) -> Iterator[Server]:
    """The tiny model behind 4 kB bodies and 5-word sentences."""
    running = Server(f"tiny={tiny_first_order / 'model'}", "--max-request-kb", "4",
                     "--max-words", "5")
    yield running
    running.finish()


@pytest.mark.parametrize(("params", "message"), [
    ({"model": "tiny", "parser": ""}, "The parameter 'data' is required."),
    ({"model": "nope", "data": CONLLU}, "The requested model 'nope' does not exist (models: "
                                        "tiny)."),
    ({"data": CONLLU.replace("\t2\tnsubj", "\tx\tnsubj"), "parser": ""},
     "Cannot read the input in 'conllu' format: data:2: "),
    ({"data": "1\tDogs\n\n", "parser": ""}, "Cannot read the input in 'conllu' format: data:1: "),
    ({"data": "a\n\x07b\n", "input": "horizontal"}, "data:2: token 1"),
    ({"data": "a\n\tb\n", "input": "vertical"}, "data:2: the line's first tab-separated"),
    ({"data": "a b c\nOne two three four five six\n", "input": "horizontal", "parser": ""},
     "Sentence 2 (line 2) has 6 words; this server takes at most 5 words a sentence."),
    ({"data": "a", "input": "raw"}, "Unknown input format 'raw' (known: conllu, horizontal, "
                                    "vertical)."),
    ({"data": "a", "output": "matxin"}, "Unknown output format 'matxin'"),
    ({"data": "a", "tokenizer": ""}, "The model 'tiny' has no tokenizer"),
    ({"data": "a", "tagger": ""}, "The model 'tiny' does not contain a tagger."),
    ({"data": "a", "parser": "beam=4"}, "The parameter 'parser' takes no options in dparse"),
    ({"data": "a", "parser": "", "kbest": "0"}, "The parameter 'kbest' must be at least 1"),
    ({"data": "a", "parser": "", "kbest": "two"}, "The parameter 'kbest' must be an integer"),
    ({"data": "a", "parser": "", "temperature": "-1"}, "must be above 0"),
    ({"data": "a", "parser": "", "temperature": "nan"}, "must be above 0"),
    ({"data": "a", "parser": "", "marginals": "maybe"}, "The parameter 'marginals' is 1 or 0"),
    ({"data": "a", "parser": "", "marginals": "1", "kbest": "2"}, "one of them at a time"),
    ({"data": "a", "parser": "", "constraints": "all"}, "Unknown constraints mode 'all'"),
    ({"data": "a", "parser": "", "tags": "guess"}, "Unknown tags mode 'guess'"),
    ({"data": "a", "kbest": "2"}, "are parser options: add the parameter 'parser'"),
    ({"data": "a", "tags": "predict"}, "are parser options: add the parameter 'parser'"),
    ({"data": "a", "input": "horizontal", "parser": "", "decoder": "nosuch"},
     "Model 'tiny' cannot parse with decoder 'nosuch'"),
    ({"data": "a", "parser": "", "decodr": "eisner"}, "Unknown parameter 'decodr'"),
])
def test_bad_parameters_get_400_naming_the_problem(limited: Server, params: dict[str, str],
                                                   message: str) -> None:
    for response in (limited.client.post("/process", data=params),
                     limited.client.get("/process", params=params)):
        assert response.status_code == 400, response.text
        assert message in response.text
        assert response.headers["content-type"].startswith("text/plain")


def test_constraints_no_tree_meets_get_400_naming_the_sentence(limited: Server) -> None:
    cycle = CONLLU.replace("\t0\troot", "\t1\tdep")
    response = limited.client.post("/process", data={"data": cycle, "parser": "",
                                                     "constraints": "keep"})
    assert response.status_code == 400 and "data:" in response.text


def test_a_body_over_the_limit_gets_413(limited: Server) -> None:
    big = "a " * 2100 + "\n"  # over 4 kB encoded
    response = limited.client.post("/process", data={"data": big, "input": "horizontal"})
    assert response.status_code == 413
    assert "The payload size is too large" in response.text and "at most 4096" in response.text

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it comes
        yield b"input=horizontal&data="
        for _ in range(100):
            yield b"word+" * 10

    response = limited.client.post("/process", content=chunks(), headers={
        "content-type": "application/x-www-form-urlencoded"})
    assert response.status_code == 413 and "too large" in response.text
    assert limited.client.post("/process", data={"data": "a b\n", "input": "horizontal"}
                               ).status_code == 200


@pytest.mark.parametrize(("how", "where"), [
    ("query", "The parameter 'data' is not valid UTF-8: byte 0xff at line 2, column 3"),
    ("form", "The parameter 'data' is not valid UTF-8: byte 0xff at line 2, column 3"),
    ("multipart", "The parameter 'data' is not valid UTF-8: byte 0xff at line 2, column 3"),
    ("name", "A parameter name in the body is not valid UTF-8: byte 0xc3 at line 1, column 2"),
])
def test_invalid_utf8_gets_400_naming_the_byte_and_line(limited: Server, how: str,
                                                        where: str) -> None:
    value = b"ok\nab\xffc\n"
    if how == "query":
        response = limited.client.get("/process?input=horizontal&data=ok%0Aab%FFc")
    elif how == "form":
        response = limited.client.post("/process", content=b"input=horizontal&data=ok%0Aab%FFc",
                                       headers={"content-type":
                                                "application/x-www-form-urlencoded"})
    elif how == "multipart":
        response = limited.client.post("/process", files={"data": ("d.txt", value)},
                                       data={"input": "horizontal"})
    else:
        response = limited.client.post("/process", content=b"d\xc3=1", headers={
            "content-type": "application/x-www-form-urlencoded"})
    assert response.status_code == 400
    assert where in response.text


def test_other_bodies_paths_and_methods(limited: Server) -> None:
    plain = limited.client.post("/process", content=b"data=a", headers={
        "content-type": "text/plain"})
    assert plain.status_code == 400 and "Unsupported payload Content-Type 'text/plain'" in \
        plain.text
    broken = limited.client.post("/process", content=b"--x\r\nno headers", headers={
        "content-type": "multipart/form-data; boundary=x"})
    assert broken.status_code == 400 and "multipart/form-data" in broken.text
    assert limited.client.get("/nothing").status_code == 404
    assert limited.client.delete("/process").status_code == 405
    assert limited.client.get("/health").json()["status"] == "ok"
