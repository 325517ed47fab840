"""Key safety: secrets from the environment and key-shaped text never survive redaction."""

from __future__ import annotations

import io
import logging

import pytest

from evoforge.evolve.models import REDACTED, install_log_redaction, redact

ENV_KEY = "q7Zt-unusual-shape-0042"  # no known key shape: only the environment can catch it


@pytest.fixture
def env_key(monkeypatch) -> str:
    monkeypatch.setenv("MY_PROVIDER_API_KEY", ENV_KEY)
    return ENV_KEY


def test_values_of_secret_looking_variables_are_redacted(env_key: str, monkeypatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "tok-abcdef-987")
    monkeypatch.setenv("DB_PASSWORD", "hunter2hunter2")
    text = f"401: bad key {env_key}; token tok-abcdef-987; login hunter2hunter2"
    assert redact(text) == f"401: bad key {REDACTED}; token {REDACTED}; login {REDACTED}"


def test_short_values_and_ordinary_variables_are_left_alone(monkeypatch) -> None:
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")  # secret-looking name, short value
    monkeypatch.setenv("EVOFORGE_PROBLEM_DIR", "/srv/problems/circle")  # ordinary name
    text = "parallelism false in /srv/problems/circle; missing key: evaluations"
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Incorrect API key: sk-proj-AbC123xyz789", f"Incorrect API key: {REDACTED}"),
        ("key sk-ant-api03-abcdefgh_ijkl", f"key {REDACTED}"),
        ("-H 'Authorization: Bearer abc.def-ghi123'", f"-H 'Authorization: {REDACTED}'"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.payload", f"Bearer {REDACTED}"),
        ("x-api-key: 0123456789abcdef", f"x-api-key: {REDACTED}"),
        ('{"api_key": "plainvalue123"}', f'{{"api_key": "{REDACTED}"}}'),
        ("completion(api_key='zz-zz-zz-zz-99')", f"completion(api_key='{REDACTED}')"),
        ("GET /v1/m?key=AIzaSyA-1234567890abcdefghij", f"GET /v1/m?key={REDACTED}"),
        ("token hf_abcdefghijklmnopqrstu used", f"token {REDACTED} used"),
    ],
    ids=["sk-proj", "sk-ant", "auth-header", "bearer", "x-api-key", "json", "kwarg", "query",
         "hf"],
)  # fmt: skip
def test_key_shapes_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


def _capture(name: str) -> tuple[logging.Logger, io.StringIO, logging.Handler]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    return logger, stream, handler


@pytest.mark.parametrize("name", ["LiteLLM", "litellm", "evoforge", "evoforge.evolve"])
def test_log_records_are_redacted_messages_args_and_tracebacks(env_key: str, name: str) -> None:
    logging.getLogger("evoforge.evolve")  # a child that exists before installation
    install_log_redaction()
    install_log_redaction()  # idempotent: one filter, not two
    logger, stream, handler = _capture(name)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        logger.warning("call failed with key %s", env_key)
        logger.debug("headers: {'Authorization': 'Bearer sk-live-1234567890'}")
        try:
            raise RuntimeError(f"provider said: bad key {env_key}")
        except RuntimeError:
            logger.exception("model call failed")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    output = stream.getvalue()
    assert env_key not in output and "sk-live-1234567890" not in output
    assert output.count(REDACTED) == 3
    assert "RuntimeError: provider said: bad key" in output  # the traceback is still there
    assert sum(1 for f in logger.filters if type(f).__name__ == "RedactingFilter") == 1
