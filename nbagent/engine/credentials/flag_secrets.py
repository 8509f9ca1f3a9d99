"""The credentials a text gives in the other forms of a name beside a value: a command line's flag
(``mysql --password=…``, ``cli --api-token …``), an XML element (Maven's ``<password>…</password>``),
and an HTTP header line (``Authorization: Basic …``, as ``http.client``'s debug output and a raw
request print it). :mod:`.assigned_secrets` reads ``NAME=value`` lines and :mod:`.kernel_secrets`
named literals; these were shown whole (a printed command, a config file ``read_file`` showed).
The same rules decide as for a mapping's keys (:func:`~.named_values.named_secret`): a password's
name takes any value but a path, a token's a value shaped like a generated one. A name kept as data
beside its value (a Kubernetes env entry, ``<add key="Password" value="…"/>``) is
:mod:`.keyed_secrets`'; what a value is and is not (a stand-in, a metavar), :mod:`.value_rules`'.
"""

from __future__ import annotations

import re

from .credential_names import AUTHORIZATION, SEPARATORS
from .embedded_secrets import MIN_CHARS, PATH_START, looks_like_token
from .env_secrets import credential_setting
from .keyed_secrets import names_beside_values
from .named_values import named_secret
from .value_rules import METAVAR, credential_value, named_property

_FLAG = re.compile(r"(?<![\w-])--(?P<name>[A-Za-z][\w-]{1,40})(?:[=:]|(?P<gap>[ \t]+))(?P<q>[\"']?)"
                   r"(?P<value>[^\s\"'<>-][^\s\"'<>]{0,255})(?P=q)")
"""``--name=value``, ``--name:value`` or ``--name value``, no value starting with ``-`` (the next flag:
``--password-stdin --username ana``)."""
_ELEMENT = re.compile(r"<(?P<tag>(?:[A-Za-z][\w.-]{0,40}:)?(?P<name>[A-Za-z][\w.-]{0,40}))(?:[ \t][^<>]{0,200})?>"
                      r"\s{0,80}(?:<!\[CDATA\[(?P<cdata>[^\]\n]{1,256})\]\]>|(?P<value>[^<>\s]{1,256}))\s{0,80}</(?P=tag)>")
"""``<password>…</password>``, also with attributes, a namespace (``<db:password>``), the value on a line
of its own or in a CDATA section (``<password><![CDATA[…]]></password>``, whose text may hold blanks)."""
_HEADER = re.compile(r"(?im)(?:(?<=\\n)|(?<![\w-]))(?P<name>(?:proxy-)?authorization)[ \t]*:[ \t]*(?P<value>[^\r\n'\"\\]{1,512})")
_CURL_USER = re.compile(r"(?<![\w-])(?:-u[ \t]*|--user[ \t]+|--user=)(?P<q>[\"']?)(?P<user>[^\s:\"'/]{1,64}):"
                        r"(?P<value>[^\s\"'/][^\s\"']{0,255})(?P=q)")
"""curl's ``-u user:password`` (``-uuser:password``, ``--user``): the user's name beside its password
(not a URL: ``-url:https://…``)."""
_CONTAINER = re.compile(r"(?i:\b(?:docker|podman|nerdctl)\b)")
"""A container tool's ``-u``/``--user`` is ``user:group`` (``docker run -u www-data:www-data``), not a password."""
_MYSQL = re.compile(r"[mM][yY][sS][qQ][lL]|[mM][aA][rR][iI][aA][dD][bB]")
"""A line running MySQL's clients (``mysql``, ``mysqldump``, ``mariadb-dump``): their ``-p`` takes the
password joined to it."""
_MYSQL_P = re.compile(r"(?<![\w-])-p(?:\"(?P<dq>[^\"\n]{1,256})\"|'(?P<sq>[^'\n]{1,256})'|(?P<value>[^\s\"']{1,256}))")
"""``-pSECRET`` (``-p'…'``, ``-p"…"``); ``-p`` alone asks for it, ``-P3306`` is the port."""
_PORTS = re.compile(r"[\d.:]+(?:/(?:tcp|udp))?")
"""Docker's ``-p13306:3306`` (``-p127.0.0.1:3306:3306/tcp``) on a line starting a ``mysql`` image: ports."""
_GAP_COMMAND = re.compile(r"(?i:(?<![\w.-])(?P<cmd>(?:docker|podman|nerdctl|az|oc|cf|helm[ \t]+registry)[ \t]+login"
                          r"|sshpass|mongosh|mongo(?:dump|restore|export|import)?|redis-cli|beeline|sqlcmd|bcp))(?![\w.-])"
                          r"(?:[^\n;|&`'\"]|'[^'\n]*'|\"[^\"\n]*\")*")
"""The commands whose short flag takes the password as the next word: ``docker login -u ana -p …`` (``az``, ``oc``,
``cf``, ``helm registry`` ``login`` too), Hive's ``beeline -n ana -p …``, SQL Server's ``sqlcmd``/``bcp … -P …``,
``sshpass -p …``, ``mongosh -u ana -p …``, ``redis-cli -a …`` (elsewhere ``-p …`` is a port or a path).
Read up to the next command (``;``, ``&&``, ``|``; not inside quotes): ``… && docker compose -p analytics up``
gives nothing, nor a compose file named ``mongo.yml``."""
_GAP_FLAG = re.compile(r"(?<![\w-])-(?P<flag>[paP])[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"'-][^\s\"']{0,255})(?P=q)")
"""``-p …`` (``-pSECRET``, ``-p'…'``: sshpass and docker take it joined too)."""
_REDIS_PASS = re.compile(r"(?<![\w-])--pass(?:[ \t]+|=)(?P<q>[\"']?)(?P<value>[^\s\"'-][^\s\"']{0,255})(?P=q)")
"""redis-cli's ``--pass …``, the long form of its ``-a``."""
_SSHPASS_OPTIONS = re.compile(r"(?:[ \t]+-(?:[fdpP][ \t]*(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"]+)|[ehv]+)(?=\s|$))*")
"""sshpass's own options (``-p pw``, ``-f file``, ``-e``, ``-v``): after them comes the command it runs, whose
``-p`` is not its (``sshpass -e ssh host 'mkdir -p /srv/data'``, ``… pytest -p no:cacheprovider``)."""
_SETTING_COMMAND = re.compile(r"(?i:\baws[ \t]+configure[ \t]+set[ \t]+(?P<name>[\w.-]{1,64})[ \t]+(?P<value>[^\s\"']{1,256})"
                              r"|\bnet[ \t]+use\b[^\n]*?/user:\S{1,128}[ \t]+(?P<net>[^\s/*\"'][^\s\"']{0,255}))")
"""``aws configure set aws_secret_access_key …`` (by the setting's name) and Windows' ``net use … /user:ana …``."""
_VAULT = re.compile(r"(?i:\bvault[ \t]+(?:kv[ \t]+)?(?:put|write|patch)\b)[^\n]*")
_VAULT_PAIR = re.compile(r"(?<=[ \t])(?P<name>[A-Za-z_][\w.-]{0,63})=(?P<value>[^\s\"'@][^\s\"']{0,255})")
"""``vault kv put secret/db password=…``: its ``key=value`` pairs by the variables' rule."""
_NETRC = re.compile(r"(?<![\w-])(?:machine[ \t]+\S{1,256}|default)\s+login[ \t]+\S{1,256}\s+password[ \t]+"
                    r"(?P<value>[^\s\"']{1,256})")
"""``.netrc``'s ``machine host login ana password …`` (one line, or a line each), in that order."""
_ORACLE = re.compile(r"(?i:\b(?P<tool>sqlplus|sqlldr|expdp|impdp|exp|imp|rman)\b)(?:[ \t]+(?:-[A-Za-z]+|(?i:target|catalog)))*"
                     r"[ \t]+(?P<q>[\"']?)"
                     r"[\w$#.]{1,64}/(?P<value>[^@\s\"'/]{1,256})@")
"""Oracle's ``sqlplus scott/…@orcl`` (``expdp``, ``sqlldr`` …, ``rman target sys/…@orcl``): the user's name, ``/``, its
password, ``@``."""
_EXP_PARAMETER = re.compile(r"(?i)[ \t](?:file|tables|full|owner|log|fromuser|touser|parfile|rows|grants|indexes|buffer)=")
"""Oracle's ``exp``/``imp`` take ``file=…``, ``tables=…`` …: ``exp`` and ``imp`` alone are words of a log
(``exp runs/baseline@2024-01-01``, an experiment's run)."""
ORACLE_TOOLS = ("sqlplus", "sqlldr", "expdp", "impdp", "exp ", "imp ", "rman")
_INLINE_ENV = re.compile(r"(?P<name>(?:PASS|PWD|SECRET|TOKEN|KEY|AUTH|CRED)[A-Z0-9_]{0,20})="
                         r"(?:(?P<q>[\"'])(?P<quoted>[^\"'\s$](?:[^\"'\n]{0,254}[^\"'\s])?)(?P=q)"
                         r"|(?P<value>[^\s\"'`;|)$][^\s\"'`;|)]{0,255}))"
                         r"(?=[\s;|)\"']|$)", re.MULTILINE)
"""An environment variable set inside a command line: ``$ PGPASSWORD=… psql``, ``set DB_PASSWORD=…``
(never a shell's ``$(…)``, ``$VAR`` or backquoted value),
``docker run -e POSTGRES_PASSWORD=… postgres`` (a line's first ``NAME=value`` is :mod:`.assigned_secrets`'
whole rest of line). Upper-case names only, by the environment's rule: a printed call's
``password=cfg.password`` is code, not a value. A quoted value may hold blanks (``PGPASSWORD='correct horse' psql``)."""
_JAVA_PROPERTY = re.compile(r"-D(?P<name>(?:[A-Za-z][\w.-]{0,80})?(?i:pass|pwd|secret|token|key|auth|cred)[\w.-]{0,40})="
                            r"(?P<q>[\"']?)(?P<value>[^\s\"']{1,256})(?P=q)")
"""Java's ``-Djavax.net.ssl.keyStorePassword=…``."""
_SINGLE_DASH = re.compile(r"-(?P<name>(?:src|dest|new)?(?:store|key)?pass(?:word)?|passin|passout)[ \t]+"
                          r"(?:(?P<q>[\"'])(?:pass:)?(?P<quoted>[^\"'\s](?:[^\"'\n]{0,254}[^\"'\s])?)(?P=q)"
                          r"|(?:pass:)?(?:(?P<q2>[\"'])(?P<quoted2>[^\"'\s](?:[^\"'\n]{0,254}[^\"'\s])?)(?P=q2)|(?P<value>[^\s\"'-][^\s\"']{0,255})))")
"""keytool's ``-storepass …`` / ``-keypass …``, ``-password …``, and openssl's ``-passin pass:…`` (quoted: may
hold blanks); openssl's ``env:NAME``, ``file:path`` and ``fd:N`` name where the password is, not it."""
_ELSEWHERE = re.compile(r"(?:env|file|fd):")
_GAP_WORDS = ("login", "sshpass", "mongo", "redis-cli", "beeline", "sqlcmd", "bcp")
_UPPER_WORDS = ("PASS", "PWD", "SECRET", "TOKEN", "KEY", "AUTH", "CRED")
_STARTS = frozenset(" \t\n(")
"""What may stand before an inline setting or flag (checked in Python: a look-behind at the start of
these patterns made each scan 3-15 times slower, having no first character to skip to)."""
_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "credential")


def _authorization(value: str) -> str | None:
    scheme, space, rest = value.strip().partition(" ")
    secret = rest.strip() if space and rest.strip() else value.strip()
    # One credential, no prose: "Authorization: see the docs" names none. Without a scheme, only a
    # generated-looking one: ``authorization: disabled`` (a server's config) names none.
    if not space and not looks_like_token(secret):
        return None
    return secret if credential_value(secret) and not any(ch.isspace() for ch in secret) else None


def _described(match: re.Match[str]) -> bool:
    """A help text's column, not a value: ``--password    Password for the user`` (a word two blanks on)."""
    return len(match.group("gap") or "") > 1 and match.group("value").isalpha()


def mysql_passwords(text: str) -> list[str]:
    """The passwords joined to ``-p`` on the lines of ``text`` that run a MySQL client
    (``mysql -u ana -pSECRET sales``): elsewhere ``-p`` is a port, a parent folder or a pattern."""
    found: list[str] = []
    end = -1
    for name in _MYSQL.finditer(text):  # the words' letters as classes, ``\b`` in Python: 4 times faster on a log
        at = name.start()
        if at < end or (at and (text[at - 1].isalnum() or text[at - 1] == "_")):
            continue  # a line already read, or ``lmysqlclient``
        end = text.find("\n", at) % (len(text) + 1)
        line = text[at:end]
        for m in (_MYSQL_P.finditer(line) if "-p" in line else ()):
            value = m.group("dq") or m.group("sq") or m.group("value")
            if value and credential_value(value) and not _PORTS.fullmatch(value):
                found.append(value)
    return found


def _flag_of(cmd: str) -> str:
    """The short flag giving ``cmd``'s password: redis-cli's ``-a`` (its ``-p`` is the port), sqlcmd's and bcp's ``-P``."""
    return "a" if cmd == "redis-cli" else "P" if cmd in ("sqlcmd", "bcp") else "p"


def gap_passwords(words: list[str]) -> list[str]:
    """The passwords of a command line kept as its arguments (``["sshpass", "-p", …]``, ``["docker",
    "login", …, "-p", …]``, redis-cli's ``-a``), each item whole; none for a command of no :data:`_GAP_COMMAND`."""
    match = _GAP_COMMAND.search(" ".join(words[:3]))
    if match is None:
        return []
    cmd = match.group("cmd").lower()
    flag = "-" + _flag_of(cmd)
    found: list[str] = []
    for at, word in enumerate(words):
        if word in ("&&", "||", "|", ";"):
            break  # the next command's flags
        if cmd == "sshpass" and at and not word.startswith("-") and words[at - 1] not in ("-f", "-d", "-p", "-P"):
            break  # the command sshpass runs: its -p is not sshpass's
        if word == flag and at + 1 < len(words) and credential_word(words[at + 1]):
            found.append(words[at + 1])
        elif word.startswith(flag) and len(word) > 2 and credential_word(word[2:]):
            found.append(word[2:])
    return found


def credential_word(value: str) -> bool:
    """Whether ``value`` may be a password given as a flag's next word (not a placeholder, a metavar, a port or a path)."""
    return credential_value(value) and not METAVAR.fullmatch(value) and not _PORTS.fullmatch(value) \
        and not value.startswith("-") and not PATH_START.match(value)


def command_passwords(text: str) -> list[str]:
    """The passwords given as the next word of ``-p`` (``-a`` for redis-cli) on the lines running a
    command of :data:`_GAP_COMMAND`, and a ``.netrc``'s ``password …`` (a text naming ``machine`` and ``login``)."""
    found: list[str] = []
    for line in _GAP_COMMAND.finditer(text):
        cmd = line.group("cmd").lower()
        flag, own = _flag_of(cmd), line.group()[line.end("cmd") - line.start():]
        if cmd == "sshpass":
            own = own[:_SSHPASS_OPTIONS.match(own).end()]  # type: ignore[union-attr]  # it matches empty
        found += [m.group("value") for m in _GAP_FLAG.finditer(own)
                  if m.group("flag") == flag and credential_word(m.group("value"))]
        if cmd == "redis-cli" and "--pass" in own:  # its long form: ``pass`` alone names no credential elsewhere
            found += [m.group("value") for m in _REDIS_PASS.finditer(own) if credential_word(m.group("value"))]
    if "login " in text and "password " in text:
        found += [m.group("value") for m in _NETRC.finditer(text)
                  if credential_value(m.group("value")) and _entry_start(text, m.start())]
    return found


def setting_passwords(text: str, low: str) -> list[str]:
    """``aws configure set NAME …``, ``net use … /user:… …`` and ``vault kv put … name=…``'s credentials."""
    found: list[str] = []
    if "configure" in low or "/user:" in low:
        for m in _SETTING_COMMAND.finditer(text):
            if m.group("net"):
                found += [m.group("net")] if credential_value(m.group("net")) else []
            else:
                found += named_property(m.group("name"), m.group("value"))
    if "vault" in low:
        found += [v for line in _VAULT.finditer(text) for m in _VAULT_PAIR.finditer(line.group())
                  for v in named_property(m.group("name"), m.group("value"))]
    return found


_DASH_PASS = re.compile(r"-(?:(?:src|dest|new)?(?:store|key)?pass(?:word)?|passin|passout)")
_ORACLE_COMMANDS = frozenset(("sqlplus", "sqlldr", "expdp", "impdp", "rman"))


def dash_passwords(words: list[str]) -> list[str]:
    """keytool's ``"-storepass", "…"``, openssl's ``"-passout", "pass:…"``, Java's ``"-D…Password=…"`` and
    Oracle's ``["sqlplus", "scott/…@orcl"]`` in a command line kept as its arguments, each item whole."""
    found = [v for flag, value in zip(words, words[1:], strict=False) if _DASH_PASS.fullmatch(flag)
             for v in (value.removeprefix("pass:"),) if credential_value(v) and not METAVAR.fullmatch(v)
             and not _ELSEWHERE.match(v) and not v.startswith("-")]
    found += [v for word in words if word.startswith("-D") and "=" in word
              for m in (_JAVA_PROPERTY.match(word),) if m is not None for v in named_property(m.group("name"), m.group("value"))]
    if words and words[0].rsplit("/", 1)[-1].lower() in _ORACLE_COMMANDS:
        found += [m.group("value") for word in words[1:] if "/" in word and "@" in word
                  for m in (_ORACLE.match(f"sqlplus {word}"),) if m is not None and credential_value(m.group("value"))]
    return found


def _entry_start(text: str, at: int) -> bool:
    """Whether a ``.netrc`` entry's ``machine`` starts a line (or a quoted text, or a repr's ``\\n``): in
    prose, "the machine learning login form password validation" is none."""
    line = text[text.rfind("\n", 0, at) + 1:at].strip()
    return not line or line[-1] in "\"'[(" or line.endswith("\\n")


def _user_group(text: str, match: re.Match[str]) -> bool:
    """Whether curl-like ``-u name:value`` is a container's ``user:group`` (``docker run -u www-data:www-data``)."""
    if match.group("user") == match.group("value"):
        return True
    return _CONTAINER.search(text, text.rfind("\n", 0, match.start()) + 1, match.start()) is not None


def oracle_passwords(text: str, low: str) -> list[str]:
    """Oracle's ``user/password@db`` on a line running its tools (``sqlplus scott/…@orcl``)."""
    if "/" not in text or "@" not in text or not any(tool in low for tool in ORACLE_TOOLS):
        return []
    return [m.group("value") for m in _ORACLE.finditer(text) if credential_value(m.group("value"))
            and (m.group("tool").lower() not in ("exp", "imp") or _EXP_PARAMETER.search(text, m.end()) is not None)]


def _inline(text: str) -> list[str]:
    """Inline ``NAME=value`` settings, Java properties and single-dash password flags."""
    found: list[str] = []
    if "=" in text and any(word in text for word in _UPPER_WORDS):  # substring looks: faster than the pattern
        for m in _INLINE_ENV.finditer(text):
            # ``PGPASSWORD=…&&psql``, ``…& psql``: the next command, a background job; an ``&`` inside stays
            start, value = _name_start(text, m.start()), m.group("quoted") or m.group("value").split("&&")[0].rstrip("&")
            # ``-e 'POSTGRES_PASSWORD=…'``: a quote may open the setting too
            if (start == 0 or text[start - 1] in _STARTS or text[start - 1] in "\"'") and credential_value(value) and \
                    credential_setting(text[start:m.start()] + m.group("name")) and not PATH_START.match(value):
                found.append(value)
    if "=" in text and "-D" in text:
        found += [v for m in _matches(_JAVA_PROPERTY, text) for v in named_property(m.group("name"), m.group("value"))]
    if "pass" in text:
        values = (m.group("quoted") or m.group("quoted2") or m.group("value") for m in _matches(_SINGLE_DASH, text))
        found += [v for v in values if credential_value(v) and not METAVAR.fullmatch(v) and not _ELSEWHERE.match(v)]
    return found


def _name_start(text: str, at: int) -> int:
    """Where the upper-case name whose credential word starts at ``at`` starts (``PG`` of ``PGPASSWORD``):
    the pattern looks for the word, a literal, and is fast; one for the whole name had no first
    character to skip to (10 ms for 200 KB of log)."""
    start = at
    while start > 0 and at - start < 40 and (text[start - 1].isupper() or text[start - 1].isdigit() or text[start - 1] == "_"):
        start -= 1
    return start


def _matches(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """``pattern``'s matches in ``text`` at a line's start or after a blank."""
    return [m for m in pattern.finditer(text) if m.start() == 0 or text[m.start() - 1] in _STARTS]


def _command_secrets(text: str, low: str) -> list[str]:
    """curl's ``-u user:password``, a MySQL client's ``-p…``, the next word of a password command's short
    flag, a ``.netrc`` entry's and Oracle's ``user/password@db``."""
    found: list[str] = []
    if "-u" in text:
        found += [m.group("value") for m in _CURL_USER.finditer(text) if not _user_group(text, m)
                  if credential_value(m.group("value")) and "://" not in m.group("value")]
    if "-p" in text and ("mysql" in low or "mariadb" in low):
        found += mysql_passwords(text)
    if ("-p" in text or "-a" in text or "-P" in text or "login " in text) and any(c in low for c in _GAP_WORDS):
        found += command_passwords(text)
    return found + oracle_passwords(text, low)


def flag_secrets(text: str) -> list[str]:
    """The values ``text``'s flags, XML elements and ``Authorization`` header lines give credentials'
    names, and curl's ``-u user:password`` its password."""
    if len(text) < MIN_CHARS + 2:  # no flag and credential fit (a cell's ``"x"``, ``"-p"``: 25,000 literals of an output)
        return []
    if "\\\n" in text:  # a command continued on the next line (``mysql -h db \`` / ``  -p… sales``) is one line
        text = text.replace("\\\n", "  ")
    low = text.lower()
    found = _command_secrets(text, low) + setting_passwords(text, low)
    if not any(word in low for word in _WORDS):  # one look before the patterns run
        return found
    found += _inline(text)
    if "--" in text:
        for m in _FLAG.finditer(text):  # one pass: a log's ``--`` flags are many
            value = m.group("value")
            if "=" in value:  # ``--set auth.password=…``
                found += named_property(*value.partition("=")[::2])
            if not METAVAR.fullmatch(value) and credential_value(value) and not _described(m) \
                    and not m.group("name").endswith("-stdin") and named_secret(m.group("name"), value):
                found.append(value)  # ``--password-stdin registry``: a server's name, not the value
    found += names_beside_values(text, low)
    if "</" in text:
        values = ((m.group("name"), m.group("cdata") or m.group("value")) for m in _ELEMENT.finditer(text))
        found += [value for name, value in values if credential_value(value) and named_secret(name, value)]
    if "authorization" in low:
        for match in _HEADER.finditer(text):
            secret = _authorization(match.group("value"))
            if secret is not None and AUTHORIZATION.fullmatch(match.group("name").translate(SEPARATORS)):
                found.append(secret)
    return found


__all__ = ["ORACLE_TOOLS", "command_passwords", "credential_word", "dash_passwords", "flag_secrets", "gap_passwords",
           "mysql_passwords"]
