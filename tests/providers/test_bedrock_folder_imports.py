"""A Bedrock prompt in a received notebook's folder imports the AWS SDK, whose optional modules
(``awscrt``, ``OpenSSL``) the install may lack, never from that folder (review of attacker pass 19)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FIRST_PROMPT = """
import sys
sys.path[:] = [p for p in sys.path if p] + [""]  # the kernel: the notebook's folder behind the installed packages
from nbagent.notebook import warmup
warmup.import_all()  # what the kernel imports before the first prompt (marked: never from the folder)
import httpx2
from nbagent import Agent
from nbagent.providers.anthropic import endpoint_provider
from nbagent.providers.endpoints import endpoint_from_row

def refuse(request):
    return httpx2.Response(403, json={"message": "no"})

endpoint = endpoint_from_row("bedrock", {"kind": "bedrock", "region": "us-east-1"})
provider = endpoint_provider(endpoint, http_client=lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)))
done = Agent(provider=provider, model="claude-sonnet-4-5", tools=[]).run_sync("hello").events[-1]
print(done.reason)
"""


@pytest.mark.skipif(not any((Path(p) / "boto3").is_dir() for p in sys.path if p), reason="boto3 is not installed")
def test_a_bedrock_prompt_takes_no_module_of_the_aws_sdk_from_the_notebooks_folder(tmp_path: Path) -> None:
    folder, marker = tmp_path / "received", tmp_path / "ran.txt"
    folder.mkdir()
    for name in ("awscrt", "OpenSSL"):  # botocore and urllib3 try them as the first request is signed
        (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + ' ')\nraise ImportError\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_"))}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               AWS_ACCESS_KEY_ID="AKIAFAKESENTINEL0000", AWS_SECRET_ACCESS_KEY="fake", HOME=str(tmp_path),
               NBAGENT_HOME=str(tmp_path / ".nbagent"))
    run = subprocess.run([sys.executable, "-c", FIRST_PROMPT], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "error", run.stderr[-2000:]
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"


WITHOUT_BOTO3 = """
import os, sys
from importlib.machinery import PathFinder
found = PathFinder.find_spec.__func__

def find_spec(cls, fullname, path=None, target=None):  # boto3 not installed (the SDK's bedrock extra is optional)
    if fullname.split(".")[0] in ("boto3", "botocore", "s3transfer"):  # only the folder's, if any
        path = [p for p in (path or sys.path) if os.path.realpath(p or os.curdir) == os.getcwd()]
    return found(cls, fullname, path, target)

PathFinder.find_spec = classmethod(find_spec)
""" + FIRST_PROMPT


@pytest.mark.parametrize("key", [None, "bedrock-api-key"])
def test_a_bedrock_prompt_without_boto3_installed_runs_no_botocore_of_the_notebooks_folder(
        tmp_path: Path, key: str | None) -> None:
    folder, marker = tmp_path / "received", tmp_path / "ran.txt"
    folder.mkdir()
    for name in ("boto3", "botocore"):  # the SDK imports them on its worker thread to sign the request
        (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + ' ')\nraise ImportError\n")
    code = WITHOUT_BOTO3.replace('"region": "us-east-1"}', f'"region": "us-east-1", "api_key": {key!r}}}')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_"))}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               AWS_ACCESS_KEY_ID="AKIAFAKESENTINEL0000", AWS_SECRET_ACCESS_KEY="fake", HOME=str(tmp_path),
               NBAGENT_HOME=str(tmp_path / ".nbagent"))
    run = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "error", run.stderr[-2000:]
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"
