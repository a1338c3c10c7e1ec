import type { AcmeAccount } from '@certwright/core';
import { isCertwrightError } from '@certwright/core';
import { acmeContactIssue } from '../server/accounts.js';
import type { AcmeLinks } from './links.js';
import { acmeProblem } from './problem.js';

/** The account resource (RFC 8555 §7.1.2). */
export function accountObject(account: AcmeAccount, links: AcmeLinks): Record<string, unknown> {
  return {
    status: account.status,
    contact: account.contact,
    termsOfServiceAgreed: account.terms_agreed,
    orders: links.accountOrders(account.id),
    createdAt: account.created_at.toISOString(),
  };
}

/**
 * The `contact` member of a new-account or update payload, with RFC 8555 §7.3's problem
 * types: unsupportedContact for a scheme other than mailto:, invalidContact for a mailto: that
 * is not one plain address. The service checks the same rules again.
 */
export function readContacts(value: unknown, max: number): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((c) => typeof c !== 'string')) {
    throw acmeProblem('malformed', "'contact' must be an array of URI strings");
  }
  if (value.length > max) throw acmeProblem('malformed', `at most ${max} contacts are accepted`);
  for (const uri of value as string[]) {
    const issue = acmeContactIssue(uri);
    const shown = uri.slice(0, 80);
    if (issue === 'unsupported')
      throw acmeProblem('unsupportedContact', `only mailto: contacts are supported, not '${shown}'`);
    if (issue === 'invalid')
      throw acmeProblem('invalidContact', `'${shown}' is not a mailto: URI with one plain address`);
  }
  return value as string[];
}

/** The account id a `duplicate` failure names (a key that already has an account). */
export function takenBy(error: unknown): string | null {
  if (!isCertwrightError(error) || error.reason !== 'duplicate') return null;
  const id = error.extra.account_id;
  return typeof id === 'string' ? id : null;
}
