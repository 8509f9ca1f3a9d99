# Two set-up commands (see README): `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.nbagent-installed

.PHONY: demo readme-screenshot test test-all e2e bench lab kernel clean frontend test-frontend

# labextension/package.json names the current build: a rebuilt front-end is installed again.
$(STAMP): pyproject.toml labextension/package.json
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,notebooks,gateway,ray]'  # notebooks: matplotlib, so the demo can plot; gateway: the LiteLLM proxy the tests start; ray: the fleet test on a local Ray instance
	touch $(STAMP)

kernel: $(STAMP)
	$(PY) -m nbagent.kernel install --sys-prefix

demo: kernel
	$(PY) -m nbagent.demo
	rm -rf build/demo && mkdir -p build/demo  # a fresh folder: its .nbagent/ record would replay the next demo
	$(PY) -m nbagent.notebook.autorun notebooks/01_quickstart.ipynb build/01_quickstart.ipynb --html build/01_quickstart.html --cwd build/demo
	@echo "The executed notebook: build/01_quickstart.ipynb (and .html). To run the notebooks yourself: make lab   (JupyterLab on notebooks/, kernel: Python 3 (nbagent))"

# The README's screenshot is the static HTML `make demo` writes (headless Chromium, /usr/bin/chromium).
readme-screenshot: demo
	$(PY) docs/img/readme_screenshot.py build/01_quickstart.html docs/img/agent_cells.png

# pytest rewrites every test module's asserts at each run unless it may keep the result in __pycache__:
# where PYTHONDONTWRITEBYTECODE is set (this project's machines) that was ~10 s of every collection,
# the soak run's included.
TEST_ENV = env -u PYTHONDONTWRITEBYTECODE

test: $(STAMP) test-frontend
	$(PY) -m ruff check nbagent tests bench
	$(PY) -m mypy
	$(TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadscope --durations=25  # two workers: see tests/conftest.py
	$(TEST_ENV) $(PY) -m pytest -q --soak -m soak --durations=10

# The front-end bridge's unit tests (node's test runner, against a real @jupyter/ydoc notebook model):
# run where node >= 20 and npm exist (npm ci on first use or after the lockfile changed), skipped
# with one line where they do not. Users and pip never need node.
NODE_OK := $(shell node -e 'process.exit(parseInt(process.versions.node) < 20 ? 1 : 0)' 2>/dev/null && command -v npm >/dev/null 2>&1 && echo yes)
FRONTEND_DEPS := frontend/node_modules/.nbagent-installed

$(FRONTEND_DEPS): frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $(FRONTEND_DEPS)

ifeq ($(NODE_OK),yes)
test-frontend: $(FRONTEND_DEPS)
	cd frontend && npm test
else
test-frontend:
	@echo "front-end unit tests skipped: they need node >= 20 and npm (see docs/notebook-bridge.md)"
endif

bench: $(STAMP)
	for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lab: kernel
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

# Rebuilds the committed front-end bridge (labextension/) from frontend/: needs node and npm, which
# users and CI do not (pip installs the committed build). Against the installed JupyterLab's core.
frontend: $(STAMP) $(FRONTEND_DEPS)
	cd frontend && JUPYTERLAB_CORE="$$($(abspath $(PY)) -c 'import jupyterlab, pathlib; print(pathlib.Path(jupyterlab.__file__).parent / "staging")')" npm run build
	cp frontend/install.json labextension/install.json
	$(PY) frontend/stamp.py write
	$(PY) -m pip install --quiet --no-deps -e .  # editable installs copy shared data: copy the new build in
	touch $(STAMP)

clean:
	rm -rf build .pytest_cache .hypothesis
