"""The page's decoding options beside temperature: top-k, top-p, the stop rule and
overshoot (``GenerationOptions.top_k``, ``top_p``, ``stop``, ``overshoot``).

Laid out by ``decoding_controls`` inside the Generate tab's controls; their values reach
``handlers.on_run`` after its other inputs, in ``DecodingControls.components`` order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

__all__ = ["STOP_CHOICES", "DecodingControls", "decoding_controls"]

STOP_CHOICES = [
    ("EOS or dead end (today's rule; with overshoot: the longest match)", "eos"),
    ("first full match (ReLLM)", "first"),
]


@dataclass(frozen=True)
class DecodingControls:
    top_k: Any
    top_p: Any
    stop: Any
    overshoot: Any
    accordion: Any = None
    """The box around them (a link that sets one opens it: ``handlers.on_load``)."""

    @property
    def components(self) -> list[Any]:
        """In the order ``handlers.on_run`` takes them."""
        return [self.top_k, self.top_p, self.stop, self.overshoot]


def decoding_controls() -> DecodingControls:
    """A row of the decoding options (call inside the controls column)."""
    with gr.Accordion(
        "Decoding: samplers, stop rule, overshoot", open=False, elem_id="decoding"
    ) as accordion:
        with gr.Row():
            top_k = gr.Number(0, label="Top-k (0 = off)", precision=0, minimum=0, elem_id="top-k")
            top_p = gr.Slider(0.01, 1.0, value=1.0, step=0.01, label="Top-p", elem_id="top-p")
        stop = gr.Radio(STOP_CHOICES, value="eos", label="Stop at", elem_id="stop-rule")
        overshoot = gr.Checkbox(
            False,
            label="Overshoot and cut (seed 002): also take a token whose start completes a "
            "match; the output ends there",
            elem_id="overshoot",
        )
    return DecodingControls(top_k, top_p, stop, overshoot, accordion)
