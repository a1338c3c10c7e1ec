/**
 * What only the connection knows. Hosts (the server's Node listener, Express, Fastify, Hono)
 * fill it in; handlers read it. It never carries anything parsed from the request body.
 */
export interface TransportContext {
  /** Peer IP address as seen on the socket (no proxy headers are trusted here). */
  remoteAddress: string;
  /** Present when the connection is TLS. */
  tls?: TlsInfo;
}

export interface TlsInfo {
  /** Negotiated protocol, e.g. `TLSv1.3`. */
  protocol: string | null;
  /** Client certificate chain as DER, leaf first; empty when the client presented none. */
  clientCertificateChain: Uint8Array[];
  /** RFC 5705 / RFC 8446 §7.5 exporter, used for channel binding (EST, RFC 9266). */
  exportKeyingMaterial(length: number, label: string, context?: Uint8Array): Uint8Array;
}

/** The one handler type every certwright protocol and API surface implements. */
export type Handler = (request: Request, transport: TransportContext) => Promise<Response>;

/**
 * What a host knows of a request before it reads the body. A Web `Request` is one; the
 * server's listener also hands a lighter object to a {@link DirectPath}.
 */
export interface RequestHead {
  method: string;
  /** Absolute URL, like `Request.url`. */
  url: string;
  /**
   * The URL's pathname, when the host already has it (`new URL(url).pathname`, exactly): saves
   * parsing `url` again on paths taken often. Read it through {@link pathnameOf}.
   */
  pathname?: string;
  headers: { get(name: string): string | null };
}

/** The request's URL pathname: the one the host gave, or parsed from the URL. */
export const pathnameOf = (head: RequestHead): string => head.pathname ?? new URL(head.url).pathname;

/** A complete answer a host writes as it is: no Web `Response`, no body stream. */
export interface PlainResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * A handler's optional second entry for small, frequent requests (OCSP): the host reads the
 * whole body first (at most `bodyLimit` bytes) and asks for the answer without building a
 * Web `Request` or `Response`. The handler behind it keeps every rule of its Web path (rate
 * limits, request ids, metrics); it only skips the Web objects. Hosts that ignore it lose
 * nothing but speed.
 */
export interface DirectPath {
  /** Largest body to read for a request to this path; undefined: not a direct request. */
  bodyLimit(method: string, pathname: string): number | undefined;
  /**
   * The answer; undefined when the Web handler must take the request after all (it then gets
   * the body already read). Once a request was admitted here (rate limit spent), an answer
   * is always given.
   */
  answer(
    head: RequestHead,
    body: Uint8Array,
    transport: TransportContext,
  ): Promise<PlainResponse | Response | undefined>;
}
