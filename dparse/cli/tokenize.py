"""``dparse tokenize MODEL_DIR [TEXT] [-o OUT]``: raw text into CoNLL-U sentences, tokens and
words; ``dparse tokenize --text-of GOLD``: the raw text of a treebank file."""

from __future__ import annotations

import json

import click


@click.command("tokenize")
@click.argument("model_dir", required=False, type=click.Path(exists=True, file_okay=False))
@click.argument("text", default="-", required=False)
@click.option("-o", "--output", default="-", show_default=True,
              help="Where to write the CoNLL-U (or the raw text with --text-of); - is stdout.")
@click.option("--text-of", "text_of", type=click.Path(exists=True, dir_okay=False),
              help="Write the raw text of this CoNLL-U file instead (its '# text' lines: one "
                   "paragraph a line where it marks # newpar, a blank line before each "
                   "# newdoc; no MODEL_DIR).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def tokenize(model_dir: str | None, text: str, output: str, text_of: str | None,
             as_json: bool) -> None:
    """Split TEXT (a UTF-8 file; stdin by default) into sentences, tokens and syntactic words
    with MODEL_DIR, a tokenizer (trained from a parser: tokenizer config) or a parser or
    tagger model that carries one (a tokenizer section), and write CoNLL-U.

    The output has '# newdoc' after a blank line (and at the start), '# newpar' after a line
    break, '# sent_id', '# text', a range line for each multiword token and the spacing marks
    SpaceAfter=No, SpacesAfter and SpacesBefore, from which the text is rebuilt exactly; the
    other columns are _. A line break always ends a sentence. Invalid UTF-8 is an error naming
    the byte offset (exit 2). Prints a one-line summary to stderr: characters, sentences,
    tokens, words, tokenizing seconds and MB of text per second.

    \b
    Examples:
      dparse train configs/en_ewt/tokenizer.yaml --out models/en_ewt-tokenizer
      dparse tokenize --text-of ../shared/data/en_ewt/test.conllu -o test.txt
      dparse tokenize models/en_ewt-tokenizer test.txt -o test.tokenized.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.tokenized.conllu --aligned
      echo "Don't stop. Go on!" | dparse tokenize models/en_ewt-tokenizer
    """
    from dparse.tokenizing.carried import find_tokenizer
    from dparse.tokenizing.textfiles import tokenize_file, write_raw_text

    if text_of is not None:
        if model_dir is not None:
            raise click.UsageError("--text-of takes no MODEL_DIR or TEXT")
        write_raw_text(text_of, output)
        return
    if model_dir is None:
        raise click.UsageError("give MODEL_DIR (a tokenizer) or --text-of GOLD")
    stats = tokenize_file(find_tokenizer(model_dir), text, output)
    click.echo(json.dumps(vars(stats)) if as_json else stats.summary(), err=True)
