"""How to call one model: the settings a user writes in a ``[[models]]`` table.

A :class:`ModelSpec` holds the litellm model string, the endpoint, the sampling settings, the
timeout and the *name* of the environment variable holding the key (never the key). Which
model answers the next call is :mod:`~evoforge.evolve.models._pool`'s business.

A setting is written once, as a field here: :meth:`ModelSpec.request_params` sends every
field but the ones evoforge reads itself (:data:`ModelSpec.OWN`) to the provider, and the
request ledger keys requests by the same parameters. To add one (``top_p``, say), add the
field and its line in the docstring; a run default for it (as ``temperature`` has) is a field
of ``RunConfig`` passed in ``defaults``.

A model string is validated once (:data:`ModelString`, :func:`check_model_string`), for the
``[[models]]`` tables and for a run's ``model`` alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field, field_validator, model_validator

from evoforge.base.settings import ConfigError, Settings, hidden_value_error

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXAMPLES = "e.g. 'openai/gpt-4o-mini', 'ollama/qwen2.5-coder:7b' or 'offline/mutator'"


class ModelSpecError(ConfigError):
    """A model setting is wrong; the message names the field and the fix."""


def check_model_string(model: str) -> str:
    """``model`` when it is a litellm model string ``<provider>/<model>``.

    Raises:
        ValueError: the provider or the model name is missing; the message says which, and
            gives examples.
    """
    provider, slash, name = model.partition("/")
    if provider and name:
        return model
    if not slash:
        wrong = "it names no provider"
    elif not provider:
        wrong = "the provider before '/' is empty"
    else:
        wrong = "the model name after '/' is empty"
    raise ValueError(
        f"{wrong}; write a litellm model string '<provider>/<model>', {_EXAMPLES} (the "
        "built-in offline model)"
    )


ModelString = Annotated[str, AfterValidator(check_model_string)]
"""A litellm model string, checked by :func:`check_model_string` wherever a schema holds one."""


class ModelSpec(Settings):
    """How to call one model (a ``[[models]]`` table, or just its model string).

    Attributes:
        model: a litellm model string: ``openai/gpt-4o-mini``, ``anthropic/…``, ``gemini/…``,
            ``ollama/…``, ``hosted_vllm/…`` (with ``api_base``), or a plugin's prefix such as
            ``offline/mutator``.
        weight: relative share of calls under the ``weighted`` policy (positive).
        api_base: endpoint of a self-hosted model or a proxy, e.g. ``http://localhost:8000/v1``.
        temperature, max_tokens: sampling settings; None uses the run's.
        max_context: the model's context window in tokens (what the server accepts:
            llama.cpp's ``--ctx-size``, vLLM's ``--max-model-len``; for Ollama, the window
            evoforge asks for with every request as ``num_ctx``); prompts are kept small
            enough to leave ``max_tokens`` of it for the answer. None: the run's ``[prompts]
            max_context``, else litellm's model info, else only ``max_chars``.
        timeout_s: seconds one attempt may take.
        api_key_env: the NAME of the environment variable holding the key (never the key);
            None lets litellm read the provider's usual variable (``OPENAI_API_KEY``,
            ``ANTHROPIC_API_KEY``, …).
    """

    error: ClassVar[type[ConfigError]] = ModelSpecError
    OWN: ClassVar[frozenset[str]] = frozenset(
        {"model", "weight", "max_context", "timeout_s", "api_key_env"}
    )
    """Fields evoforge reads itself; every other field is a parameter of the request."""

    model: ModelString
    weight: Annotated[float, Field(gt=0)] = 1.0
    api_base: str | None = None
    temperature: Annotated[float, Field(ge=0)] | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    max_context: Annotated[int, Field(ge=256)] | None = None
    timeout_s: Annotated[float, Field(gt=0)] = 600.0
    api_key_env: str | None = None

    def __init__(self, model: str | None = None, /, **fields: Any) -> None:
        if model is not None:  # ModelSpec("openai/gpt-4o-mini", weight=2)
            fields["model"] = model
        super().__init__(**fields)

    @model_validator(mode="before")
    @classmethod
    def _no_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "api_key" in data:
            raise hidden_value_error(
                f"api_key (for {data.get('model', '?')}) is not allowed: keys never go in "
                "settings, which are stored with the run; export the key in an "
                "environment variable and name it with api_key_env = 'MY_KEY_VARIABLE'"
            )
        return data

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, env: str | None) -> str | None:
        if env is not None and not _ENV_NAME.fullmatch(env):
            # never echo it: it may be a key pasted into the wrong field
            raise hidden_value_error(
                "api_key_env: expected the NAME of an environment variable (letters, digits, "
                "underscores), such as 'OPENAI_API_KEY', found something else (a key? keys "
                "never go in settings); export the key in a variable and put that variable's "
                "name here"
            )
        return env

    @classmethod
    def from_value(cls, value: str | Mapping[str, Any] | ModelSpec) -> ModelSpec:
        """A spec from a model string, a mapping of the fields (a TOML table), or a spec.

        Raises:
            ModelSpecError: an unknown field, a key in the settings, or a wrong value.
        """
        if isinstance(value, str):
            value = {"model": value}
        if not isinstance(value, Mapping | ModelSpec):
            raise ModelSpecError(
                "model spec: expected a model string such as 'openai/gpt-4o-mini' or a table "
                f"with a 'model' field, found {type(value).__name__}"
            )
        return cls.load(value, where="model spec")

    def to_dict(self) -> dict[str, Any]:
        """The fields, as :meth:`from_value` reads them (no key: a spec never holds one)."""
        return self.model_dump()

    def request_params(self, defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The parameters of a request to this model, by litellm's names: every field not in
        :data:`OWN`, the spec's own value where set, else ``defaults``' (the run's
        ``temperature``, ``max_tokens``, ``api_base``); parameters set by neither are left
        out, so the provider's defaults apply."""
        defaults = defaults or {}
        params = {}
        for name in type(self).model_fields:
            if name in self.OWN:
                continue
            value = getattr(self, name)
            if value is None:
                value = defaults.get(name)
            if value is not None:
                params[name] = value
        return params

    def read_api_key(self) -> str | None:
        """The key from ``api_key_env``; None when the spec leaves the key to litellm.

        Raises:
            ModelSpecError: ``api_key_env`` names a variable that is unset or empty.
        """
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ModelSpecError(
                f"{self.model}: environment variable {self.api_key_env} (its api_key_env) is "
                f"{'empty' if key == '' else 'not set'}; export {self.api_key_env}=<your key> "
                "or change api_key_env"
            )
        return key
