// @vitest-environment happy-dom
import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, apiKey, authHeaders, csrfToken, fillPath, queryString } from '../src/api';
import { ErrorBox } from '../src/components/common';
import { ExpiryChart } from '../src/components/expiry-chart';
import { parseInventorySearch } from '../src/router';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => {
  sessionStorage.clear();
  document.body.innerHTML = '';
});

function render(node: React.ReactNode): HTMLElement {
  const host = document.createElement('div');
  document.body.append(host);
  act(() => createRoot(host).render(node));
  return host;
}

describe('API calls in the browser', () => {
  it('sends the API key as the bearer token and no CSRF header with it', () => {
    apiKey.set('k-123');
    expect(authHeaders('POST')).toMatchObject({ authorization: 'Bearer k-123' });
    expect(authHeaders('POST')['x-csrf-token']).toBeUndefined();
    expect(localStorage.length).toBe(0);
  });

  it('sends the CSRF cookie as X-CSRF-Token on state-changing cookie calls only', () => {
    expect(csrfToken('a=1; __Host-cw_csrf=tok%2Fen; b=2')).toBe('tok/en');
    expect(csrfToken('a=1')).toBeNull();
    // biome-ignore lint/suspicious/noDocumentCookie: the console reads this cookie exactly so; the test sets it the same way
    document.cookie = '__Host-cw_csrf=abc';
    const token = csrfToken();
    // happy-dom may refuse a __Host- cookie on its http origin; the header follows the cookie.
    expect(authHeaders('DELETE')['x-csrf-token']).toBe(token ?? undefined);
    expect(authHeaders('GET')['x-csrf-token']).toBeUndefined();
  });

  it('encodes path parameters and comma-joins array queries', () => {
    expect(fillPath('/api/v1/certificates/{id}', { id: 'a/b c' })).toBe('/api/v1/certificates/a%2Fb%20c');
    expect(() => fillPath('/x/{id}', {})).toThrow(/missing path parameter id/);
    expect(queryString({ status: ['Active', 'Expired'], search: '', page: 2 })).toBe(
      '?status=Active%2CExpired&page=2',
    );
  });
});

describe('inventory filters from the URL', () => {
  it('keeps only known keys and values', () => {
    expect(
      parseInventorySearch({
        status: ['Active', 'Bogus', 'Active'],
        sort: 'expires_at',
        order: 'up',
        page: '3',
        x: 'y',
      }),
    ).toEqual({ status: ['Active'], sort: 'expires_at', page: 3 });
    expect(parseInventorySearch({ status: 'Expired,Revoked', page: '0', search: '  ' })).toEqual({
      status: ['Expired', 'Revoked'],
    });
  });
});

describe('the expiry chart', () => {
  const week = (i: number, count: number) => ({
    start: new Date(Date.UTC(2026, 0, 1 + 7 * i)),
    end: new Date(Date.UTC(2026, 0, 8 + 7 * i)),
    count,
  });

  it('renders an accessible SVG: role img, title, description naming the counts', () => {
    const host = render(
      <ExpiryChart bins={[week(0, 1), ...Array.from({ length: 12 }, (_, i) => week(i + 1, 0))]} />,
    );
    const svg = host.querySelector('svg');
    expect(svg?.getAttribute('role')).toBe('img');
    const labelled = (svg?.getAttribute('aria-labelledby') ?? '').split(' ');
    expect(labelled).toHaveLength(2);
    expect(host.querySelector('title')?.textContent).toMatch(/next 13 weeks/);
    expect(host.querySelector('desc')?.textContent).toMatch(/^1 certificate expires in the next 13 weeks/);
    expect(host.querySelectorAll('rect.bar')).toHaveLength(13);
  });

  it('draws one bar per bin with its count', () => {
    const host = render(<ExpiryChart bins={[week(0, 3), week(1, 0), week(2, 5)]} />);
    expect([...host.querySelectorAll('g[data-count]')].map((g) => g.getAttribute('data-count'))).toEqual([
      '3',
      '0',
      '5',
    ]);
    expect(host.querySelector('desc')?.textContent).toMatch(/^8 certificates expire/);
  });
});

describe('problem details', () => {
  it('shows title, status, detail and request id of an API problem', () => {
    const host = render(
      <ErrorBox
        error={
          new ApiError({ status: 409, title: 'Conflict', detail: 'the name is taken', request_id: 'r-1' })
        }
      />,
    );
    expect(host.textContent).toContain('Conflict (409)');
    expect(host.textContent).toContain('the name is taken');
    expect(host.textContent).toContain('request id: r-1');
    expect(host.querySelector('[role="alert"]')).not.toBeNull();
  });
});

describe('form input parsing', () => {
  it('splits comma- and space-separated lists, dropping empty items', async () => {
    const { listOf } = await import('../src/format');
    expect(listOf(' 10.0.0.0/24, 192.0.2.1  host.example ,,')).toEqual([
      '10.0.0.0/24',
      '192.0.2.1',
      'host.example',
    ]);
    expect(listOf('   ')).toEqual([]);
  });
});
