"""``fsmviz.processor.RegexLogitsProcessor``: the contract's path to the processor.

The code lives in ``fsmviz.generation.processor``; this name stays because users import it.
"""

from fsmviz.generation.processor import RegexLogitsProcessor

__all__ = ["RegexLogitsProcessor"]
