"""A credential given by a command line's flag, an XML element or an ``Authorization`` header line is
a secret where a ``NAME=value`` line's would be: a printed command, a config file, a variable
(attacker pass 20)."""

from __future__ import annotations

import json

import pytest

from nbagent.engine.credentials import kernel_secrets
from nbagent.engine.credentials.kernel_secrets import credential_variable_values
from nbagent.engine.credentials.output_secrets import output_secrets

PASSWORD = "Zq7-Loud-Tiger-42"
TOKEN = "tk_4fT9xQ2mLp8ZrW1vNc7YhK3s"
BASIC = "YW5hOlpxNy1Mb3VkLVRpZ2VyLTQy"


def test_printed_flags_elements_and_authorization_lines_give_their_credentials() -> None:
    assert output_secrets(f"$ mysqldump --user ana --password={PASSWORD} sales") == (PASSWORD,)
    assert output_secrets(f"python app.py --api-token {TOKEN} --limit 10") == (TOKEN,)
    assert output_secrets(f"<server><username>ana</username><password>{PASSWORD}</password></server>") == (PASSWORD,)
    assert output_secrets(f"Authorization: Basic {BASIC}") == (BASIC,)
    # http.client's debug output prints the request as a bytes repr
    assert output_secrets(f"send: b'GET /v1 HTTP/1.1\\r\\nHost: api\\r\\nAuthorization: Basic {BASIC}\\r\\n'") == (BASIC,)


def test_flags_and_headers_that_name_no_credential_value_give_nothing() -> None:
    for text in ("--token-limit 4096", "--password-file /run/secrets/db", "authorization: see the docs",
                 "X-Authorization-Mode: strict-mode-on", "--api-key sk-short", "<title>Passwords and keys</title>"):
        assert output_secrets(text) == (), text


def test_a_command_line_variable_or_argument_list_gives_its_password() -> None:
    found = credential_variable_values([("cmd", f"mysqldump -u ana --password={PASSWORD} sales"),
                                        ("args", ["mysqldump", "--user", "ana", "--password", f"{PASSWORD}x"])])
    assert found == (PASSWORD, f"{PASSWORD}x")
    assert credential_variable_values([("words", ["--verbose", "--limit", "10"]), ("note", "run with --dry-run first")]) == ()


def test_a_list_of_variables_gives_the_credentials_it_names() -> None:
    env = ["POSTGRES_USER=ana", f"POSTGRES_PASSWORD={PASSWORD}", "PGDATA=/var/lib/pg"]
    assert credential_variable_values([("environment", env)]) == (PASSWORD,)
    assert credential_variable_values([("pairs", ["a=1", "mode=fast"])]) == ()


def test_curl_s_user_password_and_a_cell_s_command_give_their_password() -> None:
    from nbagent.engine.credentials.kernel_secrets import code_secrets

    assert output_secrets(f"$ curl -u ana:{PASSWORD} https://api.example/v1") == (PASSWORD,)
    assert code_secrets(f"get_ipython().system('curl -u ana:{PASSWORD} https://api.example/v1')") == (PASSWORD,)
    assert code_secrets(f'subprocess.run("mysqldump --password={PASSWORD} sales", shell=True)') == (PASSWORD,)
    assert output_secrets("pip install -U pandas") == () and output_secrets("ls -u a:b") == ()


def test_ipython_s_list_of_cells_is_no_list_of_variables() -> None:
    cells = ["", "import os", "token = 'the cat sat'", "mode='fast'", "db_password = read()"]
    assert credential_variable_values([("In", cells), ("_ih", cells)]) == ()


def test_a_help_text_s_metavar_is_no_password() -> None:
    help_text = "usage: dump [--password PASSWORD] [--api-token API_TOKEN]\n  --password PASSWORD  the database's"
    assert output_secrets(help_text) == ()


def test_a_help_text_s_descriptions_and_the_next_flag_are_no_password() -> None:
    """Review of atk20: a flag's description (``--password    Password for the user``), the flag after
    a valueless one (``--password-stdin --username``) and a list of option names were taken as the
    password, hiding ``Password`` / ``--username`` from every text the model read."""
    assert output_secrets("  --password    Password for the database user\n  --secret-key  Secretkey to sign") == ()
    assert output_secrets("docker login --password-stdin --username ana registry.example") == ()
    assert credential_variable_values([("opts", ["--password", "--verbose", "--database"])]) == ()
    assert output_secrets(f"mysql --password {PASSWORD} sales") == (PASSWORD,)


def test_placeholders_in_docs_are_no_credentials() -> None:
    """Review of atk20: ``curl -u username:password`` in a README hid the word ``password`` everywhere;
    ``Authorization: Bearer $API_TOKEN`` the variable's name; ``Authorization: required`` a word."""
    for text in ("curl -u username:password https://api", "curl -u USER:PASSWORD https://api",
                 "curl -H 'Authorization: Bearer $API_TOKEN' https://api", "Authorization: Bearer <your-token>",
                 "Authorization: Bearer {token}", "Authorization: required\n", "authorization: disabled\n",
                 "<password>${db.password}</password>", "mysqldump --password=$DB_PASSWORD sales"):
        assert output_secrets(text) == (), text
    assert output_secrets(f"curl -u ana:{PASSWORD} https://api") == (PASSWORD,)
    assert output_secrets(f"Authorization: {TOKEN}") == (TOKEN,)


def test_near_variants_of_an_element_and_a_spaced_flag_give_their_password() -> None:
    """Review of atk20: an element with attributes, a namespace or its value on a line of its own, and
    a flag's value two blanks on, were shown whole."""
    for text in (f"<password type='plain'>{PASSWORD}</password>", f"<db:password>{PASSWORD}</db:password>",
                 f"<password>\n    {PASSWORD}\n</password>", f"mysql --password  {PASSWORD} sales"):
        assert output_secrets(text) == (PASSWORD,), text


def test_a_password_starting_with_a_dollar_is_still_a_password() -> None:
    """Review of atk20: the placeholder rule (``$API_TOKEN``) must not take a real ``$ecret…`` password for one."""
    assert output_secrets("mysqldump --password=$ecretPass99 sales") == ("$ecretPass99",)


def test_an_argument_list_s_password_with_blanks_is_taken_whole() -> None:
    """Review of atk20: the list's items were joined by blanks, so a passphrase item gave its first word."""
    phrase = "correct horse battery staple"
    assert credential_variable_values([("cmd", ["mysql", "--password", phrase, "--user", "ana"])]) == (phrase,)
    assert credential_variable_values([("cmd", ["tool", "--password", "--verbose", "--token", "TOKEN"])]) == ()


def test_short_flag_colon_and_cdata_forms_give_their_credentials() -> None:
    """Attacker pass 21: mysql's ``-pSECRET``, curl's ``-uana:SECRET``, ``--password:SECRET`` and a
    CDATA section inside ``<password>`` were shown whole."""
    assert output_secrets(f"$ mysql -h db -u ana -p{PASSWORD} sales") == (PASSWORD,)
    assert output_secrets("mysqldump -uroot -p'correct horse battery' sales") == ("correct horse battery",)
    assert output_secrets(f"mariadb-dump -uroot -p\"{PASSWORD}\" sales") == (PASSWORD,)
    assert output_secrets(f"curl -uana:{PASSWORD} https://api.example.com") == (PASSWORD,)
    assert output_secrets(f"curl --user=ana:{PASSWORD} https://api.example.com") == (PASSWORD,)
    assert output_secrets(f"sqlcmd --password:{PASSWORD} --server db") == (PASSWORD,)
    assert output_secrets(f"<settings><password><![CDATA[{PASSWORD} x]]></password></settings>") == (f"{PASSWORD} x",)


def test_an_argument_list_s_short_flags_give_their_credentials() -> None:
    found = credential_variable_values([("dump", ["mysqldump", "-uroot", f"-p{PASSWORD}", "sales"]),
                                        ("fetch", ["curl", "-u", f"ana:{PASSWORD}x", "https://api.example.com"]),
                                        ("tool", ["sqlcmd", f"--password:{PASSWORD}y"])])
    assert found == (PASSWORD, f"{PASSWORD}x", f"{PASSWORD}y")


def test_ports_paths_and_other_tools_short_flags_give_nothing() -> None:
    for text in ("docker run -p13306:3306 mysql:8", "docker run -p127.0.0.1:3306:3306/tcp mysql", "mysql -p -h db sales",
                 "mysql -P33060 -pPASSWORD sales", "mysql -p$MYSQL_PWD sales", "gcc -pedantic -pthread x.c -lmysqlclient",
                 "ssh -p22222 ana@mysql-host", "mkdir -p /var/lib/mysql-files", "python -m pytest -p no:cacheprovider",
                 "curl -u ana https://x", "curl -url:https://example.com/a", "see --token: the token to use",
                 "<description><![CDATA[a long description of things]]></description>", "--output:results.csv",
                 "pgrep -fl postgres -pid12345678"):
        assert output_secrets(text) == (), text
    assert credential_variable_values([("run", ["docker", "run", "-p13306:3306", "mysql:8"]),
                                       ("mk", ["mkdir", "-p", "/var/lib/mysql"])]) == ()


def test_inline_settings_java_properties_and_single_dash_flags_give_their_credentials() -> None:
    """Attacker pass 21: an environment variable set inside a command line (after a prompt's ``$``,
    ``set``, ``docker run -e``), a flag's ``name=value`` (``--from-literal=password=…``, helm's
    ``--set auth.rootPassword=…``), Java's ``-D…Password=…``, keytool's ``-storepass …`` and openssl's
    ``-passout pass:…`` were shown whole."""
    for text in (f"$ PGPASSWORD={PASSWORD} psql -h db", f"set DB_PASSWORD={PASSWORD}",
                 f"docker run -e POSTGRES_PASSWORD={PASSWORD} postgres", f"(PGPASSWORD=\"{PASSWORD}\" pg_dump db)",
                 f"kubectl create secret generic db --from-literal=password={PASSWORD}",
                 f"helm install db --set auth.rootPassword={PASSWORD} bitnami/mysql",
                 f"java -Djavax.net.ssl.trustStorePassword={PASSWORD} -jar app.jar", f"keytool -list -storepass {PASSWORD}",
                 f"openssl pkcs12 -export -passout pass:{PASSWORD} -in cert.pem"):
        assert output_secrets(text) == (PASSWORD,), text


def test_inline_settings_that_name_no_credential_or_hold_code_give_nothing() -> None:
    for text in ("$ PATH=/usr/bin:/bin ls", "LANG=en_US.UTF-8 sort data.csv", "connect(host=h, password=cfg.password)",
                 "docker run -e POSTGRES_PASSWORD_FILE=/run/secrets/db postgres", "keytool -storepass PASSWORD -list",
                 "openssl enc -pass pass:$PASS -in a", "java -Dserver.port=8080 -Dspring.profiles.active=prod -jar a.jar",
                 "helm install --set replicas=3 --set image.tag=1.2.3", "gcc -pass-exit-codes x.c", "x -bypass everything",
                 "run with N_TOKENS=500000 python run.py", "make CFLAGS=-O2 all", "kubectl --from-literal=username=admin",
                 '#    export IBM_GUARDRAILS_AUTH_TOKEN="your-auth-token"', "$ export T=1 TOKEN=$(cli --raw cookie-get id)"):
        assert output_secrets(text) == (), text


def test_a_cell_s_shell_command_gives_its_inline_and_short_flag_credentials() -> None:
    """``!mysql -p…`` and ``!PGPASSWORD=… psql`` (IPython keeps them as ``get_ipython().system('…')``),
    ``subprocess.run("docker run -e …")``: the literal was read for flags only where it had ``--`` or ``-u``."""
    from nbagent.engine.credentials.kernel_secrets import code_secrets

    for code in (f"get_ipython().system('mysql -p{PASSWORD} sales')",
                 f"get_ipython().system('PGPASSWORD={PASSWORD} psql -h db')",
                 f"subprocess.run('docker run -e POSTGRES_PASSWORD={PASSWORD} postgres', shell=True)",
                 f"os.system('keytool -list -storepass {PASSWORD}')"):
        assert code_secrets(code) == (PASSWORD,), code
    assert code_secrets("df = pd.read_csv('tokens.csv'); key = 'category'") == ()


def test_commands_whose_short_flag_takes_the_next_word_and_netrc_entries_give_their_passwords() -> None:
    """``docker login -p …``, ``sshpass -p …``, ``mongosh -p …``, ``redis-cli -a …`` and a printed
    ``.netrc`` entry were shown whole (attacker pass 21)."""
    for text in (f"docker login -u ana -p {PASSWORD} registry.example.com", f'sshpass -p "{PASSWORD}" ssh ana@host',
                 f"redis-cli -h cache -a {PASSWORD} ping", f"mongosh -u ana -p {PASSWORD} --authenticationDatabase admin",
                 f"machine api.heroku.com login ana@example.com password {PASSWORD}",
                 f"machine git.example.com\n  login ana\n  password {PASSWORD}\n"):
        assert output_secrets(text) == (PASSWORD,), text
    for text in ("docker login -u ana -p $DOCKER_PASSWORD", "redis-cli -p 63790000 ping", "ssh -p 22222222 host",
                 "docker login --password-stdin -u ana", "sshpass -p PASSWORD ssh host",
                 "on this machine, enter your login password carefully", "docker run -p 127.0.0.1:8080:80 nginx login"):
        assert output_secrets(text) == (), text


def test_a_name_beside_its_value_gives_the_credential_it_names() -> None:
    """A Kubernetes/ECS environment entry (YAML, JSON, or loaded as a list of dicts), .NET's
    ``<add key="Password" value="…"/>``, Spring's ``<property name="password" value="…"/>`` and Java's
    ``<entry key="db.password">…</entry>`` name the credential by a ``name``/``key`` beside a ``value``
    (attacker pass 21: shown whole)."""
    for text in (f"env:\n  - name: POSTGRES_PASSWORD\n    value: \"{PASSWORD}\"\n  - name: PGDATA\n    value: /var/lib/pg",
                 f'{{"name": "DB_PASSWORD", "value": "{PASSWORD}"}}', f'<add key="Password" value="{PASSWORD}" />',
                 f'<property name="password" value="{PASSWORD}"/>', f'<entry key="db.password">{PASSWORD}</entry>'):
        assert output_secrets(text) == (PASSWORD,), text
    env = [{"name": "DB_HOST", "value": "db.internal"}, {"name": "DB_PASSWORD", "value": PASSWORD}]
    assert credential_variable_values([("manifest", {"spec": {"containers": [{"name": "app", "env": env}]}})]) == (PASSWORD,)
    for text in ("- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}",
                 '<add key="PageSize" value="25000000" />', '{"name": "token_limit", "value": "4096"}',
                 '<property name="passwordEncoder" ref="enc"/>', "   name  value  key\n0  alpha  0.123  k1"):
        assert output_secrets(text) == (), text
    assert credential_variable_values([("rows", [{"name": "token_limit", "value": "40960000"},
                                                 {"key": "color", "value": "blue-green-red"}])]) == ()
    # a form's fields name their labels and placeholders, not passwords
    assert credential_variable_values([("fields", [{"name": "password", "value": "Password"},
                                                   {"name": "api_token", "value": "<your token>"}])]) == ()


def test_a_form_field_whose_value_is_its_label_written_otherwise_gives_nothing() -> None:
    """Review of atk21: the form rule compared the value with the name letter for letter, so
    ``{"name": "db_password", "value": "DB Password"}`` (or ``"Password:"``) hid its label everywhere."""
    fields = [{"name": "db_password", "value": "DB Password"}, {"name": "new-password", "value": "New password"},
              {"name": "password", "value": "Password:"}]
    assert credential_variable_values([("fields", fields)]) == ()
    assert credential_variable_values([("env", [{"name": "DB_PASSWORD", "value": PASSWORD}])]) == (PASSWORD,)


def test_php_ruby_and_go_named_literals_give_their_values() -> None:
    """``'password' => '…'`` (a PHP config array, a Ruby hash) and Go's ``password := "…"`` were shown
    whole where ``password="…"`` was not (read_file of config.php, a printed hash)."""
    from nbagent.engine.credentials.kernel_secrets import code_secrets

    for text in (f"'password' => '{PASSWORD}',", f':password => "{PASSWORD}"', f'password := "{PASSWORD}"'):
        assert output_secrets(text) == (PASSWORD,) and code_secrets(text) == (PASSWORD,), text
    assert code_secrets('x = 1 if a >= b else 2\nlabel = "password"\nok = password == "letmein99"') == ()


def test_oracle_s_user_slash_password_gives_its_password() -> None:
    for text in (f"sqlplus scott/{PASSWORD}@orcl", f"$ sqlplus -S ana/{PASSWORD}@db.example.com:1521/ORCLPDB1 @report.sql",
                 f"expdp system/{PASSWORD}@xe directory=DP"):
        assert output_secrets(text) == (PASSWORD,), text
    for text in ("sqlplus / as sysdba", "sqlplus scott/$ORACLE_PWD@orcl", "sqlplus @script.sql",
                 "see sqlplus docs at https://docs.oracle.com/en/database/@x"):
        assert output_secrets(text) == (), text


def test_an_argument_list_of_a_command_whose_flag_takes_the_next_word_gives_it_whole() -> None:
    found = credential_variable_values([("ssh", ["sshpass", "-p", "correct horse battery", "ssh", "ana@host"]),
                                        ("login", ["docker", "login", "-u", "ana", "-p", PASSWORD, "registry"]),
                                        ("cache", ["redis-cli", "-p", "63790000", "-a", f"{PASSWORD}x", "ping"])])
    assert found == ("correct horse battery", PASSWORD, f"{PASSWORD}x")
    assert credential_variable_values([("plain", ["ssh", "-p", "22222222", "host"]),
                                       ("doc", ["sshpass", "-p", "PASSWORD", "ssh"])]) == ()


def test_cli_settings_vault_pairs_net_use_and_joined_login_flags_give_their_passwords() -> None:
    """``aws configure set aws_secret_access_key …``, ``vault kv put secret/db password=…``, Windows'
    ``net use … /user:ana …``, ``az login -p …``, ``sshpass -p…`` joined (attacker pass 21: shown whole)."""
    from nbagent.engine.credentials.kernel_secrets import code_secrets

    for text in (f"aws configure set aws_secret_access_key {PASSWORD}", f"vault kv put secret/db password={PASSWORD}",
                 f"net use Z: \\\\srv\\share /user:ana {PASSWORD}", f"az login -u ana@example.com -p {PASSWORD}",
                 f"sshpass -p{PASSWORD} ssh host", f"redis-cli -a{PASSWORD} ping"):
        assert output_secrets(text) == (PASSWORD,), text
    assert code_secrets(f"get_ipython().system('vault kv put secret/db password={PASSWORD}')") == (PASSWORD,)
    for text in ("aws configure set region eu-west-1234", "vault kv put secret/app replicas=30000000 owner=data-team-x",
                 "net use Z: \\\\srv\\share /user:ana *", "az login --use-device-code",
                 "vault kv put secret/db password=@password.txt"):
        assert output_secrets(text) == (), text


def test_a_value_cut_short_at_a_quote_or_an_attribute_outside_its_element_s_tag_gives_nothing() -> None:
    """Review of atk21: printed code ``key = "db_password"`` then ``value = os.environ['DB_PASSWORD']`` gave
    ``os.environ[``, hidden then wherever code named the environment; an element's ``key``/``name``
    counts only in its own opening tag (a ``data-key`` attribute, or another element's, is none)."""
    for text in ("key = 'db_password'\nvalue = os.environ['DB_PASSWORD']", 'name: "api_secret"\nvalue: secrets["api"]',
                 f'<div data-key="password">{PASSWORD}</div>', f'<a name="password"/><b>{PASSWORD}</b>'):
        assert output_secrets(text) == (), text
    for text in (f"key: db_password\nvalue: {PASSWORD}", f'<entry\n  key="db.password">{PASSWORD}</entry>',
                 f'<entry type="string" key="db.password">{PASSWORD}</entry>'):
        assert output_secrets(text) == (PASSWORD,), text


def test_an_aws_parameter_s_secure_string_and_a_capitalised_name_beside_its_value_give_the_credential() -> None:
    """Review of atk21: ``ssm.get_parameter(Name="/prod/db/password", WithDecryption=True)`` kept (or printed)
    gave its password to the model: no key names a credential; ``{"Name": "DB_PASSWORD", "Value": …}`` neither."""
    resp = {"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": PASSWORD, "Version": 3,
                          "ARN": "arn:aws:ssm:eu-west-1:123456789012:parameter/prod/db/password", "DataType": "text"}}
    assert credential_variable_values([("resp", resp)]) == (PASSWORD,)
    assert output_secrets(str(resp)) == (PASSWORD,) and output_secrets(json.dumps(resp, indent=2)) == (PASSWORD,)
    assert credential_variable_values([("env", [{"Name": "DB_PASSWORD", "Value": PASSWORD}])]) == (PASSWORD,)
    plain = {"Parameter": {"Name": "/prod/region", "Type": "String", "Value": "eu-west-1-central", "Version": 1}}
    tags = [{"Key": "Name", "Value": "web-server-prod"}, {"Key": "team", "Value": "data-science-core"}]
    assert credential_variable_values([("plain", plain), ("tags", tags)]) == () and output_secrets(str(plain)) == ()


def test_a_name_about_a_credential_beside_its_value_gives_nothing() -> None:
    """Review of atk21: a Kubernetes env entry or an XML key names a setting about a credential as often
    (``SECRET_NAME``: ``db-credentials``, ``PASSWORD_POLICY``, ``password_strength``, a ``password_hash``
    column's type): read as a settings table's key is, only a credential's own name gives its value."""
    manifest = ("env:\n  - name: SECRET_NAME\n    value: db-credentials\n  - name: PASSWORD_POLICY\n    value: strong-required\n"
                "  - name: SECRET_PROVIDER\n    value: aws-secrets-manager\n"
                f"  - name: DB_PASSWORD\n    value: {PASSWORD}\n")
    assert output_secrets(manifest) == (PASSWORD,)
    for text in ('<column name="password_hash">VARCHAR(255)</column>', '<add key="PasswordPolicy" value="strong-required"/>'):
        assert output_secrets(text) == (), text
    rows = [{"name": "password_strength", "value": "moderate-high"}, {"name": "SECRET_NAME", "value": "db-credentials"},
            {"key": "DbPassword", "value": PASSWORD}]
    assert credential_variable_values([("rows", rows)]) == (PASSWORD,)


def test_a_javascript_arrow_returning_a_text_gives_nothing() -> None:
    """Review of atk21: ``=>`` after a bare name read JavaScript's arrow as PHP's/Ruby's ``=>``, so a
    .js file's ``const check = secret => 'redacted-value-here'`` hid that text; Ruby's symbol still names one."""
    from nbagent.engine.credentials.kernel_secrets import code_secrets

    for text in ("const check = secret => 'redacted-value-here'", "rows.map(password => \"hidden-for-display\")"):
        assert code_secrets(text) == () and output_secrets(text) == (), text
    assert code_secrets(f':password => "{PASSWORD}"') == (PASSWORD,)


def test_another_command_s_short_flag_on_a_password_command_s_line_gives_nothing() -> None:
    """The ``-p`` of the command sshpass runs, of a command after ``&&``/``|``, or of a compose file
    named ``mongo.yml`` is a folder, a plugin or a project's name (review of attacker pass 21)."""
    for text in ("sshpass -f pw.txt ssh ana@host 'mkdir -p /srv/project/data'", "sshpass -e ssh host mkdir -p outputs2024",
                 "sshpass -e ssh host python -m pytest -p no:cacheprovider",
                 "docker login -u ana --password-stdin && docker compose -p analytics up -d",
                 "docker compose -f mongo.yml -p analytics up -d", "mongo --eval 'db.x.find()' && mkdir -p backups2024",
                 "redis-cli -h cache --scan --pattern 'user:*' | xargs -a keysfile rm"):
        assert output_secrets(text) == (), text
    assert credential_variable_values([("cmd", ["sshpass", "-e", "ssh", "host", "mkdir", "-p", "outputs2024"]),
                                       ("up", ["mongo", "--quiet", "&&", "mkdir", "-p", "backups2024"])]) == ()


def test_a_password_joined_to_its_short_flag_or_quoted_with_separators_is_taken() -> None:
    for text in (f"sshpass -p'{PASSWORD}' ssh host", f"mongosh -u ana -p{PASSWORD}", f"docker login -u ana -p{PASSWORD} reg.io"):
        assert output_secrets(text) == (PASSWORD,), text
    assert output_secrets("sshpass -p 'Zq7;Loud|Tiger&42' ssh host") == ("Zq7;Loud|Tiger&42",)
    assert credential_variable_values([("cmd", ["sshpass", f"-p{PASSWORD}", "ssh", "host", "mkdir", "-p", "outputs2024"])]) \
        == (PASSWORD,)
    assert credential_variable_values([("cmd", ["sshpass", f"-p{PASSWORD}", "mkdir", "-p", "outputs2024"])]) == (PASSWORD,)


def test_a_cell_s_arithmetic_is_not_read_as_a_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """``1-p``, ``y-pred``: a cell whose only ``-p`` is arithmetic is not tokenized for flags (5,000 such
    cells took 1.2 s at the first prompt, 0.24 s on main); a command's ``-p`` after a blank or a quote still is."""
    read: list[str] = []
    real = kernel_secrets._literals

    def literals(code: str) -> list[str]:
        read.append(code)
        return real(code)

    monkeypatch.setattr(kernel_secrets, "_literals", literals)
    arithmetic = "q = 1-p\nresid = y-pred\nloss = np.log(1-prob).mean()\n"
    assert kernel_secrets.code_secrets(arithmetic) == ()
    assert read == []
    for cell in (f"get_ipython().system('mysql -u ana -p{PASSWORD} sales')",
                 f'subprocess.run("sshpass -p{PASSWORD} ssh host", shell=True)'):
        assert kernel_secrets.code_secrets(cell) == (PASSWORD,), cell


def test_openssl_s_password_sources_are_no_password_and_quoted_values_are_taken_whole() -> None:
    """openssl's ``env:NAME``/``file:path``/``fd:N`` say where the password is (a path was redacted); a
    quoted value with a blank, ``PGPASSWORD='correct horse' psql``, gave nothing (review of attacker pass 21)."""
    for text in ("openssl enc -aes-256-cbc -pass env:ENCRYPTION_KEY -in a -out b", "openssl enc -pass file:/etc/secret.txt",
                 "openssl rsa -passin file:passphrase.txt -in key.pem", "openssl pkcs12 -passin env:P12_PASSWORD -in x"):
        assert output_secrets(text) == (), text
    for text in ("PGPASSWORD='correct horse battery' psql -h db", "openssl pkcs12 -passout 'pass:correct horse battery'",
                 "openssl pkcs12 -passout pass:'correct horse battery'", "keytool -list -storepass 'correct horse battery'"):
        assert output_secrets(text) == ("correct horse battery",), text
    assert credential_variable_values([("cmd", f"docker run -e 'POSTGRES_PASSWORD={PASSWORD}' postgres")]) == (PASSWORD,)


def test_prose_experiments_and_container_users_are_no_credentials() -> None:
    """A sentence naming a machine, a login and a password; an experiment's ``exp runs/baseline@…``; a
    container's ``-u www-data:www-data``; ``docker login --password-stdin registry`` (review of attacker pass 21)."""
    for text in ("the machine learning login form password validation", "exp runs/baseline@2024-01-01",
                 "exp model/resnet50@imagenet", "docker run -u www-data:www-data nginx",
                 "docker exec --user postgres:postgres db psql", "docker run --user=jovyan:users-group img",
                 "echo ok && docker run -u analytics:analytics img", "docker login -u ana --password-stdin registry"):
        assert output_secrets(text) == (), text
    assert credential_variable_values([("cmd", ["docker", "run", "--user=jovyan:users-group", "img"]),
                                       ("run", ["docker", "run", "-u", "analytics:staffgroup", "img"])]) == ()
    for text in (f"exp scott/{PASSWORD}@orcl file=sales.dmp tables=orders", f"curl -u ana:{PASSWORD} https://api.example.com",
                 f"  machine api.example.com login ana password {PASSWORD}",
                 f"print('machine h\\n login ana\\n password {PASSWORD}')"):
        assert output_secrets(text) == (PASSWORD,), text


def test_a_command_line_written_as_a_list_in_a_cell_or_a_printed_error_gives_its_password() -> None:
    """``subprocess.run(["sshpass", "-p", "…", "ssh", host])`` in a cell, and ``CalledProcessError``'s
    ``Command '['mysqldump', '--password', '…']'``, reached the model whole: each literal was read alone
    (review of attacker pass 21)."""
    for cell in (f'subprocess.run(["sshpass", "-p", "{PASSWORD}", "ssh", host])',
                 f'subprocess.run(["docker", "login", "-u", user, "-p", "{PASSWORD}", "reg.io"], check=True)',
                 f'subprocess.run(["redis-cli", "-a", "{PASSWORD}", "ping"])', f'run(["mysql", "-uana", "-p{PASSWORD}"])',
                 f'subprocess.run(["sqlplus", "-S", "scott/{PASSWORD}@orcl"])',
                 f'subprocess.run([\n    "keytool", "-list",\n    "-storepass", "{PASSWORD}",\n])',
                 f"Command '['mysqldump', '--password', '{PASSWORD}', 'sales']' returned non-zero exit status 2."):
        assert output_secrets(cell) == (PASSWORD,), cell
    for cell in ('subprocess.run(["mkdir", "-p", "outputs2024"])', 'run(["python", "-m", "pytest", "-p", "no:cacheprovider"])',
                 'run(["docker", "run", "-p", "8888:8888", "jupyter/scipy-notebook"])',
                 'run(["git", "commit", "-m", "fix the password reset flow"])', 'cols = ["password_reset", "-", "sessions"]',
                 'run(["docker", "login", "-u", "ana", "--password-stdin", "registry.example.com"], input=pw)'):
        assert output_secrets(cell) == (), cell


def test_a_variable_s_argument_list_gives_keytool_openssl_java_and_oracle_passwords() -> None:
    assert credential_variable_values([("a", ["sqlplus", f"scott/{PASSWORD}@orcl"]),
                                       ("b", ["keytool", "-list", "-storepass", f"{PASSWORD}b"]),
                                       ("c", ["openssl", "pkcs12", "-passout", f"pass:{PASSWORD}c"]),
                                       ("d", ["java", f"-Djavax.net.ssl.keyStorePassword={PASSWORD}d", "-jar", "a.jar"])]) \
        == (PASSWORD, f"{PASSWORD}b", f"{PASSWORD}c", f"{PASSWORD}d")
    assert credential_variable_values([("e", ["openssl", "enc", "-pass", "env:ENCRYPTION_KEY"]),
                                       ("f", ["sqlplus", "-S", "/nolog", "@report.sql"])]) == ()


def test_an_inline_setting_ends_before_the_next_command_s_ampersands() -> None:
    for text in (f"$ PGPASSWORD={PASSWORD}&&psql -h db", f"$ PGPASSWORD={PASSWORD}& psql -h db"):
        assert output_secrets(text) == (PASSWORD,), text
    assert output_secrets("$ DB_PASSWORD=Tr0ub4dor&3x psql") == ("Tr0ub4dor&3x",)


def test_a_mysql_line_s_password_is_found_after_other_lines_and_words_naming_mysql() -> None:
    text = (f"linking -lmysqlclient -pthread\nMySQL 8.0 ready; mysql -u ana -p{PASSWORD} sales\n"
            f"mariadb-dump -p'{PASSWORD}x' db > x.sql")
    assert sorted(output_secrets(text)) == sorted((PASSWORD, f"{PASSWORD}x"))


def test_redis_cli_s_long_password_flag_gives_its_password() -> None:
    assert output_secrets(f"redis-cli -h cache --pass {PASSWORD} ping") == (PASSWORD,)
    assert output_secrets("redis-cli -h cache --pass $REDIS_PASSWORD ping") == ()
    assert output_secrets("gcc --pass-exit-codes --passthrough12 x.c") == ()


def test_a_command_continued_on_the_next_line_gives_its_password() -> None:
    """A script's ``mysql -h db \\`` / ``  -p… sales`` (printed by ``!cat deploy.sh``), and a ``%%bash`` cell,
    which IPython keeps as one literal with ``\\n`` in it, gave nothing or ``…\\npsql`` (review of attacker pass 21)."""
    for text in (f"mysql -h db \\\n  -u ana \\\n  -p{PASSWORD} sales", f"sshpass \\\n  -p {PASSWORD} ssh host"):
        assert output_secrets(text) == (PASSWORD,), text
    for cell in (f"get_ipython().run_cell_magic('bash', '', 'mysql -h db \\\\\\n-p{PASSWORD} sales\\n')\n",
                 f"get_ipython().run_cell_magic('bash', '', 'export PGPASSWORD={PASSWORD}\\npsql -h db\\n')\n"):
        assert kernel_secrets.code_secrets(cell) == (PASSWORD,), cell
    assert kernel_secrets.code_secrets("get_ipython().run_cell_magic('bash', '', 'mkdir -p outputs2024\\n')\n") == ()


def test_code_between_two_quoted_literals_is_no_quoted_value() -> None:
    for text in ('print("DB_PASSWORD=" + masked + " set")', 'echo AUTH_TOKEN=" $TOKEN "',
                 "keytool -storepass ' + pw + ' -list"):
        assert credential_variable_values([("line", text)]) == (), text


def test_rman_s_target_gives_its_password() -> None:
    assert output_secrets(f"rman target sys/{PASSWORD}@orcl") == (PASSWORD,)
    assert output_secrets("rman target / nocatalog") == ()


def test_cloud_logins_beeline_and_sql_server_tools_give_their_passwords() -> None:
    """``az``/``oc``/``helm registry`` ``login … -p …``, Hive's ``beeline … -p …`` and SQL Server's ``sqlcmd``/``bcp``
    ``-P …`` were shown whole: near variants of ``docker login -p`` (review of attacker pass 21)."""
    for text in (f"az login -u ana@corp.com -p {PASSWORD}", f"oc login https://api.cluster:6443 -u ana -p {PASSWORD}",
                 f"helm registry login reg.io -u ana -p {PASSWORD}", f'beeline -u "jdbc:hive2://h:10000/db" -n ana -p {PASSWORD}',
                 f'sqlcmd -S db.corp -U sa -P {PASSWORD} -Q "select 1"',
                 f'bcp dbo.sales out s.dat -S srv -U sa -P "{PASSWORD}" -c'):
        assert output_secrets(text) == (PASSWORD,), text
    for text in ('sqlcmd -S db -E -p -Q "select 1"', "sqlcmd -S db -U sa -P $SA_PASSWORD",
                 "az login --service-principal -u http://app -p ./cert.pem --tenant t", "cf login -a https://api.run.pivotal.io"):
        assert output_secrets(text) == (), text
    assert credential_variable_values([("cmd", ["sqlcmd", "-S", "db", "-U", "sa", "-P", PASSWORD])]) == (PASSWORD,)


def test_a_cell_running_oracle_s_tools_or_writing_a_netrc_entry_gives_its_password() -> None:
    """``!sqlplus scott/…@orcl`` (no flag, no credential's word) and ``!echo "machine … password …" >> ~/.netrc``
    kept the password in the cell's code (review of attacker pass 21)."""
    for cell in (f"get_ipython().system('sqlplus scott/{PASSWORD}@orcl @report.sql')",
                 f"get_ipython().system('rman target sys/{PASSWORD}@orcl')",
                 f"get_ipython().system('sqlcmd -S db -U sa -P {PASSWORD} -i load.sql')",
                 f"get_ipython().system('echo \"machine api.example.com login ana password {PASSWORD}\" >> ~/.netrc')"):
        assert kernel_secrets.code_secrets(cell) == (PASSWORD,), cell
    assert kernel_secrets.code_secrets("get_ipython().system('sqlplus -S /nolog @report.sql')") == ()


def test_a_saved_cell_s_shell_commands_give_their_passwords() -> None:
    """A notebook's saved source keeps ``!mysql -p…``, ``out = !sqlcmd … -P …`` and a ``%%bash`` body as
    they are (no literal until IPython runs the cell): they gave nothing (review of attacker pass 21)."""
    for cell in (f"!mysql -u ana -p{PASSWORD} sales", f"import os\n!sshpass -p {PASSWORD} ssh host",
                 f"%%bash\nmysql -u ana -p{PASSWORD} sales\n", f"!PGPASSWORD={PASSWORD} psql -h db",
                 f"!mysql --password={PASSWORD} sales", f"out = !sqlcmd -S db -U sa -P {PASSWORD} -Q x"):
        assert kernel_secrets.code_secrets(cell) == (PASSWORD,), cell
    for cell in ("%%bash\nmkdir -p outputs2024\n", "!mkdir -p outputs2024", "x = 1 != 2\ny = '-p'"):
        assert kernel_secrets.code_secrets(cell) == (), cell
