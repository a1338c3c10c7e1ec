import { describe, expect, it } from 'vitest';
import { RequestTargets } from './request-target.js';

const headers = { get: () => null };
const parsed = (url: string) => {
  const u = new URL(url);
  return { pathname: u.pathname, search: u.search, origin: u.origin };
};

describe('ACME request targets', () => {
  const urls = [
    'https://acme.example.com/acme/new-order',
    'https://acme.example.com/acme/order/ord_1?x=1&y=2',
    'https://acme.example.com/acme/new-nonce?',
    'https://ACME.Example.com:443/acme/directory',
    'https://acme.example.com:8443/acme/profile/p1/new-order',
    'http://127.0.0.1:80/acme/directory',
    'https://[2001:db8::1]:8443/acme/directory?a',
    'https://acme.example.com/acme/directory#frag',
    'https://acme.example.com/acme/directory?a#frag',
    'https://user@acme.example.com/acme/directory',
    'https://acme.example.com/',
  ];

  it('answers as a URL parse does, with the pathname given and without', () => {
    const targets = new RequestTargets();
    for (const url of [...urls, ...urls]) {
      expect(targets.of({ method: 'POST', url, headers }), url).toEqual(parsed(url));
      expect(targets.of({ method: 'POST', url, pathname: parsed(url).pathname, headers }), url).toEqual(
        parsed(url),
      );
    }
  });

  it('takes the origin of each request, not the one of the request before', () => {
    const targets = new RequestTargets();
    for (const url of [
      'https://a.example/acme/x',
      'https://b.example:8443/acme/x',
      'https://a.example/acme/y',
    ])
      expect(targets.of({ method: 'GET', url, pathname: new URL(url).pathname, headers }).origin).toBe(
        new URL(url).origin,
      );
  });
});
