"""The undirected MST family's config section ``umst``. Data only, as
:mod:`dparse.sections`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class UmstConfig:
    """The undirected MST parser (``parser: umst``, dparse.undirected.parser): LEP moves, the
    directed model that scores them and labels arcs, the MST algorithm and the length-dictionary
    pruner."""

    lep_steps: int = 0
    directed_model: str | None = None
    edge_features: str = "left-right"
    method: str = "kkt"
    prune: str = "length-dictionary"
    prune_column: str = "auto"
    prune_quantile: float = 1.0
    prune_min_count: int = 1
    # Undirected-only templates added to the stripped first-order features: "none" (the
    # first-order set alone) or a comma-separated subset of between-counts, between-xpos,
    # context, morph (dparse/_ext/arcfeatures.pyx, edge_features).
    edge_templates: str = "none"

    def edge_template_names(self) -> list[str]:
        """The template groups of ``edge_templates`` ([] for none)."""
        if self.edge_templates == "none":
            return []
        return [n.strip() for n in self.edge_templates.split(",")]
