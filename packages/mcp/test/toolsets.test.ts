/**
 * What every tool tells a host, checked over all toolsets without a server: each operation is
 * classified, names and titles are short, every input is described and bounded, every tool has
 * an output schema, and the hints say what a call does.
 */
import { operations } from '@certwright/client';
import { describe, expect, it } from 'vitest';
import { buildTools, CLASSES, DEFAULT_TOOLSETS, NEVER_TOOLS, parseToolsets, TOOLSETS } from '../src/index.js';

const all = buildTools({ toolsets: TOOLSETS });
type Schema = { type?: unknown; description?: string; minimum?: number; maximum?: number; anyOf?: Schema[] };

describe('toolsets', () => {
  it('place every REST operation in one toolset, or name it as never a tool', () => {
    for (const op of operations.values()) {
      const placed = CLASSES[op.operationId] !== undefined;
      const never = NEVER_TOOLS.has(op.operationId);
      expect(placed !== never, `${op.operationId}: classify it in src/toolsets.ts`).toBe(true);
    }
    expect(all).toHaveLength(operations.size - NEVER_TOOLS.size);
  });

  it('never offer the agent wire protocol, the demo clean-up or the OpenAPI dump', () => {
    const names = new Set(all.map((t) => t.operation.operationId));
    for (const id of [
      'agentHeartbeat',
      'agentWork',
      'agentSubmitCsr',
      'agentReportJob',
      'agentReportDiscoveries',
      'cleanupDemoResidue',
      'getOpenApi',
    ]) {
      expect(names.has(id), id).toBe(false);
    }
  });

  it('offer a small, mostly read-only default, and only reads with --read-only', () => {
    const defaults = buildTools();
    expect(defaults.length).toBeLessThanOrEqual(40);
    expect(defaults.filter((t) => t.annotations.readOnlyHint).length).toBeGreaterThan(defaults.length / 2);
    expect(defaults.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        'list_certificates',
        'get_certificate',
        'svc_bulk_renew_certificates',
        'list_violations',
      ]),
    );
    const readOnly = buildTools({ toolsets: TOOLSETS, readOnly: true });
    expect(readOnly.length).toBeGreaterThan(40);
    expect(readOnly.every((t) => t.annotations.readOnlyHint && !t.annotations.destructiveHint)).toBe(true);
    expect(parseToolsets(undefined)).toEqual([...DEFAULT_TOOLSETS]);
    expect(parseToolsets('fleet, audit')).toEqual(['fleet', 'audit']);
    expect(parseToolsets('all')).toEqual([...TOOLSETS]);
    expect(() => parseToolsets('fleet,certs')).toThrow(
      /--toolsets: unknown certs \(known: inventory, lifecycle/,
    );
  });

  it('keep the tools and inputs the interface fixes', () => {
    const tool = (name: string) => {
      const found = all.find((t) => t.name === name);
      expect(found, name).toBeDefined();
      return found!;
    };
    expect(Object.keys(tool('retire_agent').inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['id', 'force', 'reason']),
    );
    for (const name of [
      'svc_bulk_revoke_certificates',
      'svc_bulk_renew_certificates',
      'svc_bulk_reassign_certificates',
    ]) {
      expect(tool(name).inputSchema.properties).toHaveProperty('certificate_ids');
    }
    expect(tool('create_policy').inputSchema.required).toEqual(expect.arrayContaining(['name', 'type']));
    expect(tool('update_policy').inputSchema.properties).toHaveProperty('severity');
    expect(tool('update_policy').inputSchema.required ?? []).not.toContain('severity');
    expect(tool('create_certificate').inputSchema.required).toEqual(
      expect.arrayContaining(['renewal_policy_id', 'owner_id']),
    );
    expect(tool('create_target').inputSchema.required).toEqual(
      expect.arrayContaining(['agent_id', 'name', 'type']),
    );
  });
});

describe('every tool', () => {
  it('has a short title and a name a host accepts', () => {
    for (const t of all) {
      expect(t.name, t.name).toMatch(/^[a-z][a-z0-9_]{2,63}$/);
      expect(t.title.length, `${t.name}: ${t.title}`).toBeLessThanOrEqual(40);
      expect(t.title, t.name).not.toMatch(/[;.]$/);
      expect(t.annotations.title).toBe(t.title);
    }
    expect(all.find((t) => t.name === 'svc_bulk_revoke_certificates')?.title).toBe(
      'Bulk revoke certificates',
    );
    expect(all.find((t) => t.name === 'get_acme_eab_key')?.title).toBe('Get ACME EAB key');
  });

  it('describes every input and bounds every integer', () => {
    for (const t of all) {
      for (const [name, schema] of Object.entries(t.inputSchema.properties ?? {}) as [string, Schema][]) {
        expect(schema.description?.trim(), `${t.name}.${name} has no description`).toBeTruthy();
        for (const variant of schema.anyOf ?? [schema]) {
          if (variant.type !== 'integer') continue;
          expect(variant.minimum, `${t.name}.${name} minimum`).toBeGreaterThanOrEqual(0);
          expect(variant.maximum, `${t.name}.${name} maximum`).toBeLessThanOrEqual(1_000_000_000);
        }
      }
    }
    const list = all.find((t) => t.name === 'list_certificates')!.inputSchema.properties as Record<
      string,
      Schema
    >;
    expect(list.per_page).toMatchObject({ type: 'integer', minimum: 1, maximum: 500 });
    const audit = all.find((t) => t.name === 'export_audit')!.inputSchema.properties as Record<
      string,
      Schema
    >;
    expect(audit.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100_000 });
    // A date-time is named by its format, not spelled out by a 300-character pattern.
    expect(JSON.stringify(audit.from)).not.toContain('pattern');
  });

  it('has an object output schema', () => {
    for (const t of all) {
      expect(t.outputSchema.type, t.name).toBe('object');
      expect(t.outputSchema.properties ?? t.outputSchema.anyOf, t.name).toBeDefined();
    }
  });

  it('says what a call does: read-only, additive or destructive, with confirm on the destructive ones', () => {
    for (const t of all) {
      const effect = CLASSES[t.operation.operationId]!.effect;
      expect(t.annotations.readOnlyHint, t.name).toBe(effect === 'read');
      expect(t.annotations.destructiveHint, t.name).toBe(effect === 'destructive');
      expect('confirm' in (t.inputSchema.properties ?? {}), t.name).toBe(effect === 'destructive');
      if (t.operation.method === 'DELETE') expect(t.annotations.destructiveHint, t.name).toBe(true);
      if (t.operation.method === 'GET') expect(t.annotations.readOnlyHint, t.name).toBe(true);
    }
    const hint = (name: string) => all.find((t) => t.name === name)!.annotations;
    for (const name of [
      'deactivate_acme_account',
      'set_breakglass_password',
      'retire_agent',
      'svc_bulk_revoke_certificates',
      'svc_bulk_reassign_certificates',
      'revoke_certificate',
      'update_certificate',
      'deactivate_auth_user',
      'update_webhook_security',
    ]) {
      expect(hint(name).destructiveHint, name).toBe(true);
    }
    for (const name of [
      'create_certificate',
      'svc_bulk_renew_certificates',
      'register_agent',
      'claim_discovered_certificate',
    ]) {
      expect(hint(name), name).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    }
    expect(hint('probe_scep_server').openWorldHint).toBe(true);
    expect(hint('list_certificates').openWorldHint).toBe(false);
  });
});
