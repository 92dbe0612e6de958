#!/usr/bin/env python3
"""A real SMTP server for the alert tests: aiosmtpd's SMTP protocol on 127.0.0.1, port chosen by
the kernel (printed as "listening PORT" once it accepts), every message it receives written to
DIR as <n>.eml (envelope sender and recipients in X-Envelope-* headers first).

usage: smtp_sink.py DIR
"""
import asyncio
import os
import sys

from aiosmtpd.smtp import SMTP


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        head = "X-Envelope-From: %s\r\nX-Envelope-To: %s\r\n" % (envelope.mail_from, ",".join(envelope.rcpt_tos))
        data = envelope.original_content or envelope.content
        if isinstance(data, str):
            data = data.encode()
        path = os.path.join(self.directory, "%06d.eml" % self.count)
        with open(path + ".tmp", "wb") as f:
            f.write(head.encode() + data)
        os.rename(path + ".tmp", path)
        return "250 Message accepted for delivery"


async def main(directory):
    os.makedirs(directory, exist_ok=True)
    handler = Sink(directory)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler, enable_SMTPUTF8=True), "127.0.0.1", 0)
    print("listening %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
