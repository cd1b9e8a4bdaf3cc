"""The check of the ``neural`` section (imports no torch: it runs on every config)."""

from __future__ import annotations

from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig

TAG_COLUMNS = ("upos", "xpos", "feats")
LOSSES = ("local", "crf", "hinge")
SCHEDULES = ("constant", "linear")
DEVICES = ("cpu", "cuda")
POSITIVE = ("word_dim", "min_count", "char_dim", "char_filters", "char_kernel", "tag_dim",
            "lstm_dim", "lstm_layers", "arc_dim", "label_dim", "batch_tokens", "threads",
            "vectors_max", "part_dim", "prune_top_k")


def tag_columns(setting: str) -> tuple[str, ...]:
    """The columns of ``neural.tags`` or ``neural.tag_heads`` in their order (``none``: none)."""
    return () if setting == "none" else tuple(setting.split("+"))


def check_neural(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError naming the first ``neural.KEY`` out of range (the defaults pass)."""
    n = cfg.neural
    for key in POSITIVE:
        if getattr(n, key) < 1:
            raise ConfigError(f"{source}: neural.{key} must be at least 1, got "
                              f"{getattr(n, key)}")
    for key in ("word_dropout", "dropout"):
        if not 0.0 <= getattr(n, key) < 1.0:
            raise ConfigError(f"{source}: neural.{key} must be in [0, 1), got {getattr(n, key)}")
    if not (n.lr > 0 and 0.0 < n.beta2 < 1.0 and n.clip > 0):
        raise ConfigError(f"{source}: neural.lr and neural.clip must be positive and "
                          "neural.beta2 in (0, 1)")
    if not 0.0 <= n.average < 1.0:
        raise ConfigError(f"{source}: neural.average must be in [0, 1) (0: no averaging), got "
                          f"{n.average}")
    for key, known in (("loss", LOSSES), ("schedule", SCHEDULES), ("device", DEVICES)):
        if getattr(n, key) not in known:
            raise ConfigError(f"{source}: neural.{key} must be one of {', '.join(known)}, got "
                              f"{getattr(n, key)!r}")
    for key in ("tags", "tag_heads"):
        columns = tag_columns(getattr(n, key))
        if any(c not in TAG_COLUMNS for c in columns) or len(set(columns)) != len(columns):
            raise ConfigError(f"{source}: neural.{key} must be none or distinct columns of "
                              f"{', '.join(TAG_COLUMNS)} joined by '+', got "
                              f"{getattr(n, key)!r}")
    if n.order not in (1, 2):
        raise ConfigError(f"{source}: neural.order must be 1 (arcs) or 2 (arcs, siblings and "
                          f"grandparents), got {n.order!r}")
    if not 0.0 <= n.prune_threshold < 1.0:
        raise ConfigError(f"{source}: neural.prune_threshold must be in [0, 1), got "
                          f"{n.prune_threshold}")
    if n.order == 2 and n.loss != "hinge":
        raise ConfigError(f"{source}: a second-order network (neural.order: 2) trains by the "
                          f"structured hinge loss of its parts (neural.loss: hinge), got "
                          f"neural.loss: {n.loss}")
    if n.vectors == "":
        raise ConfigError(f"{source}: neural.vectors must be a file's path or null, got ''")
    if cfg.parser != "neural":
        return
    if cfg.features.order != 1:
        raise ConfigError(f"{source}: neural parsers score first-order parts only "
                          "(features.order: 1)")
    from dparse.decoders import check_decoder  # loads the decoders' modules: only to check

    check_decoder(source, "decoder.name", cfg.decoder.name, "decoder.options",
                  cfg.decoder.options)
    problem = order_mismatch(n.order, cfg.decoder.name)
    if problem:
        raise ConfigError(f"{source}: {problem}")


def order_mismatch(order: int, decoder: str) -> str | None:
    """Why a network of ``order`` cannot parse with the registered decoder ``decoder`` (a
    second-order network with a decoder of arcs only, which would drop its parts); None when
    it can. A first-order network parses with any graph decoder (higher-order parts 0)."""
    from dparse.decoders import get_decoder

    if order == 2 and not {"sib", "grand"} & set(get_decoder(decoder).parts):
        return (f"the decoder {decoder!r} reads arcs only, but the network is of second order "
                "(neural.order: 2): use a decoder of sibling and grandparent parts "
                "(eisner2-sib, eisner2-sibgp, dd2, bgi, bgi-pp, cube)")
    return None
