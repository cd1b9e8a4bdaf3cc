"""Worker-side logging of the Dask clusters that ``dparse grid`` starts.

When a grid ends, the scheduler may close before a worker's last heartbeat, and the worker then
logs "Failed to communicate with scheduler during heartbeat" with a traceback on the command's
standard error, after a grid that went well (a shutdown race in ``distributed``).
:class:`QuietHeartbeat`, registered on every worker by :func:`dparse.batch.cluster.open_client`,
drops those records only; a scheduler really lost mid-grid still fails the grid in the parent,
with its own error.
"""

from __future__ import annotations

import logging
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

HEARTBEAT_FAILURE = "Failed to communicate with scheduler during heartbeat"


def drop_heartbeat_failure(record: logging.LogRecord) -> bool:
    """A logging filter: False (drop) for the heartbeat failure records, True otherwise."""
    return not record.getMessage().startswith(HEARTBEAT_FAILURE)


class QuietHeartbeat(WorkerPlugin):
    """Installs :func:`drop_heartbeat_failure` on the worker's ``distributed.worker`` logger."""

    name = "dparse-quiet-heartbeat"

    def setup(self, worker: Any) -> None:
        logging.getLogger("distributed.worker").addFilter(drop_heartbeat_failure)
