// Preloaded with `node -r` by mcptape's internal/peertest so that test
// servers which call listen(port) without a host (server-everything's
// express apps do) bind the loopback address only, not every interface.
// MCPTAPE_PEER_HOST overrides the address (default 127.0.0.1).
'use strict';
const net = require('node:net');

const host = process.env.MCPTAPE_PEER_HOST || '127.0.0.1';
const original = net.Server.prototype.listen;

function isPort(v) {
  return typeof v === 'number' || (typeof v === 'string' && /^[0-9]+$/.test(v));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const first = args[0];
  if (isPort(first) && typeof args[1] !== 'string') {
    args.splice(1, 0, host);
  } else if (first !== null && typeof first === 'object' && !Array.isArray(first) &&
      first.port !== undefined && first.host === undefined && first.path === undefined) {
    args[0] = Object.assign({}, first, { host });
  }
  return original.apply(this, args);
};
