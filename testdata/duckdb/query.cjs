// query.cjs runs SQL queries with the pinned DuckDB, for mcptape's tests.
// Usage: node query.cjs QUERIES.json, where the file holds an array of
// {"name": ..., "sql": ...}; it prints one JSON object mapping each name to
// its rows (objects, numbers as JSON numbers or strings for big integers).
// Paths in the queries are relative to the working directory.
'use strict';
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const queries = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const out = {};
  for (const q of queries) {
    try {
      const reader = await conn.runAndReadAll(q.sql);
      out[q.name] = reader.getRowObjectsJson();
    } catch (e) {
      process.stderr.write(`query ${q.name}: ${e.message}\n`);
      process.exitCode = 1;
      return;
    }
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exitCode = 1; });
