// @vitest-environment happy-dom
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Me, MeProvider } from '../src/auth';
import { PolicyRuleForm, ruleConfig } from '../src/components/policy-rule-form';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

interface Sent {
  method: string;
  path: string;
  body: unknown;
}
let sent: Sent[] = [];
/** What POST /api/v1/policies answers next. */
let nextAnswer: { status: number; body: unknown } = { status: 201, body: {} };

beforeEach(() => {
  sent = [];
  vi.stubGlobal('fetch', async (input: string, init: RequestInit = {}) => {
    const url = new URL(input, 'http://console.test');
    const method = init.method ?? 'GET';
    sent.push({ method, path: url.pathname, body: init.body ? JSON.parse(String(init.body)) : undefined });
    if (method === 'POST') {
      const type = nextAnswer.status >= 400 ? 'application/problem+json' : 'application/json';
      return new Response(JSON.stringify(nextAnswer.body), {
        status: nextAnswer.status,
        headers: { 'content-type': type },
      });
    }
    const body = url.pathname.startsWith('/api/v1/issuers/')
      ? { id: 'iss-a', name: 'Issuer A' }
      : { data: [{ id: 'iss-a', name: 'Issuer A' }], total: 1, page: 1, per_page: 20 };
    return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function mount() {
  const me = { permissions: ['policy.write', 'issuer.read'] } as unknown as Me;
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <MeProvider me={me}>
        <PolicyRuleForm />
      </MeProvider>
    </QueryClientProvider>,
  );
}

const posts = () => sent.filter((s) => s.method === 'POST');
const choose = (label: string, value: string) =>
  fireEvent.change(screen.getByLabelText(label, { selector: 'select' }), { target: { value } });

describe('the policy rule form', () => {
  it('builds each type’s config from its own inputs, refusing out-of-range days before sending', () => {
    const input = { list: ' a.example, *.b.example\nc.example ', days: '', issuers: ['iss-a'] };
    expect(ruleConfig('AllowedDomains', input)).toEqual({
      allowed_domains: ['a.example', '*.b.example', 'c.example'],
    });
    expect(ruleConfig('AllowedIssuers', input)).toEqual({ allowed_issuer_ids: ['iss-a'] });
    expect(ruleConfig('AllowedEnvironments', { ...input, list: 'production' })).toEqual({
      allowed: ['production'],
    });
    expect(ruleConfig('RenewalLeadTime', { ...input, days: '0' })).toEqual({ lead_time_days: 0 });
    expect(ruleConfig('CertificateLifetime', { ...input, days: '0' })).toBe('must be between 1 and 36500');
    expect(ruleConfig('CertificateLifetime', { ...input, days: '1.5' })).toBe(
      'must be a whole number of days',
    );
    expect(ruleConfig('RequiredMetadata', { ...input, list: '  ' })).toEqual({});
  });

  it('sends a domains rule as typed, and shows the API’s field error at the domains input', async () => {
    nextAnswer = {
      status: 400,
      body: {
        type: 'about:blank',
        title: 'Invalid input',
        status: 400,
        errors: [
          { field: 'config.allowed_domains.1', message: 'must be a DNS name, optionally starting with "*."' },
        ],
      },
    };
    mount();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'web domains' } });
    choose('Type', 'AllowedDomains');
    choose('Severity', 'Error');
    fireEvent.change(screen.getByLabelText('Allowed domains'), {
      target: { value: 'example.com, bad domain!' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Create policy rule' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe(
      'Allowed domains: item 2: must be a DNS name, optionally starting with "*."',
    );
    expect(screen.getByLabelText('Allowed domains').getAttribute('aria-invalid')).toBe('true');
    expect(posts()).toHaveLength(1);
    expect(posts()[0]).toMatchObject({
      path: '/api/v1/policies',
      body: {
        name: 'web domains',
        type: 'AllowedDomains',
        severity: 'Error',
        config: { allowed_domains: ['example.com', 'bad', 'domain!'] },
      },
    });
  });

  it('says what is wrong with a lifetime out of range and sends nothing', async () => {
    mount();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'short lived' } });
    choose('Type', 'CertificateLifetime');
    fireEvent.change(screen.getByLabelText('Maximum lifetime (days)'), { target: { value: '40000' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create policy rule' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Maximum lifetime (days): must be between 1 and 36500',
    );
    expect(posts()).toEqual([]);
  });

  it('allows issuers chosen with the picker and sends their ids', async () => {
    nextAnswer = { status: 201, body: { id: 'pr-1', name: 'only A' } };
    mount();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'only A' } });
    await waitFor(() => expect(screen.getByRole('option', { name: 'Issuer A' })).toBeTruthy());
    choose('Issuer to allow', 'iss-a');
    fireEvent.click(screen.getByRole('button', { name: 'Add issuer' }));
    expect(screen.getByRole('button', { name: 'Remove iss-a' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Create policy rule' }));
    await screen.findByText('Created only A.');
    expect(posts()[0]?.body).toMatchObject({
      type: 'AllowedIssuers',
      config: { allowed_issuer_ids: ['iss-a'] },
    });
  });
});
