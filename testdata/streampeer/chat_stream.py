#!/usr/bin/env python3
"""A stdio MCP server in the streaming dialect of the LangGraph MCP docs.

Independent of mcptape's Go code: it answers initialize, tools/list and
ping once, and a tools/call of "chat" with several results under the call's
id: content_start, CHUNKS content_delta, content_end with usage. Each call
streams on its own thread, so the answers of concurrent calls interleave. Environment: CHUNKS (default 3),
CUT=1 stops every stream before its end result, LATE=1 sends one more delta
after each end result.
"""
import json
import os
import sys
import threading
import time

CHUNKS = int(os.environ.get("CHUNKS", "3"))
CUT = os.environ.get("CUT") == "1"
LATE = os.environ.get("LATE") == "1"


def send(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


def frames(msg_id, query):
    yield {"type": "content_start"}
    for i in range(1, CHUNKS + 1):
        yield {"type": "content_delta", "delta": "%s #%d " % (query, i)}
    if CUT:
        return
    words = len(query.split())
    yield {"type": "content_end", "conversation_id": "conv_%s" % msg_id,
           "usage": {"prompt_tokens": words, "completion_tokens": CHUNKS, "total_tokens": words + CHUNKS}}
    if LATE:
        yield {"type": "content_delta", "delta": "late"}


LOCK = threading.Lock()


def stream(msg_id, query):
    # Each call streams on its own thread, a frame every few milliseconds:
    # the answers of concurrent calls interleave.
    for result in frames(msg_id, query):
        time.sleep(0.005)
        with LOCK:
            send(msg_id, result)


def main():
    threads = []
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        method, msg_id = msg.get("method"), msg.get("id")
        if msg_id is None:
            continue
        with LOCK:
            if method == "initialize":
                send(msg_id, {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                              "capabilities": {"tools": {}}, "serverInfo": {"name": "py-stream", "version": "1"}})
            elif method == "tools/list":
                send(msg_id, {"tools": [{"name": "chat", "inputSchema": {"type": "object"}}]})
            elif method == "tools/call" and msg["params"].get("name") == "chat":
                th = threading.Thread(target=stream, args=(msg_id, msg["params"]["arguments"].get("query", "")))
                th.start()
                threads.append(th)
            else:
                send(msg_id, {})
    for th in threads:
        th.join()


if __name__ == "__main__":
    main()
