// A real MCP server over WebSocket for mcptape's tests: the TypeScript
// SDK's low-level Server, one per connection, bridged to a WebSocket
// server of npm's ws package (subprotocol "mcp", one JSON-RPC message per
// text frame). Tools: echo {message} and add {a, b}.
//
// Usage: MCPTAPE_SDK=<dir holding node_modules> node server.mjs
// Prints "listening on ws://127.0.0.1:PORT/mcp" on stdout once it accepts
// connections; runs until killed.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const root = process.env.MCPTAPE_SDK;
const sdk = join(root, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Server } = await import(pathToFileURL(join(sdk, "server/index.js")).href);
const { CallToolRequestSchema, ListToolsRequestSchema, JSONRPCMessageSchema } =
  await import(pathToFileURL(join(sdk, "types.js")).href);
const { WebSocketServer } = createRequire(join(root, "package.json"))("ws");

const tools = [
  {
    name: "echo",
    description: "Returns its message.",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
  {
    name: "add",
    description: "Adds two numbers.",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  },
];

function newServer() {
  const server = new Server({ name: "mcptape-ws-ts-server", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case "echo":
        return { content: [{ type: "text", text: String(args.message) }] };
      case "add": {
        const sum = Number(args.a) + Number(args.b);
        return { content: [{ type: "text", text: String(sum) }], structuredContent: { sum } };
      }
      default:
        return { content: [{ type: "text", text: `unknown tool ${req.params.name}` }], isError: true };
    }
  });
  return server;
}

// socketTransport adapts one ws connection to the SDK's Transport interface.
function socketTransport(ws) {
  const t = {
    async start() {},
    async send(message) {
      ws.send(JSON.stringify(message));
    },
    async close() {
      ws.close();
    },
  };
  ws.on("message", (data, isBinary) => {
    if (isBinary) {
      t.onerror?.(new Error("binary frame: MCP over WebSocket sends text frames"));
      return;
    }
    let msg;
    try {
      msg = JSONRPCMessageSchema.parse(JSON.parse(data.toString("utf8")));
    } catch (err) {
      t.onerror?.(err);
      return;
    }
    t.onmessage?.(msg);
  });
  ws.on("close", () => t.onclose?.());
  ws.on("error", (err) => t.onerror?.(err));
  return t;
}

const wss = new WebSocketServer({
  host: "127.0.0.1",
  port: 0,
  path: "/mcp",
  handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
});
wss.on("connection", (ws) => {
  newServer().connect(socketTransport(ws)).catch((err) => {
    process.stderr.write(`connect: ${err}\n`);
    ws.close();
  });
});
wss.on("listening", () => {
  process.stdout.write(`listening on ws://127.0.0.1:${wss.address().port}/mcp\n`);
});
