"""Reports a person looks at: error breakdowns of one or several systems, significance tests,
plots (matplotlib, the optional extra ``dparse[plot]``), arc-diagram pictures of trees (SVG and
HTML, no dependency) and search-error / certificate reports of approximate decoders.

- :mod:`dparse.reports.breakdowns`: counts by sentence length, arc length, direction, label,
  UPOS, root, projectivity; paired significance tests between systems.
- :mod:`dparse.reports.plots`: matplotlib figures of those tables and of speed scaling.
- :mod:`dparse.reports.arcs`: hand-written SVG arc diagrams and an HTML page of several.
- :mod:`dparse.reports.certificates`: search errors and dd2 certificates by sentence length.
"""
