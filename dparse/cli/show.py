"""``dparse show FILE``: arc-diagram pictures of parsed sentences (SVG, or an HTML page)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import click

from dparse.conll import FORMATS, Sentence, read_treebank
from dparse.errors import DparseError
from dparse.outputs import write_text

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=True)
PAGE_DEFAULT = 20  # sentences on an HTML page without --sent
_RANGE = re.compile(r"(\d+)-(\d+)")


def sent_id(sentence: Sentence) -> str | None:
    """The ``# sent_id = ...`` of a CoNLL-U sentence (None without one)."""
    for line in sentence.comments:
        key, _, value = line[1:].partition("=")
        if key.strip() == "sent_id":
            return value.strip()
    return None


def select_sentences(sentences: Sequence[Sentence], wanted: Sequence[str], source: str
                     ) -> list[int]:
    """Indices (0-based) of the sentences ``wanted`` names, in the order given: a
    ``# sent_id``, a 1-based position, or a range of positions ``A-B`` (inclusive). DparseError
    naming ``source`` for one that matches nothing."""
    ids = {sid: k for k, s in enumerate(sentences) if (sid := sent_id(s)) is not None}
    picked: list[int] = []
    for item in wanted:
        if item in ids:
            picked.append(ids[item])
            continue
        match = _RANGE.fullmatch(item)
        lo, hi = (int(match[1]), int(match[2])) if match else (
            (int(item), int(item)) if item.isdigit() else (0, -1))
        if not 1 <= lo <= hi <= len(sentences):
            raise DparseError(f"{source}: no sentence {item!r} (a sent_id, a position 1.."
                              f"{len(sentences)} or a range like 3-7)")
        picked += range(lo - 1, hi)
    return picked


def _caption(k: int, system: Sentence, gold: Sentence | None) -> str:
    sid = sent_id(system) or (sent_id(gold) if gold is not None else None)
    text = f"sentence {k + 1}" + (f" ({sid})" if sid else "") + f", {len(system)} words"
    if gold is not None:
        scored = [m for m in range(1, len(system) + 1) if gold.heads[m] >= 0]
        heads = sum(int(system.heads[m] == gold.heads[m]) for m in scored)
        both = sum(int(system.heads[m] == gold.heads[m] and system.deprels[m] == gold.deprels[m])
                   for m in scored)
        text += f"; heads right {heads}/{len(scored)}, heads and labels {both}/{len(scored)}"
    return text


@click.command("show", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", type=_FILE)
@click.option("--gold", type=_FILE, default=None,
              help="Gold file with the same sentences: wrong arcs are marked (red: wrong head, "
                   "with the gold arc drawn below in green; orange: wrong label).")
@click.option("--sent", "sents", multiple=True, metavar="ID",
              help="Sentence to draw (repeatable): a # sent_id, a 1-based position or a range "
                   f"A-B. Default: the first sentence (SVG), the first {PAGE_DEFAULT} (HTML).")
@click.option("-o", "--output", default="-", show_default=True,
              help="Output file: .svg (one sentence), .html/.htm (a page of several); - for "
                   "stdout (SVG for one sentence, else HTML).")
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto",
              show_default=True, help="Format of FILE and GOLD.")
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of the inputs.")
def show(file: str, gold: str | None, sents: tuple[str, ...], output: str, fmt: str,
         encoding: str) -> None:
    """Draw the dependency trees of FILE as arc diagrams: the words in order, each arc a curve
    above them from head to dependent with its label.

    FILE is a CoNLL-X, CoNLL-U or Malt-TAB file (.gz allowed, - for stdin). The picture is
    hand-written SVG that any browser opens; an HTML page holds several sentences.

    \b
    Examples:
      dparse show test.parsed.conllu --sent 3 -o tree.svg
      dparse show test.parsed.conllu --gold ../shared/data/en_ewt/test.conllu \\
          --sent 1-10 --sent 42 -o trees.html
      dparse show ../shared/data/en_ewt/test.conllu -o first-gold-tree.svg
    """
    from dparse.metrics import evaluate
    from dparse.reports.arcs import html_page, sentence_svg

    kw = {"fmt": None if fmt == "auto" else fmt, "encoding": encoding}
    system = read_treebank(file, **kw)
    gold_sents = read_treebank(gold, **kw) if gold else None
    if gold_sents is not None:
        evaluate(gold_sents, system)  # InputError naming file and line unless aligned
    lower = output.lower()
    page = lower.endswith((".html", ".htm"))
    if not page and not lower.endswith(".svg") and output != "-":
        raise DparseError(f"cannot tell the picture format of {output}: name it .svg or .html")
    if not system:
        raise DparseError(f"{file}: no sentences to draw")
    picked = select_sentences(system, sents, file) if sents else (
        list(range(min(PAGE_DEFAULT, len(system)))) if page else [0])
    if output == "-":
        page = len(picked) > 1
    if not page and len(picked) != 1:
        raise DparseError(f"an SVG picture holds one sentence, {len(picked)} were asked for: "
                          "write a page with -o NAME.html")
    figures = []
    for k in picked:
        g = gold_sents[k] if gold_sents is not None else None
        figures.append((_caption(k, system[k], g), sentence_svg(system[k], g)))
    if page:
        write_text(output, html_page(figures, title=f"dparse show {file}"))
    else:
        caption, _ = figures[0]
        k = picked[0]
        write_text(output, sentence_svg(system[k], gold_sents[k] if gold_sents else None,
                                        title=caption))
