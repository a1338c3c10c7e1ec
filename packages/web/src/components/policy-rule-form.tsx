import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ApiError, api, type Paths } from '../api';
import { usePermission } from '../auth';
import { listOf } from '../format';
import { ErrorBox, Field, Notice, Section } from './common';
import { Picker } from './picker';

type Body = Paths['/api/v1/policies']['post']['requestBody']['content']['application/json'];
export type RuleType = Body['type'];
type Severity = NonNullable<Body['severity']>;

/**
 * Each rule type's one config key and how it is entered (core's policy/config.ts is the
 * authority; the API checks again and its field errors are shown at the input).
 */
export const RULE_INPUTS = {
  AllowedIssuers: { key: 'allowed_issuer_ids', kind: 'issuers', label: 'Allowed issuers' },
  AllowedDomains: {
    key: 'allowed_domains',
    kind: 'list',
    label: 'Allowed domains',
    hint: 'DNS names, one per line or comma-separated; "*.example.com" allows its subdomains',
  },
  RequiredMetadata: {
    key: 'required_keys',
    kind: 'list',
    label: 'Required metadata keys',
    hint: 'one per line or comma-separated',
  },
  AllowedEnvironments: {
    key: 'allowed',
    kind: 'list',
    label: 'Allowed environments',
    hint: 'for example production, staging',
  },
  RenewalLeadTime: {
    key: 'lead_time_days',
    kind: 'days',
    label: 'Lead time (days)',
    hint: 'renewal must start at least this many days before expiry; 0 to 3650',
    min: 0,
    max: 3650,
  },
  CertificateLifetime: {
    key: 'max_days',
    kind: 'days',
    label: 'Maximum lifetime (days)',
    hint: '1 to 36500',
    min: 1,
    max: 36500,
  },
} as const satisfies Record<
  RuleType,
  { key: string; kind: 'issuers' | 'list' | 'days'; label: string; hint?: string; min?: number; max?: number }
>;

const TYPES = Object.keys(RULE_INPUTS) as RuleType[];
const SEVERITIES: Severity[] = ['Warning', 'Error', 'Critical'];

/** The config a type's inputs make, or the message of what is wrong before anything is sent. */
export function ruleConfig(
  type: RuleType,
  input: { list: string; days: string; issuers: string[] },
): Record<string, unknown> | string {
  const spec = RULE_INPUTS[type];
  if (spec.kind === 'issuers') return input.issuers.length > 0 ? { [spec.key]: input.issuers } : {};
  if (spec.kind === 'list') {
    const items = listOf(input.list);
    return items.length > 0 ? { [spec.key]: items } : {};
  }
  const text = input.days.trim();
  if (text === '') return {};
  if (!/^\d+$/.test(text)) return 'must be a whole number of days';
  const days = Number(text);
  if (days < spec.min || days > spec.max) return `must be between ${spec.min} and ${spec.max}`;
  return { [spec.key]: days };
}

/** The API's field errors for one input (`config.<key>` and its items), as sentences. */
export function fieldErrors(error: unknown, field: string): string[] {
  if (!(error instanceof ApiError) || !Array.isArray(error.problem.errors)) return [];
  return (error.problem.errors as { field?: string; message?: string }[])
    .filter((e) => e.field === field || e.field?.startsWith(`${field}.`))
    .map((e) => {
      const item = e.field?.slice(field.length + 1);
      return item ? `item ${Number(item) + 1}: ${e.message}` : (e.message ?? 'invalid');
    });
}

/** New policy rule: name, type, severity and the type's own config inputs. */
export function PolicyRuleForm() {
  const client = useQueryClient();
  const allowed = usePermission('policy.write');
  const [name, setName] = useState('');
  const [type, setType] = useState<RuleType>('AllowedIssuers');
  const [severity, setSeverity] = useState<Severity>('Warning');
  const [description, setDescription] = useState('');
  const [list, setList] = useState('');
  const [days, setDays] = useState('');
  const [issuers, setIssuers] = useState<string[]>([]);
  const [picked, setPicked] = useState('');
  const [local, setLocal] = useState('');
  const [created, setCreated] = useState('');
  const spec = RULE_INPUTS[type];
  const save = useMutation({
    mutationFn: (config: Record<string, unknown>) =>
      api.post('/api/v1/policies', {
        body: {
          name: name.trim(),
          type,
          severity,
          config,
          ...(description.trim() ? { description: description.trim() } : {}),
        },
      }),
    onSuccess: async (rule) => {
      setCreated(`Created ${rule?.name ?? name}.`);
      setName('');
      setList('');
      setDays('');
      setIssuers([]);
      setDescription('');
      await client.invalidateQueries({ queryKey: ['policies'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated('');
    const config = ruleConfig(type, { list, days, issuers });
    setLocal(typeof config === 'string' ? config : '');
    if (typeof config !== 'string') save.mutate(config);
  };
  const apiErrors = fieldErrors(save.error, `config.${spec.key}`);
  const messages = [...(local ? [local] : []), ...apiErrors];
  const errorId = `rule-config-error`;
  const described = (hintId: string | undefined) =>
    [hintId, messages.length > 0 ? errorId : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <Section title="New policy rule">
      <Notice message={created} />
      {save.isError && apiErrors.length === 0 ? <ErrorBox error={save.error} /> : null}
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New policy rule">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          <Field label="Name">
            {({ id }) => <input id={id} required value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <Field label="Type">
            {({ id }) => (
              <select
                id={id}
                value={type}
                onChange={(e) => {
                  setType(e.target.value as RuleType);
                  setLocal('');
                  save.reset();
                }}
              >
                {TYPES.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Severity">
            {({ id }) => (
              <select id={id} value={severity} onChange={(e) => setSeverity(e.target.value as Severity)}>
                {SEVERITIES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            )}
          </Field>
          {spec.kind === 'issuers' ? (
            <fieldset>
              <legend>{spec.label}</legend>
              <Picker resource="issuers" label="Issuer to allow" value={picked} onChange={setPicked} />
              <button
                type="button"
                className="button"
                disabled={picked === '' || issuers.includes(picked)}
                onClick={() => {
                  setIssuers([...issuers, picked]);
                  setPicked('');
                }}
              >
                Add issuer
              </button>
              <ul aria-label="Allowed issuers" aria-describedby={described(undefined)}>
                {issuers.map((id) => (
                  <li key={id}>
                    <code>{id}</code>{' '}
                    <button
                      type="button"
                      className="button"
                      aria-label={`Remove ${id}`}
                      onClick={() => setIssuers(issuers.filter((i) => i !== id))}
                    >
                      Remove
                    </button>
                  </li>
                ))}
              </ul>
            </fieldset>
          ) : (
            <Field label={spec.label} hint={spec.hint}>
              {({ id, describedBy }) =>
                spec.kind === 'list' ? (
                  <textarea
                    id={id}
                    rows={3}
                    value={list}
                    aria-invalid={messages.length > 0}
                    aria-describedby={described(describedBy)}
                    onChange={(e) => setList(e.target.value)}
                  />
                ) : (
                  <input
                    id={id}
                    inputMode="numeric"
                    value={days}
                    aria-invalid={messages.length > 0}
                    aria-describedby={described(describedBy)}
                    onChange={(e) => setDays(e.target.value)}
                  />
                )
              }
            </Field>
          )}
          {messages.length > 0 ? (
            <ul className="error" id={errorId} role="alert">
              {messages.map((m) => (
                <li key={m}>
                  {spec.label}: {m}
                </li>
              ))}
            </ul>
          ) : null}
          <Field label="Description">
            {({ id }) => (
              <input id={id} value={description} onChange={(e) => setDescription(e.target.value)} />
            )}
          </Field>
          <button type="submit" className="button primary" disabled={save.isPending}>
            Create policy rule
          </button>
        </fieldset>
      </form>
    </Section>
  );
}
