import type { CertwrightClient } from '@certwright/client';
import { ErrorCode, type GetPromptResult, McpError, type Prompt } from '@modelcontextprotocol/sdk/types.js';
import { readResource } from './resources.js';

/**
 * Prompts: the questions operators ask most, written out as the tool calls that answer them. A
 * prompt is offered only when every tool it names is (`--toolsets`, `--read-only`).
 */
interface PromptSpec extends Prompt {
  /** The tools the prompt's instructions call. */
  requires: string[];
  render(client: CertwrightClient, args: Record<string, string | undefined>): Promise<GetPromptResult>;
}

const DAY = 86_400_000;

function days(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return 30;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 3650)
    throw new McpError(
      ErrorCode.InvalidParams,
      `days must be a whole number from 1 to 3650 (got ${JSON.stringify(text)})`,
    );
  return n;
}

const user = (text: string): GetPromptResult['messages'][number] => ({
  role: 'user',
  content: { type: 'text', text },
});

export const PROMPTS: PromptSpec[] = [
  {
    name: 'expiring_certificates',
    title: 'What expires soon, and why',
    description:
      'The certificates that expire within the next N days, and for each why it has not renewed yet',
    arguments: [
      { name: 'days', description: 'how many days ahead to look, 1 to 3650 (default 30)', required: false },
    ],
    requires: ['list_certificates', 'get_renewal_policy', 'list_jobs', 'get_job', 'list_violations'],
    async render(_client, args) {
      const n = days(args.days);
      const now = new Date();
      const until = new Date(now.getTime() + n * DAY);
      return {
        description: `Certificates expiring within ${n} days, and why`,
        messages: [
          user(
            [
              `Which certificates expire within the next ${n} days, and why has each not been renewed yet?`,
              '',
              `1. Call list_certificates with expires_after "${now.toISOString()}", expires_before "${until.toISOString()}", ` +
                'sort "expires_at", order "asc", per_page 100; read further pages while page * per_page < total.',
              '2. For each certificate find why it is still expiring:',
              '   - its status: Failed (issuance or renewal failed), RenewalInProgress (a renewal is running), Revoked or Archived (not renewed on purpose);',
              '   - its renewal policy (get_renewal_policy with its renewal_policy_id): it renews only within renewal_window_days of expiry, and retries every retry_interval_seconds up to max_retries;',
              '   - its latest Issuance or Renewal job (list_jobs with certificate_id, newest first; get_job for last_error);',
              '   - open policy violations (list_violations with certificate_id).',
              '3. Answer with one table: name, common name, expires (date and days left), owner, status, why, what to do next.',
              'Say plainly when nothing expires in that window. Change nothing.',
            ].join('\n'),
          ),
        ],
      };
    },
  },
  {
    name: 'renew_policy_flagged',
    title: 'Renew what a policy flags',
    description:
      'Renew every certificate a policy rule flags (or any rule), after showing the user which and why',
    arguments: [
      {
        name: 'rule_id',
        description: 'a policy rule id (list_policies); every rule when left out',
        required: false,
      },
      {
        name: 'severity',
        description: 'only violations of this severity: Warning, Error or Critical',
        required: false,
      },
    ],
    requires: ['list_violations', 'get_certificate', 'svc_bulk_renew_certificates'],
    async render(_client, args) {
      const filters = [
        args.rule_id ? `rule_id "${args.rule_id}"` : undefined,
        args.severity ? `severity "${args.severity}"` : undefined,
      ].filter(Boolean);
      return {
        description: `Renew the certificates ${args.rule_id ? `rule ${args.rule_id}` : 'the policy rules'} flag`,
        messages: [
          user(
            [
              `Renew every certificate that ${args.rule_id ? `policy rule ${args.rule_id}` : 'a policy rule'} flags.`,
              '',
              `1. Call list_violations${filters.length ? ` with ${filters.join(', ')}` : ''}, per_page 100, every page; collect the certificate ids.`,
              '2. Show the user the certificates (get_certificate for name and common name) with the rule, severity and message of each violation,',
              '   and which of them renewal cannot fix (a rule about names, owners or the issuer needs the certificate changed, not renewed).',
              '   Certificates that are Archived, Revoked, Expired or already renewing are skipped by the server.',
              '3. Once the user agrees, call svc_bulk_renew_certificates with certificate_ids set to those ids (at most 10,000 per call).',
              '4. Call list_violations again (the server evaluates the rules again for each certificate it renews) and report',
              '   what was renewed, what was skipped or failed, and what is still flagged.',
            ].join('\n'),
          ),
        ],
      };
    },
  },
  {
    name: 'explain_certificate',
    title: 'Explain this certificate',
    description:
      'What a certificate is for, who issued it, when it expires and renews, and anything unusual about it',
    arguments: [{ name: 'id', description: 'the certificate id (list_certificates)', required: true }],
    requires: ['get_certificate', 'get_renewal_policy', 'list_violations'],
    async render(client, args) {
      if (!args.id)
        throw new McpError(
          ErrorCode.InvalidParams,
          'id is required (a certificate id from list_certificates)',
        );
      const uri = `certwright://certificates/${encodeURIComponent(args.id)}`;
      const resource = (await readResource(client, uri)).contents[0] as {
        uri: string;
        mimeType?: string;
        text: string;
      };
      return {
        description: `Explain certificate ${args.id}`,
        messages: [
          { role: 'user', content: { type: 'resource', resource } },
          user(
            [
              'Explain this certificate to me in plain words:',
              '- what it is for: the names it covers, its owner and team, its environment;',
              '- who issued it and whether it chains to the issuer shown;',
              '- how long it is valid, when it expires, and when it will renew (get_renewal_policy: renewal_window_days before expiry);',
              '- anything unusual: a weak or old key, a long validity, a name not in the SANs, a revoked or failed status,',
              '  open policy violations (list_violations with certificate_id).',
              'Change nothing.',
            ].join('\n'),
          ),
        ],
      };
    },
  },
];

export function availablePrompts(tools: Set<string>): PromptSpec[] {
  return PROMPTS.filter((p) => p.requires.every((t) => tools.has(t)));
}
