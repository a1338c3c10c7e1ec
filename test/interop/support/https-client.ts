/**
 * A minimal HTTPS client over node:https that keeps what fetch would normalise away: the
 * raw header list (repeated Set-Cookie, Content-Length vs chunked) and the body as bytes.
 */
import { request } from 'node:https';

export interface RawResponse {
  status: number;
  /** Header names lower-cased, values in the order received; repeated headers keep each value. */
  headers: Map<string, string[]>;
  body: Buffer;
}

export interface RawRequest {
  url: URL;
  method: string;
  headers?: Record<string, string>;
  /** Sent with Content-Length, or chunked when `chunked` is set. */
  body?: Uint8Array;
  chunked?: boolean;
  ca: string;
  cert?: string;
  key?: string;
}

export function send(options: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined && !options.chunked)
      headers['content-length'] = String(options.body.byteLength);
    const req = request(
      options.url,
      {
        method: options.method,
        headers,
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        // Verify the server as localhost even when a test sends a different Host header.
        servername: 'localhost',
        // A fresh connection per request: a client certificate belongs to one handshake.
        agent: false,
      },
      (res) => {
        const received = new Map<string, string[]>();
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = (res.rawHeaders[i] as string).toLowerCase();
          received.set(name, [...(received.get(name) ?? []), res.rawHeaders[i + 1] as string]);
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('response aborted')));
        res.on('end', () => {
          if (!res.complete) reject(new Error('response ended incomplete'));
          else resolve({ status: res.statusCode ?? 0, headers: received, body: Buffer.concat(chunks) });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined && options.chunked) {
      // Two writes so the body really travels as more than one chunk.
      const half = Math.floor(options.body.byteLength / 2);
      req.write(options.body.subarray(0, half));
      req.end(options.body.subarray(half));
    } else {
      req.end(options.body);
    }
  });
}
