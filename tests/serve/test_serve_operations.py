"""``dparse serve`` under abuse and in operation: bursts of random bytes (as bodies, query
strings and whole requests), a body cut short, a client gone before its answer; the queue's
503 with Retry-After; SIGTERM letting the request in flight finish; ``--workers 2``. After
each, the server answers and has logged no internal error."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from servers import STOPPED, Server, require_serving

require_serving()

BURST = 1500  # random requests (benchmarks/serve_load.py --abuse 10000 sends more)
ANSWERS = {200, 400, 404, 405, 413}  # what a random request may get: never 500


@pytest.fixture(scope="module")
def server(tiny_first_order: Path) -> Iterator[Server]:
    running = Server(f"tiny={tiny_first_order / 'model'}")
    yield running
    running.finish()


@pytest.fixture(scope="module")
def big(tiny_first_order: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """About 300 kB of CoNLL-U: the dev slice, repeated."""
    text = (tiny_first_order / "dev.conllu").read_text()
    return text * (300_000 // len(text) + 1)


def raw_request(server: Server, data: bytes, read: int = 1 << 16, half_close: bool = True
                ) -> bytes:
    """Send ``data`` on a new connection, half-close it (``half_close``: the server sees the
    client leave), and read up to ``read`` bytes of the answer (what came before the server
    closed), then close."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        got = b""
        while len(got) < read and (chunk := sock.recv(read - len(got))):
            got += chunk
    return got


def test_random_bytes_get_answers_never_500(server: Server) -> None:
    import httpx

    rng = random.Random(7)
    types = ["application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz",
             "text/plain", ""]
    seen = set()
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for k in range(BURST):
            noise = rng.randbytes(rng.randrange(0, 300))
            if k % 3 == 0:
                prefix = rng.choice([b"", b"data=", b"input=horizontal&parser=&data=",
                                     b"--xyz\r\nContent-Disposition: form-data; name=data\r\n\r\n"])
                response = client.post("/process", content=prefix + noise,
                                       headers={"content-type": rng.choice(types)})
            elif k % 3 == 1:
                response = client.get("/process?" + noise.hex() if k % 2 else
                                      "/process?data=" + "".join(f"%{b:02X}" for b in noise))
            else:
                path = rng.choice(["/process", "/models", "/", "/x"])
                response = client.post(path, data={"data": noise.decode("utf-8", "replace"),
                                                   "input": rng.choice(["conllu",
                                                                        "horizontal",
                                                                        "vertical"]),
                                                   "parser": ""})
            assert response.status_code in ANSWERS, response.text
            seen.add(response.status_code)
    assert {200, 400} <= seen
    rng = random.Random(8)
    answered = 0
    for _ in range(BURST // 10):  # whole requests of noise: 400 from uvicorn, or a close
        got = raw_request(server, rng.randbytes(rng.randrange(1, 200)) + b"\r\n\r\n")
        answered += got.startswith(b"HTTP/1.1 400")
        assert not got or got.startswith(b"HTTP/1.1 4")
    assert answered > 0
    assert server.client.get("/health").json()["status"] == "ok"
    assert server.errors() == []


def test_a_body_cut_short_and_a_client_gone_before_its_answer(server: Server, big: str
                                                              ) -> None:
    cut = raw_request(server, b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      b"application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
                      b"data=abc")
    assert cut == b""  # the server waited for the rest, then saw the client leave
    body = urlencode({"data": big, "parser": ""}).encode()
    request = (b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/"
               b"x-www-form-urlencoded\r\nContent-Length: " + str(len(body)).encode() +
               b"\r\n\r\n" + body)
    # gone after the first bytes of a large answer (about 1 MB of JSON)
    assert raw_request(server, request, read=20, half_close=False).startswith(
        b"HTTP/1.1 200 OK\r\n")
    with socket.create_connection(("127.0.0.1", server.port)) as sock:  # gone at once
        sock.sendall(request)
    answer = server.client.post("/process", data={"data": big, "parser": ""})
    assert answer.status_code == 200 and len(answer.json()["result"]) > len(big) // 2
    assert server.errors() == []


def test_a_request_that_does_not_arrive_in_time_ends_its_connection(
        tiny_first_order: Path) -> None:
    running = Server(f"tiny={tiny_first_order / 'model'}", "--read-timeout", "0.5")
    slow = (b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/"
            b"x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nparser=&data=")
    answer = raw_request(running, slow, half_close=False)  # read until the server closes
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"The request body did not arrive within 0.5s of its headers (13 bytes came)." \
        in answer
    # headers that never come: a connection with nothing, a blank line, half a request line
    for silent in [b"", b"\r\n\r\n", b"GET /hea"]:
        assert raw_request(running, silent, half_close=False) == b""  # closed, no answer
    assert running.client.get("/health").status_code == 200
    running.finish()


def test_busy_gets_503_and_sigterm_lets_the_request_in_flight_finish(
        tiny_first_order: Path, big: str) -> None:
    import httpx

    running = Server(f"tiny={tiny_first_order / 'model'}", "--queue", "0")
    slow = {"data": big, "parser": "", "kbest": "4"}
    answers: list[httpx.Response] = []
    worker = threading.Thread(target=lambda: answers.append(httpx.post(
        running.url + "/process", data=slow, timeout=300)))
    worker.start()
    while running.client.get("/health").json()["working"] == 0:  # poll until it parses
        assert worker.is_alive()
    busy = running.client.post("/process", data={"data": "a b\n", "input": "horizontal",
                                                  "parser": ""})
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert "The server is busy (1 requests working and 0 waiting)" in busy.text
    assert running.stop() in STOPPED  # SIGTERM while the slow request parses
    worker.join()
    (answer,) = answers
    assert answer.status_code == 200
    result = answer.json()["result"]
    assert result.count("# kbest = 1\n") == big.count("# sent_id")
    log = "".join(running.log)
    assert log.index("Shutting down") < log.index("POST /process 200")
    assert running.errors() == []


def health_pids(running: Server, count: int) -> list[int]:
    """The pid /health gives on each of ``count`` keep-alive connections, all established
    before any request is sent."""
    connections = [http.client.HTTPConnection("127.0.0.1", running.port, timeout=60)
                   for _ in range(count)]
    for connection in connections:
        connection.connect()
    pids = []
    for connection in connections:
        connection.request("GET", "/health")
        health = json.loads(connection.getresponse().read())
        assert health["memory"]["rss"] > 0
        pids.append(health["pid"])
        connection.close()
    return pids


def test_two_workers_each_load_the_models_and_share_connections_opened_at_once(
        tiny_first_order: Path) -> None:
    running = Server(f"tiny={tiny_first_order / 'model'}", "--workers", "2")
    # each worker's own socket (SO_REUSEPORT) gets some of 16 connections opened at once; one
    # socket shared by both lets the worker that wakes first accept them all
    pids = health_pids(running, 16)
    assert len(set(pids)) == 2, pids
    loaded = {line.split("process ")[1].split(":")[0] for line in running.log
              if "1 model loaded" in line}
    assert loaded == {str(pid) for pid in pids}  # each worker loaded it (the parent: none)
    running.finish()


def test_a_worker_that_dies_is_replaced_on_its_socket(tiny_first_order: Path) -> None:
    running = Server(f"tiny={tiny_first_order / 'model'}", "--workers", "2")
    victim = health_pids(running, 1)[0]
    os.kill(victim, signal.SIGKILL)
    while not any(f"worker process {victim} ended" in line for line in running.log):
        assert running.process.poll() is None  # the parent notices, then starts another
    pids = set(health_pids(running, 16))  # both sockets answer: the replacement on the dead one's
    assert len(pids) == 2 and victim not in pids, pids
    running.finish()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_model_that_cannot_load_is_an_error_at_start(tmp_path: Path, workers: str) -> None:
    (tmp_path / "config.yaml").write_text("name: x\n")
    done = subprocess.run([sys.executable, "-m", "dparse", "serve", str(tmp_path), "--port",
                           "0", "--workers", workers], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "not a dparse model directory" in done.stderr and "Traceback" not in done.stderr
