"""jsonrpc_stdio.py: the JSON-RPC line client codex_drive.py and acp_drive.py share: a child
process spoken to one JSON object a line over its stdin/stdout, every message logged as a JSON
line {"t", "dir", "msg"}, reads on a thread into a queue, one deadline for the whole run, the
child ended by its PID (stdin closed, then terminate, then kill). Standard library only.
"""
import json
import queue
import subprocess
import threading
import time


class Timeout(Exception):
    pass


class Client:
    def __init__(self, argv, env, out, deadline, stderr, cwd=None):
        self.t0 = time.monotonic()
        self.deadline = deadline
        self.out = out
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr, env=env, cwd=cwd)
        self.q = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                self.q.put(json.loads(line))
            except ValueError:
                self.q.put({"unparsed": line.decode("utf-8", "replace")})
        self.q.put(None)

    def log(self, direction, msg):
        rec = {"t": round(time.monotonic() - self.t0, 3), "dir": direction, "msg": msg}
        self.out.write(json.dumps(rec) + "\n")
        self.out.flush()

    def send(self, msg):
        self.log("send", msg)
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def recv(self, timeout=None):
        """The next message, or None when none came within timeout; raises at the deadline."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Timeout("deadline passed")
        wait = left if timeout is None else min(timeout, left)
        try:
            msg = self.q.get(timeout=wait)
        except queue.Empty:
            if timeout is None or timeout >= left:
                raise Timeout("deadline passed")
            return None
        if msg is None:
            raise EOFError("the child closed its stdout (exit %s)" % self.proc.poll())
        self.log("recv", msg)
        return msg

    def close(self, grace=5.0):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                return self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait(timeout=grace)
