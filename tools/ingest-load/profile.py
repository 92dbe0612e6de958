#!/usr/bin/env python3
"""Where ingest's CPU goes (called by tools/profile-ingest): for each server binary given, a fresh
`faultline serve` (SQLite, --durability full) takes the bench's wrk load (post_envelopes.lua, the
shared generator's 13.7 KB native crash envelopes) at one concurrency; then, per stored-and-grouped
event: server CPU (utime+stime across the load and the drain until everything is grouped), write
calls and bytes (/proc/PID/io), and with --perf the share of the CPU samples (perf record -g) under
each part of the path, turned into microseconds per event. Parts are inclusive (a part's callees
count in it), so they overlap and do not add up to the total.

  profile.py --server LABEL=BINARY [--server ...] [--seconds 10] [--concurrency 16] [--perf]
             [--keep-perf PREFIX] [--out FILE]
"""
import argparse, statistics, json, os, re, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # the bench's server wrapper, wrk runner and counters: the same load as tools/bench-ingest

# (label, perf symbol pattern, thread name or None): inclusive parts of the ingest path.
PARTS = [
    ("HTTP connection threads (all)", None, "MHD-connection"),
    ("  IngestHandler.ingest", r"IngestHandlerC6ingest_7project", None),
    ("    inflate + envelope framing", r"EnvelopeDecoderO6framed_", None),
    ("    JSON parse of the event", r"JSONParserO11parseObject_(7keeping|9selecting)", None),
    ("    stack signature", r"StackExtractorO(9signature|16defaultSignature)2of", None),
    ("    freeing the parsed event", r"DecodedSubmissionVwxx", None),
    ("    store: waiting for the commit", r"SQLiteStoreC.*storeIngest", None),
    ("  request line and headers (preflight)", r"HTTPServerC16refusalAtHeaders", None),
    # The writer's own total is its thread's CPU (printed above): libsqlite3 has no frame
    # pointers, so samples inside it do not reach SQLiteWriter.run in the call chains.
    ("write calls (WAL frames, journals: writer, checkpoints)", r"^__libc_pwrite$", None),
    ("fdatasync (the commits' fsync)", r"^fdatasync$", None),
    ("Grouping worker: a batch", r"EventProcessorC5group", None),
    ("  fingerprints", r"FingerprinterO11fingerprint_", None),
    ("  recording the batch (SQL, in the writer)", r"SQLiteStoreC14recordGrouping", None),
    ("malloc/free (all threads, self)", r"^(malloc|_int_malloc|_int_free|cfree@GLIBC_2.2.5|malloc_consolidate|unlink_chunk.constprop.0)$", None),
]


def io_counters(pid):
    out = {}
    for line in open("/proc/%d/io" % pid):
        k, v = line.split(":")
        out[k] = int(v)
    return out


def thread_cpu(pid):
    """Per thread of the server: (name, utime+stime seconds). Connection threads end with their
    connection, so only the long-lived threads (writer, grouping, checkpoints) are read from this."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            text = open("/proc/%d/task/%s/stat" % (pid, tid)).read()
        except FileNotFoundError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        parts = text.rsplit(")", 1)[1].split()
        out[tid] = (name, (int(parts[11]) + int(parts[12])) / bench.TICK)
    return out


def perf_parts(data, pid):
    """Inclusive sample share per part, from `perf report --children` (symbols) and per thread name."""
    rep = subprocess.run(["perf", "report", "-i", data, "--pid", str(pid), "--percentage", "relative", "--children", "--sort", "symbol", "--stdio", "-g", "none"],
                         capture_output=True, text=True).stdout
    rows = []
    for line in rep.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+\[.\]\s+(\S+)", line) or re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+\[k\]\s+(\S+)", line)
        if m:
            rows.append((float(m.group(1)), float(m.group(2)), m.group(3)))
    comm = subprocess.run(["perf", "report", "-i", data, "--pid", str(pid), "--percentage", "relative", "--no-children", "--sort", "comm", "--stdio", "-g", "none"],
                          capture_output=True, text=True).stdout
    by_comm = {}
    for line in comm.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(.+?)\s*$", line)
        if m:
            by_comm[m.group(2)] = by_comm.get(m.group(2), 0) + float(m.group(1))
    shares = []
    for label, pattern, thread in PARTS:
        if thread:
            share = sum(v for k, v in by_comm.items() if k.startswith(thread))
        elif label.startswith("malloc"):
            share = sum(s for _, s, name in rows if re.search(pattern, name))
        else:
            # The largest inclusive share among matching symbols (specialisations and thunks of one
            # function repeat its share; summing them would count it twice).
            share = max([c for c, _, name in rows if re.search(pattern, name)] or [0])
        shares.append((label, share))
    top_self = sorted(rows, key=lambda r: -r[1])[:25]
    dso = subprocess.run(["perf", "report", "-i", data, "--pid", str(pid), "--percentage", "relative", "--no-children", "--sort", "dso", "--stdio", "-g", "none"],
                         capture_output=True, text=True).stdout
    by_library = [(m.group(2), float(m.group(1))) for m in (re.match(r"\s+([\d.]+)%\s+(\S+)", l) for l in dso.splitlines()) if m][:8]
    return shares, top_self, by_library


def profile(label, binary, seconds, conc, use_perf, keep_perf=None):
    server = bench.Faultline(binary, "full", label)
    pool = tempfile.mktemp(prefix="profile-ingest-pool.", suffix=".lua")
    try:
        bench.make_pool(server.dsn, pool)
        w = bench.wrk([server.url], server.key, pool, 4, 2)
        bench.wait_grouped(server, 120, w["requests"] - w["non_2xx"])
        before = server.counts()[1]
        c0, io0, t0 = bench.cpu_seconds(server.pids), io_counters(server.proc.pid), thread_cpu(server.proc.pid)
        perf = None
        if use_perf:
            data = tempfile.mktemp(prefix="profile-ingest.", suffix=".perf")
            # System-wide, filtered to the server at report time: attaching to a process (-p) missed
            # connection threads started while perf was still attaching.
            perf = subprocess.Popen(["perf", "record", "-a", "-F", "999", "-g", "-o", data],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = bench.wrk([server.url], server.key, pool, conc, seconds)
        ok = r["requests"] - r["non_2xx"]
        bench.wait_grouped(server, 120, before + ok)
        if perf:
            perf.send_signal(2)
            perf.wait(timeout=120)
        c1, io1, t1 = bench.cpu_seconds(server.pids), io_counters(server.proc.pid), thread_cpu(server.proc.pid)
        events = server.counts()[1] - before
        out = {"server": label, "binary": binary, "concurrency": conc, "events": events, "acked_per_s": round(ok / (r["duration_us"] / 1e6), 1),
               "cpu_us_per_event": round((c1 - c0) / max(1, events) * 1e6),
               "write_calls_per_event": round((io1["syscw"] - io0["syscw"]) / max(1, events), 1),
               "written_kib_per_event": round((io1["wchar"] - io0["wchar"]) / max(1, events) / 1024, 1)}
        # Long-lived threads other than the connections', busiest first: the SQLite writer, then grouping.
        others = sorted(((t1[k][1] - t0[k][1], t1[k][0], k) for k in t1 if k in t0 and not t1[k][0].startswith("MHD")), reverse=True)
        out["long_lived_threads_us_per_event"] = [
            {"tid": k, "name": n, "us_per_event": round(c / max(1, events) * 1e6)} for c, n, k in others if c > 0]
        print("%-10s c=%d events %d  acked/s %.0f  CPU %d us/event  write calls %.1f/event  written %.1f KiB/event"
              % (label, conc, events, out["acked_per_s"], out["cpu_us_per_event"], out["write_calls_per_event"], out["written_kib_per_event"]), flush=True)
        print("  long-lived threads (us/event, busiest first; the SQLite writer leads, grouping next): "
              + ", ".join("%s/%s %d" % (t["name"], t["tid"], t["us_per_event"]) for t in out["long_lived_threads_us_per_event"][:6]), flush=True)
        if perf:
            shares, top_self, by_library = perf_parts(data, server.proc.pid)
            out["by_library_self"] = [{"library": n, "share_pct": v, "us_per_event": round(v / 100 * out["cpu_us_per_event"])} for n, v in by_library]
            out["parts"] = [{"part": p, "share_pct": round(s, 2), "us_per_event": round(s / 100 * out["cpu_us_per_event"])} for p, s in shares]
            out["top_self"] = [{"symbol": n, "self_pct": s} for _, s, n in top_self]
            for p in out["parts"]:
                print("  %-44s %5.1f %%  %5d us/event" % (p["part"], p["share_pct"], p["us_per_event"]))
            print("  by library (self): " + ", ".join("%s %d us" % (b["library"], b["us_per_event"]) for b in out["by_library_self"]))
            print("  top self (% of samples): " + ", ".join("%s %.1f" % (t["symbol"][:60], t["self_pct"]) for t in out["top_self"][:12]))
            if keep_perf:
                kept = "%s.%s.perf" % (keep_perf, label)
                shutil.move(data, kept)
                print("  perf data kept: %s (server pid %d)" % (kept, server.proc.pid), flush=True)
            else:
                os.unlink(data)
        return out
    finally:
        server.stop()
        if os.path.exists(pool):
            os.unlink(pool)


def print_pairs(specs, runs, results):
    """Per pair: CPU per event of each server and the second's over the first's; then medians."""
    a, b = specs[0][0], specs[1][0]
    pairs = [(runs[2 * i], runs[2 * i + 1]) for i in range(len(runs) // 2)]
    cpu = {a: [], b: []}
    acked = {a: [], b: []}
    for x, y in pairs:
        for r in (x, y):
            cpu[r["server"]].append(r["cpu_us_per_event"])
            acked[r["server"]].append(r["acked_per_s"])
    ratios = [cpu[b][i] / cpu[a][i] for i in range(len(pairs)) if cpu[a][i]]
    print("pairs (ABBA): CPU us/event %s %s, %s %s" % (a, cpu[a], b, cpu[b]))
    print("pairs (ABBA): acked/s %s %s, %s %s" % (a, acked[a], b, acked[b]))
    print("%s / %s CPU per event, per pair: %s; median %.3f (%d of %d pairs lower)"
          % (b, a, " ".join("%.2f" % r for r in ratios), statistics.median(ratios), sum(r < 1 for r in ratios), len(ratios)))
    print("medians: %s %d us/event, %s %d us/event" % (a, statistics.median(cpu[a]), b, statistics.median(cpu[b])))
    results["pairs"] = {"first": a, "second": b, "cpu_us_per_event": cpu, "acked_per_s": acked, "ratios": ratios,
                        "median_ratio": statistics.median(ratios)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", action="append", default=[], help="LABEL=BINARY (repeatable; measured in this order)")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--keep-perf", metavar="PREFIX", help="keep each server's perf data as PREFIX.LABEL.perf for perf report")
    ap.add_argument("--pairs", type=int, default=0,
                    help="with two --server: N pairs in ABBA order, then the per-pair ratios and medians")
    args = ap.parse_args()
    bench.PER_ADDRESS_CONNECTIONS = max(16, args.concurrency + 4)  # all of wrk's connections share one address
    load = open("/proc/loadavg").read().split()[:3]
    print("profile-ingest: %s UTC, load average %s" % (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()), " ".join(load)), flush=True)
    results = {"load_average": load, "runs": []}
    specs = [tuple(spec.split("=", 1)) for spec in args.server]
    if args.pairs:
        if len(specs) != 2:
            ap.error("--pairs needs exactly two --server")
        # ABBA: the VM moves between a faster and a slower mode within minutes, so each pair is
        # measured back to back and the verdict is the median of the pairs' ratios.
        order = []
        for i in range(args.pairs):
            order += [specs[0], specs[1]] if i % 2 == 0 else [specs[1], specs[0]]
        runs = [profile(label, binary, args.seconds, args.concurrency, args.perf, args.keep_perf) for label, binary in order]
        results["runs"] = runs
        print_pairs(specs, runs, results)
    else:
        for label, binary in specs:
            results["runs"].append(profile(label, binary, args.seconds, args.concurrency, args.perf, args.keep_perf))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        print("raw results: %s" % args.out)


if __name__ == "__main__":
    main()
