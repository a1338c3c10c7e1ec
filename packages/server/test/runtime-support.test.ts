import { describe, expect, it } from 'vitest';
import { endOfLife } from '../src/runtime-support.js';

describe('Node.js end of life', () => {
  it('flags a release line from the day its end of life begins', () => {
    expect(endOfLife('v20.19.2', new Date('2026-04-29T12:00:00Z'))).toBeUndefined();
    expect(endOfLife('v20.19.2', new Date('2026-04-30T00:00:00Z'))).toEqual({
      major: 20,
      date: '2026-04-30',
    });
    expect(endOfLife('v21.7.3', new Date('2026-01-01T00:00:00Z'))).toEqual({ major: 21, date: '2024-06-01' });
    expect(endOfLife('v16.20.0', new Date('2026-01-01T00:00:00Z'))).toEqual({
      major: 16,
      date: 'before 2023',
    });
  });

  it('does not flag supported lines, nor lines newer than it knows', () => {
    const now = new Date('2026-11-01T00:00:00Z');
    expect(endOfLife('v24.11.0', now)).toBeUndefined();
    expect(endOfLife('v22.21.0', now)).toBeUndefined();
    expect(endOfLife('v30.0.0', now)).toBeUndefined();
    expect(endOfLife('not a version', now)).toBeUndefined();
  });
});
