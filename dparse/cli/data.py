"""``dparse data ...``: obtain and prepare treebanks (UD, CoNLL 2006/2007, Penn Treebank).

Each command parses its arguments, calls a function of :mod:`dparse.data` and prints a summary;
``make data-ud``, ``data-conll`` and ``data-ptb`` (make/data.mk) call them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click
from tqdm import tqdm

from dparse.cli.options import progress_option, quiet_option, show_progress


@click.group("data")
def data() -> None:
    """Obtain and prepare treebanks: UD downloads, CoNLL 2006/2007 layout, PTB conversion.

    \b
    Examples:
      dparse data ud-download r2.13 UD_English-EWT -d data
      dparse data ptb2dep ../shared/data/ptb_sample/mrg/wsj_0001.mrg -o wsj_0001.conll
    """


@data.command("ud-download")
@click.argument("version")
@click.argument("treebanks", nargs=-1)
@click.option(
    "--dest",
    "-d",
    type=click.Path(file_okay=False),
    required=True,
    help="Data directory; each treebank goes to DEST/<code>/{train,dev,test}.conllu.",
)
@click.option(
    "--release",
    is_flag=True,
    help="Download the full release tarball from LINDAT (TREEBANKS then selects which "
    "of its treebanks to install; all when none given).",
)
@click.option("--url", default=None, help="Download from this address instead (one archive).")
@click.option(
    "--sha256",
    default=None,
    metavar="HEX",
    help="Expected SHA-256 of the archive (one archive); mismatch -> error, nothing unpacked.",
)
@click.option("--strict", is_flag=True, help="Refuse an archive whose checksum is not known.")
@click.option("--keep-archive", is_flag=True, help="Keep the downloaded archive in DEST.")
@quiet_option
@progress_option
def ud_download(
    version: str,
    treebanks: tuple[str, ...],
    dest: str,
    release: bool,
    url: str | None,
    sha256: str | None,
    strict: bool,
    keep_archive: bool,
    quiet: bool,
    progress: bool,
) -> None:
    """Download, verify and unpack UD treebanks of release VERSION (r2.13).

    \b
    Examples:
      # one GitHub tag archive per treebank
      dparse data ud-download r2.13 UD_English-EWT UD_Turkish-IMST -d data
      # the full release from LINDAT, installing only the named treebanks
      dparse data ud-download r2.13 --release UD_Greek-GDT -d data

    Without --sha256 (or a recorded checksum) the archive is installed with a warning that
    prints its SHA-256, or refused with --strict.
    """
    from dparse.data import ud
    from dparse.errors import DparseError

    if release:
        archives = [ud.release_archive(version, url)]
    elif not treebanks:
        raise click.UsageError("name at least one treebank (e.g. UD_English-EWT) or use --release")
    else:
        archives = [ud.treebank_archive(name, version, url) for name in treebanks]
    if (url or sha256) and len(archives) > 1:
        raise DparseError(
            "--url and --sha256 apply to one archive: download one treebank at a "
            "time or use --release"
        )
    dest_dir = Path(dest)
    for archive in archives:
        targets = ud.fetch(
            archive,
            dest_dir,
            sha256,
            treebanks if release else (),
            keep_archive=keep_archive,
            strict=strict,
            progress=show_progress(quiet, progress),
            warn=lambda msg: click.echo(msg, err=True),
        )
        for target in targets:
            click.echo(f"{archive.name} {archive.version} -> {target}", err=True)


@data.command("ud-to-conllx")
@click.argument("conllu", type=click.Path(dir_okay=False))
@click.option("--output", "-o", default="-", help="CoNLL-X output [default: stdout].")
@click.option(
    "--postag",
    type=click.Choice(["xpos", "upos"]),
    default="xpos",
    show_default=True,
    help="POSTAG column: the XPOS (UPOS where XPOS is _), or the UPOS.",
)
def ud_to_conllx(conllu: str, output: str, postag: str) -> None:
    """Convert a CoNLL-U file to CoNLL-X.

    Drops comments, multiword-token lines and empty nodes; CPOSTAG is the UPOS; DEPS and MISC
    are dropped (PHEAD and PDEPREL are _).

    \b
    Examples:
      dparse data ud-to-conllx ../shared/data/en_ewt/dev.conllu -o en_ewt-dev.conll
      dparse data ud-to-conllx ../shared/data/en_ewt/dev.conllu --postag upos > dev.conll
    """
    from dparse.data.ud import convert_file

    count = convert_file(conllu, output, postag)
    click.echo(f"converted {count} sentences", err=True)


@data.command("conll-layout")
@click.option(
    "--conll2006",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="The CoNLL-X (2006) shared-task data directory.",
)
@click.option(
    "--conll2007",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="The CoNLL 2007 shared-task data directory.",
)
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False),
    required=True,
    help="Output directory (OUT/<language>/...).",
)
@click.option(
    "--language",
    "-l",
    "languages",
    multiple=True,
    help="Lay out only this language (repeatable) [default: all found].",
)
@click.option("--seed", type=int, default=None, help="Sampling seed [default: 2016].")
@quiet_option
@progress_option
def conll_layout(
    conll2006: str | None,
    conll2007: str | None,
    out: str,
    languages: tuple[str, ...],
    seed: int | None,
    quiet: bool,
    progress: bool,
) -> None:
    """Lay out CoNLL 2006/2007 data with dev and minimal training sets.

    As the greedy-inference paper (Tchernowitz et al. 2016) uses it.

    Per language (the 2006 version when in both): train.conll, test.conll; for languages with
    at least 10,000 training sentences dev.conll (1000 sampled) and train-nodev.conll; and
    mini/train-00..19.conll (500 sentences each). Input files are found by name (e.g.
    czech_pdt_train.conll, eus.train); ISO-8859-1 files are re-encoded to UTF-8.

    \b
    Examples:
      dparse data conll-layout --conll2006 conll06 --conll2007 conll07 -o data/conll
      dparse data conll-layout --conll2007 ../shared/data/conll2007_nltk -o conll -l basque
    """
    from dparse.data import conll_shared_task as cst
    from dparse.errors import DparseError

    if conll2006 is None and conll2007 is None:
        raise DparseError("give --conll2006 and/or --conll2007")
    sources = cst.select_sources({"2006": conll2006, "2007": conll2007}, languages)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    bars = show_progress(quiet, progress)
    with tqdm(total=len(sources), unit="language", disable=not bars) as bar:
        manifest = cst.layout(
            sources, out_dir, cst.SEED if seed is None else seed, lambda _: bar.update()
        )
    for lang, entry in manifest["languages"].items():  # type: ignore[union-attr]
        train = entry["sources"]["train"]["sentences"]
        dev = " + dev" if "dev" in entry else ""
        click.echo(f"{lang} ({entry['year']}): {train} train sentences{dev}", err=True)


@data.command("ptb2dep")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--output", "-o", default="-", help="CoNLL-X output [default: stdout].")
@click.option(
    "--wsj-root",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="WSJ .mrg root with section directories 00..24 (use with --split).",
)
@click.option(
    "--split",
    type=click.Choice(["train", "dev", "test"]),
    default=None,
    help="Standard split: sections 02-21 train, 22 dev, 23 test.",
)
@quiet_option
@progress_option
def ptb2dep(
    files: tuple[str, ...],
    output: str,
    wsj_root: str | None,
    split: str | None,
    quiet: bool,
    progress: bool,
) -> None:
    """Convert Penn Treebank .mrg trees to CoNLL-X dependencies.

    Uses the Penn2Malt (Yamada and Matsumoto 2003) head rules.

    Removes empty elements and traces, strips function tags, keeps punctuation; labels are the
    Penn2Malt set (SBJ, OBJ, NMOD, VMOD, P, ...). CPOSTAG and POSTAG are the treebank's gold
    tags: for automatic tags on train, see ``dparse data jackknife``.

    \b
    Examples:
      dparse data ptb2dep ../shared/data/ptb_sample/mrg/wsj_000*.mrg -o wsj-sample.conll
      dparse data ptb2dep --wsj-root treebank_3/parsed/mrg/wsj --split dev -o wsj-dev.conll
    """
    from dparse.conll import write_conll
    from dparse.data import ptb

    if (wsj_root is None) != (split is None):
        raise click.UsageError("--wsj-root and --split go together")
    paths = [Path(f) for f in files]
    if wsj_root is not None and split is not None:
        paths += ptb.wsj_files(wsj_root, split)
    if not paths:
        raise click.UsageError("give .mrg FILES or --wsj-root with --split")
    count = 0
    bars = show_progress(quiet, progress)

    def sentences():
        nonlocal count
        for path in tqdm(paths, unit="file", disable=not bars, leave=False):
            for sent in ptb.convert_files([path]):
                count += 1
                yield ptb.to_sentence(sent)

    write_conll(sentences(), output)
    click.echo(f"converted {count} sentences from {len(paths)} files", err=True)


@data.command("jackknife")
@click.argument("train", type=click.Path(exists=True, dir_okay=False))
@click.option("--output", "-o", required=True, help="Tagged CoNLL-X output.")
@click.option(
    "--tagger-config",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Use dparse's own tagger, trained by this tagger config (parser: tagger, e.g. "
    "configs/en_ewt/tagger.yaml) on each fold's training part: every column it predicts "
    "(LEMMA, UPOS, XPOS, FEATS) is replaced. Instead of --train-cmd and --tag-cmd.",
)
@click.option(
    "--dev",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="With --tagger-config: the file each fold's tagger chooses its epochs on.",
)
@click.option(
    "--train-cmd",
    metavar="TEMPLATE",
    help="Command training your tagger, with {train} and {model}, e.g. "
    "'mytagger train {train} {model}'.",
)
@click.option(
    "--tag-cmd",
    metavar="TEMPLATE",
    help="Command tagging, with {model}, {input} and {output}, e.g. "
    "'mytagger tag {model} {input} {output}'.",
)
@click.option("--folds", type=int, default=10, show_default=True, help="Number of folds.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="With --tagger-config: folds trained at a time, each in its own process.")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the per-fold files here [default: a temporary directory].",
)
@quiet_option
@progress_option
def jackknife(
    train: str,
    output: str,
    tagger_config: str | None,
    dev: str | None,
    train_cmd: str | None,
    tag_cmd: str | None,
    folds: int,
    jobs: int,
    workdir: str | None,
    quiet: bool,
    progress: bool,
) -> None:
    """Tag TRAIN by FOLDS-way jackknifing, with dparse's own tagger or with yours.

    TRAIN is cut into FOLDS contiguous parts; the tagger is trained on all parts but one and
    tags that one. With --tagger-config, dparse's tagger predicts every column it learns
    (a parser config's tagger section does the same inside dparse train). With --train-cmd
    and --tag-cmd, your commands run without a shell on CoNLL-X files (CPOSTAG/POSTAG blanked
    to _ for tagging); HEAD, DEPREL and the words are kept, CPOSTAG and POSTAG come from your
    tagger.

    \b
    Examples:
      dparse data jackknife wsj-train.conll -o wsj-train.tagged.conll \\
          --tagger-config configs/en_ewt/tagger.yaml --dev wsj-dev.conll --jobs 2
      dparse data jackknife wsj-train.conll -o wsj-train.tagged.conll \\
          --train-cmd 'mytagger train {train} {model}' \\
          --tag-cmd 'mytagger tag {model} {input} {output}'
    """
    from dparse.conll import read_conll, write_conll
    from dparse.data.jackknife import jackknife as run

    if tagger_config is not None:
        if train_cmd or tag_cmd:
            raise click.UsageError("--tagger-config replaces --train-cmd and --tag-cmd")
        from dparse.config import load_config
        from dparse.tagging.pipeline import jackknife_tags

        tcfg = load_config(tagger_config, [f"data.train={Path(train).resolve()}",
                                           f"data.dev={Path(dev).resolve() if dev else 'null'}"])
        if tcfg.parser != "tagger":
            raise click.UsageError(f"--tagger-config {tagger_config} is a {tcfg.parser} "
                                   "config, not a tagger (parser: tagger)")
        sentences = list(read_conll(train, require_heads=False))
        dev_sentences = list(read_conll(dev, require_heads=False)) if dev else []
        write_conll(jackknife_tags(tcfg, sentences, dev_sentences, folds, jobs)[0], output)
        click.echo(f"tagged {len(sentences)} sentences in {folds} folds", err=True)
        return
    if not (train_cmd and tag_cmd):
        raise click.UsageError("give --tagger-config, or both --train-cmd and --tag-cmd")

    sentences = list(read_conll(train, fmt="conllx"))
    with tqdm(total=folds, unit="fold", disable=not show_progress(quiet, progress)) as bar:
        if workdir is not None:
            tagged = run(
                sentences, train_cmd, tag_cmd, Path(workdir), folds, lambda _: bar.update()
            )
        else:
            with tempfile.TemporaryDirectory(prefix="dparse-jackknife-") as tmp:
                tagged = run(
                    sentences, train_cmd, tag_cmd, Path(tmp), folds, lambda _: bar.update()
                )
    write_conll(tagged, output)
    click.echo(f"tagged {len(tagged)} sentences in {folds} folds", err=True)
