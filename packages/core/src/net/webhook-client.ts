import { parseAllowlist } from './allowlist.js';
import { createOutboundClient, type OutboundClient } from './client.js';
import type { Resolver } from './resolver.js';

export interface WebhookClientOptions {
  /** Default the system resolver. */
  resolve?: Resolver;
  /**
   * Test rigs only: `'when-listed'` lets an allowlist entry inside loopback admit loopback.
   * Default `'never'`: loopback refused whatever the allowlist says.
   */
  loopback?: 'never' | 'when-listed';
}

/**
 * The guarded client webhooks deliver through: private ranges refused unless the operator's
 * allowlist (`allowed_private_ranges`, comma-separated CIDRs or IPs) names them; loopback,
 * link-local, metadata and the other never-allowed categories refused whatever it says; the
 * host resolved once and the connection made to the address that was checked.
 */
export function createWebhookClient(
  allowedPrivateRanges: string,
  options: WebhookClientOptions = {},
): OutboundClient {
  return createOutboundClient({
    allowlist: parseAllowlist(allowedPrivateRanges, 'allowed_private_ranges'),
    loopback: options.loopback ?? 'never',
    userAgent: 'certwright-webhook',
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
}
