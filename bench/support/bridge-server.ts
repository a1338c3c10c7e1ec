/**
 * The server side of `bench/bridge.ts`, its own process so its CPU can be read from /proc:
 * `node --conditions=source --import tsx bench/support/bridge-server.ts <raw|bridge>`.
 * `raw` answers with node:http alone (the floor); `bridge` goes through the Node bridge
 * (toWebRequest → a handler that reads the body → sendWebResponse), as every host does.
 * `BENCH_BRIDGE_MODULE=<file>` loads another version of the bridge instead (before/after).
 * Prints `{"port":N}` and stops when its standard input closes.
 */
import { createServer } from 'node:http';
import * as current from '../../packages/core/src/node/index.js';

const mode = process.argv[2] ?? 'bridge';
// BENCH_BRIDGE_MODULE: another version of the bridge (a file path), to compare before/after.
const bridge: typeof current = process.env.BENCH_BRIDGE_MODULE
  ? ((await import(process.env.BENCH_BRIDGE_MODULE)) as typeof current)
  : current;
const { requestOrigin, sendWebResponse, toWebRequest } = bridge;
const ANSWER = JSON.stringify({ status: 'valid', expires: '2026-12-01T00:00:00Z', identifiers: [] });

const server = createServer(
  { keepAlive: true },
  mode === 'raw'
    ? (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const body = `${ANSWER}${Buffer.concat(chunks).length}`;
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
            'replay-nonce': 'abcdefghijklmnop',
          });
          res.end(body);
        });
      }
    : (req, res) => {
        const request = toWebRequest(req, {
          origin: requestOrigin('http', req.headers.host, req.socket.localPort),
        });
        request
          .arrayBuffer()
          .then((bytes) => {
            const body = `${ANSWER}${bytes.byteLength}`;
            const response = new Response(body, {
              status: 200,
              headers: {
                'content-type': 'application/json',
                'content-length': String(Buffer.byteLength(body)),
                'replay-nonce': 'abcdefghijklmnop',
              },
            });
            return sendWebResponse(res, response, req.method);
          })
          .catch(() => res.destroy());
      },
);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 }));
});
process.stdin.resume();
process.stdin.on('end', () => server.close(() => process.exit(0)));
