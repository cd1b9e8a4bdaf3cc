"""The page at ``/``: a form (a text box for words, a sentence a line, or CoNLL-U; a model
picker; a Parse button) and, once sent, each sentence's tree drawn as ``dparse show`` draws
it (:func:`dparse.reports.arcs.sentence_svg`, inline SVG made by the server) with the
CoNLL-U below. The page has no script: the form posts back to ``/``."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from dparse.conll import Sentence
from dparse.reports.arcs import sentence_svg

EXAMPLE = "The dog chased the cat .\n"
STYLE = ("body{font-family:sans-serif;margin:1.5em;max-width:70em;background:#fafafa}"
         "textarea{width:100%;font-family:monospace}"
         "figure{margin:1em 0;background:#fff;border:1px solid #ddd;padding:.5em}"
         ".tree{overflow-x:auto}pre{background:#fff;border:1px solid #ddd;padding:.5em;"
         "overflow-x:auto}.error{color:#b71c1c;border:1px solid #b71c1c;padding:.5em;"
         "background:#fff}")


def input_format(text: str) -> str:
    """``conllu`` when ``text`` has a tab (a CoNLL-U line), else ``horizontal``."""
    return "conllu" if "\t" in text else "horizontal"


def render(models: Sequence[str], chosen: str, text: str, parsed: Sequence[Sentence] = (),
           conllu: str = "", error: str | None = None) -> str:
    """The page: the form holding ``text`` with ``chosen`` picked among ``models``, then the
    trees of ``parsed`` and their ``conllu``, or ``error``."""
    options = "".join(f'<option value="{escape(m)}"{" selected" if m == chosen else ""}>'
                      f"{escape(m)}</option>" for m in models)
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        "<title>dparse</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
        "<h1>dparse</h1>",
        '<form method="post" action="/">',
        '<p><label for="data">Words, a sentence a line (or CoNLL-U):</label></p>',
        f'<textarea id="data" name="data" rows="6">{escape(text or EXAMPLE)}</textarea>',
        f'<p><label for="model">Model</label> <select id="model" name="model">{options}'
        '</select> <button id="parse" type="submit">Parse</button></p>',
        "</form>",
    ]
    if error is not None:
        parts.append(f'<p class="error" id="error">{escape(error)}</p>')
    if parsed:
        parts.append('<div id="trees">')
        for k, sentence in enumerate(parsed, 1):
            parts.append(f'<figure><figcaption>sentence {k}, {len(sentence)} words'
                         f'</figcaption><div class="tree">{sentence_svg(sentence)}</div>'
                         "</figure>")
        parts.append("</div>")
        parts.append(f'<pre id="conllu">{escape(conllu)}</pre>')
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"
