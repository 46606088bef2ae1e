/**
 * The npm registry, and nothing else, for scripts/bare-machine.sh's network namespace,
 * where only `lo` is up: a laptop reaches the registry (the packaging test installs the
 * packed tarball, which resolves its dependencies there), but the run must not reach this
 * machine's services. A Unix socket crosses network namespaces, so:
 *
 *   node registry-relay.mjs proxy <socket> <host>   outside: an HTTP CONNECT proxy on the
 *       socket that opens tunnels to <host>:443 only, and refuses any other target;
 *   node registry-relay.mjs relay <socket> <file>   inside: listens on a free port of
 *       127.0.0.1 (written to <file>) and passes each connection to the socket.
 *
 * npm is pointed at the relay by `https-proxy` in the run's .npmrc. Both run until killed.
 */
import { writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

const [mode, socket, arg] = process.argv.slice(2);

/** Pipes `a` and `b` into each other; an error or end on either ends both. */
function splice(a, b) {
  a.pipe(b).pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}

if (mode === 'proxy') {
  createServer((client) => {
    client.once('data', (head) => {
      const target = /^CONNECT ([^\s:]+):(\d+) HTTP\/1\.[01]\r\n/.exec(head.toString('latin1'));
      if (!target || target[1] !== arg || target[2] !== '443') {
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      const upstream = connect(443, arg, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        splice(client, upstream);
      });
      upstream.once('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    });
    client.on('error', () => undefined);
  }).listen(socket);
} else if (mode === 'relay') {
  const server = createServer((c) => splice(c, connect(socket)));
  server.listen(0, '127.0.0.1', () => writeFileSync(arg, String(server.address().port)));
} else {
  console.error('usage: registry-relay.mjs proxy <socket> <host> | relay <socket> <port file>');
  process.exit(2);
}
