"""The time spent in each stage of parsing (:class:`ParseTimer`), shared by every parser type."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ParseTimer:
    """Seconds spent in each stage of parsing, and what was parsed."""

    sentences: int = 0
    tokens: int = 0
    encode: float = 0.0
    score: float = 0.0
    decode: float = 0.0
    tag: float = 0.0  # predicting tags (a tagger, or the tagger of a pipeline model)
    wall: float = 0.0  # reading, parsing and writing the whole input, if measured (else 0)

    def record(self, tokens: int, encode: float, decode: float) -> None:
        """Count one parsed sentence of ``tokens`` words and its encoding and decoding seconds."""
        self.sentences += 1
        self.tokens += tokens
        self.encode += encode
        self.decode += decode

    def record_tagging(self, seconds: float, tokens: int = 0, sentences: int = 0) -> None:
        """Count ``seconds`` of tagging, and the words and sentences tagged when the tagger is
        the whole job (a pipeline's parser counts them itself)."""
        self.tag += seconds
        self.tokens += tokens
        self.sentences += sentences

    @property
    def seconds(self) -> float:
        """Inference time: tagging, encoding, scoring and decoding (reading and writing
        excluded)."""
        return self.tag + self.encode + self.score + self.decode

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def wall_tokens_per_second(self) -> float:
        return self.tokens / self.wall if self.wall > 0 else 0.0

    def summary(self) -> dict[str, float | int]:
        """The counts and times as the commands report them (``--json``); the wall figures
        only where they were measured."""
        summary: dict[str, float | int] = {
            "sentences": self.sentences,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 4),
            "tokens_per_second": round(self.tokens_per_second, 1),
            "score_seconds": round(self.score, 4),
            "decode_seconds": round(self.decode, 4),
        }
        if self.tag > 0:
            summary["tag_seconds"] = round(self.tag, 4)
        if self.wall > 0:
            summary["wall_seconds"] = round(self.wall, 4)
            summary["wall_tokens_per_second"] = round(self.wall_tokens_per_second, 1)
        return summary

    def line(self, verb: str = "parsed") -> str:
        """One line for stderr: what was parsed (or tagged: ``verb``), how fast, tagging,
        scoring and decoding apart."""
        tagging = f"tagging {self.tag:.2f}s, " if self.tag > 0 else ""
        stages = (f"{tagging}scoring {self.score:.2f}s, decoding {self.decode:.2f}s"
                  if verb == "parsed" else f"tagging {self.tag:.2f}s")
        return (f"{verb} {self.sentences} sentences, {self.tokens} tokens in "
                f"{self.seconds:.2f}s: {self.tokens_per_second:,.0f} tokens/sec ({stages}")
