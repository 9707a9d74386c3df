#!/usr/bin/env python3
"""cli_test.py: end-to-end tests of the `sluice` client verbs against the real hub, with a
pseudo-terminal where a terminal matters (Ctrl-C during `send`, `tail`'s readable form).

Env: SLUICE_BINARY (the sluice executable). Run: python3 tests/e2e/cli_test.py [-v] [Test.name]
Each test starts its own `sluice serve` on 127.0.0.1:0 and stops every process it started.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

BINARY = os.environ.get("SLUICE_BINARY", "")
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_AGENT = os.path.join(HERE, "..", "support", "fake_agent.py")
# A scripted provider that talks until stopped: a turn to interrupt.
SLOW_SCRIPT = {"model": "scripted-slow", "delay_ms": 40, "chunk_bytes": 24,
               "rounds": [{"events": [{"text": "Sentence after sentence. ", "repeat": -1}]}]}


class Hub:
    """One `sluice serve` on a temp data dir (no token unless given one)."""

    def __init__(self, *extra, token=None):
        self.dir = tempfile.mkdtemp(prefix="sluice-cli-")
        self.data = os.path.join(self.dir, "data")
        args = [BINARY, "serve", "--listen", "127.0.0.1:0", "--data", self.data, "--provider", "scripted"]
        args += ["--token", token] if token else ["--no-token"]
        self.proc = subprocess.Popen(args + list(extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.base = None
        deadline = time.time() + 20
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            m = re.search(r"listening on (http://[^\s/]+)", line or "")
            if m:
                self.base = m.group(1)
                break
            if not line and self.proc.poll() is not None:
                break
        if not self.base:
            self.stop()
            raise RuntimeError("sluice serve did not start")

    def api(self, method, path, body=None):
        req = urllib.request.Request(self.base + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"} if body is not None else {})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def cli(self, *args, cwd=None, timeout=30):
        """Runs `sluice ARGS --hub BASE` without a terminal: (status, stdout, stderr)."""
        r = subprocess.run([BINARY, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "SLUICE_HUB": self.base})
        return r.returncode, r.stdout, r.stderr

    def state(self, seat):
        return self.api("GET", "/v1/seats/" + seat)[1]["state"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Pty:
    """`sluice ARGS` on a pseudo-terminal (stdin and stdout a TTY); reads what it writes."""

    def __init__(self, hub, *args):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ["SLUICE_HUB"] = hub.base
            os.execv(BINARY, [BINARY, *args])
        self.out = b""

    def read_until(self, pattern, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if re.search(pattern, self.out.decode(errors="replace")):
                return True
            r, _, _ = select.select([self.fd], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self.out += chunk
        return bool(re.search(pattern, self.out.decode(errors="replace")))

    def ctrl_c(self):
        os.write(self.fd, b"\x03")  # the terminal sends SIGINT to the foreground process

    def wait(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.read_until(r"\Z^", 0.2)  # drain
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError("still running: " + self.out.decode(errors="replace")[-2000:])

    def text(self):
        return self.out.decode(errors="replace")


def until(fn, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if fn():
            return True
        time.sleep(0.1)
    return False


def slow_hub(tmp):
    script = os.path.join(tmp, "slow.json")
    with open(script, "w") as f:
        json.dump(SLOW_SCRIPT, f)
    return Hub("--script", script)


class Terminal(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sluice-cli-t-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_ctrl_c_during_send_stops_the_turn_and_waits_then_a_second_detaches(self):
        hub = slow_hub(self.tmp)
        try:
            seat = hub.api("POST", "/v1/seats", {"name": "ctrl-c"})[1]["seat"]
            p = Pty(hub, "send", seat, "talk")
            self.assertTrue(p.read_until(r"Sentence after sentence"), p.text())
            p.ctrl_c()
            # The first Ctrl-C stops the turn on the hub, and send waits for its end.
            self.assertEqual(p.wait(), 130, p.text())
            self.assertIn("stopping the turn", p.text())
            # It waited for the end, and says how the turn ended.
            self.assertRegex(p.text(), r"stopping the turn[\s\S]*turn cancelled")
            self.assertEqual(hub.state(seat), "idle", "the turn does not go on running")
            hist = hub.api("GET", "/v1/seats/%s/history" % seat)[1]
            results = [f for t in hist["turns"] for f in t["frames"] if f.get("type") == "result"]
            self.assertTrue(str(results[-1].get("result", "")).startswith("cancelled"), results[-1])

        finally:
            hub.stop()
        # A second Ctrl-C while the stop is not through (an agent that ignores the interrupt
        # until the hub's grace ends it) detaches, and says how to stop the turn.
        hub = Hub("--agent-cmd", "python3 %s --ignore-interrupt" % FAKE_AGENT)
        try:
            seat = hub.api("POST", "/v1/seats", {"name": "stubborn", "agent": "process"})[1]["seat"]
            p = Pty(hub, "send", seat, "hang")
            self.assertTrue(until(lambda: hub.state(seat) == "running"), p.text())
            time.sleep(0.5)
            p.ctrl_c()
            self.assertTrue(p.read_until(r"stopping the turn"), p.text())
            time.sleep(0.3)
            p.ctrl_c()
            self.assertEqual(p.wait(), 130, p.text())
            self.assertRegex(p.text(), r"detached: the turn goes on on the hub; stop it with: sluice cancel " + seat)
        finally:
            hub.stop()

    def test_ctrl_c_at_the_permission_prompt_stops_the_turn_without_an_answer(self):
        tmp, hub = claude_hub()
        try:
            seat = hub.api("POST", "/v1/seats", {"name": "asks", "agent": "claude"})[1]["seat"]
            p = Pty(hub, "send", seat, "permission")
            self.assertTrue(p.read_until(r"allow\? \[y/N\]"), p.text())
            # The command that answers it from elsewhere is on the screen.
            self.assertRegex(p.text(), r"sluice approve %s \S+" % seat)
            p.ctrl_c()
            # The y/N wait ends at the Ctrl-C: the turn is stopped (the prompt withdrawn), and
            # send reports it and exits 130, with no answer given.
            self.assertEqual(p.wait(), 130, p.text())
            self.assertIn("turn cancelled", p.text())
            self.assertEqual(hub.state(seat), "idle")
            hist = hub.api("GET", "/v1/seats/%s/history" % seat)[1]
            resolved = [f for t in hist["turns"] for f in t["frames"]
                        if f.get("subtype") == "permission_resolved"]
            self.assertTrue(all(f.get("by") != "cli" for f in resolved), resolved)
        finally:
            hub.stop()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_an_answer_from_another_screen_ends_the_y_n_wait(self):
        tmp, hub = claude_hub()
        try:
            seat = hub.api("POST", "/v1/seats", {"name": "asks", "agent": "claude"})[1]["seat"]
            p = Pty(hub, "send", seat, "permission")
            self.assertTrue(p.read_until(r"allow\? \[y/N\]"), p.text())
            pending = hub.api("GET", "/v1/seats/%s/permissions" % seat)[1]["permissions"]
            self.assertEqual(len(pending), 1, pending)
            # Answered on the page while send waits at y/N: the wait ends without Enter, send
            # says who answered, and the turn runs to its end.
            st, body = hub.api("POST", "/v1/seats/%s/permissions/%s" % (seat, pending[0]["request_id"]),
                               {"behavior": "allow", "by": "page"})
            self.assertEqual(st, 200, body)
            self.assertTrue(p.read_until(r"permission allow by page"), p.text())
            self.assertEqual(p.wait(), 0, p.text())
            self.assertEqual(hub.state(seat), "idle")
        finally:
            hub.stop()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_tail_previews_are_readable_on_a_terminal(self):
        hub = slow_hub(self.tmp)
        try:
            seat = hub.api("POST", "/v1/seats", {"name": "tail-previews"})[1]["seat"]
            p = Pty(hub, "tail", "--previews", seat)
            # Following before the turn starts (an empty seat prints nothing: ask the hub).
            self.assertTrue(until(lambda: hub.api("GET", "/v1/seats/" + seat)[1]["subscribers"] == 1))
            self.assertEqual(hub.api("POST", "/v1/seats/%s/messages" % seat, {"text": "talk"})[0], 202)
            # The answer as it streams: previews (the turn's frame comes only at its end).
            self.assertTrue(p.read_until(r"Sentence after sentence\. Sentence after"), p.text())
            self.assertRegex(p.text(), r"— turn \d+ started")
            hub.api("POST", "/v1/seats/%s/cancel" % seat, {})
            self.assertTrue(p.read_until(r"turn ended: cancelled"), p.text())
            self.assertNotIn('{"event"', p.text(), "no JSON on a terminal")
            self.assertNotIn('"kind"', p.text())
            os.kill(p.pid, signal.SIGTERM)
            p.wait()
        finally:
            hub.stop()

    def test_tail_is_readable_on_a_terminal_and_json_otherwise(self):
        hub = Hub("--pace", "0")
        try:
            seat = hub.api("POST", "/v1/seats", {"name": "tail"})[1]["seat"]
            status, out, err = hub.cli("send", seat, "hello there")
            self.assertEqual(status, 0, err)
            p = Pty(hub, "tail", seat)
            self.assertTrue(p.read_until(r"turn ended"), p.text())
            shown = p.text()
            self.assertIn("> hello there", shown)
            self.assertNotIn('{"type"', shown, "no raw JSON on a terminal")
            os.kill(p.pid, signal.SIGTERM)
            p.wait()
            # --json on a terminal: rows.
            p = Pty(hub, "tail", seat, "--json")
            self.assertTrue(p.read_until(r'"type":"result"'), p.text())
            os.kill(p.pid, signal.SIGTERM)
            p.wait()
            # send --json: the turn's rows, for a script.
            status, out, err = hub.cli("send", "--json", seat, "and again")
            self.assertEqual(status, 0, err)
            rows = [json.loads(line) for line in out.splitlines() if line.strip()]
            self.assertEqual(rows[-1]["type"], "result", out)
        finally:
            hub.stop()


def claude_hub(*extra):
    """A hub whose claude is the stand-in agent (tests/support/fake_agent.py): (tmp, hub)."""
    tmp = tempfile.mkdtemp(prefix="sluice-cli-c-")
    claude = os.path.join(tmp, "claude")
    with open(claude, "w") as f:
        f.write("#!/bin/sh\nexec python3 '%s' \"$@\"\n" % FAKE_AGENT)
    os.chmod(claude, 0o755)
    return tmp, Hub("--claude-bin", claude, *extra)


def session_rows(first, count, pad=3000):
    """`count` turns of a Claude Code session file (a prompt, a long answer), numbered from `first`."""
    out = ""
    for i in range(first, first + count):
        out += json.dumps({"type": "user", "cwd": "/w/proj", "sessionId": "s",
                           "message": {"role": "user", "content": "prompt %d" % i}}) + "\n"
        out += json.dumps({"type": "assistant", "message": {
            "role": "assistant", "content": [{"type": "text", "text": "x" * pad}]}}) + "\n"
    return out


class Verbs(unittest.TestCase):
    def test_send_json_and_a_script_see_the_command_that_answers_a_prompt(self):
        tmp, hub = claude_hub()
        try:
            seat = hub.api("POST", "/v1/seats", {"name": "script", "agent": "claude"})[1]["seat"]
            status, out, err = hub.cli("send", "--json", seat, "permission")
            self.assertEqual(status, 3, err)
            rows = [json.loads(line) for line in out.splitlines() if line.strip()]
            ask = rows[-1]
            self.assertEqual(ask.get("subtype"), "permission_request", out)
            # stdout is the script's (rows); a person sees on stderr what answers the prompt.
            self.assertIn("sluice approve %s %s" % (seat, ask["request_id"]), err)
            status, out, err = hub.cli("approve", seat, ask["request_id"])
            self.assertEqual(status, 0, err)
            self.assertTrue(until(lambda: hub.state(seat) == "idle"))
            # Without --json and no terminal: the id on stdout, the command on stderr.
            status, out, err = hub.cli("send", seat, "permission")
            self.assertEqual(status, 3, err)
            rid = out.strip().splitlines()[-1]
            self.assertIn("sluice approve %s %s" % (seat, rid), err)
            self.assertEqual(hub.cli("deny", seat, rid)[0], 0)
        finally:
            hub.stop()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_seats_shows_the_turns_of_sessions_not_opened(self):
        tmp = tempfile.mkdtemp(prefix="sluice-cli-s-")
        projects = os.path.join(tmp, "projects")
        os.makedirs(os.path.join(projects, "-w-proj"))
        sid = "6a1c2e4b-3d5f-4a7b-8c9d-0e1f2a3b4c5d"
        file = os.path.join(projects, "-w-proj", sid + ".jsonl")
        with open(file, "w") as f:
            f.write(session_rows(0, 30))  # ~90 KiB: more than a listing's head and tail
        self.assertGreater(os.path.getsize(file), 48 * 1024)
        hub = Hub("--claude-projects", projects)
        try:
            def turns_shown():
                status, out, err = hub.cli("seats")
                self.assertEqual(status, 0, err)
                lines = out.splitlines()
                end = lines[0].index("TURNS") + len("TURNS")  # right-aligned under its header
                row = next(l for l in lines if l.startswith("c-" + sid))
                return row[end - 6:end].strip()
            self.assertEqual(turns_shown(), "30")
            listed = {x["id"]: x for x in hub.api("GET", "/v1/seats")[1]["seats"]}
            self.assertEqual(listed["c-" + sid]["turns"], 30)
            # It grows (Claude Code appends): counted from what was appended, still unopened.
            with open(file, "a") as f:
                f.write(session_rows(30, 2))
            self.assertTrue(until(lambda: turns_shown() == "32", 10), turns_shown())
        finally:
            hub.stop()
            shutil.rmtree(tmp, ignore_errors=True)


    def test_rename_set_and_seats_columns(self):
        tmp = tempfile.mkdtemp(prefix="sluice-cli-v-")
        claude = os.path.join(tmp, "claude")
        with open(claude, "w") as f:
            f.write("#!/bin/sh\nexec python3 '%s' \"$@\"\n" % FAKE_AGENT)
        os.chmod(claude, 0o755)
        root = os.path.join(tmp, "root")
        os.makedirs(os.path.join(root, "proj"))
        hub = Hub("--claude-bin", claude, "--workspace-root", root)
        try:
            # new --cwd relative: taken from the shell's folder, not the hub's root.
            status, out, err = hub.cli("new", "--agent", "claude", "--cwd", "proj", "work", cwd=root)
            self.assertEqual(status, 0, err)
            seat = out.strip()
            meta = json.load(open(os.path.join(hub.data, "seats", seat, "meta.json")))
            self.assertEqual(os.path.realpath(meta["cwd"]), os.path.realpath(os.path.join(root, "proj")))
            status, out, err = hub.cli("new", "--agent", "claude", "--cwd", "proj", "elsewhere", cwd=tmp)
            self.assertNotEqual(status, 0, "tmp/proj does not exist: refused")
            self.assertIn(os.path.join(tmp, "proj"), err)

            status, out, err = hub.cli("rename", seat, "renamed work")
            self.assertEqual(status, 0, err)
            self.assertEqual(hub.api("GET", "/v1/seats/" + seat)[1]["name"], "renamed work")
            status, out, err = hub.cli("set", seat, "--mode", "plan", "--model", "fake-2")
            self.assertEqual(status, 0, err)
            self.assertIn("mode plan", out)
            s = hub.api("GET", "/v1/seats/" + seat)[1]
            self.assertEqual((s["permission_mode"], s["model"]), ("plan", "fake-2"))
            status, out, err = hub.cli("set", seat, "--mode", "yolo")
            self.assertNotEqual(status, 0)
            self.assertIn("must be one of", err)
            self.assertEqual(hub.cli("set", seat)[0], 2, "nothing to set is a usage error")

            status, out, err = hub.cli("seats")
            self.assertEqual(status, 0, err)
            header, row = out.splitlines()[0], next(l for l in out.splitlines() if l.startswith(seat))
            for col in ("SEAT", "SOURCE", "AGENT", "STATE", "TURNS", "FRAMES", "PROJECT", "NAME"):
                self.assertIn(col, header)
            self.assertEqual(header.index("SOURCE"), 39, "SEAT is 38 wide: a session's c-<uuid> fits")
            self.assertEqual(row[39:45].strip(), "hub")
            self.assertTrue(row.endswith("renamed work"), row)

            status, out, err = hub.cli("rm", seat)
            self.assertEqual(status, 0, err)
            self.assertEqual(hub.api("GET", "/v1/seats/" + seat)[0], 404)
        finally:
            hub.stop()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_new_claude_without_its_executable_is_refused_at_creation(self):
        hub = Hub("--claude-bin", "/nonexistent/claude")
        try:
            status, out, err = hub.cli("new", "--agent", "claude")
            self.assertNotEqual(status, 0)
            self.assertIn("/nonexistent/claude is not an executable file", err)
            self.assertEqual(hub.api("GET", "/v1/seats")[1]["seats"], [], "no seat made")
        finally:
            hub.stop()

    def test_usage_and_the_seats_cost_column(self):
        tmp = tempfile.mkdtemp(prefix="sluice-cli-prices-")
        prices = os.path.join(tmp, "prices.json")
        with open(prices, "w") as f:
            json.dump({"date": "2026-12-05", "source": "a test", "models": {"scripted-demo": {
                "input_cost_per_token": 0.001, "output_cost_per_token": 0.01}}}, f)
        hub = Hub("--pace", "0", "--prices", prices)
        try:
            priced = hub.api("POST", "/v1/seats", {"name": "priced"})[1]["seat"]
            idle = hub.api("POST", "/v1/seats", {"name": "idle"})[1]["seat"]
            status, out, err = hub.cli("send", priced, "hello")
            self.assertEqual(status, 0, err)
            # The built-in script's two rounds: 330 tokens in at $0.001, 112 out at $0.01.
            deadline = time.time() + 10
            while time.time() < deadline:
                status, out, err = hub.cli("usage")
                if priced in out:
                    break
                time.sleep(0.1)
            self.assertEqual(status, 0, err)
            row = next(l for l in out.splitlines() if l.startswith(priced)).split()
            self.assertEqual(row[1:], ["330", "112", "0", "0", "1.45"], out)
            self.assertIn("prices of 2026-12-05", out)
            self.assertEqual(hub.cli("usage", "--by", "model")[1].splitlines()[1].split()[0], "scripted-demo")
            self.assertEqual(hub.cli("usage", "--by", "nonsense")[0], 2, "an unknown grouping is a usage error")
            status, out, err = hub.cli("seats")
            self.assertEqual(status, 0, err)
            lines = out.splitlines()
            end = lines[0].index("COST") + len("COST")  # right-aligned under its header
            cost = {l.split()[0]: l[end - 9:end].strip() for l in lines[1:] if l.strip()}
            self.assertEqual(cost[priced], "$1.45", out)
            self.assertEqual(cost[idle], "-", "a seat that used nothing costs nothing shown")
        finally:
            hub.stop()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_usage_words_tokens_and_help(self):
        r = subprocess.run([BINARY, "nonsense"], capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown subcommand 'nonsense'", r.stderr)
        r = subprocess.run([BINARY, "send", "--help"], capture_output=True, text=True, timeout=10)
        self.assertRegex(r.stdout, r"3 stopped at a permission prompt")
        self.assertIn("Ctrl-C", r.stdout)
        self.assertIn("sluice cancel SEAT", r.stdout)
        self.assertIn("sluice approve SEAT REQUEST", r.stdout)
        r = subprocess.run([BINARY, "--help"], capture_output=True, text=True, timeout=10)
        self.assertRegex(r.stdout, r"Exit status: 0 done; 1 failed")
        self.assertRegex(r.stdout, r"3 stopped at a permission prompt")
        r = subprocess.run([BINARY, "serve", "--help"], capture_output=True, text=True, timeout=10)
        self.assertNotIn("Exit status", r.stdout, "the footer is the top level's, not inherited")
        hub = Hub(token="right-token")
        try:
            status, out, err = hub.cli("seats", "--token", "wrong")
            self.assertNotEqual(status, 0)
            self.assertIn("401", err)
            self.assertNotIn("pass --token", err, "a token was passed: no hint to pass one")
        finally:
            hub.stop()
        data = tempfile.mkdtemp(prefix="sluice-cli-tok-")
        try:
            r = subprocess.run([BINARY, "token", "new", "--data", data], capture_output=True, text=True, timeout=10)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([BINARY, "token", "list", "--data", data], capture_output=True, text=True, timeout=10)
            self.assertNotIn("never", r.stdout, "a new link expires (24 h) unless told otherwise: " + r.stdout)
            r = subprocess.run([BINARY, "token", "new", "--expires", "never", "--data", data], capture_output=True, text=True, timeout=10)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([BINARY, "token", "list", "--data", data], capture_output=True, text=True, timeout=10)
            self.assertIn("never", r.stdout)
            r = subprocess.run([BINARY, "token", "new", "--help"], capture_output=True, text=True, timeout=10)
            self.assertIn("default: 24h", r.stdout)
        finally:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    if not BINARY or not os.path.exists(BINARY):
        sys.exit("SLUICE_BINARY must name the sluice executable")
    unittest.main()
