import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact-url.js';

describe('redactUrl', () => {
  it('hides passwords in connection URLs, in the user-info and in credential query parameters', () => {
    expect(redactUrl('postgres://app:hunter2@db:5432/x')).toBe('postgres://app:***@db:5432/x');
    expect(redactUrl('postgres://db:5432/x?user=app&password=hunter2&sslmode=require')).toBe(
      'postgres://db:5432/x?user=app&password=***&sslmode=require',
    );
    expect(redactUrl('postgres://db/x?sslpassword=s3cret&sslcert=/c.pem')).toBe(
      'postgres://db/x?sslpassword=***&sslcert=/c.pem',
    );
    expect(redactUrl('mysql://root@db/x?Password=hunter2')).toBe('mysql://root@db/x?Password=***');
    expect(redactUrl('not a url')).not.toContain('not a url');
  });
});
