# SPDX-License-Identifier: LGPL-2.1-or-later
"""Client side of bench/template/run.sh (issue 27): OpenEnv's real
connect4_env, one episode per process, started cold (a new uvicorn) vs
forked from a warm template (zygote.py) vs the env started once and reset
in-session; interleaved in one run. Then the randomness check, the memory of
N live copies, and the cost of fresh namespaces per copy.

    bench-template.py ENV_DIR PYLIB REPS [FORKS_PER_REP]

All processes are this one's children or the template's; all are killed and
reaped before it exits. Times: time.perf_counter(); CPU: wait4's rusage of
each episode process, os.times() of the template and of this client,
/proc/PID/stat of the in-session server.
"""
import http.client
import json
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import pct, free_port  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
STEP_OK = b'{"action": {"column": 3}}'
STEP_DONE = b'{"action": {"column": 7}}'  # off the board: done, reward -1
HZ = os.sysconf("SC_CLK_TCK")


def smaps(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            k, _, v = line.partition(":")
            if v.strip().endswith("kB"):
                out[k] = int(v.split()[0])
    out["Private"] = out["Private_Clean"] + out["Private_Dirty"]
    return out


def stat_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def wait_health(port, proc_alive, t0, limit=120):
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/health")
            r = c.getresponse()
            r.read()
            if r.status == 200:
                return c
        except OSError:
            pass
        if not proc_alive() or time.perf_counter() - t0 > limit:
            raise SystemExit("env server on port %d did not start" % port)
        time.sleep(0.002)


def call(c, path, body):
    c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit("%s -> %d %s" % (path, r.status, data[:200]))
    return json.loads(data)


def episode(c, steps):
    """POST /reset, steps valid moves, the move that ends it; the reset's ms."""
    t0 = time.perf_counter()
    call(c, "/reset", b"{}")
    reset_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(steps):
        if call(c, "/step", STEP_OK).get("done"):
            raise SystemExit("a valid move said done")
    if call(c, "/step", STEP_DONE).get("done") is not True:
        raise SystemExit("the last move did not say done")
    return reset_ms


class Template:
    def __init__(self, env_dir, env, tmp):
        self.path = os.path.join(tmp, "ctl")
        self.proc = subprocess.Popen([PY, os.path.join(HERE, "zygote.py"), "server.app:app",
                                      self.path], cwd=env_dir, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline().split()
        if not line or line[0] != "warm":
            raise SystemExit("zygote did not get warm")
        self.pid, self.warm_s, self.rngs = int(line[1]), float(line[2]), line[3]
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(self.path)

    def ask(self, msg):
        self.s.send(msg.encode())
        return self.s.recv(65536).decode()

    def cpu_of(self, pid):
        while True:
            r = self.ask(f"cpu {pid}").split()
            if r[2] != "-":
                return float(r[2])
            time.sleep(0.001)

    def self_cpu(self):
        return float(self.ask("self").split()[2])

    def quit(self):
        self.ask("quit")
        self.proc.wait()


def kill_wait(pid):
    fd = os.pidfd_open(pid)
    try:
        os.kill(pid, signal.SIGKILL)
        select.select([fd], [], [])
    finally:
        os.close(fd)


class Modes:
    def __init__(self, env_dir, env, tpl, steps):
        self.env_dir, self.env, self.tpl, self.steps = env_dir, env, tpl, steps
        self.r = {m: {"ready": [], "reset": [], "wall": [], "cpu": [], "client": [], "mem": []}
                  for m in ("cold", "fork", "insession")}

    def cold(self, mem=False):
        port = free_port()
        c0 = time.process_time()
        t0 = time.perf_counter()
        p = subprocess.Popen([PY, "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1",
                              "--port", str(port)], cwd=self.env_dir, env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = wait_health(port, lambda: p.poll() is None, t0)
        t1 = time.perf_counter()
        reset = episode(c, self.steps)
        if mem:
            self.r["cold"]["mem"].append(smaps(p.pid))
        os.kill(p.pid, signal.SIGKILL)
        _, _, ru = os.wait4(p.pid, 0)
        p.returncode = -9
        c.close()
        self.add("cold", t0, t1, reset, ru.ru_utime + ru.ru_stime, c0)

    def fork(self, mem=False):
        port = free_port()
        c0 = time.process_time()
        t0 = time.perf_counter()
        pid = int(self.tpl.ask(f"fork {port}").split()[1])
        c = wait_health(port, lambda: os.path.exists(f"/proc/{pid}"), t0)
        t1 = time.perf_counter()
        reset = episode(c, self.steps)
        if mem:
            self.r["fork"]["mem"].append(smaps(pid))
        kill_wait(pid)
        c.close()
        self.add("fork", t0, t1, reset, self.tpl.cpu_of(pid), c0)

    def insession(self, c):
        c0 = time.process_time()
        t0 = time.perf_counter()
        reset = episode(c, self.steps)
        self.add("insession", t0, t0, reset, 0.0, c0)

    def add(self, m, t0, t1, reset, cpu, c0):
        r = self.r[m]
        r["ready"].append((t1 - t0) * 1e3 if t1 > t0 else reset)
        r["reset"].append(reset)
        r["wall"].append(time.perf_counter() - t0)
        r["cpu"].append(cpu)
        r["client"].append(time.process_time() - c0)


def row(label, value, unit="", note=""):
    print(f"{label:<58} {value:>12} {unit:<5} {note}")


def randomness(tpl):
    """Two sibling copies' first values, with and without the reseed."""
    print("\nrandomness: the first values of two sibling copies of one template")
    got = {}
    for mode in ("", " noreseed"):
        got[mode] = [json.loads(tpl.ask("probe" + mode)[6:]) for _ in range(2)]
    keys = ["random", "secrets", "uuid4", "urandom", "numpy", "hash", "heap", "libc", "stack"]
    print(f"{'value':<10} {'reseeded copies':<18} {'copies without the reseed':<26}")
    bad = []
    for k in keys:
        a = [g[k] for g in got[""]]
        b = [g[k] for g in got[" noreseed"]]
        da = "differ" if a[0] != a[1] else "SHARED"
        db = "differ" if b[0] != b[1] else "SHARED"
        print(f"{k:<10} {da:<18} {db:<26}")
        if k in ("random", "secrets", "uuid4", "urandom", "numpy") and da != "differ":
            bad.append(k)
    print("randomness check: " + ("FAILED, shared: " + ", ".join(bad) if bad else
                                  "passed (random, secrets, uuid4, urandom, numpy differ)"))
    print("  hash = str-hash secret (PYTHONHASHSEED), heap = a new object's address, libc/"
          "stack = mapping addresses:\n  shared by construction (one interpreter, one "
          "address-space layout per template)")
    return not bad


def density(tpl, n):
    """n copies alive at once, each after one episode: the template's PSS
    alone, then the sum over template + copies."""
    base = smaps(tpl.pid)
    pids, conns = [], []
    for _ in range(n):
        port = free_port()
        pid = int(tpl.ask(f"fork {port}").split()[1])
        c = wait_health(port, lambda: os.path.exists(f"/proc/{pid}"), time.perf_counter())
        episode(c, 6)
        pids.append(pid)
        conns.append(c)
    tot = smaps(tpl.pid)["Pss"] + sum(smaps(p)["Pss"] for p in pids)
    priv = statistics.median(smaps(p)["Private"] for p in pids)
    for p, c in zip(pids, conns):
        kill_wait(p)
        tpl.cpu_of(p)
        c.close()
    return base, tot, priv


def namespaces(tpl, n):
    """fork + unshare(NEWNS|NEWPID|NEWNET|NEWIPC) + pid 1 in it, vs fork +
    fork without: request -> answer, the copy's CPU (wait4, with its pid 1's),
    and the whole machine's CPU (/proc/stat, catches the kernel's deferred
    netns teardown, and whatever else runs here)."""
    def machine():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / HZ

    res = {"nsfork": ([], [], []), "plainfork": ([], [], [])}
    for _ in range(max(1, n // 10)):
        for kind in ("plainfork", "nsfork"):
            lat, cpu, mach = res[kind]
            m0 = machine()
            for _ in range(10):
                t0 = time.perf_counter()
                r = tpl.ask(kind)
                lat.append((time.perf_counter() - t0) * 1e3)
                if not r.startswith("ns pid"):
                    raise SystemExit("%s: %s" % (kind, r))
                if kind == "nsfork" and r.split()[2] != "1":
                    raise SystemExit("nsfork: not pid 1 in its namespace: " + r)
                cpu.append(tpl.cpu_of(int(r.split()[4])))
            time.sleep(0.3)  # the deferred teardown of 10 network namespaces
            mach.append((machine() - m0) / 10)
    return res


def main():
    env_dir, pylib, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    forks = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    steps = 6
    env = dict(os.environ, PYTHONPATH=env_dir + ":" + pylib, ENABLE_WEB_INTERFACE="false",
               PYTHONDONTWRITEBYTECODE="1")
    tmp = tempfile.mkdtemp(prefix="openenvd-bench-template.")
    tpl, direct = None, None
    try:
        tpl = Template(env_dir, env, tmp)
        tpl_mem0 = smaps(tpl.pid)
        dport = free_port()
        t0 = time.perf_counter()
        direct = subprocess.Popen([PY, "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1",
                                   "--port", str(dport)], cwd=env_dir, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dconn = wait_health(dport, lambda: direct.poll() is None, t0)
        m = Modes(env_dir, env, tpl, steps)
        # warm-up: the page cache, each path once
        m.cold()
        m.fork()
        m.insession(dconn)
        m = Modes(env_dir, env, tpl, steps)
        tcpu0, dcpu0 = tpl.self_cpu(), stat_cpu(direct.pid)
        for i in range(reps):
            m.cold(mem=True)
            for j in range(forks):
                m.fork(mem=(j == 0))
            for _ in range(forks):
                m.insession(dconn)
        tcpu = (tpl.self_cpu() - tcpu0) / len(m.r["fork"]["wall"])
        dcpu = (stat_cpu(direct.pid) - dcpu0) / len(m.r["insession"]["wall"])
        m.r["fork"]["cpu"] = [c + tcpu for c in m.r["fork"]["cpu"]]
        m.r["insession"]["cpu"] = [dcpu] * len(m.r["insession"]["wall"])
        direct_mem = smaps(direct.pid)

        med = statistics.median
        R = m.r
        eps = {k: len(R[k]["wall"]) / sum(R[k]["wall"]) for k in R}
        cpu = {k: med(R[k]["cpu"]) for k in R}
        allcpu = {k: med([a + b for a, b in zip(R[k]["cpu"], R[k]["client"])]) for k in R}
        print(f"bench/template: connect4_env (OpenEnv, real), {reps} rounds of 1 cold + "
              f"{forks} fork + {forks} in-session episodes (reset, {steps} moves, the move "
              f"that ends it), interleaved; load {os.getloadavg()[0]:.1f}")
        print(f"template: warm in {tpl.warm_s:.2f} s (imports + app + uvicorn config), "
              f"generators reseeded per copy beyond random's: {tpl.rngs}")
        print("criu: " + os.environ.get("BENCH_CRIU_STATUS", "not tried"))
        print(f"{'metric':<58} {'value':>12} {'unit':<5} note")
        names = {"cold": "cold (new uvicorn)", "fork": "fork (warm template)",
                 "insession": "in-session (one server, POST /reset)"}
        for k in ("cold", "fork", "insession"):
            what = "start -> /health" if k != "insession" else "POST /reset"
            row(f"{names[k]}: {what} p50", f"{med(R[k]['ready']):.2f}", "ms")
            row(f"{names[k]}: {what} p90", f"{pct(R[k]['ready'], 0.9):.2f}", "ms")
            if k != "insession":
                row(f"{names[k]}: first POST /reset p50", f"{med(R[k]['reset']):.2f}", "ms")
            row(f"{names[k]}: episodes/s back-to-back", f"{eps[k]:.2f}", "1/s",
                "(start, episode, kill)" if k != "insession" else "")
            row(f"{names[k]}: env CPU per episode", f"{1e3 * cpu[k]:.1f}", "ms",
                {"cold": "(wait4 of the server)",
                 "fork": f"(wait4 of the copy + {1e3 * tcpu:.1f} ms of the template's fork)",
                 "insession": "(/proc/PID/stat of the server, 10 ms ticks over the run)"}[k])
            row(f"{names[k]}: CPU per episode with the client", f"{1e3 * allcpu[k]:.1f}", "ms")
        row("fork / cold: episodes/s", f"{eps['fork'] / eps['cold']:.1f}", "x",
            f">= 10x: {'met' if eps['fork'] >= 10 * eps['cold'] else 'MISSED'} (vs cold here)")
        row("fork / cold: env CPU per episode", f"{100 * cpu['fork'] / cpu['cold']:.2f}", "%",
            f"<= 5 %: {'met' if cpu['fork'] <= 0.05 * cpu['cold'] else 'MISSED'}")
        row("fork / cold: CPU per episode with the client",
            f"{100 * allcpu['fork'] / allcpu['cold']:.2f}", "%")
        row("in-session / fork: episodes/s", f"{eps['insession'] / eps['fork']:.1f}", "x",
            "(what a new process per episode still costs)")
        mf, mc = R["fork"]["mem"], R["cold"]["mem"]
        priv = med(x["Private"] for x in mf) / 1024
        row("fork copy: private memory (USS) after its episode p50", f"{priv:.1f}", "MiB",
            f"<= 10 MiB: {'met' if priv <= 10 else 'MISSED'} (beyond the template)")
        row("fork copy: PSS (template + 1 copy alive) p50",
            f"{med(x['Pss'] for x in mf) / 1024:.1f}", "MiB")
        row("template: PSS alone / RSS", f"{tpl_mem0['Pss'] / 1024:.1f} / "
            f"{tpl_mem0['Rss'] / 1024:.1f}", "MiB")
        row("cold server: PSS after its episode p50", f"{med(x['Pss'] for x in mc) / 1024:.1f}",
            "MiB")
        row("in-session server: PSS", f"{direct_mem['Pss'] / 1024:.1f}", "MiB")
        n = int(os.environ.get("BENCH_TEMPLATE_DENSITY", "8"))
        base, tot, dpriv = density(tpl, n)
        row(f"{n} copies alive: (PSS of template + copies - template alone) / {n}",
            f"{(tot - base['Pss']) / n / 1024:.1f}", "MiB", f"(USS p50 {dpriv / 1024:.1f} MiB)")
        row(f"  the same {n} as cold servers would hold", f"{n * med(x['Pss'] for x in mc) / 1024:.0f}",
            "MiB", f"(vs {tot / 1024:.0f} MiB)")
        direct.kill()
        direct.wait()
        direct = None
        ok = randomness(tpl)
        if os.geteuid() == 0:
            res = namespaces(tpl, int(os.environ.get("BENCH_TEMPLATE_NS", "100")))
            print("\nnamespaces: a copy entering fresh mount, pid, net and ipc namespaces "
                  "(and forking its pid 1) vs a copy forking without")
            for k in ("plainfork", "nsfork"):
                lat, cpu, mach = res[k]
                row(f"{k}: request -> pid 1 answers p50 / p90",
                    f"{med(lat):.2f} / {pct(lat, 0.9):.2f}", "ms")
                row(f"{k}: the copy's CPU p50 (wait4: copy + its pid 1)",
                    f"{1e3 * med(cpu):.2f}", "ms")
                row(f"{k}: machine CPU per copy p50 (all processes, kernel)",
                    f"{1e3 * med(mach):.1f}", "ms", "(/proc/stat; noisy: the whole VM)")
            row("  namespaces' added latency p50",
                f"{med(res['nsfork'][0]) - med(res['plainfork'][0]):.2f}", "ms")
            row("  namespaces' added CPU p50 (the copy's)",
                f"{1e3 * (med(res['nsfork'][1]) - med(res['plainfork'][1])):.2f}", "ms",
                "(not the kernel's deferred netns teardown: see the machine rows)")
        else:
            print("namespaces: skipped (needs root)")
        return 0 if ok else 1
    finally:
        if direct is not None:
            direct.kill()
            direct.wait()
        if tpl is not None:
            tpl.quit()
        try:
            os.rmdir(tmp)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
