"""``dparse ensemble MODEL_DIR INPUT --other OTHER...``: parse biased towards other parses."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dparse.cli.options import model_set_option
from dparse.config import load_config
from dparse.conll import FORMATS, read_conll, write_conll
from dparse.decoders import configured_decoder
from dparse.errors import ConfigError
from dparse.families import family
from dparse.gold import vote_trees
from dparse.graph.ensemble import ensemble_parse
from dparse.modeldir import CONFIG_FILE, TAGGER_DIR, check_model_dir
from dparse.parsers import check_model_overrides
from dparse.timer import ParseTimer

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=True)


@click.command("ensemble", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("input", type=_FILE)
@click.option("--other", "others", required=True, multiple=True, type=_FILE,
              help="Another parser's output for the same sentences (any CoNLL file); "
              "repeat it for several parsers.")
@click.option("--output", "-o", default="-", help="Output file [default: stdout].")
@click.option("--gamma1", type=float, default=None,
              help="Added to each arc of each other tree [default: ensemble.gamma1].")
@click.option("--gamma2", type=float, default=None,
              help="Added to each sibling and grandparent part of each other tree "
              "[default: ensemble.gamma2].")
@click.option("--decoder", "decoder_name", default=None,
              help="Decoder [default: ensemble.decoder, with ensemble.options; another "
              "decoder gets no options but those given with --set ensemble.options.KEY=V].")
@click.option("--other-seconds", type=click.FloatRange(min=0.0), default=None,
              help="Seconds the other parsers took: also report tokens/sec including them.")
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto",
              show_default=True, help="Format of INPUT and OTHER.")
@click.option("--encoding", default="utf-8", show_default=True,
              help="Encoding of INPUT, OTHER and the output.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stderr.")
@click.option("--skip-invalid-trees", is_flag=True,
              help="An OTHER sentence whose heads are not a tree (a cycle, a self-loop, several "
              "root words in CoNLL-U) gives no vote, its count reported on stderr, instead of "
              "stopping with an error; the sentence is still parsed.")
@model_set_option
def ensemble(model_dir: str, input: str, others: tuple[str, ...], output: str,
             gamma1: float | None, gamma2: float | None, decoder_name: str | None,
             other_seconds: float | None, fmt: str, encoding: str, as_json: bool,
             skip_invalid_trees: bool, overrides: tuple[str, ...]) -> None:
    """Parse INPUT with the graph model MODEL_DIR (first or second order), biased towards
    OTHER, another parser's output for the same sentences (Tchernowitz et al. 2016, Section 7).

    Each arc of the other tree gains gamma1, each of its sibling and grandparent parts gamma2;
    with several --other files, each tree raises its own parts (a part in k of them gains
    k * gamma: a vote of the other parsers against the model). Arcs the model prunes stay
    pruned. Labels are the model's best label per chosen arc.
    A model that carries a tagger (a pipeline) tags the columns the input leaves empty first,
    as dparse parse does. Output as in dparse parse: every input line kept, only HEAD and
    DEPREL replaced (and the tags a pipeline's tagger fills). The summary on stderr gives
    tokens/sec of this model's inference (loading excluded) and, with --other-seconds,
    tokens/sec of the whole ensemble.

    \b
    Examples:
      dparse parse models/en_ewt-o2-dd ../shared/data/en_ewt/test.conllu -o dd.conllu \\
          --json  # note its seconds
      dparse ensemble models/en_ewt-o2-bgi-pp ../shared/data/en_ewt/test.conllu \\
          --other dd.conllu --gamma1 1 --gamma2 0.25 --set ensemble.options.beam=3 -o ens.conllu
      dparse ensemble models/en_ewt-o2-bgi-pp-ib ../shared/data/en_ewt/test.conllu \\
          --other dd.conllu --other eisner2.conllu --other easyfirst.conllu --gamma1 0.75 \\
          -o vote.conllu
    """
    directory = Path(model_dir)
    check_model_dir(directory)  # before its config is read
    check_model_overrides(directory, overrides, ensemble=True)
    settings = [f"ensemble.{key}={value!r}"
                for key, value in (("gamma1", gamma1), ("gamma2", gamma2)) if value is not None]
    if decoder_name is not None:  # the config's options go with the config's decoder only
        if decoder_name != load_config(directory / CONFIG_FILE).ensemble.decoder:
            settings += [f"ensemble.decoder={json.dumps(decoder_name)}", "ensemble.options={}"]
    cfg = load_config(directory / CONFIG_FILE, [*settings, *overrides])
    if not family(cfg.parser).ensemble_keys:  # the families whose models it can bias
        raise ConfigError(f"{directory}: dparse ensemble needs a graph model, this one is "
                          f"{cfg.parser}")
    ens = cfg.ensemble
    model = family(cfg.parser).load(directory, cfg, cfg.decoder.name).model  # a GraphParser's
    decoder = configured_decoder(ens.decoder, ens.options)
    kw = {"fmt": None if fmt == "auto" else fmt, "encoding": encoding}
    timer = ParseTimer()
    sentences = read_conll(input, require_heads=False, **kw)
    if (directory / TAGGER_DIR).is_dir():  # a pipeline: its tagger first, as dparse parse
        from dparse.tagging.pipeline import load_tagger

        sentences = load_tagger(directory, cfg).tag(sentences, timer, "auto", count=False)
    parsed = ensemble_parse(model, sentences,
                            [vote_trees(read_conll(other, **kw), skip_invalid_trees)
                             for other in others], decoder,
                            ens.gamma1, ens.gamma2, cfg.decoder.single_root, timer)
    write_conll(parsed, output, encoding=encoding)
    summary: dict[str, object] = {
        **timer.summary(),
        "decoder": ens.decoder,
        "options": ens.options,
        "gamma1": ens.gamma1,
        "gamma2": ens.gamma2,
    }
    with_other = ""
    if other_seconds is not None:
        total = timer.seconds + other_seconds
        summary["other_seconds"] = other_seconds
        summary["tokens_per_second_with_other"] = round(timer.tokens / total, 1) if total else 0.0
        whose = "parser's" if len(others) == 1 else "parsers'"
        with_other = (f"; with the other {whose} {other_seconds:.2f}s: "
                      f"{summary['tokens_per_second_with_other']:,.0f} tokens/sec")
    if as_json:
        click.echo(json.dumps(summary), err=True)
    else:
        click.echo(f"{timer.line()}, decoder {ens.decoder}, gamma1 {ens.gamma1:g}, "
                   f"gamma2 {ens.gamma2:g}){with_other}", err=True)
