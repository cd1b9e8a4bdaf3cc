"""Batch runs: parsing with several worker processes or in shards (:mod:`.parallel_parse`),
and experiment grids on a Dask cluster (:mod:`.grid`, :mod:`.cluster`, :mod:`.cells`)."""
