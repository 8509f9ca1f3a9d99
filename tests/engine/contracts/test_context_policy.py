"""The context policy's one-line form: ``edit:inputs=`` (``clear_tool_inputs``) reads as 1, 0 or
tool names, goes into ``context_management`` only when set, and a bad value names what it takes."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from nbagent.engine.contracts.context_policy import ContextPolicy, ContextPolicyError


def clear_edit(spec: str) -> Mapping[str, object]:
    edits = ContextPolicy.parse(spec).server_edits(thinks=False)
    assert edits is not None
    [edit] = [e for e in edits["edits"] if e["type"] == "clear_tool_uses_20250919"]
    return edit


def test_edit_inputs_one_clears_every_cleared_tool_use_input() -> None:
    assert ContextPolicy.parse("edit:inputs=1").options.edit_inputs is True
    assert clear_edit("edit:inputs=1")["clear_tool_inputs"] is True


def test_edit_inputs_with_names_clears_only_those_tools_inputs() -> None:
    edit = clear_edit("edit:keep=2:inputs=python,read_file:exclude=notes")
    assert edit["clear_tool_inputs"] == ["python", "read_file"] and edit["exclude_tools"] == ["notes"]


def test_edit_inputs_off_is_left_out_of_the_request_as_the_api_default() -> None:
    assert "clear_tool_inputs" not in clear_edit("edit")
    assert "clear_tool_inputs" not in clear_edit("edit:inputs=0")
    assert ContextPolicy.parse("server").options.edit_inputs is False


@pytest.mark.parametrize("spec", ["edit:inputs=", "edit:inputs=,"])
def test_an_empty_inputs_value_names_what_it_takes(spec: str) -> None:
    with pytest.raises(ContextPolicyError, match="edit:inputs takes 1 .* 0 .* or tool names"):
        ContextPolicy.parse(spec)


def test_inputs_belongs_to_the_edit_layer_only() -> None:
    with pytest.raises(ContextPolicyError, match="context layer 'mask' takes"):
        ContextPolicy.parse("mask:inputs=1")


def test_inputs_true_and_false_read_as_flags_not_as_tool_names() -> None:
    assert ContextPolicy.parse("edit:inputs=true").options.edit_inputs is True
    assert ContextPolicy.parse("edit:inputs=False").options.edit_inputs is False
    assert ContextPolicy.parse("edit:inputs=yes").options.edit_inputs is True


def test_a_policy_as_a_mapping_of_layers_reads_as_its_one_line_form() -> None:
    from nbagent.engine.contracts.context_policy import ContextPolicy

    policy = ContextPolicy.parse({"mask": {"keep": 2, "clear": 5000, "exclude": ["python", "shell"]}, "summary": {}})
    assert policy.layers == ("mask", "summary", "truncate")
    assert str(policy) == "mask:keep=2:clear=5000:exclude=python,shell+summary"
    assert policy.options.keep == 2 and policy.options.exclude == ("python", "shell")
    assert ContextPolicy.parse({"edit": {"inputs": True}}).options.edit_inputs is True
    assert ContextPolicy.parse({"mask": None}).layers == ("mask", "truncate")


def test_a_policy_in_any_wrong_form_names_the_accepted_forms() -> None:
    import pytest

    from nbagent import Agent
    from nbagent.engine.contracts.context_policy import ContextPolicy, ContextPolicyError

    wrong: object
    for wrong in ({"mask": 3}, {"mask": "keep=3"}, {}, 42, ["mask", "truncate"], {"squash": {}}):
        with pytest.raises(ContextPolicyError) as info:
            ContextPolicy.parse(wrong)  # type: ignore[arg-type]
        assert "mapping of layers" in str(info.value) or "layers are mask" in str(info.value), wrong
    with pytest.raises(ContextPolicyError, match="one-line form"):
        Agent(provider="simulated", context={"mask": 3})
    with pytest.raises(ContextPolicyError, match="takes keep="):
        Agent(provider="simulated", context={"mask": {"kept": 3}})


@pytest.mark.parametrize("wrong", [
    {"mask": {"exclude": "a:keep=0"}}, {"mask": {"keep": "3:clear=0"}}, {"mask": {"exclude": "read_file+summary"}},
    {"mask": {"keep=0:clear": 1}}, {"mask": {"exclude": ["python", "shell,read_file"]}}, {"mask": {"clear": 1e30}},
])
def test_a_mapping_whose_key_or_value_holds_a_separator_is_refused_not_read_as_more_options(wrong: object) -> None:
    with pytest.raises(ContextPolicyError, match="holds none of"):
        ContextPolicy.parse(wrong)  # type: ignore[arg-type]


def test_an_option_given_twice_is_refused() -> None:
    with pytest.raises(ContextPolicyError, match="mask:keep given twice"):
        ContextPolicy.parse("mask:keep=3:keep=0")


def test_a_policy_is_named_in_the_order_its_layers_act() -> None:
    # "truncate+mask" ran as mask then truncate while the header and status read "truncate+mask" (power pass 3).
    assert str(ContextPolicy.parse("truncate+mask:keep=2")) == "mask:keep=2+truncate"
    assert str(ContextPolicy.parse(" summary + mask ")) == "mask+summary"
    assert str(ContextPolicy.parse({"summary": {}, "mask": {"keep": 2}})) == "mask:keep=2+summary"
    assert str(ContextPolicy.parse("cline")) == "cline"  # a preset keeps its name
