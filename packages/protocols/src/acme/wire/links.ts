/**
 * The URL of every ACME resource of one profile (RFC 8555 §7.1), built from the external base
 * URL the client reaches the server at and the profile's prefix: `/acme` for the default
 * profile, `/acme/profile/{path_id}` otherwise. Every URL the server hands out, and every URL a
 * JWS `url` or `kid` is compared with, comes from here.
 */
export class AcmeLinks {
  /** `https://host:port/acme` or `https://host:port/acme/profile/{path_id}`, without a trailing slash. */
  readonly base: string;

  constructor(origin: string, basePath: string) {
    this.base = `${origin.replace(/\/+$/, '')}${basePath}`;
  }

  #at(...segments: string[]): string {
    return `${this.base}/${segments.map(encodeURIComponent).join('/')}`;
  }

  get directory(): string {
    return this.#at('directory');
  }
  get newNonce(): string {
    return this.#at('new-nonce');
  }
  get newAccount(): string {
    return this.#at('new-account');
  }
  get newOrder(): string {
    return this.#at('new-order');
  }
  get revokeCert(): string {
    return this.#at('revoke-cert');
  }
  get keyChange(): string {
    return this.#at('key-change');
  }
  /** RFC 9773 §4: the directory's `renewalInfo` is the prefix; a certID follows it. */
  get renewalInfoBase(): string {
    return this.#at('renewal-info');
  }
  renewalInfo(certId: string): string {
    return this.#at('renewal-info', certId);
  }
  account(id: string): string {
    return this.#at('account', id);
  }
  /** RFC 8555 §7.1.2.1: the account's `orders` list. */
  accountOrders(id: string): string {
    return this.#at('account', id, 'orders');
  }
  order(id: string): string {
    return this.#at('order', id);
  }
  finalize(orderId: string): string {
    return this.#at('order', orderId, 'finalize');
  }
  authz(id: string): string {
    return this.#at('authz', id);
  }
  challenge(id: string): string {
    return this.#at('challenge', id);
  }
  cert(id: string): string {
    return this.#at('cert', id);
  }

  /** The account id a `kid` names, or null when it is not an account URL of this profile. */
  accountIdOf(kid: string): string | null {
    const prefix = `${this.base}/account/`;
    if (!kid.startsWith(prefix)) return null;
    const id = kid.slice(prefix.length);
    return /^[A-Za-z0-9._:-]{1,128}$/.test(id) ? id : null;
  }
}
