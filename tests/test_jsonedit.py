"""`agentconfig.jsonedit`: a JSON file edited keeping every unchanged part's text byte for
byte (the merge under `memstrata setup`); the module docstring's example included."""

from __future__ import annotations

import doctest
import json

import pytest

from memstrata.agentconfig import jsonedit
from memstrata.agentconfig.jsonedit import indent_unit, parse, render, same
from memstrata.errors import MalformedInput

ODD = '{\n\t"b" :1 , "a":[ true,{"x" : null} ],\n\t"c": {"keep":  "me"}}  \n'


def test_the_docstring_example_runs() -> None:
    assert doctest.testmod(jsonedit).failed == 0


def test_an_unchanged_value_gives_back_the_text_exactly() -> None:
    for text in (ODD, "{}", "[1, 2]\n", '{"a": 1}', '\n  {\r\n  "a": 1\r\n}\r\n'):
        assert render(json.loads(text), text) == text


def test_only_what_changed_is_written_fresh_in_the_files_indentation() -> None:
    doc = json.loads(ODD)
    doc["c"]["new"] = [1]
    out = render(doc, ODD)
    assert json.loads(out) == doc
    assert '"b" :1' in out and '[ true,{"x" : null} ]' in out and '"keep":  "me"' in out
    assert '\n\t\t"new": [\n\t\t\t1\n\t\t]' in out  # tabs, as the file has them
    assert out.endswith("}  \n")  # what followed the document, kept


def test_a_changed_array_item_keeps_its_untouched_siblings() -> None:
    text = '{"hooks": [\n    {"a": 1, "b": [2]},\n    {"c": 3}\n]}'
    doc = json.loads(text)
    doc["hooks"][0]["a"] = 9
    doc["hooks"].append({"d": 4})
    out = render(doc, text)
    assert json.loads(out) == doc
    assert '"b": [2]' in out and '{"c": 3}' in out


def test_crlf_files_stay_crlf() -> None:
    text = '{\r\n  "a": 1\r\n}\r\n'
    out = render({"a": 1, "b": 2}, text)
    assert out == '{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n'


def test_a_new_file_is_two_spaces_and_a_final_newline() -> None:
    assert render({"a": {"b": []}}) == '{\n  "a": {\n    "b": []\n  }\n}\n'
    assert render({"a": 1}, "  \n") == '{\n  "a": 1\n}\n'


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  // servers\n  "a": 1\n}', "line 2 column 3"),
        ('{"a": 1,}', "line 1 column 9"),
        ('{"a": 1} x', "line 1 column 10"),
        ('{"a" 1}', "line 1 column 6"),
        ("", "line 1 column 1"),
    ],
)
def test_not_json_is_refused_with_its_place(text: str, where: str) -> None:
    with pytest.raises(MalformedInput, match=where):
        parse(text, ".vscode/mcp.json")


def test_json_equality_is_not_pythons() -> None:
    assert not same(1, True) and not same({"a": 1.0}, {"a": 1}) and same({"a": [1]}, {"a": [1]})
    assert render({"a": True}, '{"a": 1}') == '{\n  "a": true\n}'


def test_indentation_is_read_from_the_file() -> None:
    assert indent_unit('{\n    "a": 1\n}') == "    "
    assert indent_unit('{\n\t"a": 1\n}') == "\t"
    assert indent_unit('{"a": 1}') == "  "
