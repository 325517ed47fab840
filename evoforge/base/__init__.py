"""The base layer: helpers every layer may import.

It sits below every package of evoforge (plugins, problems, archive, evaluators, islands,
evolve) and imports none of them, so any module may use it; its modules are public (no leading
underscore) because they are imported across packages.

- :mod:`evoforge.base.frames`: length-prefixed frames, the one wire format between evoforge's
  processes (the sandbox's servers and runners, the proposal workers).
- :mod:`evoforge.base.jsonio`: the one JSON encoder and the bounded decoder for untrusted values
  (a candidate's output, a scorer's reply), NaN and infinities kept.
- :mod:`evoforge.base.lazy`: package namespaces whose names are imported on first use, so a
  command imports only what it uses.
- :mod:`evoforge.base.redaction`: what counts as a secret, and removing secrets from text.
- :mod:`evoforge.base.reasoning`: the thinking a reasoning model writes into its answer
  (``<think>``), dropped before the answer is read (an edit, a prompt variant's rewrite).
- :mod:`evoforge.base.terminal`: text safe for a terminal (control characters from candidates,
  evaluators and models written out as escapes), for every CLI print and log line.
- :mod:`evoforge.base.settings`: the pydantic base of every configuration schema, and errors a
  person can act on.
"""
