// A real MCP client over WebSocket for mcptape's tests: the TypeScript
// SDK's Client with its WebSocketClientTransport (subprotocol "mcp", one
// message per text frame, Node 22's global WebSocket).
//
// Usage: MCPTAPE_SDK=<dir holding node_modules> node client.mjs ws://HOST/PATH
// Prints one JSON line: the tools listed and the results of two calls.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const sdk = join(process.env.MCPTAPE_SDK, "node_modules/@modelcontextprotocol/sdk/dist/esm/client");
const { Client } = await import(pathToFileURL(join(sdk, "index.js")).href);
const { WebSocketClientTransport } = await import(pathToFileURL(join(sdk, "websocket.js")).href);

const client = new Client({ name: "mcptape-ws-peer", version: "1.0.0" });
await client.connect(new WebSocketClientTransport(new URL(process.argv[2])));
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const echo = await client.callTool({ name: "echo", arguments: { message: "hi over ws" } });
const add = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
const server = client.getServerVersion();
await client.close();
process.stdout.write(JSON.stringify({ server: server.name, tools, echo, add }) + "\n");
