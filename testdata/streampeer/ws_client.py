#!/usr/bin/env python3
"""A WebSocket MCP client like the LangGraph MCP docs' example, stdlib only.

The docs connect with `websockets.connect('ws://localhost:8000/mcp/ws')`:
no subprotocol offered, one JSON-RPC message per text frame. This client does
the same with its own minimal RFC 6455 code (independent of mcptape's Go
code and of any WebSocket library): initialize, notifications/initialized,
tools/list, then two chat calls sent back to back, whose streamed answers
(content_start, content_delta..., content_end) it reads until both ended.

Usage: ws_client.py ws://HOST:PORT/PATH
Environment: SUBPROTOCOL offers that subprotocol (default: none).
Prints one JSON object on stdout: the subprotocol the server selected, the
tools, per call id the frame count, joined deltas and usage, and whether the
two answers interleaved. Exit 0 when both answers ended, 1 otherwise.
"""
import base64
import hashlib
import json
import os
import socket
import struct
import sys
from urllib.parse import urlsplit

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class WS:
    def __init__(self, url, subprotocol=None):
        u = urlsplit(url)
        if u.scheme != "ws":
            raise SystemExit("want a ws:// URL, got %r" % url)
        self.sock = socket.create_connection((u.hostname, u.port or 80), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET %s HTTP/1.1" % (u.path or "/"), "Host: %s" % u.netloc, "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"]
        if subprotocol:
            lines.append("Sec-WebSocket-Protocol: " + subprotocol)
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise SystemExit("connection closed during the handshake: %r" % head)
            head += chunk
        status, *fields = head.decode("latin-1").split("\r\n")
        if " 101 " not in status + " ":
            raise SystemExit("upgrade refused: " + status)
        headers = {}
        for f in fields:
            if ":" in f:
                k, v = f.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        want = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        if headers.get("sec-websocket-accept") != want:
            raise SystemExit("bad Sec-WebSocket-Accept: %r" % headers)
        self.subprotocol = headers.get("sec-websocket-protocol", "")
        if self.subprotocol and self.subprotocol != subprotocol:
            raise SystemExit("server selected %r, which was not offered" % self.subprotocol)

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed")
            buf += chunk
        return buf

    def _send_frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send(self, msg):
        self._send_frame(0x1, json.dumps(msg).encode())

    def recv(self):
        """The next text message, decoded; None when the server closed."""
        data = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._exact(8))[0]
            if b1 & 0x80:
                raise SystemExit("the server masked a frame")
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:  # close: answer it
                self._send_frame(0x8, payload[:2])
                return None
            if opcode in (0x1, 0x0):
                data += payload
                if b0 & 0x80:
                    return json.loads(data)

    def close(self):
        self._send_frame(0x8, struct.pack("!H", 1000))
        try:
            while self.recv() is not None:
                pass
        except (EOFError, OSError):
            pass
        self.sock.close()


def call(ws, msg):
    """Sends a request and returns its answer, skipping anything else."""
    ws.send(msg)
    while True:
        m = ws.recv()
        if m is None:
            raise SystemExit("server closed before answering %s" % msg["method"])
        if m.get("id") == msg["id"]:
            return m


def main():
    ws = WS(sys.argv[1], os.environ.get("SUBPROTOCOL"))
    call(ws, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "ws-client.py", "version": "1"}}})
    ws.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = call(ws, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    queries = {3: "What is the weather?", "four": "Hello there"}
    for msg_id, query in queries.items():
        ws.send({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
                 "params": {"name": "chat", "arguments": {"query": query}}})
    answers = {str(i): {"frames": 0, "text": "", "usage": None, "ended": False} for i in queries}
    order = []
    while not all(a["ended"] for a in answers.values()):
        m = ws.recv()
        if m is None:
            break
        key = str(m.get("id"))
        if key not in answers:
            continue
        a, r = answers[key], m.get("result", {})
        a["frames"] += 1
        order.append(key)
        if r.get("type") == "content_delta":
            a["text"] += r.get("delta", "")
        elif r.get("type") == "content_end":
            a["usage"], a["ended"] = r.get("usage"), True
    ws.close()
    switches = sum(1 for x, y in zip(order, order[1:]) if x != y)
    print(json.dumps({"subprotocol": ws.subprotocol,
                      "tools": [t["name"] for t in tools["result"]["tools"]],
                      "answers": answers, "interleaved": switches >= 2}))
    return 0 if all(a["ended"] for a in answers.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
