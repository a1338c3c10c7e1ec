import { operations } from '@certwright/client';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildDocument } from '../../client/scripts/openapi-source.js';
import { buildProgram, commandTable } from '../src/index.js';

const silent = { write: () => true };
const io = { stdout: silent, stderr: silent, env: {}, stdin: () => '' };

function leaves(command: Command, prefix: string[] = []): [string, Command][] {
  return command.commands.flatMap((c) =>
    c.commands.length > 0
      ? leaves(c, [...prefix, c.name()])
      : [[[...prefix, c.name()].join(' '), c] as [string, Command]],
  );
}

describe('the command tree', () => {
  it('has a command for every REST operation of the OpenAPI document', async () => {
    const document = await buildDocument();
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => (operation as { operationId: string }).operationId),
    );
    const names = commandTable([...operations.values()]);
    const program = buildProgram(io, () => {});
    const commands = new Map(leaves(program));
    for (const id of ids) {
      const name = names.get(id);
      expect(name, `${id} has no command`).toBeDefined();
      const command = commands.get(`${name!.group} ${name!.variantOf?.command ?? name!.command}`);
      expect(command, `${id}: ${name!.group} ${name!.command}`).toBeDefined();
      if (name!.variantOf) expect(command!.options.map((o) => o.long)).toContain(`--${name!.variantOf.flag}`);
    }
  });

  it('names the resources and operations as operators expect', () => {
    const program = buildProgram(io, () => {});
    const commands = new Set(leaves(program).map(([name]) => name));
    for (const expected of [
      'certs list',
      'certs get',
      'certs create',
      'certs issue',
      'certs renew',
      'certs revoke',
      'certs export',
      'certs bulk-revoke',
      'certs bulk-renew',
      'certs bulk-reassign',
      'agents list',
      'agents get',
      'agents retire',
      'notifications list',
      'notifications requeue',
      'audit export',
      'policies create',
      'renewal-policies list',
      'issuers list',
      'profiles list',
      'targets create',
      'jobs list',
      'acme list-eab-keys',
      'est profiles',
    ]) {
      expect(commands, expected).toContain(expected);
    }
  });

  it('shows examples in the help of every command', () => {
    const program = buildProgram(io, () => {});
    for (const [name, command] of leaves(program)) {
      if (name.endsWith('help')) continue;
      let help = '';
      command.configureOutput({ writeOut: (t) => (help += t) });
      command.outputHelp();
      // addHelpText output is emitted on the help event; outputHelp triggers it.
      expect(help, name).toMatch(/Examples:\n\s+\$ /);
    }
  });
});
