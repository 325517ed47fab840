"""The offline model through litellm: routing, prompt reading, seeding, usage. No network."""

from __future__ import annotations

import asyncio

import pytest

from evoforge.evolve.edits import apply_edit
from evoforge.evolve.prompts import CURRENT_PROGRAM_HEADING, INSPIRATION_HEADING
from evoforge.problems._blocks import frozen_parts
from tests.evolve.test_offline import INSPIRATION, PARAMETRIC

# The provider module sets LITELLM_LOCAL_MODEL_COST_MAP before importing litellm: import it first.
provider = pytest.importorskip("evoforge.evolve.offline._provider")
litellm = pytest.importorskip("litellm")


def prompt(program: str = PARAMETRIC, inspirations: tuple[str, ...] = (INSPIRATION,)) -> list:
    parts = ["# Problem: points", "", CURRENT_PROGRAM_HEADING, "status: ok; score: 1.0"]
    parts += ["```python", program.rstrip(), "```"]
    for number, other in enumerate(inspirations, start=1):
        parts += ["", f"{INSPIRATION_HEADING} {number}", "score: 2.0", "```python", other, "```"]
    parts += ["", "## Task", "Improve it. Answer with SEARCH/REPLACE blocks."]
    return [
        {"role": "system", "content": "You improve programs."},
        {"role": "user", "content": "\n".join(parts)},
    ]


@pytest.fixture(autouse=True)
def registered():
    provider.register_offline_provider()


def complete(messages: list, **kwargs):
    return asyncio.run(litellm.acompletion(model="offline/mutator", messages=messages, **kwargs))


def test_registration_is_idempotent() -> None:
    provider.register_offline_provider()
    entries = [i for i in litellm.custom_provider_map if i["provider"] == "offline"]
    assert len(entries) == 1 and isinstance(entries[0]["custom_handler"], provider.OfflineMutator)


def test_acompletion_returns_an_applicable_edit_with_usage() -> None:
    response = complete(prompt(), seed=7, temperature=0.8, max_tokens=2000, num_retries=0)
    answer = response.choices[0].message.content
    source = apply_edit(PARAMETRIC, answer).source
    assert frozen_parts(source) == frozen_parts(PARAMETRIC)
    assert response.model == "offline/mutator"
    assert response.choices[0].finish_reason == "stop"
    usage = response.usage
    assert usage.prompt_tokens >= 1 and usage.completion_tokens == max(1, len(answer) // 4)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert litellm.completion_cost(completion_response=response) == 0.0


def test_seed_reaches_the_provider() -> None:
    texts = [complete(prompt(), seed=s).choices[0].message.content for s in (7, 7, 8, 9, 10)]
    assert texts[0] == texts[1]
    assert len(set(texts)) >= 3


def test_without_seed_the_prompt_decides() -> None:
    first = complete(prompt()).choices[0].message.content
    assert complete(prompt()).choices[0].message.content == first


def test_sync_completion_and_other_model_names_route_too() -> None:
    response = litellm.completion(model="offline/anything", messages=prompt(), seed=3)
    assert response.model == "offline/anything"
    apply_edit(PARAMETRIC, response.choices[0].message.content)


def test_read_prompt_finds_program_and_inspirations() -> None:
    other = INSPIRATION.replace("0.08", "0.09")
    program, inspirations = provider.read_prompt(prompt(inspirations=(INSPIRATION, other)))
    assert program == PARAMETRIC
    assert [i.rstrip() for i in inspirations] == [INSPIRATION.rstrip(), other.rstrip()]


def test_read_prompt_takes_the_last_user_message_and_longer_fences() -> None:
    program = "# EVOLVE-BLOCK-START\ns = '```'\nx = 1.5\n# EVOLVE-BLOCK-END\n"
    text = f"{CURRENT_PROGRAM_HEADING}\n````python\n{program}````\n"
    messages = [{"role": "user", "content": "old"}, {"role": "user", "content": text}]
    assert provider.read_prompt(messages) == (program, [])
    answer = complete(messages, seed=1).choices[0].message.content
    assert "x = " in apply_edit(program, answer).source


def test_no_program_in_prompt_is_an_answer_that_fails_as_an_edit() -> None:
    response = complete([{"role": "user", "content": "Write me a poem."}], seed=1)
    assert response.choices[0].message.content == provider.NO_PROGRAM
    assert response.usage.completion_tokens >= 1
