"""Request text (`shared.text`): refused is exactly what could not be recorded or is no honest text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.text import MAX_STRING, clean_text, json_problem, text_problem

#: Any code point at all, lone surrogates and control characters included.
ANY_TEXT = st.text(alphabet=st.characters(codec=None, categories=None), max_size=60)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_accepted_text_always_encodes_and_cleaned_text_is_always_accepted(value: str) -> None:
    if text_problem(value) is None:
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # never raises: recordable as it is
    cleaned = clean_text(value)
    assert text_problem(cleaned) is None
    assert clean_text(cleaned) == cleaned


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(ANY_TEXT | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(ANY_TEXT, c))
)
def test_json_problem_names_a_path_for_every_refusal(value: object) -> None:
    problem = json_problem(value)
    if problem is None:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    else:
        assert problem.startswith("at ")


def test_the_reasons_never_quote_the_value() -> None:
    assert text_problem("a\ud800") == "holds an invalid Unicode code point (a lone surrogate U+D800)"
    assert text_problem("a\x07") == "holds a control character (U+0007)"
    assert text_problem("line\nbreak") is None and text_problem("line\nbreak", identifier=True)
    assert text_problem("x" * (MAX_STRING + 1)) is not None
