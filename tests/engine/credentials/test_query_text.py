"""A URL query's token is redacted wherever a text shows it: requests' error names the request's
path and query (``Max retries exceeded with url: /v1/items/3?api_key=…``), and a key a helper read
from a file into a local variable is held by no variable the sanitizer knows (attacker pass 15)."""

from __future__ import annotations

import time

from nbagent.engine.loop.sanitize import Sanitizer

KEY = "Qm3xT9vL2pR7wK4nB8cF1hJ6dS5gA0eY"


def test_an_errors_query_token_is_redacted_with_no_secret_known() -> None:
    error = ("ConnectionError: HTTPConnectionPool(host='api.example', port=443): Max retries exceeded with url: "
             f"/v1/items/3?api_key={KEY}&page=2 (Caused by NewConnectionError(...))")
    shown = Sanitizer(()).redact(error)
    assert KEY not in shown and "/v1/items/3?api_key=[redacted]&page=2 (Caused" in shown


def test_signatures_passwords_and_html_escaped_queries_are_redacted() -> None:
    from nbagent.engine.credentials.query_text import redact_query_tokens

    sas = "https://acct.blob.core.windows.net/c/b.csv?sv=2022-11-02&sig=abc%2Fdef123ghij&se=2026-01-01"
    assert redact_query_tokens(sas).endswith("&sig=[redacted]&se=2026-01-01")
    assert redact_query_tokens("/login?user=ana&password=hunter2x") == "/login?user=ana&password=[redacted]"
    link = f'<a href="/x?id=3&amp;access_token={KEY}">'
    assert KEY not in redact_query_tokens(link)


def test_a_querys_ordinary_values_and_code_stay() -> None:
    from nbagent.engine.credentials.query_text import redact_query_tokens

    for text in ("/v1/items?page_token=abc123&sort_key=order_date&region=north",
                 "x = a if b else c  # why? y=1", "?token=tokenization", "?pwd=/home/ana/project"):
        assert redact_query_tokens(text) == text


def test_text_without_a_query_costs_two_scans() -> None:
    from nbagent.engine.credentials.query_text import redact_query_tokens

    text = "df.groupby('region')['revenue'].sum() = 3\n" * 2_000  # '=' but no '?'
    started = time.perf_counter()
    for _ in range(100):
        redact_query_tokens(text)
    assert time.perf_counter() - started < 0.5


def test_a_urls_password_in_a_log_line_is_redacted_with_no_secret_known() -> None:
    """A helper logs the URL it built from a config file (``connecting to postgresql://ana:…@db``), or
    an error names a proxy's: no variable holds it, so its password went to the model (attacker pass 15)."""
    redact = Sanitizer(()).redact
    assert redact("INFO connecting to postgresql://ana:S3cr3t-Pw@db.internal:5432/sales") == \
        "INFO connecting to postgresql://ana:[redacted]@db.internal:5432/sales"
    assert "p%40ss" not in redact("mongodb+srv://app:p%40ss-w0rd!@cluster0.example.net/?retryWrites=true")
    for text in ("git@github.com:org/repo.git", "see https://docs.example/a:b@c", "mail ana@x.org, http://x.org",
                 "create_engine('postgresql://postgres:postgres@localhost/test')"):  # a default: code uses it
        assert redact(text) == text


def test_a_url_the_code_builds_from_fields_keeps_them_and_a_written_password_is_redacted():
    # The model's own database code ran as ":[redacted]@" (review of session 57): a field is no password.
    from nbagent.engine.credentials.query_text import redact_url_passwords

    for code in ('create_engine(f"postgresql://{user}:{pw}@{host}/db")', '"postgresql://%s:%s@%s/db" % (u, p, h)',
                 '"postgresql://{}:{}@{}/db".format(u, p, h)', "postgresql://$USER:$DB_PASS@db",
                 'f"mysql://ana:{quote_plus(pw)}@db"', "postgresql://%(user)s:%(pw)s@db"):
        assert redact_url_passwords(code) == code
    assert redact_url_passwords("postgresql://ana:p%40ss99x@db") == "postgresql://ana:[redacted]@db"
    for password in ("$Summer2024", "$3cr3tP4ss"):  # a password starting with $ is no variable's name
        assert redact_url_passwords(f"postgresql://ana:{password}@db") == "postgresql://ana:[redacted]@db"
