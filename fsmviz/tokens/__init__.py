"""Layer 2, the automaton meets a vocabulary: which tokens each state allows.

* ``vocab`` a tokenizer's vocabulary as raw bytes (49,152 tokens for the bundled model);
* ``trie``  the same vocabulary as a byte trie in flat numpy arrays;
* ``index`` the token index: state -> {allowed token -> next state}, over the whole
  vocabulary, held to the naive definition (``tests/oracle.py``);
* ``overshoot`` tokens the mask forbids whose beginning completes a match (seed 002);
* ``encoding`` text to tokens as a model writes it inside a text, and llguidance's
  tokenizer over a vocabulary: the one adaptor every part that runs llguidance shares;
* ``fast/`` walkers that give the index's answers faster, and nothing else.

May import: ``fsmviz.automaton`` and the shared modules. Nothing here imports torch.
"""
