import { fail } from '../errors.js';
import {
  type AddressCategory,
  type AddressClass,
  classifyAddress,
  type IpAddress,
  parseAddress,
} from './address-ranges.js';
import { type AddressAllowlist, EMPTY_ALLOWLIST } from './allowlist.js';
import { normalizeHost } from './host.js';
import { dnsFailure, type Resolver, systemResolver } from './resolver.js';

export interface AddressGuardOptions {
  /** Private ranges (RFC 1918, shared space, unique local) admitted; default none. */
  allowlist?: AddressAllowlist;
  /**
   * `'when-listed'`: loopback addresses are admitted when an allowlist entry lying wholly inside
   * loopback (`127.0.0.0/8`, `127.0.0.1`, `::1`) contains them — for ACME validation of hosts on
   * this machine and for test rigs. Broader entries (`0.0.0.0/0`) never admit loopback.
   * Default `'never'`: loopback refused whatever the allowlist says (webhooks).
   */
  loopback?: 'never' | 'when-listed';
  /**
   * For destinations an administrator configured on purpose to reach internal systems (external
   * ACME directories, identity providers, scan targets and health checks): public and private
   * addresses are admitted without an allowlist entry; loopback only as `loopback` and the
   * allowlist say (test rigs); link-local, metadata, reserved, benchmarking, documentation and
   * the other special ranges never. Default false: destinations a client or user names.
   */
  operatorConfigured?: boolean;
  /** Default: the system resolver. */
  resolve?: Resolver;
}

/** The guard's judgement of one address. */
export interface AddressDecision extends AddressClass {
  admitted: boolean;
}

/** A host resolved once, every address checked. */
export interface CheckedHost {
  /** The normalized host: a lower-case name without trailing dot, or the canonical address. */
  host: string;
  /** Whether `host` was an address literal (no lookup happened). */
  literal: boolean;
  /** The admitted addresses, in the resolver's order: connect to these and nothing else. */
  addresses: string[];
  /** Time spent resolving, in milliseconds. */
  dnsMs: number;
}

export interface AddressGuard {
  /** Judges one address literal; no lookup. Text that is no address is refused as `reserved`. */
  check(address: string): AddressDecision;
  /**
   * Normalizes `host`, resolves it once when it is a name, and checks every address it resolves
   * to: one refused address refuses the host (`address_refused`); no answer is `dns_failed`; an
   * unusable host text is `invalid_input`. `field` names the input in errors (default `host`).
   */
  resolve(host: string, field?: string): Promise<CheckedHost>;
}

/** Categories no allowlist ever admits for user-named destinations. */
const NEVER: ReadonlySet<AddressCategory> = new Set(['metadata', 'unspecified', 'multicast', 'broadcast']);

const WORDS: Record<AddressCategory, string> = {
  public: 'a public address',
  private: 'a private IP',
  loopback: 'a loopback address',
  link_local: 'a link-local address',
  metadata: 'a cloud metadata address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  benchmarking: 'a benchmarking address',
  documentation: 'a documentation address',
};

/** Creates a guard; see docs/operations/outbound-connections.md for the policy it applies. */
export function createAddressGuard(options: AddressGuardOptions = {}): AddressGuard {
  const allowlist = options.allowlist ?? EMPTY_ALLOWLIST;
  const loopback = options.loopback ?? 'never';
  const operator = options.operatorConfigured ?? false;
  const resolver = options.resolve ?? systemResolver;

  function admits(address: IpAddress, cls: AddressClass): boolean {
    if (NEVER.has(cls.category)) return false;
    if (cls.category === 'public') return true;
    const judged = cls.embeddedIPv4 === undefined ? address : parseAddress(cls.embeddedIPv4)!;
    if (cls.category === 'private') return operator || allowlist.contains(judged);
    if (cls.category === 'loopback') return loopback === 'when-listed' && allowlist.containsLoopback(judged);
    return false;
  }

  function decide(address: IpAddress): AddressDecision {
    const cls = classifyAddress(address);
    return { ...cls, admitted: admits(address, cls) };
  }

  function refusal(host: string, decision: AddressDecision, field: string) {
    const what = WORDS[decision.category];
    const message =
      decision.category === 'private'
        ? `the URL host '${host}' resolves to a private IP and private networks are not allowed (an administrator can allow the range)`
        : `the URL host '${host}' resolves to ${what}, which is never allowed as a destination`;
    return fail('address_refused', message, {
      fields: [{ field, message }],
      extra: { category: decision.category },
      // The address itself stays out of the message (it would map internal names for a caller);
      // operators find it in the logged cause.
      cause: { host, address: decision.address, range: decision.range },
    });
  }

  return {
    check(text) {
      const address = parseAddress(text);
      if (!address) {
        return {
          address: text,
          category: 'reserved',
          range: 'not an IP address',
          connectTo: text,
          admitted: false,
        };
      }
      return decide(address);
    },

    async resolve(host, field = 'host') {
      const normalized = normalizeHost(host, field);
      const started = performance.now();
      let found: IpAddress[];
      let name: string;
      if (normalized.kind === 'ip') {
        name = normalized.text;
        found = [normalized.address];
      } else {
        name = normalized.name;
        let answer: unknown;
        try {
          answer = await resolver(name);
        } catch (error) {
          throw dnsFailure(name, error);
        }
        if (!Array.isArray(answer) || answer.length === 0) throw dnsFailure(name, undefined);
        found = answer.map((a) => {
          const parsed = typeof a === 'string' ? parseAddress(a) : undefined;
          if (!parsed) throw dnsFailure(name, { code: 'EBADRESP' });
          return parsed;
        });
      }
      const dnsMs = performance.now() - started;
      const decisions = found.map(decide);
      const refused = decisions.find((d) => !d.admitted);
      if (refused) throw refusal(name, refused, field);
      const addresses = [...new Set(decisions.map((d) => d.connectTo))];
      return { host: name, literal: normalized.kind === 'ip', addresses, dnsMs };
    },
  };
}
