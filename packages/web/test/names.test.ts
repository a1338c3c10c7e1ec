import { describe, expect, it } from 'vitest';
import { idsByKind } from '../src/names';

describe('the names a page asks for', () => {
  it('asks once per distinct id, per kind, in a stable order, skipping records a row does not name', () => {
    expect(
      idsByKind([
        ['owner', 'own-2'],
        ['issuer', 'iss-1'],
        ['owner', 'own-1'],
        ['owner', 'own-2'],
        ['team', null],
        ['profile', undefined],
      ]),
    ).toEqual({ issuer: ['iss-1'], owner: ['own-1', 'own-2'] });
  });

  it('asks for at most 100 ids of a kind (the route refuses more)', () => {
    const many = Array.from(
      { length: 150 },
      (_, i) => ['agent', `ag-${String(i).padStart(3, '0')}`] as const,
    );
    expect(idsByKind(many).agent).toHaveLength(100);
  });
});
