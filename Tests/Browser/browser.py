#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol for the web tests (stdlib only).

Usage: browser.py STEPS.json RESULT.json
STEPS is a list of {"op": ...}:
  goto {url}                      navigate and wait for the load
  fill {selector, value}          set an input's value
  submit {selector}               click a submit button and wait for the next page
  eval {expr, save}               evaluate JS in the page (DevTools evaluation is not subject
                                  to the page's CSP) and save the JSON result under `save`
  screenshot {path, save}         save a PNG and record {width, height, colors} under `save`
  viewport {width, height}        size the page as a window of that size would (default 1280x900)
  sleep {seconds}                 wait (only where a test looks for something that must NOT happen)
RESULT: {"values": {...}, "requests": [every URL the page requested], "console": [...],
         "dialogs": [...], "error": null | "..."}
A canary a hostile payload would call is the Swift test's own server (ScriptedHTTPServer, listening
on a port the kernel chose for the whole test), not this script's: a port handed to this script to
bind could be taken by another process in between.
Exit status 0 even when a step fails (the error is in RESULT) so the Swift test can report it;
exit 2 when Chromium cannot be started at all.
"""
import base64, json, os, shutil, socket, struct, subprocess, sys, tempfile, time, urllib.request, zlib


class WebSocket:
    def __init__(self, url):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("websocket handshake failed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("websocket handshake refused: " + head.decode(errors="replace"))

    def send(self, text):
        data = text.encode()
        header = bytearray([0x81])
        n = len(data)
        if n < 126:
            header.append(0x80 | n)
        elif n < 65536:
            header.append(0x80 | 126); header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127); header += struct.pack(">Q", n)
        mask = os.urandom(4)
        header += mask
        self.sock.sendall(bytes(header) + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise RuntimeError("websocket closed")
            buf += chunk
        return bytes(buf)

    def recv(self):
        message = bytearray()
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 8:
                raise RuntimeError("websocket closed by browser")
            if opcode in (9, 10):
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Browser:
    def __init__(self):
        exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if not exe:
            raise FileNotFoundError("chromium is not installed (tools/setup installs Debian's chromium package)")
        self.profile = tempfile.mkdtemp(prefix="faultline-chromium-")
        self.proc = subprocess.Popen([exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                      "--disable-extensions", "--remote-debugging-port=0", "--window-size=1280,900",
                                      "--hide-scrollbars", f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = int(open(port_file).read().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events = []
        self.requests, self.console, self.dialogs = [], [], []
        for domain in ("Page.enable", "Runtime.enable", "Network.enable"):
            self.call(domain)

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.on_event(msg)

    def on_event(self, msg):
        m = msg.get("method")
        p = msg.get("params", {})
        if m == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])
        elif m == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Page.javascriptDialogOpening":
            self.dialogs.append(p.get("message", ""))
            self.call("Page.handleJavaScriptDialog", accept=True)
        self.events.append(m)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluating {expr!r}: {r['exceptionDetails'].get('text')}")
        return r.get("result", {}).get("value")

    def wait_loaded(self, marker_gone=False, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                state = self.eval("[document.readyState, typeof window.__flMarker]")
                if state[0] == "complete" and (not marker_gone or state[1] == "undefined"):
                    return
            except RuntimeError:
                pass  # the context is being replaced by the navigation
            time.sleep(0.05)
        raise RuntimeError("page did not finish loading")

    def close(self):
        try:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def png_summary(data):
    """Width, height and number of distinct colours (capped) of an 8-bit RGB/RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), f"unexpected PNG format depth={depth} type={ctype}"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colors = set()
    i = 0
    for _ in range(height):
        ftype = raw[i]; i += 1
        line = bytearray(raw[i:i + stride]); i += stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1: line[x] = (line[x] + a) & 0xFF
            elif ftype == 2: line[x] = (line[x] + b) & 0xFF
            elif ftype == 3: line[x] = (line[x] + ((a + b) >> 1)) & 0xFF
            elif ftype == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 0xFF
        if len(colors) < 1000:
            for x in range(0, stride, bpp * 7):
                colors.add(bytes(line[x:x + 3]))
        prev = line
    return {"width": width, "height": height, "colors": len(colors), "bytes": len(data)}


def main():
    steps = json.load(open(sys.argv[1]))
    out_path = sys.argv[2]
    result = {"values": {}, "requests": [], "console": [], "dialogs": [], "error": None}
    try:
        browser = Browser()
    except Exception as e:  # no chromium: the test must fail, not skip
        result["error"] = f"cannot start chromium: {e}"
        json.dump(result, open(out_path, "w"))
        sys.exit(2)
    try:
        for step in steps:
            op = step["op"]
            if op == "goto":
                browser.call("Page.navigate", url=step["url"])
                time.sleep(0.05)
                browser.wait_loaded()
            elif op == "fill":
                browser.eval(f"document.querySelector({json.dumps(step['selector'])}).value = {json.dumps(step['value'])}")
            elif op == "submit":
                browser.eval("window.__flMarker = 1")
                browser.eval(f"document.querySelector({json.dumps(step['selector'])}).click()")
                browser.wait_loaded(marker_gone=True)
            elif op == "eval":
                result["values"][step["save"]] = browser.eval(step["expr"])
            elif op == "screenshot":
                shot = base64.b64decode(browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"])
                with open(step["path"], "wb") as f:
                    f.write(shot)
                result["values"][step["save"]] = png_summary(shot)
            elif op == "viewport":
                browser.call("Emulation.setDeviceMetricsOverride", width=step["width"], height=step["height"],
                             deviceScaleFactor=1, mobile=False)
            elif op == "sleep":
                time.sleep(step.get("seconds", 0.5))
            else:
                raise RuntimeError(f"unknown op {op}")
        time.sleep(0.3)  # let late requests (a payload's fetch) arrive
        browser.eval("1")
    except Exception as e:
        result["error"] = f"{type(e).__name__}: {e}"
    finally:
        result["requests"], result["console"], result["dialogs"] = browser.requests, browser.console, browser.dialogs
        browser.close()
        json.dump(result, open(out_path, "w"))


if __name__ == "__main__":
    main()
