import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The ceiling: a node:http server that does no queue work at all. It reads each request
 * body whole (as Redrive must) and answers with a fixed SendMessage or SendMessageBatch
 * response of realistic size. Redrive's figures divided by this server's, measured in
 * the same run on the same machine, say how much of Node's HTTP capacity Redrive keeps.
 */
const CONTENT_TYPE = 'application/x-amz-json-1.0';

const sendResult = (i?: number) => ({
  ...(i === undefined ? {} : { Id: `m${i}` }),
  MessageId: '5fea7756-0ea4-451a-a703-a558b933e274',
  MD5OfMessageBody: 'fafb00f5732ab283681e124bf8747ed1',
});
const single = JSON.stringify(sendResult());
const batch = JSON.stringify({ Successful: Array.from({ length: 10 }, (_, i) => sendResult(i)) });

const server = createServer({ keepAlive: true }, (req, res) => {
  const body = req.headers['x-amz-target'] === 'AmazonSQS.SendMessageBatch' ? batch : single;
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, {
      'content-type': CONTENT_TYPE,
      'x-amzn-requestid': '00000000-0000-0000-0000-000000000000',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
});
// Same socket limits as Redrive's front, so neither side gains from different timeouts.
server.keepAliveTimeout = 60_000;

const port = Number(process.argv[2] ?? 0);
server.listen(port, '127.0.0.1', () => {
  const { port: actual } = server.address() as AddressInfo;
  // Imitates Redrive's log line, so run.ts starts both servers the same way.
  console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${actual}` }));
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
