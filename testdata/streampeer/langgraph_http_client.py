#!/usr/bin/env python3
"""An HTTP client of the LangGraph MCP docs' dialect, stdlib only.

Independent of mcptape's Go code, written from the docs' examples: it
reads the server's messages from an EventSource-like GET stream (http.client,
"data:" lines) and POSTs JSON-RPC with urllib (a new connection per POST,
no session header, no Accept header): initialize, notifications/initialized,
tools/list, a batch of three lists, then CALLS chat calls at once under
uuid4 ids (the docs' advice), whose chunks interleave on the stream.

Usage: langgraph_http_client.py URL [STREAM_PATH]   (default /mcp/stream)
Environment: CALLS (default 2); CUT=1 closes the stream after the first
delta and exits 0 without waiting for the end.
Prints one JSON line: {"ends": N, "chunks": N, "texts": {...}} and exits 0
when every call streamed to its end (or CUT), 1 otherwise.
"""
import http.client
import json
import os
import queue
import socket
import sys
import threading
import urllib.parse
import urllib.request
import uuid

URL = sys.argv[1]
STREAM_PATH = sys.argv[2] if len(sys.argv) > 2 else "/mcp/stream"
CALLS = int(os.environ.get("CALLS", "2"))
CUT = os.environ.get("CUT") == "1"


def post(msg):
    req = urllib.request.Request(URL, data=json.dumps(msg).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as resp:
        body = resp.read()
        return resp.status, (json.loads(body) if body.strip() else None)


def read_stream(resp, out):
    data = []
    while True:
        try:
            line = resp.readline()
        except (OSError, ValueError, AttributeError):
            line = b""  # closed by main (CUT, or the end)
        if not line:
            out.put(None)
            return
        line = line.decode().rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif line == "" and data:
            out.put(json.loads("\n".join(data)))
            data = []


def main():
    u = urllib.parse.urlsplit(URL)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    conn.connect()
    sock = conn.sock  # http.client forgets it once a streamed response starts

    def close_stream():
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()

    conn.request("GET", STREAM_PATH, headers={"Accept": "text/event-stream"})
    resp = conn.getresponse()
    if resp.status != 200:
        print("stream: HTTP %d" % resp.status, file=sys.stderr)
        return 1
    msgs = queue.Queue()
    threading.Thread(target=read_stream, args=(resp, msgs), daemon=True).start()

    st, init = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                                "clientInfo": {"name": "langgraph-http-client", "version": "1.0"}}})
    if st != 200 or init.get("id") != 1:
        print("initialize: %d %r" % (st, init), file=sys.stderr)
        return 1
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    st, tools = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    if "chat" not in [t["name"] for t in tools["result"]["tools"]]:
        print("no chat tool: %r" % tools, file=sys.stderr)
        return 1
    st, batch = post([{"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                      {"jsonrpc": "2.0", "id": 4, "method": "resources/list"},
                      {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}])
    if sorted(m["id"] for m in batch) != [3, 4, 5]:
        print("batch: %r" % batch, file=sys.stderr)
        return 1

    ids = [str(uuid.uuid4()) for _ in range(CALLS)]
    for i, rid in enumerate(ids):
        st, body = post({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "chat", "arguments": {"query": "Question %d" % i}}})
        if st != 202:
            print("chat: expected 202 and the chunks on the stream, got %d %r" % (st, body), file=sys.stderr)
            return 1
    texts = {rid: "" for rid in ids}
    ends = chunks = 0
    while ends < len(ids):
        try:
            m = msgs.get(timeout=20)
        except queue.Empty:
            break
        if m is None:
            break
        rid = m.get("id")
        if rid not in texts:
            continue  # another client's answer
        chunks += 1
        r = m.get("result", {})
        if r.get("type") == "content_delta":
            texts[rid] += r.get("delta", "")
            if CUT:
                close_stream()
                print(json.dumps({"ends": ends, "chunks": chunks, "cut": True}))
                return 0
        elif r.get("type") == "content_end":
            ends += 1
    close_stream()
    print(json.dumps({"ends": ends, "chunks": chunks, "texts": list(texts.values())}))
    return 0 if ends == len(ids) else 1


if __name__ == "__main__":
    sys.exit(main())
