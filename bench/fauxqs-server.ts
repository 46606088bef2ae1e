import { startFauxqs } from 'fauxqs';

/**
 * fauxqs, the in-memory peer (targets.ts): on a free loopback port, with no request log,
 * announcing itself with the same "listening" line as Redrive so run.ts starts it alike.
 */
const server = await startFauxqs({ port: 0, host: '127.0.0.1', logger: false });
console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${server.port}` }));
process.once('SIGTERM', () => {
  void server.stop().finally(() => process.exit(0));
});
