#!/usr/bin/env python3
"""Writes the three files sentry-native's Crashpad backend keeps in its run folder and passes to
crashpad_handler as `--attachment`s, as sentry-native writes them: `__sentry-event` (the scope's
event as one MessagePack map) and `__sentry-breadcrumb1` / `__sentry-breadcrumb2` (breadcrumbs
appended one MessagePack map at a time, the second file holding the newer ones once the first is
full). The encoder is written here from the MessagePack specification, apart from the server's
reader, so the test does not check the reader against itself.

Usage: write_scope_files.py DIR RELEASE
Prints the JSON of what it wrote (the event and both breadcrumb lists) for the test to compare.
"""
import json, os, struct, sys


def pack(v):
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if v is False:
        return b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 0x80:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack(">b", v)
        if 0 <= v <= 0xFFFFFFFF:
            return b"\xce" + struct.pack(">I", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode("utf-8")
        if len(b) < 32:
            return bytes([0xA0 | len(b)]) + b
        if len(b) < 0x100:
            return b"\xd9" + bytes([len(b)]) + b
        return b"\xda" + struct.pack(">H", len(b)) + b
    if isinstance(v, list):
        head = bytes([0x90 | len(v)]) if len(v) < 16 else b"\xdc" + struct.pack(">H", len(v))
        return head + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        head = bytes([0x80 | len(v)]) if len(v) < 16 else b"\xde" + struct.pack(">H", len(v))
        return head + b"".join(pack(k) + pack(x) for k, x in v.items())
    raise TypeError(type(v))


def main():
    directory, release = sys.argv[1], sys.argv[2]
    event = {
        "release": release,
        "environment": "staging",
        "level": "fatal",
        "user": {"id": "install-42", "ip_address": "{{auto}}"},
        "tags": {"shop": "north", "build": "nightly"},
        "contexts": {"runtime": {"name": "crashpad_app", "version": "1.0"}},
        "extra": {"seats": 3},
        "sdk": {"name": "sentry.native", "version": "0.7.17", "packages": [{"name": "github:getsentry/sentry-native", "version": "0.7.17"}]},
        "dist": None,
    }
    older = [{"timestamp": "2026-12-02T10:00:0%d.000Z" % i, "type": "default", "category": "shelf", "message": "restock %d" % i, "level": "info"}
             for i in range(1, 6)]
    newer = [{"timestamp": "2026-12-02T10:00:1%d.000Z" % i, "type": "default", "category": "shelf", "message": "restock %d" % (10 + i),
              "level": "warning", "data": {"count": i}} for i in range(1, 4)]
    with open(os.path.join(directory, "__sentry-event"), "wb") as f:
        f.write(pack(event))
    for name, crumbs in (("__sentry-breadcrumb1", older), ("__sentry-breadcrumb2", newer)):
        with open(os.path.join(directory, name), "wb") as f:
            for c in crumbs:
                f.write(pack(c))
    print(json.dumps({"event": event, "breadcrumb1": older, "breadcrumb2": newer}))


main()
