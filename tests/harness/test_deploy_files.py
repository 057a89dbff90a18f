"""deploy/'s essentials, read from the files themselves (Docker is not available here): health checks and
probes on /_stcore/health, cookie affinity, the WebSocket's timeout, the cookie secret from the environment
and never in the image, the pinned requirements; and harness.cluster's HAProxy config, which is
deploy/haproxy.cfg with only its bind and server lines rewritten."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.cluster import HAPROXY, HAPROXY_CONFIG, Cluster, render_haproxy
from harness.server import ROOT

DEPLOY = ROOT / "deploy"
HEALTH = "/_stcore/health"
SECRET = "STREAMLIT_SERVER_COOKIE_SECRET"


def haproxy_lines(text: str) -> list[str]:
    """The config's directives, one per line, without comments or blank lines."""
    return [line.split("#")[0].strip() for line in text.splitlines() if line.split("#")[0].strip()]


def seconds(value: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(ms|s|m|h|d)?", value).groups()
    return int(number) * {"ms": 0.001, "s": 1, None: 0.001, "m": 60, "h": 3600, "d": 86400}[unit]


def pins(lines) -> dict[str, str]:
    found = (re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s;]+)", line.strip()) for line in lines)
    return {m.group(1).lower(): m.group(2) for m in found if m}


def test_haproxy_keeps_affinity_upgrades_websockets_and_checks_health():
    lines = haproxy_lines(HAPROXY_CONFIG.read_text())
    assert "cookie SERVERID insert indirect nocache" in lines
    assert f"option httpchk GET {HEALTH}" in lines
    assert "http-response set-header X-Replica %s" in lines
    assert "mode http" in lines  # HAProxy passes a WebSocket's Upgrade through in HTTP mode
    tunnel = next(line.split()[-1] for line in lines if line.startswith("timeout tunnel"))
    assert seconds(tunnel) >= 3600  # an idle learner's WebSocket outlives an hour of reading
    servers = [line for line in lines if line.startswith("server ")]
    assert len(servers) == 3 and all(re.fullmatch(r"server (app\d) \1:8501 cookie \1", s) for s in servers)
    checks = next(line for line in lines if line.startswith("default-server"))
    assert " check " in f" {checks} " and "option redispatch" in lines
    # A rolling restart drains a replica through the runtime API, reachable from inside the container only.
    assert "stats socket ipv4@127.0.0.1:9999 level admin" in lines


def test_the_cluster_runs_deploys_haproxy_config_with_only_its_addresses_changed():
    template = HAPROXY_CONFIG.read_text()
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    replicas = sorted(name for name in compose["services"] if name != "haproxy")
    bind = next(line.split()[1] for line in haproxy_lines(template) if line.startswith("bind "))
    # The file is what render_haproxy makes of itself with the compose file's services: one template for both.
    assert render_haproxy(template, bind, [(name, f"{name}:8501") for name in replicas]) == template
    cluster = Cluster(3, 8500, Path("unused"))
    local = cluster.config()
    changed = [line for line in haproxy_lines(local) if line not in haproxy_lines(template)]
    assert changed == [f"stats socket ipv4@{cluster.admin} level admin", "bind 127.0.0.1:8500"] + [
        f"server {r.name} 127.0.0.1:{r.port} cookie {r.name}" for r in cluster.replicas]
    assert [line for line in haproxy_lines(template) if line not in haproxy_lines(local)] == (
        ["stats socket ipv4@127.0.0.1:9999 level admin", f"bind {bind}"]
        + [f"server {name} {name}:8501 cookie {name}" for name in replicas])


def test_haproxy_accepts_the_clusters_config(tmp_path):
    if not Path(HAPROXY).exists():
        pytest.fail(f"{HAPROXY} is missing: install Debian's haproxy (apt-get install haproxy); .ci/run does")
    config = tmp_path / "haproxy.cfg"
    config.write_text(Cluster(3, 8500, tmp_path).config())
    checked = subprocess.run([HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_render_haproxy_refuses_a_template_without_servers():
    with pytest.raises(ValueError, match="no server line"):
        render_haproxy("defaults\n    mode http\n", "127.0.0.1:1", [("app1", "127.0.0.1:2")])


def test_compose_runs_replicas_behind_haproxy_with_one_secret_from_the_environment():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    replicas = {name: s for name, s in services.items() if name != "haproxy"}
    assert sorted(replicas) == ["app1", "app2", "app3"]
    for service in replicas.values():
        assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
        secret = service["environment"][SECRET]
        assert re.fullmatch(r"\$\{" + SECRET + r":\?[^}]+\}", secret)  # from the environment, required
    proxy = services["haproxy"]
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in proxy["volumes"]
    assert sorted(proxy["depends_on"]) == sorted(replicas)
    assert any(port.endswith(":8080") for port in proxy["ports"])


def test_the_dockerfile_is_slim_pinned_unprivileged_and_holds_no_secret():
    text = (DEPLOY / "Dockerfile").read_text()
    instructions = [line.strip() for line in re.sub(r"\\\n", " ", text).splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]
    assert instructions[0] == "FROM python:3.11-slim"
    assert SECRET not in "\n".join(instructions)  # never baked in: each replica gets it at run time
    assert any(i.startswith("COPY requirements.txt") for i in instructions)
    assert any("pip install -r requirements.txt" in i for i in instructions)
    # Any version named in the Dockerfile is the one requirements.txt pins.
    required = pins((ROOT / "requirements.txt").read_text().splitlines())
    named = dict(re.findall(r"\b([a-z][a-z0-9_.-]*)==([0-9][^\s;\"']*)", text))
    assert named and all(required[name] == version for name, version in named.items()), named
    users = [i for i in instructions if i.startswith("USER ")]
    assert users and users[-1] not in ("USER root", "USER 0")
    health = next(i for i in instructions if i.startswith("HEALTHCHECK"))
    assert "8501" + HEALTH in health
    env = " ".join(i for i in instructions if i.startswith("ENV "))
    for setting in ("STREAMLIT_SERVER_HEADLESS=true", "STREAMLIT_SERVER_FILE_WATCHER_TYPE=none",
                    "STREAMLIT_SERVER_MAX_UPLOAD_SIZE=1", "STREAMLIT_BROWSER_GATHER_USAGE_STATS=false",
                    "STREAMLIT_SERVER_PORT=8501"):
        assert setting in env
    assert instructions[-1] == 'CMD ["streamlit", "run", "streamlit_app.py"]'


def test_kubernetes_probes_health_keeps_affinity_and_reads_the_secret_from_a_secret():
    docs = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "k8s.yaml").read_text())}
    assert sorted(docs) == ["Deployment", "Ingress", "Service"]  # the Secret is made outside the file
    container = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == HEALTH
    # A rolling update: a pod leaves the Service before it stops taking requests.
    assert container["lifecycle"]["preStop"]["exec"]["command"][0] == "sleep"
    secret = next(e for e in container["env"] if e["name"] == SECRET)
    assert set(secret["valueFrom"]["secretKeyRef"]) == {"name", "key"} and "value" not in secret
    assert docs["Deployment"]["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    notes = docs["Ingress"]["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/affinity-mode"] == "persistent"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    selector = docs["Service"]["spec"]["selector"]
    assert selector == docs["Deployment"]["spec"]["template"]["metadata"]["labels"]
    backend = docs["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == docs["Service"]["metadata"]["name"]


def test_ci_installs_haproxy_beside_chromium():
    text = (ROOT / ".ci" / "run").read_text()
    assert "missing+=(chromium)" in text and "missing+=(haproxy)" in text
    assert 'apt-get install -y -qq "${missing[@]}"' in text


@pytest.mark.parametrize("argv, words", [(["--replicas", "0"], "--replicas 0 must be 1-16"),
                                         (["--port", "70000"], "--port 70000 must be 1-65535"),
                                         (["--replicas", "three"], "invalid int value")])
def test_the_cluster_command_refuses_a_bad_value_in_one_line(argv, words):
    done = subprocess.run([sys.executable, "-m", "harness.cluster", *argv], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1 and words in done.stderr
