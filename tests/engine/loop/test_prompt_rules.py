"""Rules files (``AGENTS.md``, ``.nbagent/rules/*.md``) are read only from inside the working directory,
only when they are regular files, and only as much as the prompt can use; a refused one is a Notice."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

from nbagent.engine.contracts.events import Notice
from nbagent.engine.loop.prompt import MAX_RULES_CHARS, load_rules, read_rules
from nbagent.providers.simulated import SimulatedAPI, text_reply
from tests.engine.loop.test_query_support import make_engine, messages_requests, run

SECRET = "TOP-SECRET-OUTSIDE-CWD"


def project(tmp_path: Path) -> tuple[Path, Path]:
    """``(cwd, a file outside it holding SECRET)``."""
    cwd, outside = tmp_path / "proj", tmp_path / "outside.md"
    cwd.mkdir()
    outside.write_text(SECRET)
    return cwd, outside


async def test_a_rules_symlink_out_of_cwd_is_not_sent_and_a_notice_says_why(tmp_path: Path) -> None:
    cwd, outside = project(tmp_path)
    (cwd / "AGENTS.md").symlink_to(outside)
    api = SimulatedAPI([text_reply("ok")])
    engine = make_engine(api, cwd)
    events = await run(engine, "hi")
    assert SECRET not in str(messages_requests(api)[0].body["system"])
    (notice,) = [e for e in events if isinstance(e, Notice) and "AGENTS.md" in e.message]
    assert "outside the working directory" in notice.message


def test_a_rules_folder_file_linking_out_of_cwd_is_refused(tmp_path: Path) -> None:
    cwd, outside = project(tmp_path)
    (cwd / ".nbagent" / "rules").mkdir(parents=True)
    (cwd / ".nbagent" / "rules" / "a.md").symlink_to(outside)
    (cwd / ".nbagent" / "rules" / "b.md").write_text("use tabs")
    text, warnings = load_rules(cwd)
    assert SECRET not in text and "use tabs" in text
    assert len(warnings) == 1 and ".nbagent/rules/a.md" in warnings[0]


def test_a_symlink_inside_cwd_is_still_read(tmp_path: Path) -> None:
    cwd, _ = project(tmp_path)
    (cwd / "docs").mkdir()
    (cwd / "docs" / "rules.md").write_text("be brief")
    (cwd / "AGENTS.md").symlink_to(cwd / "docs" / "rules.md")
    assert load_rules(cwd) == ("# AGENTS.md\nbe brief", [])


async def test_a_rules_symlink_to_a_credentials_file_inside_cwd_is_not_sent(tmp_path: Path) -> None:
    # A repository (git keeps symlinks) with .nbagent/rules/style.md -> ../../.env and
    # AGENTS.md -> .git/config: the user's own .env (gitignored, made after cloning) and the token in
    # the remote's URL went to the model in the system prompt at the first prompt, where read_file
    # asks before reading either.
    cwd, _ = project(tmp_path)
    (cwd / ".env").write_text("MISTRAL_KEY=Mistral-SENTINEL-9f8e7d6c\n")
    (cwd / ".git").mkdir()
    (cwd / ".git" / "config").write_text('[remote "origin"]\n\turl = https://ana:gh-SENTINEL-token@example.org/x\n')
    (cwd / ".nbagent" / "rules").mkdir(parents=True)
    (cwd / ".nbagent" / "rules" / "style.md").symlink_to("../../.env")
    (cwd / ".nbagent" / "rules" / "tabs.md").write_text("use tabs")
    (cwd / "AGENTS.md").symlink_to(".git/config")
    api = SimulatedAPI([text_reply("ok")])
    events = await run(make_engine(api, cwd), "hi")
    system = str(messages_requests(api)[0].body["system"])
    assert "SENTINEL" not in system and "use tabs" in system
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("AGENTS.md" in n and "holds credentials" in n for n in notices)
    assert any("style.md" in n and "holds credentials" in n for n in notices)


def test_the_rules_of_a_notebook_in_the_home_folder_are_still_read(tmp_path: Path, monkeypatch) -> None:
    # ~/.nbagent/ holds credentials (endpoint tokens) and is also where a notebook kept in ~ has its
    # rules folder: a rules file in its own place is the user's, only one reached through a symlink is checked.
    home = tmp_path / "home"
    (home / ".nbagent" / "rules").mkdir(parents=True)
    (home / ".nbagent" / "rules" / "style.md").write_text("be brief")
    monkeypatch.setenv("HOME", str(home))
    assert load_rules(home) == ("# .nbagent/rules/style.md\nbe brief", [])

def test_the_rules_of_a_home_folder_whose_nbagent_is_a_dotfiles_link_are_still_read(tmp_path: Path, monkeypatch) -> None:
    # Review of attacker pass 12 (L1): ~/.nbagent -> dotfiles/nbagent (stow, chezmoi) made the
    # user's own rules "a file that holds credentials", not read.
    home = tmp_path / "home"
    (home / "dotfiles" / "nbagent" / "rules").mkdir(parents=True)
    (home / "dotfiles" / "nbagent" / "rules" / "style.md").write_text("be brief")
    (home / ".nbagent").symlink_to(home / "dotfiles" / "nbagent")
    monkeypatch.setenv("HOME", str(home))
    assert load_rules(home) == ("# .nbagent/rules/style.md\nbe brief", [])



def test_a_fifo_as_rules_file_is_refused_without_blocking(tmp_path: Path) -> None:
    cwd, _ = project(tmp_path)
    os.mkfifo(cwd / "AGENTS.md")
    text, warnings = load_rules(cwd)
    assert text == "" and warnings == ["Rules file AGENTS.md is not a regular file; not read."]


def test_a_huge_rules_file_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    cwd, _ = project(tmp_path)
    with open(cwd / "AGENTS.md", "wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of NULs that take no disk space
    tracemalloc.start()
    try:
        text = read_rules(cwd)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(text) == MAX_RULES_CHARS
    assert peak < 2 * 1024 * 1024  # a whole read would be 64 MiB and more


async def test_a_huge_ignore_file_s_patterns_are_listed_within_a_bound(tmp_path: Path) -> None:
    """A received folder's 1 MB ``.nbagentignore`` went whole into every request's system prompt
    (about 250,000 tokens a request), past the cap the rules files have (attacker pass 20)."""
    cwd, _ = project(tmp_path)
    (cwd / ".nbagentignore").write_text("".join(f"data/part-{i:07d}-{'x' * 20}.parquet\n" for i in range(25_000)))
    api = SimulatedAPI([text_reply("ok")])
    await run(make_engine(api, cwd), "hi")
    system = str(messages_requests(api)[0].body["system"])
    assert len(system) < MAX_RULES_CHARS, len(system)
    assert "data/part-0000000-" in system and "more patterns (in .nbagentignore)" in system


async def test_you_are_told_once_when_the_model_is_told_only_some_ignore_patterns(tmp_path: Path) -> None:
    """The model saw the first 2,000 characters of ``.nbagentignore``'s patterns and the user was not
    told (a copy of GitHub's Python ``.gitignore``, 3.4k, reaches it)."""
    cwd, _ = project(tmp_path)
    (cwd / ".nbagentignore").write_text("".join(f"build-{i:04d}/\n" for i in range(400)))
    api = SimulatedAPI([text_reply("ok"), text_reply("again")])
    engine = make_engine(api, cwd)
    first, second = await run(engine, "hi"), await run(engine, "and again")
    (notice,) = [e for e in first if isinstance(e, Notice) and ".nbagentignore" in e.message]
    assert notice.level == "warning"
    shown = str(messages_requests(api)[0].body["system"]).count("build-")
    assert f"has 400 patterns; the model is told the first {shown} " in notice.message
    assert f"{400 - shown} more exist" in notice.message and "list_files still hides" in notice.message
    assert not [e for e in second if isinstance(e, Notice) and ".nbagentignore" in e.message]  # once a change


async def test_a_short_ignore_file_is_listed_whole_without_a_warning(tmp_path: Path) -> None:
    cwd, _ = project(tmp_path)
    (cwd / ".nbagentignore").write_text("data/\n*.parquet\n")
    api = SimulatedAPI([text_reply("ok")])
    events = await run(make_engine(api, cwd), "hi")
    assert "data/, *.parquet" in str(messages_requests(api)[0].body["system"])
    assert not [e for e in events if isinstance(e, Notice) and ".nbagentignore" in e.message]
