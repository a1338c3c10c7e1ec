import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.js';
import { CSRF_HEADER, csrfTokenFor, SESSION_COOKIE } from '../auth/session-cookie.js';
import { csrfRefusal } from './csrf.js';

const TOKEN = 'a'.repeat(32);
const cookieUser: Principal = { kind: 'session', id: 'u1', permissions: 'all', viaCookie: true };
const keyUser: Principal = { kind: 'api-key', id: 'api-key', permissions: 'all' };
const head = (method: string, csrf?: string) => ({
  method,
  url: 'https://127.0.0.1/api/v1/certificates',
  headers: new Headers({
    cookie: `${SESSION_COOKIE}=${TOKEN}`,
    ...(csrf === undefined ? {} : { [CSRF_HEADER]: csrf }),
  }),
});

describe('csrfRefusal', () => {
  it('refuses a cookie-authenticated change without the matching X-CSRF-Token', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const csrf of [undefined, 'wrong', csrfTokenFor('b'.repeat(32))]) {
        const refused = csrfRefusal(cookieUser, head(method, csrf), 'req-3');
        expect(refused?.status).toBe(403);
        expect(await refused?.json()).toMatchObject({ error: 'forbidden', request_id: 'req-3' });
      }
    }
  });

  it('lets the change through with the token bound to the session', () => {
    expect(csrfRefusal(cookieUser, head('POST', csrfTokenFor(TOKEN)), 'req')).toBeUndefined();
  });

  it('asks nothing of reads, of bearer credentials or of public requests', () => {
    expect(csrfRefusal(cookieUser, head('GET'), 'req')).toBeUndefined();
    expect(csrfRefusal(keyUser, head('POST'), 'req')).toBeUndefined();
    expect(csrfRefusal(null, head('POST'), 'req')).toBeUndefined();
  });
});
