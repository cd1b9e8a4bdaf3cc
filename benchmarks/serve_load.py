"""``dparse serve`` under load on loopback, against ``dparse parse`` on the same file, in one
run (the figures of results/serve-en_ewt.md).

1. ``dparse parse MODEL TEST --json``: its own tokens/sec (inference) and over its wall time
   (reading, parsing, writing), and its output (the reference); also the CPU seconds the
   parse took (the process's, less those of ``dparse parse`` of TEST's first sentence: the
   start-up and the model's loading).
2. ``dparse serve`` of two models (``--model`` twice; the first is parsed) with ``--workers``
   processes, started on a free port; its processes' memory (RSS and PSS, summed over the
   parent and the workers) once loaded.
3. Equality: each sentence of TEST sent alone to ``/process`` (input=conllu, parser=), the
   answers concatenated: byte for byte ``dparse parse``'s output?
4. Load: ``--clients`` asyncio clients (each a keep-alive connection, a small HTTP/1.1 client
   of its own so that the generator spends little of the CPU the server needs), each sending
   the sentences one request at a time from its own starting point, for ``--seconds``:
   requests, errors (anything but 200), latency percentiles, tokens/sec (the tokens of the
   sentences answered 200, over the load's wall time); the memory again after. Also the CPU
   seconds the server's processes and the clients took during the load: on a machine shared
   with other jobs, tokens per CPU second of the server against those of ``dparse parse`` say
   what the server costs whatever the others take.
5. Abuse: ``--abuse`` requests of random bytes (as bodies of every content type, as query
   strings, as whole requests, the client then ending its side): the statuses they got (never
   500; ``closed``: the connection closed without an answer, as for noise that holds no
   request), the server answering after, and its log holding no internal error.
6. ``dparse parse`` again (step 1), so that the ratio is read against both.

    python benchmarks/serve_load.py --model models/en_ewt-o1-cle \\
        --model models/en_ewt-o1-eisner --test ../shared/data/en_ewt/test.conllu \\
        --workers 2 --clients 16 --seconds 60 --abuse 10000 --out results/serve-en_ewt.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlencode

import psutil

from dparse.conll import read_conll


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def parse_reference(model: Path, test: Path, out: Path) -> dict:
    """``dparse parse --json`` of ``test`` into ``out``: its summary, with ``cpu``: the CPU
    seconds of the parse (module doc)."""
    cpu = []
    one = out.with_name("first-sentence.conllu")
    one.write_text(next(iter(read_conll(test, require_heads=False))).to_conll())
    for source in (test, one):
        started = children_cpu()
        done = subprocess.run([sys.executable, "-m", "dparse", "parse", str(model),
                               str(source), "-o", str(out if source == test else
                                                      out.with_suffix(".one")), "--json"],
                              capture_output=True, text=True, check=True)
        cpu.append(children_cpu() - started)
        if source == test:
            summary = json.loads(done.stderr.strip().splitlines()[-1])
    return {**summary, "cpu": cpu[0] - cpu[1]}


class Server:
    """``dparse serve ARGS`` on a free port, its log lines collected."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dparse", "serve", "--port", "0", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log: list[str] = []
        ready = threading.Event()
        self.port = 0

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.log.append(line)
                if line.startswith("dparse serve: http://"):
                    self.port = int(line.split()[2].rstrip("/").rsplit(":", 1)[1])
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        ready.wait(600)
        if not self.port:
            raise RuntimeError("dparse serve did not start:\n" + "".join(self.log))

    def processes(self) -> list[psutil.Process]:
        parent = psutil.Process(self.process.pid)
        return [parent, *parent.children(recursive=True)]

    def cpu(self) -> float:
        """CPU seconds the server's processes have taken so far."""
        return sum(sum(p.cpu_times()[:2]) for p in self.processes())

    def memory(self) -> dict[str, float]:
        """MiB of RSS and PSS summed over the server's processes, and how many."""
        procs = self.processes()
        infos = [p.memory_full_info() for p in procs]
        return {"processes": len(procs), "rss": sum(i.rss for i in infos) / 2**20,
                "pss": sum(i.pss for i in infos) / 2**20}

    def errors(self) -> list[str]:
        return [line for line in self.log if " ERROR " in line or "Traceback" in line]

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(120)


class Connection:
    """One keep-alive HTTP/1.1 connection: POST a form, read the status and body."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.writer.write(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/x-www-form-urlencoded\r\n"
                          b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


def form(text: str, model: str) -> bytes:
    return urlencode({"model": model, "input": "conllu", "parser": "", "data": text},
                     quote_via=quote).encode()


async def equality(port: int, texts: list[str], model: str) -> str:
    """Each sentence alone through /process: the results concatenated."""
    conn = await Connection.open(port)
    results = []
    for text in texts:
        status, body = await conn.post("/process", form(text, model))
        if status != 200:
            raise RuntimeError(f"/process answered {status}: {body[:200]!r}")
        results.append(json.loads(body)["result"])
    conn.close()
    return "".join(results)


async def load(port: int, bodies: list[bytes], tokens: list[int], clients: int,
               seconds: float) -> dict:
    """``clients`` connections sending ``bodies`` for ``seconds`` (module doc)."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    answered_tokens = 0
    stop = time.perf_counter() + seconds

    async def client(k: int) -> None:
        nonlocal answered_tokens
        conn = await Connection.open(port)
        i = k * len(bodies) // clients
        while time.perf_counter() < stop:
            started = time.perf_counter()
            try:
                status, _ = await conn.post("/process", bodies[i])
            except (OSError, asyncio.IncompleteReadError) as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                conn = await Connection.open(port)
                continue
            latencies.append(time.perf_counter() - started)
            if status == 200:
                answered_tokens += tokens[i]
            else:
                errors[str(status)] = errors.get(str(status), 0) + 1
            i = (i + 1) % len(bodies)
        conn.close()

    began = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    wall = time.perf_counter() - began
    latencies.sort()

    def pct(q: float) -> float:
        return 1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))]

    return {"requests": len(latencies), "errors": errors, "wall": wall,
            "tokens": answered_tokens,
            "tokens_per_second": answered_tokens / wall, "p50": pct(0.50), "p90": pct(0.90),
            "p99": pct(0.99), "max": 1000 * latencies[-1],
            "mean": 1000 * statistics.fmean(latencies)}


async def abuse(port: int, count: int, seed: int = 1) -> dict[str, int]:
    """``count`` requests of random bytes (module doc): how many got each status."""
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    types = [b"application/x-www-form-urlencoded", b"multipart/form-data; boundary=xyz",
             b"text/plain", b""]
    for k in range(count):
        noise = rng.randbytes(rng.randrange(0, 400))
        if k % 4 == 3:  # a whole request of noise
            request = noise + b"\r\n\r\n"
        elif k % 4 == 2:
            request = (b"GET /process?" + noise.hex().encode() + b" HTTP/1.1\r\nHost: x\r\n"
                       b"Connection: close\r\n\r\n")
        else:
            body = rng.choice([b"", b"data=", b"input=horizontal&parser=&data="]) + noise
            request = (b"POST " + rng.choice([b"/process", b"/", b"/models"]) +
                       b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: " +
                       rng.choice(types) + b"\r\nContent-Length: " + str(len(body)).encode() +
                       b"\r\n\r\n" + body)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        if k % 4 == 3:  # nothing more comes (noise may be no request at all: "\r\n\r\n")
            writer.write_eof()
        answer = await reader.read()
        writer.close()
        status = answer[9:12].decode("latin-1") if answer.startswith(b"HTTP/1.1") else "closed"
        seen[status] = seen.get(status, 0) + 1
    return seen


def shown(path: str) -> str:
    """``path`` relative to the checkout (``../shared/data/...``): the report names no
    machine's folders."""
    return os.path.relpath(Path(path).resolve(), Path(__file__).resolve().parents[1])


def report(args: argparse.Namespace, load_before: float, before: dict, after: dict,
           loaded: dict, loaded_after: dict, equal: bool, sentences: int, test_tokens: int,
           result: dict, abused: dict[str, int] | None, healthy: bool, errors: list[str],
           status: int) -> str:
    own = statistics.fmean([before["tokens_per_second"], after["tokens_per_second"]])
    wall = statistics.fmean([before["wall_tokens_per_second"], after["wall_tokens_per_second"]])
    served = result["tokens_per_second"]
    server_rate = result["tokens"] / result["server_cpu"]  # tokens per CPU second
    parse_rate = test_tokens / statistics.fmean([before["cpu"], after["cpu"]])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [
        "# dparse serve under load (en_ewt test, loopback)", "",
        f"Made by `benchmarks/serve_load.py` (its docstring says what is measured) on "
        f"{time.strftime('%Y-%m-%d')} at commit {commit}, Python {platform.python_version()}, "
        f"on this {psutil.cpu_count()}-core machine (one-minute load average {load_before:.1f} "
        f"before the run, {psutil.getloadavg()[0]:.1f} at its end, the benchmark's own "
        f"included): the server, its {args.clients} clients and `dparse parse` take turns on "
        "the same cores.", "",
        f"Models served: {', '.join(f'`{Path(m).name}`' for m in args.model)} (the first "
        f"parsed); `--workers {args.workers}`; test file `{shown(args.test)}` ({sentences} "
        f"sentences, {test_tokens} tokens).", "",
        "## Equality", "",
        f"Each sentence sent alone (input=conllu, parser=), the {sentences} results "
        f"concatenated: byte for byte `dparse parse`'s output: **{equal}**.", "",
        "## Load", "",
        "| what | figure |", "|---|---|",
        f"| clients (keep-alive connections) | {args.clients} |",
        f"| seconds | {result['wall']:.1f} |",
        f"| requests (one sentence each) | {result['requests']} |",
        f"| errors (anything but 200) | {sum(result['errors'].values())} "
        f"{result['errors'] or ''} |",
        f"| latency p50 / p90 / p99 / max (ms) | {result['p50']:.1f} / {result['p90']:.1f} / "
        f"{result['p99']:.1f} / {result['max']:.1f} |",
        f"| requests/sec | {result['requests'] / result['wall']:,.0f} |",
        f"| tokens/sec served | {served:,.0f} |",
        f"| `dparse parse` tokens/sec, its own figure (inference; before, after) | {own:,.0f} "
        f"({before['tokens_per_second']:,.0f}, {after['tokens_per_second']:,.0f}) |",
        f"| `dparse parse` tokens/sec over its wall time (read, parse, write) | {wall:,.0f} |",
        f"| served / `dparse parse` (own figure; wall) | {served / own:.2f}x; "
        f"{served / wall:.2f}x |", "",
        "CPU seconds (user + system) during the load, and the tokens they parsed:", "",
        "| what | CPU seconds | tokens per CPU second |", "|---|---|---|",
        f"| the server's processes | {result['server_cpu']:.1f} | {server_rate:,.0f} |",
        f"| the clients (one process) | {result['client_cpu']:.1f} | - |",
        f"| `dparse parse` of the file, less its start-up (before, after) | "
        f"{before['cpu']:.2f}, {after['cpu']:.2f} | {parse_rate:,.0f} |", "",
        f"The server spends {parse_rate / server_rate:.2f}x the CPU per token of `dparse "
        "parse` over a whole file (HTTP, one sentence a request, the JSON); with two cores of "
        f"its own (and the clients elsewhere) `--workers 2` would serve {2 * server_rate:,.0f} "
        f"tokens/sec, {2 * server_rate / parse_rate:.2f}x what one `dparse parse` process "
        "parses on one core.", "",
        "## Memory (the server's processes: parent and workers)", "",
        "| when | processes | RSS MiB (sum) | PSS MiB (sum) |", "|---|---|---|---|",
        f"| loaded, before the load | {loaded['processes']} | {loaded['rss']:.0f} | "
        f"{loaded['pss']:.0f} |",
        f"| after the load | {loaded_after['processes']} | {loaded_after['rss']:.0f} | "
        f"{loaded_after['pss']:.0f} |", "",
        "PSS counts a page that several processes map (the memory-mapped weights) in shares: "
        "the sum is the memory the server takes; RSS counts shared pages in every process.",
        "",
    ]
    if abused is not None:
        lines += [
            "## Random bytes", "",
            f"{sum(abused.values())} requests of random bytes (bodies of every content type, "
            "query strings, whole requests; closed: no answer, the connection closed): statuses "
            + ", ".join(f"{k}: {v}" for k, v in sorted(abused.items()))
            + f"; the server answered /health after: {healthy}; log lines reporting an "
            f"internal error: {len(errors)}; SIGTERM exit status {status}.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--abuse", type=int, default=0)
    parser.add_argument("--work", default="/tmp/serve-load")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    reference = work / "reference.conllu"
    load_before = psutil.getloadavg()[0]
    before = parse_reference(Path(args.model[0]), Path(args.test), reference)
    sentences = list(read_conll(args.test, require_heads=False))
    texts = [s.to_conll() for s in sentences]
    assert "".join(texts) == Path(args.test).read_text()
    names = [f"m{k}" for k in range(len(args.model))]
    server = Server(*(f"{n}={m}" for n, m in zip(names, args.model, strict=True)),
                    "--workers", str(args.workers), "--queue", "1024", "--log-level", "info")
    equal = asyncio.run(equality(server.port, texts, names[0])) == reference.read_text()
    loaded = server.memory()
    bodies = [form(text, names[0]) for text in texts]
    server_cpu, client_cpu = server.cpu(), time.process_time()
    result = asyncio.run(load(server.port, bodies, [len(s) for s in sentences], args.clients,
                              args.seconds))
    result["server_cpu"] = server.cpu() - server_cpu
    result["client_cpu"] = time.process_time() - client_cpu
    loaded_after = server.memory()
    abused = asyncio.run(abuse(server.port, args.abuse)) if args.abuse else None
    healthy = False
    if abused is not None:
        first = "".join(reference.read_text().partition("\n\n")[:2])  # its parse
        healthy = asyncio.run(equality(server.port, texts[:1], names[0])) == first
    status = server.stop()
    after = parse_reference(Path(args.model[0]), Path(args.test), reference)
    text = report(args, load_before, before, after, loaded, loaded_after, equal, len(sentences),
                  sum(len(s) for s in sentences), result, abused, healthy, server.errors(),
                  status)
    (work / "server.log").write_text("".join(server.log))
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
