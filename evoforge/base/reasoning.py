"""A reasoning model's thinking, written into its answer, is not part of the answer.

Reasoning models served as plain chat models (DeepSeek-R1, QwQ, Qwen3 through vLLM without a
reasoning parser, llama.cpp, LM Studio) write their thinking into the answer text, between
``<think>`` and ``</think>``, before the answer proper. litellm moves it out of the text when
the text opens with the tag, but not when the server's chat template put ``<think>`` in the
prompt (the text then holds only ``</think>``), nor for a provider that is not litellm's
(a model-provider plugin's, the offline model's). The thinking holds drafts:
SEARCH/REPLACE blocks tried and abandoned, code fences with half a program. Read as the
answer, a draft block that no longer matches refuses the whole answer, and a draft fence can
be taken for the program. So the thinking goes before the answer is read; the stored answer
keeps it, as evidence.

Two shapes are seen: the answer opens with the tag (``<think> ... </think> answer``), or the
server's chat template already opened it in the prompt, and the answer holds only the closing
tag (``... </think> answer``). Only thinking at the start of the answer is dropped: a tag
later on, inside code, is the program's.
"""

from __future__ import annotations

REASONING_TAGS = ("think", "thinking", "reasoning")
"""Tag names reasoning models wrap their thinking in."""


class CutOffReasoning(ValueError):
    """An answer that is nothing but thinking: its tag never closes (the answer was cut off by
    ``max_tokens`` while the model was still thinking). The message says so and what to do."""


def without_reasoning(answer: str) -> str:
    """``answer`` without the thinking that opens it.

    Raises:
        CutOffReasoning: the answer is nothing but thinking.
    """
    rest = answer
    while True:
        text = rest.lstrip()
        tag = _opening(text)
        if tag is None:
            break
        end = text.lower().find(f"</{tag}>")
        if end < 0:
            raise CutOffReasoning(
                f"the answer is all reasoning: its <{tag}> block never closes, so no edit "
                "follows it (the answer was cut off while the model was thinking: raise "
                "max_tokens, or think less and answer with the edit)"
            )
        rest = text[end + len(tag) + 3 :]
    if rest is answer:  # no opening tag: the template may have opened it in the prompt
        rest = _after_lone_closing(answer)
    return rest


def _opening(text: str) -> str | None:
    """The tag name when ``text`` starts with one of :data:`REASONING_TAGS`' opening tags."""
    head = text[:16].lower()
    return next((tag for tag in REASONING_TAGS if head.startswith(f"<{tag}>")), None)


def _after_lone_closing(answer: str) -> str:
    """What follows a closing tag that ends a line and has no opening tag before it."""
    lowered = answer.lower()
    for tag in REASONING_TAGS:
        end = lowered.find(f"</{tag}>")
        if end < 0 or f"<{tag}>" in lowered[:end]:
            continue
        after = end + len(tag) + 3
        # A closing tag inside a line of code ("s = '</think>'") is code, not the end of
        # thinking: it ends the thinking only where nothing but spaces follows it on its line.
        line_end = answer.find("\n", after)
        if not answer[after : None if line_end < 0 else line_end].strip():
            return answer[after:]
    return answer
