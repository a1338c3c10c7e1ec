import { request } from 'node:https';
import { type AgentConnection, requireHttpsUrl } from './config.js';

/** Largest answer the agent reads; a work poll with 20 items and chains fits easily. */
const MAX_BODY = 8 * 1024 * 1024;
const TIMEOUT_MS = 30_000;

/** A non-2xx answer of the server; `status` 0 when no answer arrived (network, TLS, timeout). */
export class AgentHttpError extends Error {
  override name = 'AgentHttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
  /** Worth retrying later: no answer, a server error or rate limiting. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/**
 * The agent's HTTPS layer: JSON over node:https with the agent key as bearer token and the
 * configured trust (CA bundle or, when asked, none). Four routes need no more than this.
 */
export class AgentHttp {
  readonly #base: URL;
  readonly #connection: AgentConnection;

  constructor(connection: AgentConnection) {
    this.#base = requireHttpsUrl(connection.serverUrl);
    this.#connection = connection;
  }

  post<T>(path: string, body?: unknown, token = this.#connection.apiKey): Promise<T> {
    const base = this.#base.pathname.replace(/\/+$/, '');
    const url = new URL(this.#base.origin + base + path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise<T>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
          ...(this.#connection.caBundlePem ? { ca: this.#connection.caBundlePem } : {}),
          rejectUnauthorized: !this.#connection.insecureSkipVerify,
          timeout: TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY) {
              req.destroy(new AgentHttpError(0, `answer of ${path} exceeds ${MAX_BODY} bytes`));
              return;
            }
            chunks.push(c);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              if (text && json === undefined) {
                reject(new AgentHttpError(502, `answer of ${path} is not JSON`));
                return;
              }
              resolve(json as T);
              return;
            }
            const detail =
              json && typeof json === 'object' && 'detail' in json
                ? String((json as { detail: unknown }).detail)
                : '';
            reject(
              new AgentHttpError(
                status,
                `POST ${path} answered ${status}${detail ? `: ${detail}` : ''}`,
                json,
              ),
            );
          });
          res.on('error', (e) => reject(new AgentHttpError(0, `POST ${path}: ${e.message}`)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', (e) =>
        reject(e instanceof AgentHttpError ? e : new AgentHttpError(0, `POST ${path}: ${e.message}`)),
      );
      req.end(payload);
    });
  }
}
