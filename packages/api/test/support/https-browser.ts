import { request as httpsRequest } from 'node:https';

export interface SimpleResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  url: string;
}

/** One HTTPS request on loopback trusting `ca`; no redirects followed. */
export function httpsCall(
  ca: string | string[],
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<SimpleResponse> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: init.method ?? 'GET', headers: init.headers, ca, minVersion: 'TLSv1.2' },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            url,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (init.body !== undefined) req.write(init.body);
    req.end();
  });
}

/**
 * A browser enough for sign-in flows: keeps cookies per origin (honouring Max-Age=0), follows
 * redirects across origins, sends one User-Agent.
 */
export class CookieBrowser {
  readonly jar = new Map<string, Map<string, string>>();
  constructor(
    private readonly ca: string[],
    public userAgent = 'Mozilla/5.0 (certwright test browser)',
  ) {}

  cookie(origin: string, name: string): string | undefined {
    return this.jar.get(origin)?.get(name);
  }

  async request(
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
    follow = true,
  ): Promise<SimpleResponse & { trail: string[] }> {
    const trail: string[] = [];
    let current = url;
    let method = init.method ?? 'GET';
    let body = init.body;
    let headers = init.headers ?? {};
    for (let hop = 0; hop < 20; hop += 1) {
      const origin = new URL(current).origin;
      const cookies = [...(this.jar.get(origin) ?? new Map()).entries()]
        .map(([k, v]) => `${k}=${v}`)
        .join('; ');
      const res = await httpsCall(this.ca, current, {
        method,
        headers: { 'user-agent': this.userAgent, ...(cookies ? { cookie: cookies } : {}), ...headers },
        ...(body !== undefined ? { body } : {}),
      });
      this.store(origin, res.headers['set-cookie']);
      trail.push(`${res.status} ${current}`);
      const location = res.headers.location as string | undefined;
      if (!follow || !location || ![301, 302, 303, 307, 308].includes(res.status)) return { ...res, trail };
      current = new URL(location, current).href;
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers = {};
      }
    }
    throw new Error(`too many redirects: ${trail.join(' → ')}`);
  }

  private store(origin: string, setCookie: string | string[] | undefined): void {
    const jar = this.jar.get(origin) ?? new Map<string, string>();
    this.jar.set(origin, jar);
    for (const line of [setCookie ?? []].flat()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some(
        (a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a),
      );
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }
}
