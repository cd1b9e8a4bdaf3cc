"""``dparse grid GRID.yaml``: train, parse and score a grid of experiments on a Dask cluster."""

from __future__ import annotations

from pathlib import Path

import click

from dparse.cli.options import (
    batch_job_options,
    data_root_option,
    progress_option,
    quiet_option,
    set_option,
    show_progress,
)


@click.command("grid")
@click.argument("grid_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "-o", "out", type=click.Path(file_okay=False), default=None,
              help="Directory of the cells and result tables [default: runs/<grid name>].")
@click.option("--cluster", "kind", type=click.Choice(["local", "slurm", "pbs"]),
              default="local", show_default=True,
              help="local: worker processes on this machine; slurm, pbs: batch jobs "
              "(dask-jobqueue, pip install 'dparse[cluster]').")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=None,
              help="Workers (local processes, or batch jobs) [default: the grid file's "
              "cluster.workers, else 2].")
@batch_job_options
@click.option("--models", type=click.Path(file_okay=False), default=None,
              help="Also link each finished cell's model as MODELS/<config name>.")
@click.option("--missing-only", is_flag=True,
              help="With --models: run only the cells whose model is not in MODELS yet (by "
              "config name), as a table script that looks models up there would train them.")
@click.option("--only", multiple=True, metavar="LABEL=V1,V2",
              help="Run only the cells whose label (config, treebank, seed or set) is one of "
              "the values, e.g. --only treebank=en_ewt,el_gdt (repeatable: all must hold).")
@set_option
@data_root_option
@quiet_option
@progress_option
def grid(grid_file: str, out: str | None, kind: str, workers: int | None,
         scheduler: str | None, queue: str | None, account: str | None, walltime: str | None,
         memory: str | None, scheduler_host: str | None, models: str | None,
         missing_only: bool, only: tuple[str, ...], overrides: tuple[str, ...],
         data_root: str | None, quiet: bool, progress: bool) -> None:
    """Train, parse and score every cell of GRID_FILE (configs x treebanks x seeds x sets).

    Cells run on a Dask cluster, one per worker at a time. A cell is keyed by a hash of its
    resolved config and data files: a finished cell is never run again (rerun the command
    to resume a grid), a failed one is recorded with its error and run again next time, a
    cell whose worker is lost is rerun on another. Writes OUT/cells/<key>/ (model, parsed
    test file, cell.log, result.json) and OUT/results.md, .json and .csv (UAS, LAS,
    tokens/sec, training time per cell). Exit status 2 if a cell failed.

    \b
    Examples:
      dparse grid configs/grids/smoke.yaml --workers 2 --only config=o1-cle --only seed=1
      dparse grid configs/grids/smoke.yaml --cluster slurm --queue debug --walltime 00:30:00
      dparse grid configs/grids/smoke.yaml --scheduler tcp://10.0.0.5:8786 --out runs/smoke
      dparse grid configs/grids/smoke.yaml --only seed=1 --models models --missing-only
    """
    from dparse.batch.cluster import ClusterOptions, open_client
    from dparse.batch.grid import (
        cells_without_model,
        export_models,
        load_grid,
        run_grid,
        select_cells,
        write_tables,
    )

    if missing_only and not models:
        raise click.UsageError("--missing-only needs --models (the folder to look in)")
    spec = load_grid(grid_file)
    options = ClusterOptions().merged(spec.cluster, grid_file).merged(
        {"workers": workers, "queue": queue, "account": account, "walltime": walltime,
         "memory": memory, "scheduler_host": scheduler_host}, "command line")
    out_dir = Path(out) if out else Path("runs") / spec.name
    cells = select_cells(spec.cells(out_dir, data_root, overrides), only)
    if missing_only:
        cells = cells_without_model(cells, Path(models))
        if not cells:
            click.echo(f"grid {spec.name}: every model is in {models} already; nothing to run",
                       err=True)
            return
    bar = None
    if show_progress(quiet, progress):
        from tqdm import tqdm

        bar = tqdm(total=len(cells), desc=f"grid {spec.name}", unit="cell")
    failed = 0

    def on_cell(record: dict) -> None:
        nonlocal failed
        failed += record.get("status") != "ok"
        if bar is not None:
            bar.update()

    try:
        with open_client(kind, options, scheduler) as client:
            records = run_grid(cells, client, on_cell)
    finally:
        if bar is not None:
            bar.close()
    write_tables(out_dir, spec.name, records)
    if models:
        for name in export_models(cells, records, Path(models)):
            click.echo(f"not linked into {models}: {name} (several cells, or a file there)",
                       err=True)
    ok = sum(r.get("status") == "ok" for r in records)
    click.echo(f"grid {spec.name}: {ok} of {len(records)} cells done, {len(records) - ok} "
               f"failed; tables in {out_dir}/results.md", err=True)
    if ok < len(records):  # a user-level failure (its error is in the tables): status 2, not 1
        raise SystemExit(2)
