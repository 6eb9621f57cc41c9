"""Layer 7, the audit: one constraint over a file of prompts, where and how often runs stall.

* ``prompts`` a prompts file (JSON Lines or plain lines), read one line at a time;
* ``rows``    one run as one row: matched, stop reason, the stalled step and its place
  (state, schema field, grammar rule), the lowest valid mass, the engine's disagreements;
* ``report``  the rows summed up: counts and the ranked stall places (``AuditReport``);
* ``folder``  the output folder: a trace per run, the ledger that makes an audit resumable,
  ``runs.csv``; ``htmlreport`` the report as one escaped HTML file, with ``heat`` (the
  stalls drawn on the DFA), ``explain`` (the doctor's findings that explain the failed
  runs) and ``links`` (each run as a link to the page with it loaded);
* ``run``     ``audit``: the runs, concurrently, each saved as it ends; ``progress`` its
  progress on stderr (a rate and an ETA).

May import every engine layer below the page (``generation``, ``schema``, ``grammar``...)
and the shared modules; torch loads only when ``audit`` runs.
"""

from fsmviz.audit.prompts import PromptsError, read_prompts
from fsmviz.audit.report import AuditReport, StallPlace
from fsmviz.audit.rows import AuditRow
from fsmviz.audit.run import Progress, audit

__all__ = ["AuditReport", "AuditRow", "Progress", "PromptsError", "StallPlace", "audit",
           "read_prompts"]  # fmt: skip
