import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Reply = (req: Received, res: http.ServerResponse) => void;

/** A real HTTP server on 127.0.0.1 (port 0) that records every request and answers with `reply`. */
export interface Receiver {
  port: number;
  received: Received[];
  reply: Reply;
  close(): Promise<void>;
}

export async function startReceiver(reply: Reply = (_, res) => res.end('ok')): Promise<Receiver> {
  const state: Receiver = { port: 0, received: [], reply, close: async () => {} };
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      state.received.push(got);
      state.reply(got, res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return state;
}
