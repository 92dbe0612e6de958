#!/usr/bin/env python3
"""Runs the ingest benchmark (called by tools/bench-ingest): for each server binary given, a fresh
`faultline serve`, then wrk (post_envelopes.lua) at each concurrency level; optionally Bugsink
(shared/bench/ingest/bugsink-up.sh) under the same wrk script in the same run. Per level: acked
events/s (wrk's 2xx over its run time), non-2xx, p50/p99, server CPU per event (utime+stime of the
server's process from /proc/PID/stat across the level), time until every stored event is grouped,
and peak RSS (VmHWM). Every number is measured here; nothing is quoted from elsewhere.
"""
import argparse, json, os, re, shutil, sqlite3, subprocess, sys, tempfile, time, urllib.request

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


def wrk(url, key, pool, conc, seconds):
    out = tempfile.mktemp(prefix="bench-ingest-wrk.", suffix=".json")
    env = dict(os.environ, INGEST_POOL=pool, INGEST_KEY=key, INGEST_OUT=out)
    t = time.time()
    # wrk's own CPU (children of this process) is read around the run: the generator shares the cores.
    c0 = os.times()
    subprocess.run(["wrk", "-t%d" % min(2, conc), "-c%d" % conc, "-d%ds" % seconds, "--timeout", "10s",
                    "-s", os.path.join(HERE, "post_envelopes.lua"), url], env=env, check=True, stdout=subprocess.DEVNULL)
    c1 = os.times()
    r = json.load(open(out))
    os.unlink(out)
    r["wrk_cpu_s"] = round((c1.children_user + c1.children_system) - (c0.children_user + c0.children_system), 2)
    r["wall_s"] = round(time.time() - t, 2)
    return r


def make_pool(dsn, path):
    subprocess.run([sys.executable, os.path.join(HERE, "make_envelopes.py"), "--dsn", dsn, "--out", path], check=True)


class Faultline:
    def __init__(self, binary, durability, label):
        self.label, self.binary = label, binary
        self.data = tempfile.mkdtemp(prefix="faultline-bench-ingest.")
        self.log = open(self.data + ".log", "w+")
        self.proc = subprocess.Popen([binary, "serve", "--data-dir", self.data, "--port", "0", "--install-cap", "0",
                                      "--durability", durability], stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(200):
            text = open(self.data + ".log").read()
            if "server token" in text:
                break
            time.sleep(0.05)
        self.dsn = re.search(r"^DSN: (\S+)", text, re.M).group(1)
        self.token = re.search(r"^server token.*: (\S+)", text, re.M).group(1)
        self.base = re.search(r"listening on (http://\S+)", text).group(1)
        self.key = self.dsn.split("//")[1].split("@")[0]
        self.project = self.dsn.rsplit("/", 1)[1]
        self.url = "%s/api/%s/envelope/" % (self.base, self.project)
        self.pids = [self.proc.pid]

    def counts(self):
        req = urllib.request.Request("%s/api/0/projects/faultline/%s/" % (self.base, self.project),
                                     headers={"Authorization": "Bearer " + self.token})
        p = json.load(urllib.request.urlopen(req, timeout=10))
        return p["occurrences"], p["processed"]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()
        if os.environ.get("FAULTLINE_PHASE_TIMES") == "1":  # the server's phase table, printed at its stop
            text = open(self.data + ".log").read()
            print(text[text.find("phase "):] if "phase " in text else "(no phase table in the server's output)")
        shutil.rmtree(self.data, ignore_errors=True)
        os.unlink(self.data + ".log")


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
    if warmup:
        w = wrk(server.url, server.key, pool, 4, warmup)
        wait_grouped(server, drain_limit, w["requests"] - w["non_2xx"])
    for conc in levels:
        before = server.counts()[1]
        c0 = cpu_seconds(server.pids)
        t0 = time.time()
        r = wrk(server.url, server.key, pool, conc, seconds)
        load_s = r["duration_us"] / 1e6
        c_load = cpu_seconds(server.pids)
        ok = r["requests"] - r["non_2xx"]
        drained = wait_grouped(server, drain_limit, before + ok)
        c1 = cpu_seconds(server.pids)
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
        out["levels"].append(level)
        print("  %-10s c=%-3d acked/s %7.1f  grouped/s %7s  p50 %6.1f  p99 %7.1f ms  non-2xx %d  cpu/event %5d us  wrk %3d us/req  RSS %.0f (peak %.0f) MiB"
              % (server.label, conc, level["acked_per_s"], level["grouped_per_s"], r["latency_ms"]["p50"], r["latency_ms"]["p99"],
                 r["non_2xx"], level["server_cpu_us_per_event"], level["wrk_cpu_us_per_request"], level["rss_mib"],
                 level["peak_rss_mib"]), flush=True)
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
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": machine(),
              "durability": args.durability, "duration_s": args.duration, "runs": []}
    for spec in args.server:
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
    ratios(result)
    print("raw results:", args.out)


def machine():
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
    return {"cpus": os.cpu_count(), "cpu": cpu[0] if cpu else "?", "kernel": os.uname().release,
            "load_before": open("/proc/loadavg").read().split()[:3]}


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
