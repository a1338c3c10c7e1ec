import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { ActionButton, ErrorBox, Loading, Section } from '../components/common';

/** System settings → Webhook security: which private ranges webhooks may reach. */
export default function WebhookSecurity() {
  const client = useQueryClient();
  const write = usePermission('webhook.write');
  const setting = useQuery({
    queryKey: ['webhook-security'],
    queryFn: () => api.get('/api/system/settings/webhook-security'),
  });
  const [ranges, setRanges] = useState('');
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (setting.data) setRanges(setting.data.allowed_private_ranges);
  }, [setting.data]);
  const save = useMutation({
    mutationFn: () =>
      api.put('/api/system/settings/webhook-security', { body: { allowed_private_ranges: ranges.trim() } }),
    onSuccess: async () => {
      setSaved(true);
      await client.invalidateQueries({ queryKey: ['webhook-security'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    save.mutate();
  };
  return (
    <>
      <h1>Webhook security</h1>
      <Section title="Private-range allowlist">
        <p className="muted">
          Webhooks never reach loopback, link-local or cloud metadata addresses. Private addresses (RFC 1918,
          RFC 4193) are refused unless listed here.
        </p>
        {setting.isPending ? <Loading /> : null}
        {setting.isError ? <ErrorBox error={setting.error} /> : null}
        {save.isError ? <ErrorBox error={save.error} /> : null}
        {saved ? (
          <p className="notice" role="status">
            Saved.
          </p>
        ) : null}
        {setting.data ? (
          <form className="form" onSubmit={submit}>
            <label>
              Allowed private ranges
              <span className="hint" id="ranges-hint">
                Comma-separated CIDR ranges or single addresses, e.g. 10.20.0.0/16, 192.168.1.5. Empty refuses
                every private address.
              </span>
              <input
                value={ranges}
                onChange={(e) => setRanges(e.target.value)}
                aria-describedby="ranges-hint"
                disabled={!write.allowed}
              />
            </label>
            <ActionButton {...write} type="submit" className="button primary" disabled={save.isPending}>
              Save allowlist
            </ActionButton>
          </form>
        ) : null}
      </Section>
    </>
  );
}
