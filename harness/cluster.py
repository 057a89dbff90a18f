"""The deployment of deploy/compose.yaml, runnable without Docker: N `streamlit run` replicas on loopback
ports behind Debian's HAProxy, configured from deploy/haproxy.cfg itself.

    python -m harness.cluster --replicas 3 --port 8500

Every replica gets the same generated cookie secret (STREAMLIT_SERVER_COOKIE_SECRET), as compose.yaml
gives them one from the environment: without it, a replica refuses an upload whose XSRF cookie another
replica signed. HAProxy's config is deploy/haproxy.cfg with only its bind line and its server lines
rewritten (render_haproxy), so what the tests prove here is what the compose file deploys. It prints one
line per replica with its PID and port, and stops everything on Ctrl-C or SIGTERM.

The tests and bench/cluster_capacity.py use Cluster directly: it can kill, stop and restart one replica
on its own port, as an operator's restart would.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from harness.server import ROOT, free_port, start_server, stop_server, wait_healthy

HAPROXY = "/usr/sbin/haproxy"
HAPROXY_CONFIG = ROOT / "deploy" / "haproxy.cfg"
START_TIMEOUT = 120.0  # seconds for every replica to answer its health check; they start side by side


def render_haproxy(template: str, bind: str, servers: list[tuple[str, str]], admin: str | None = None) -> str:
    """``template`` (deploy/haproxy.cfg) with its bind address set to ``bind``, its server lines replaced
    by one per (name, address) in ``servers``, each with its name as its affinity cookie, and its runtime
    API moved to ``admin`` (host:port) when given. Everything else (timeouts, checks, affinity, the
    X-Replica header) is kept as written."""
    out: list[str] = []
    placed = False
    for line in template.splitlines(keepends=True):
        words = line.split()
        indent = line[: len(line) - len(line.lstrip())]
        if words[:1] == ["bind"]:
            out.append(f"{indent}bind {bind}\n")
        elif words[:2] == ["stats", "socket"] and admin is not None:
            out.append(f"{indent}stats socket ipv4@{admin} {' '.join(words[3:])}\n")
        elif words[:1] == ["server"]:
            if not placed:  # the first server line stands for all of them
                out += [f"{indent}server {name} {address} cookie {name}\n" for name, address in servers]
                placed = True
        else:
            out.append(line)
    if not placed:
        raise ValueError("the HAProxy template has no server line to replace")
    return "".join(out)


@dataclass
class Replica:
    name: str  # HAProxy's server name, its cookie value and its X-Replica header
    port: int
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class Cluster:
    """``replicas`` streamlit servers behind one HAProxy listening on 127.0.0.1:``port``."""

    def __init__(self, replicas: int, port: int, log_dir: Path, script: str = "streamlit_app.py"):
        if not 1 <= replicas <= 16:
            raise ValueError(f"replicas={replicas} must be 1-16")
        self.port, self.log_dir, self.script = port, Path(log_dir), script
        self.secret = secrets.token_hex(32)  # one for all replicas, new for each cluster
        self.replicas = [Replica(f"app{i + 1}", free_port()) for i in range(replicas)]
        self.admin = f"127.0.0.1:{free_port()}"  # HAProxy's runtime API
        self.haproxy: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> str:
        return render_haproxy(HAPROXY_CONFIG.read_text(), f"127.0.0.1:{self.port}",
                              [(r.name, f"127.0.0.1:{r.port}") for r in self.replicas], admin=self.admin)

    def replica(self, name: str) -> Replica:
        return next(r for r in self.replicas if r.name == name)

    def start(self) -> "Cluster":
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            for replica in self.replicas:
                self._launch(replica)
            for replica in self.replicas:
                self._wait(replica, START_TIMEOUT)
            config = self.log_dir / "haproxy.cfg"
            config.write_text(self.config())
            with open(self.log_dir / "haproxy.log", "w") as log:
                self.haproxy = subprocess.Popen([HAPROXY, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
            self.wait_serving(set(r.name for r in self.replicas), timeout=30)
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, replica: Replica) -> None:
        log = self.log_dir / f"{replica.name}.log"
        replica.proc = start_server(replica.port, log, script=self.script,
                                    env={"STREAMLIT_SERVER_COOKIE_SECRET": self.secret})

    def _wait(self, replica: Replica, timeout: float) -> None:
        try:
            wait_healthy(replica.url, replica.proc, timeout)
        except RuntimeError as exc:
            log = (self.log_dir / f"{replica.name}.log").read_text()[-2000:]
            raise RuntimeError(f"{replica.name}: {exc}; its log:\n{log}") from None

    def wait_serving(self, names: set[str], timeout: float) -> None:
        """Wait until HAProxy has served a health check from each replica in ``names`` (its checks have
        passed, so it sends new learners there)."""
        seen: set[str] = set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.haproxy is not None and self.haproxy.poll() is not None:
                log = (self.log_dir / "haproxy.log").read_text()[-2000:]
                raise RuntimeError(f"haproxy exited with code {self.haproxy.returncode}:\n{log}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as response:
                    seen.add(response.headers.get("X-Replica", ""))
            except OSError:
                time.sleep(0.2)
            if names <= seen:
                return
        raise RuntimeError(f"the balancer served {sorted(seen)}, not yet all of {sorted(names)}, within {timeout} s")

    def kill(self, name: str) -> None:
        """SIGKILL one replica, as a crash or a lost machine ends it: nothing is said to its browsers."""
        replica = self.replica(name)
        replica.proc.kill()
        replica.proc.wait(timeout=10)

    def stop_replica(self, name: str) -> None:
        """SIGTERM one replica, as an orchestrator's restart does."""
        stop_server(self.replica(name).proc)

    def restart(self, name: str, timeout: float = START_TIMEOUT) -> None:
        """Start a stopped replica again on its own port; return once it answers its health check."""
        replica = self.replica(name)
        self._launch(replica)
        self._wait(replica, timeout)

    def set_state(self, name: str, state: str) -> None:
        """Put a replica in HAProxy's ``maint`` (out of the pool: even its learners' cookies are sent
        elsewhere) or back to ``ready``, through the runtime API, as an operator does."""
        host, port = self.admin.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as conn:
            conn.sendall(f"set server replicas/{name} state {state}\n".encode())
            answer = conn.recv(4096).decode().strip()
        if answer:
            raise RuntimeError(f"haproxy refused to set {name} {state}: {answer}")

    def rolling_restart(self, name: str, timeout: float = START_TIMEOUT) -> None:
        """Restart one replica without an error for anyone: out of the pool first, so no new request
        reaches it; then stopped (its learners' tabs reconnect to the others) and started again; back in
        the pool once it answers its health check."""
        self.set_state(name, "maint")
        self.stop_replica(name)
        self.restart(name, timeout)
        self.set_state(name, "ready")
        self.wait_serving({name}, timeout=30)

    def stop(self) -> None:
        """Stop HAProxy and every replica; each is given 10 s, then killed."""
        if self.haproxy is not None and self.haproxy.poll() is None:
            stop_server(self.haproxy)
        for replica in self.replicas:
            if replica.proc is not None and replica.proc.poll() is None:
                stop_server(replica.proc)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class _OneLineParser(argparse.ArgumentParser):
    """Errors as one line on stderr and exit status 2, as the project's other command lines give them."""

    def error(self, message: str) -> None:
        print(f"{self.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        sys.exit(2)


def main(argv: list[str] | None = None) -> int:
    parser = _OneLineParser(prog="python -m harness.cluster", description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=3, help="streamlit processes behind the balancer (1-16)")
    parser.add_argument("--port", type=int, default=8500, help="the balancer's port on 127.0.0.1")
    args = parser.parse_args(argv)
    if not 1 <= args.replicas <= 16:
        parser.error(f"--replicas {args.replicas} must be 1-16")
    if not 1 <= args.port <= 65535:
        parser.error(f"--port {args.port} must be 1-65535")
    if not Path(HAPROXY).exists():
        parser.error(f"{HAPROXY} is missing: install Debian's haproxy (apt-get install haproxy)")
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    log_dir = Path(tempfile.mkdtemp(prefix="tse-cluster-"))
    cluster = Cluster(args.replicas, args.port, log_dir)
    try:
        cluster.start()
        for replica in cluster.replicas:
            print(f"{replica.name}: pid {replica.proc.pid}, port {replica.port}", flush=True)
        print(f"haproxy: pid {cluster.haproxy.pid}, serving {cluster.url} (logs in {log_dir})", flush=True)
        while not done.is_set():
            done.wait(0.5)
    except RuntimeError as exc:
        print(f"python -m harness.cluster: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    finally:
        cluster.stop()
    print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
