import { type Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface HttpsReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Common name of the certificate the server presented on this connection. */
  peerCn: string;
  /** The body parsed as JSON, or undefined when empty. */
  json: any;
}

export interface HttpsOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Default: no agent, so no keep-alive and no TLS session reuse between calls. */
  agent?: Agent | false;
}

/** One HTTPS request to the server under test on 127.0.0.1, verifying it against `ca`. */
export function httpsCall(
  port: number,
  ca: Buffer,
  path: string,
  options: HttpsOptions = {},
): Promise<HttpsReply> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path,
        method: options.method ?? 'GET',
        ca,
        agent: options.agent ?? false,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers },
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            peerCn: String(peer?.subject?.CN ?? ''),
            json: text && /json/.test(String(res.headers['content-type'])) ? JSON.parse(text) : undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
