"""The base of every error fsmviz raises."""


class FsmvizError(Exception):
    """Every error fsmviz raises on purpose derives from this."""
