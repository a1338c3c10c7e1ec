import type { RequestHead } from '@certwright/core';

/** What the ACME handler needs of a request's URL. */
export interface RequestTarget {
  pathname: string;
  /** `new URL(url).search`: empty, or `?` and the query. */
  search: string;
  origin: string;
}

/**
 * Reads {@link RequestTarget}s, parsing a URL only when it must: when the host gave the
 * pathname (RequestHead's `pathname`, exactly the parsed URL's) and the URL is that pathname
 * and a query after an origin part, the query is the rest as sent and the origin is parsed
 * from the origin part once per distinct one (clients send the same Host again and again).
 * Every other request has its URL parsed whole. One URL parse less on every ACME request.
 */
export class RequestTargets {
  #originPart = '';
  #origin = '';

  of(request: RequestHead): RequestTarget {
    const { url, pathname } = request;
    if (pathname !== undefined) {
      const scheme = url.indexOf('://');
      const start = scheme < 0 ? -1 : url.indexOf('/', scheme + 3);
      if (start > 0 && url.startsWith(pathname, start)) {
        const rest = url.slice(start + pathname.length);
        // A lone '?' is no query for the parser; a '#' is a fragment: both are left to it.
        if ((rest === '' || (rest.length > 1 && rest[0] === '?')) && !rest.includes('#')) {
          const originPart = url.slice(0, start);
          if (originPart !== this.#originPart) {
            this.#origin = new URL(originPart).origin;
            this.#originPart = originPart;
          }
          return { pathname, search: rest, origin: this.#origin };
        }
      }
    }
    const parsed = new URL(url);
    return { pathname: parsed.pathname, search: parsed.search, origin: parsed.origin };
  }
}
