#!/usr/bin/env python3
"""Runs the ingest benchmark (called by tools/bench-ingest): for each server binary given, a fresh
`faultline serve`, then wrk (post_envelopes.lua) at each concurrency level; optionally Bugsink
(shared/bench/ingest/bugsink-up.sh) under the same wrk script in the same run. Per level: acked
events/s (wrk's 2xx over its run time), non-2xx, p50/p99, server CPU per event (utime+stime of the
server's process from /proc/PID/stat across the level), time until every stored event is grouped,
and peak RSS (VmHWM). Every number is measured here; nothing is quoted from elsewhere.

--backends sqlite,postgres,postgres2,postgres3 measures every --server binary on each back end in
one run (back end by back end, the binaries one after the other on each, so a baseline and this tree
see the same moment of the machine): SQLite in one node; one node on a private PostgreSQL
(tools/pg-local, fsync on); two or three nodes sharing one PostgreSQL database and one --debug-files
directory, the load split across them (one wrk per node, the connections split evenly, same
duration). Server CPU is the nodes' (summed); PostgreSQL's own CPU (the postmaster and its backends,
reaped ones included) is reported beside it. --pg-statements N also loads pg_stat_statements into
that PostgreSQL and prints, after each level, the N statements that took the most time in it (calls
and microseconds per stored event, rows per call): where the database's time per event goes, and
how it changes as nodes are added.
"""
import argparse, json, os, re, shutil, sqlite3, subprocess, sys, tempfile, time, urllib.error, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        try:
            parts = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
            total += int(parts[11]) + int(parts[12]) + int(parts[13]) + int(parts[14])  # + reaped children
        except FileNotFoundError:
            pass
    return total / TICK


def peak_rss_mib(pids):
    total = 0
    for pid in pids:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmHWM:"):
                total += int(line.split()[1])
    return round(total / 1024, 1)


def rss_mib(pids):
    total = 0
    for pid in pids:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return round(total / 1024, 1)


def postgres_cpu_seconds(postmaster):
    """utime+stime of a PostgreSQL cluster: the postmaster (with its reaped children) and its live children."""
    kids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if int(open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()[1]) == postmaster:
                    kids.append(int(d))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return cpu_seconds([postmaster] + kids)


def wrk(urls, key, pool, conc, seconds):
    """One wrk per URL, started together, the connections split evenly (c=1 on two nodes loads only
    the first); their summaries merged
    (requests summed, duration the longest, latency percentiles the worst of the processes)."""
    urls = urls if isinstance(urls, list) else [urls]
    urls = urls[:max(1, conc)]  # fewer connections than nodes: the first `conc` nodes take one each
    t = time.time()
    # wrk's own CPU (children of this process) is read around the run: the generator shares the cores.
    c0 = os.times()
    runs = []
    for i, url in enumerate(urls):
        out = tempfile.mktemp(prefix="bench-ingest-wrk.", suffix=".json")
        env = dict(os.environ, INGEST_POOL=pool, INGEST_KEY=key, INGEST_OUT=out)
        c = conc // len(urls) + (1 if i < conc % len(urls) else 0)
        p = subprocess.Popen(["wrk", "-t%d" % min(2, c), "-c%d" % c, "-d%ds" % seconds, "--timeout", "10s",
                              "-s", os.path.join(HERE, "post_envelopes.lua"), url], env=env, stdout=subprocess.DEVNULL)
        runs.append((p, out))
    parts = []
    for p, out in runs:
        if p.wait() != 0:
            raise RuntimeError("wrk failed (exit %d)" % p.returncode)
        parts.append(json.load(open(out)))
        os.unlink(out)
    c1 = os.times()
    r = dict(parts[0])
    for k in ("requests", "bytes", "non_2xx", "connect_errors", "read_errors", "write_errors", "timeouts"):
        r[k] = sum(x[k] for x in parts)
    r["duration_us"] = max(x["duration_us"] for x in parts)
    r["latency_ms"] = {k: max(x["latency_ms"][k] for x in parts) for k in parts[0]["latency_ms"]}
    if len(parts) > 1:
        r["per_node"] = parts
    r["wrk_cpu_s"] = round((c1.children_user + c1.children_system) - (c0.children_user + c0.children_system), 2)
    r["wall_s"] = round(time.time() - t, 2)
    return r


def make_pool(dsn, path):
    subprocess.run([sys.executable, os.path.join(HERE, "make_envelopes.py"), "--dsn", dsn, "--out", path], check=True)


class Faultline:
    def __init__(self, binary, durability, label, extra=(), first=None):
        """One `faultline serve`; `extra` adds options (--database, --debug-files). A second node on
        the same database (`first`: the node that created the project) prints no DSN or token: it
        takes the first node's."""
        self.label, self.binary = label, binary
        self.data = tempfile.mkdtemp(prefix="faultline-bench-ingest.")
        self.log = open(self.data + ".log", "w+")
        self.proc = subprocess.Popen([binary, "serve", "--data-dir", self.data, "--port", "0", "--install-cap", "0",
                                      "--durability", durability,
                                      "--max-connections-per-ip", str(PER_ADDRESS_CONNECTIONS)] + list(extra),
                                     stdout=self.log, stderr=subprocess.STDOUT)
        ready = "listening on" if first else "server token"
        for _ in range(600):
            text = open(self.data + ".log").read()
            if ready in text or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if ready not in text:
            raise RuntimeError("%s did not start: %s" % (label, text[-2000:]))
        self.base = re.search(r"listening on (http://\S+)", text).group(1)
        if first:
            self.dsn, self.token, self.key, self.project = first.dsn, first.token, first.key, first.project
            self.url = "%s/api/%s/envelope/" % (self.base, self.project)
            self.pids = [self.proc.pid]
            return
        self.dsn = re.search(r"^DSN: (\S+)", text, re.M).group(1)
        self.token = re.search(r"^server token.*: (\S+)", text, re.M).group(1)
        self.key = self.dsn.split("//")[1].split("@")[0]
        self.project = self.dsn.rsplit("/", 1)[1]
        self.url = "%s/api/%s/envelope/" % (self.base, self.project)
        self.pids = [self.proc.pid]

    def counts(self):
        req = urllib.request.Request("%s/api/0/projects/faultline/%s/" % (self.base, self.project),
                                     headers={"Authorization": "Bearer " + self.token})
        # Right after wrk's connections the server may not yet have seen them close, and one more
        # from this address may be over --max-connections-per-ip: refused, so asked again.
        deadline = time.time() + 20
        while True:
            try:
                p = json.load(urllib.request.urlopen(req, timeout=10))
                return p["occurrences"], p["processed"]
            except (ConnectionError, urllib.error.URLError):
                if time.time() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()
        if os.environ.get("FAULTLINE_PHASE_TIMES") == "1":  # the server's phase table, printed at its stop
            text = open(self.data + ".log").read()
            print(text[text.find("phase "):] if "phase " in text else "(no phase table in the server's output)")
        shutil.rmtree(self.data, ignore_errors=True)
        os.unlink(self.data + ".log")


BACKENDS = {"sqlite": 1, "postgres": 1, "postgres2": 2, "postgres3": 3}
STATEMENTS_TOP = 0  # --pg-statements
# Every connection of the load comes from 127.0.0.1, and `faultline serve` refuses more than 16 at a
# time from one address by default: above that wrk would measure its own reconnects (refused
# connections, SYN retries of a second and more), not the server. Raised to the highest level.
PER_ADDRESS_CONNECTIONS = 16


def psql(url, sql):
    """Runs SQL with psql (as the cluster's owner when we are root, as tools/pg-local does); rows as tuples."""
    bindir = sorted(d for d in (os.path.join("/usr/lib/postgresql", v, "bin") for v in os.listdir("/usr/lib/postgresql"))
                    if os.path.exists(os.path.join(d, "psql")))[-1]
    cmd = [os.path.join(bindir, "psql"), "-X", "-q", "-A", "-t", "-F", "\x1f", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql]
    if os.getuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [tuple(line.split("\x1f")) for line in out.splitlines() if line]


class Cluster:
    """One back end for --backends: sqlite (one node), postgres (one node on a private PostgreSQL),
    postgres2 / postgres3 (two / three nodes on one PostgreSQL database and one shared --debug-files
    directory). `label` names the run (the back end, prefixed with the binary's label when several
    binaries are measured)."""
    def __init__(self, binary, durability, backend, label=None):
        self.label, self.nodes, self.pgdir, self.debug, self.postmaster = label or backend, [], None, None, None
        try:
            if backend == "sqlite":
                self.nodes.append(Faultline(binary, durability, backend))
            else:
                self.pgdir = tempfile.mkdtemp(prefix="faultline-bench-pg.")
                env = dict(os.environ)
                if STATEMENTS_TOP:  # added to the caller's PG_LOCAL_OPTIONS (server settings to try)
                    env["PG_LOCAL_OPTIONS"] = env.get("PG_LOCAL_OPTIONS", "") + (
                        " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
                        " -c pg_stat_statements.track_planning=on")
                url = subprocess.run([os.path.join(HERE, "..", "pg-local"), "start", self.pgdir], check=True,
                                     capture_output=True, text=True, env=env).stdout.split()[-1]
                self.pg_url = url
                if STATEMENTS_TOP:
                    psql(url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                self.postmaster = int(open(os.path.join(self.pgdir, "data", "postmaster.pid")).readline())
                self.debug = tempfile.mkdtemp(prefix="faultline-bench-debug-files.")
                extra = ["--database", url, "--debug-files", self.debug]
                self.nodes.append(Faultline(binary, durability, backend + "-a", extra))
                for name in "bc"[:BACKENDS[backend] - 1]:
                    self.nodes.append(Faultline(binary, durability, backend + "-" + name, extra, first=self.nodes[0]))
        except BaseException:
            self.stop()
            raise
        a = self.nodes[0]
        self.dsn, self.key, self.project, self.token, self.url = a.dsn, a.key, a.project, a.token, a.url
        self.urls = [n.url for n in self.nodes]
        self.pids = [n.proc.pid for n in self.nodes]

    def counts(self):
        return self.nodes[0].counts()  # one database: any node sees every node's events

    def db_cpu(self):
        return postgres_cpu_seconds(self.postmaster) if self.postmaster else None

    def statements_reset(self):
        if self.postmaster and STATEMENTS_TOP:
            psql(self.pg_url, "SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')")
            self.commits0 = self.commits()

    def commits(self):
        return int(psql(self.pg_url, "SELECT sum(xact_commit) FROM pg_stat_database")[0][0])

    def wal(self, events):
        """WAL per stored event since the reset: bytes, records, writes and flushes (fsyncs), and commits."""
        if not (self.postmaster and STATEMENTS_TOP):
            return None
        (records, size, writes, syncs), = psql(self.pg_url, "SELECT wal_records, wal_bytes, wal_write, wal_sync FROM pg_stat_wal")
        per = lambda v: round(float(v) / max(1, events), 3)
        return {"records": per(records), "bytes": per(size), "writes": per(writes), "syncs": per(syncs),
                "commits": per(self.commits() - self.commits0)}

    def statements(self, events):
        """The top statements since the reset, by total time in PostgreSQL (planning included)."""
        if not (self.postmaster and STATEMENTS_TOP):
            return None
        rows = psql(self.pg_url, """
            SELECT calls, total_exec_time + total_plan_time, rows, plans, total_plan_time, regexp_replace(query, '\\s+', ' ', 'g')
            FROM pg_stat_statements WHERE query NOT LIKE '%%pg_stat_statements%%'
            ORDER BY 2 DESC LIMIT %d""" % STATEMENTS_TOP)
        return [{"calls": int(c), "us_per_event": round(float(ms) * 1000 / max(1, events), 1),
                 "calls_per_event": round(int(c) / max(1, events), 3), "rows_per_call": round(int(r) / max(1, int(c)), 1),
                 "plans_per_call": round(int(p) / max(1, int(c)), 2), "plan_us_per_event": round(float(pms) * 1000 / max(1, events), 1),
                 "query": q} for c, ms, r, p, pms, q in rows]

    def stop(self):
        for n in self.nodes:
            try:
                n.stop()
            except Exception as e:  # noqa: BLE001 -- the other nodes and PostgreSQL are still stopped
                print("bench-ingest: stopping %s: %s" % (n.label, e), flush=True)
        if self.pgdir:
            subprocess.run([os.path.join(HERE, "..", "pg-local"), "stop", self.pgdir], check=False,
                           stdout=subprocess.DEVNULL)
        if self.debug:
            shutil.rmtree(self.debug, ignore_errors=True)


class Bugsink:
    """Bugsink 2.6.2 as shared/bench/ingest/bugsink-up.sh sets it up (gunicorn + snappea, SQLite)."""
    def __init__(self, bench_dir):
        self.label, self.bench_dir = "bugsink", bench_dir
        self.base_dir = os.path.join(os.environ.get("TMPDIR", "/tmp"), "bugsink-peer")
        subprocess.run([os.path.join(bench_dir, "bugsink-down.sh"), "--wipe"], check=False, stdout=subprocess.DEVNULL)
        subprocess.run([os.path.join(bench_dir, "bugsink-up.sh")], check=True, stdout=subprocess.DEVNULL)
        self.dsn = open(os.path.join(self.base_dir, "dsn.txt")).read().strip()
        self.key = self.dsn.split("//")[1].split("@")[0]
        self.project = self.dsn.rsplit("/", 1)[1]
        self.url = "http://127.0.0.1:%s/api/%s/envelope/" % (self.dsn.rsplit(":", 1)[1].split("/")[0], self.project)
        roots = [int(open(os.path.join(self.base_dir, "run", f)).read()) for f in ("gunicorn.pid", "snappea.pid")]
        self.pids = roots + self.children(roots)
        self.version = open(os.path.join(self.base_dir, "version.txt")).read().strip()

    @staticmethod
    def children(roots):
        out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout.split("\n")
        kids = [int(l.split()[0]) for l in out if l.strip() and int(l.split()[1]) in roots]
        return kids + (Bugsink.children(kids) if kids else [])

    def counts(self):
        # Digested = stored and grouped into an issue (Bugsink stores at digest time).
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(self.base_dir, "data", "db.sqlite3"), uri=True, timeout=10)
        digested = db.execute("select digested_event_count from projects_project where id=?", (int(self.project),)).fetchone()[0]
        db.close()
        return digested, digested

    def stop(self):
        subprocess.run([os.path.join(self.bench_dir, "bugsink-down.sh"), "--wipe"], check=False, stdout=subprocess.DEVNULL)


def measure(server, levels, seconds, warmup, drain_limit):
    pool = tempfile.mktemp(prefix="bench-ingest-pool.", suffix=".lua")
    make_pool(server.dsn, pool)
    out = {"server": server.label, "levels": []}
    urls = getattr(server, "urls", [server.url])
    db_cpu = getattr(server, "db_cpu", lambda: None)
    if len(urls) > 1:
        out["nodes"] = len(urls)
    if warmup:
        w = wrk(urls, server.key, pool, 4, warmup)
        wait_grouped(server, drain_limit, w["requests"] - w["non_2xx"])
    for conc in levels:
        before = server.counts()[1]
        getattr(server, "statements_reset", lambda: None)()
        c0, d0 = cpu_seconds(server.pids), db_cpu()
        t0 = time.time()
        r = wrk(urls, server.key, pool, conc, seconds)
        load_s = r["duration_us"] / 1e6
        c_load = cpu_seconds(server.pids)
        ok = r["requests"] - r["non_2xx"]
        drained = wait_grouped(server, drain_limit, before + ok)
        c1, d1 = cpu_seconds(server.pids), db_cpu()
        stored = server.counts()[1]
        level = {
            "concurrency": conc, "requests": r["requests"], "acked": ok, "non_2xx": r["non_2xx"],
            "socket_errors": r["connect_errors"] + r["read_errors"] + r["write_errors"] + r["timeouts"],
            "acked_per_s": round(ok / load_s, 1), "latency_ms": r["latency_ms"],
            "stored_in_level": stored - before, "all_grouped": drained is not None,
            "grouped_per_s": round((stored - before) / (drained - t0), 1) if drained else None,
            "server_cpu_s_load": round(c_load - c0, 2), "server_cpu_s_total": round(c1 - c0, 2),
            "server_cpu_us_per_event": round((c1 - c0) / max(1, stored - before) * 1e6),
            "server_cores_during_load": round((c_load - c0) / load_s, 2),
            "wrk_cpu_s": r["wrk_cpu_s"], "wrk_cpu_us_per_request": round(r["wrk_cpu_s"] / max(1, r["requests"]) * 1e6),
            "rss_mib": rss_mib(server.pids), "peak_rss_mib": peak_rss_mib(server.pids),
        }
        if "per_node" in r:
            level["per_node"] = [{"acked": x["requests"] - x["non_2xx"], "latency_ms": x["latency_ms"]} for x in r["per_node"]]
        if d0 is not None:
            level["postgres_cpu_s_total"] = round(d1 - d0, 2)
            level["postgres_cpu_us_per_event"] = round((d1 - d0) / max(1, stored - before) * 1e6)
        statements = getattr(server, "statements", lambda events: None)(stored - before)
        wal = getattr(server, "wal", lambda events: None)(stored - before)
        if statements is not None:
            level["postgres_statements"], level["postgres_wal_per_event"] = statements, wal
        out["levels"].append(level)
        print("  %-10s c=%-3d acked/s %7.1f  grouped/s %7s  p50 %6.1f  p99 %7.1f ms  non-2xx %d  cpu/event %5d us  wrk %3d us/req  RSS %.0f (peak %.0f) MiB"
              % (server.label, conc, level["acked_per_s"], level["grouped_per_s"], r["latency_ms"]["p50"], r["latency_ms"]["p99"],
                 r["non_2xx"], level["server_cpu_us_per_event"], level["wrk_cpu_us_per_request"], level["rss_mib"],
                 level["peak_rss_mib"]), flush=True)
        if d0 is not None:
            print("  %-10s       PostgreSQL CPU %5.1f s = %d us/event; nodes + PostgreSQL %d us/event%s"
                  % ("", level["postgres_cpu_s_total"], level["postgres_cpu_us_per_event"],
                     level["server_cpu_us_per_event"] + level["postgres_cpu_us_per_event"],
                     "; acked per node %s" % "/".join(str(x["acked"]) for x in level["per_node"]) if "per_node" in level else ""),
                  flush=True)
        if wal:
            print("  %-10s       per event: %.3f commits, %.3f WAL flushes (fsync), %.3f WAL writes, %.1f WAL records, %.0f WAL bytes"
                  % ("", wal["commits"], wal["syncs"], wal["writes"], wal["records"], wal["bytes"]), flush=True)
        for st in statements or []:
            print("  %-10s       %7.1f us/event (planning %5.1f)  %6.3f calls/event  %6.1f rows/call  %s"
                  % ("", st["us_per_event"], st["plan_us_per_event"], st["calls_per_event"], st["rows_per_call"], st["query"][:100]),
                  flush=True)
    os.unlink(pool)
    return out


def wait_grouped(server, limit, target):
    """Waits until every acknowledged (and every stored) event is grouped; the time, or None."""
    deadline = time.time() + limit
    while time.time() < deadline:
        stored, grouped = server.counts()
        if grouped >= stored and grouped >= target:
            return time.time()
        time.sleep(0.1)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", action="append", default=[], help="LABEL=BINARY (repeatable; measured in this order)")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--durability", default="full")
    ap.add_argument("--bugsink", help="shared/bench/ingest directory: also measure Bugsink (c=16 only)")
    ap.add_argument("--bugsink-duration", type=int, default=20)
    ap.add_argument("--backends", help="sqlite,postgres,postgres2,postgres3: every --server's binary on each back end")
    ap.add_argument("--pg-statements", type=int, default=0, help="print the N statements PostgreSQL spent most time in")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    global STATEMENTS_TOP, PER_ADDRESS_CONNECTIONS
    STATEMENTS_TOP = args.pg_statements
    levels = [int(x) for x in args.levels.split(",")]
    PER_ADDRESS_CONNECTIONS = max(16, max(levels) + 4)  # + the harness's own API requests
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": machine(),
              "durability": args.durability, "duration_s": args.duration, "runs": []}
    if args.backends:
        servers = [spec.split("=", 1) for spec in args.server]
        result["binaries"] = dict(servers)
        for backend in args.backends.split(","):
            if backend not in BACKENDS:
                sys.exit("bench-ingest: unknown back end %r (%s)" % (backend, ", ".join(BACKENDS)))
        for backend in args.backends.split(","):
            for label, binary in servers:
                name = backend if len(servers) == 1 else "%s:%s" % (label, backend)
                c = Cluster(binary, args.durability, backend, name)
                print("bench-ingest: %s (%s), node pids %s%s, %s" % (name, binary, c.pids,
                      ", postmaster %d" % c.postmaster if c.postmaster else "", " + ".join(c.urls)), flush=True)
                try:
                    run = measure(c, levels, args.duration, args.warmup, 120)
                    run.update(backend=backend, binary=label)
                    result["runs"].append(run)
                finally:
                    c.stop()
    for spec in [] if args.backends else args.server:
        label, binary = spec.split("=", 1)
        s = Faultline(binary, args.durability, label)
        print("bench-ingest: %s (%s), pid %d, %s" % (label, binary, s.proc.pid, s.url), flush=True)
        try:
            result["runs"].append(measure(s, levels, args.duration, args.warmup, 120))
        finally:
            s.stop()
    if args.bugsink:
        try:
            b = Bugsink(args.bugsink)
        except Exception as e:  # noqa: BLE001 -- reported, the Faultline figures stand on their own
            result["bugsink_error"] = str(e)
            print("bench-ingest: Bugsink could not be set up: %s" % e, flush=True)
        else:
            print("bench-ingest: Bugsink %s, pids %s, %s" % (b.version, b.pids, b.url), flush=True)
            try:
                r = measure(b, [16], args.bugsink_duration, 0, 240)
                r["version"] = b.version
                result["runs"].append(r)
            finally:
                b.stop()
    result["load_after"] = open("/proc/loadavg").read().split()[:3]
    json.dump(result, open(args.out, "w"), indent=1)
    if args.backends:
        backend_ratios(result)
    else:
        ratios(result)
    print("raw results:", args.out)


def machine():
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
    return {"cpus": os.cpu_count(), "cpu": cpu[0] if cpu else "?", "kernel": os.uname().release,
            "load_before": open("/proc/loadavg").read().split()[:3]}


def backend_ratios(result):
    labels = sorted({r["binary"] for r in result["runs"]})
    for label in labels:
        by = {r["backend"]: {l["concurrency"]: l for l in r["levels"]} for r in result["runs"] if r["binary"] == label}
        backend_ratios_of(label if len(labels) > 1 else "", by)
    if len(labels) < 2:
        return
    print("\n%s / %s per back end (same run): grouped/s, acked/s, nodes + PostgreSQL CPU per event" % (labels[-1], labels[0]))
    runs = {(r["binary"], r["backend"]): {l["concurrency"]: l for l in r["levels"]} for r in result["runs"]}
    for (label, backend), levels in runs.items():
        if label != labels[-1] or (labels[0], backend) not in runs:
            continue
        for conc, x in sorted(levels.items()):
            y = runs[(labels[0], backend)].get(conc)
            if not y or not x["grouped_per_s"] or not y["grouped_per_s"]:
                continue
            tx = x["server_cpu_us_per_event"] + x.get("postgres_cpu_us_per_event", 0)
            ty = y["server_cpu_us_per_event"] + y.get("postgres_cpu_us_per_event", 0)
            print("  %-10s c=%-3d grouped/s x%.2f, acked/s x%.2f, CPU per event x%.2f" % (
                backend, conc, x["grouped_per_s"] / y["grouped_per_s"], x["acked_per_s"] / max(0.1, y["acked_per_s"]), tx / max(1, ty)))


def backend_ratios_of(label, by):
    pairs = [(a, b) for a, b in (("postgres", "sqlite"), ("postgres2", "sqlite"), ("postgres3", "sqlite"), ("postgres2", "postgres"),
                                 ("postgres3", "postgres")) if a in by and b in by]
    if not pairs:
        return
    print("\nratios (same run%s): grouped/s, server CPU per event (nodes), and nodes + PostgreSQL per event" % (", " + label if label else ""))
    for conc in sorted(by[pairs[0][0]]):
        for a, b in pairs:
            x, y = by[a].get(conc), by[b].get(conc)
            if not x or not y or not x["grouped_per_s"] or not y["grouped_per_s"]:
                continue
            tx = x["server_cpu_us_per_event"] + x.get("postgres_cpu_us_per_event", 0)
            ty = y["server_cpu_us_per_event"] + y.get("postgres_cpu_us_per_event", 0)
            print("  c=%-3d %s / %s: grouped/s x%.2f, server CPU/event x%.2f, with PostgreSQL x%.2f" % (
                conc, a, b, x["grouped_per_s"] / y["grouped_per_s"],
                x["server_cpu_us_per_event"] / max(1, y["server_cpu_us_per_event"]), tx / max(1, ty)))


def ratios(result):
    by = {r["server"]: {l["concurrency"]: l for l in r["levels"]} for r in result["runs"]}
    labels = list(by)
    if len(labels) < 2:
        return
    print("\nratios at c=16 (same run):")
    new = labels[-1] if "bugsink" not in labels else [l for l in labels if l != "bugsink"][-1]
    for other in labels:
        if other == new or 16 not in by[other] or 16 not in by[new]:
            continue
        a, b = by[new][16], by[other][16]
        g = (a["grouped_per_s"] or 0) / (b["grouped_per_s"] or float("nan")) if b["grouped_per_s"] else float("nan")
        print("  %s / %s: acked/s x%.1f, grouped/s x%.1f, server CPU per event x%.2f" % (
            new, other, a["acked_per_s"] / max(b["acked_per_s"], 0.1), g,
            a["server_cpu_us_per_event"] / max(1, b["server_cpu_us_per_event"])))


if __name__ == "__main__":
    main()
