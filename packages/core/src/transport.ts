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
