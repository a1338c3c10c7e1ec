/**
 * Untrusted text as it may appear inside an error message an ACME client reads: printable ASCII
 * kept, everything else escaped, cut at `max` characters, so a response body or a TXT record can
 * neither forge lines in a log nor make a problem document huge.
 */
export function shown(text: string, max = 100): string {
  let out = '';
  for (const char of text) {
    if (out.length >= max) return `${out}…`;
    const code = char.codePointAt(0)!;
    out +=
      code >= 0x20 && code < 0x7f && char !== '\\'
        ? char
        : char === '\\'
          ? '\\\\'
          : code <= 0xff
            ? `\\x${code.toString(16).padStart(2, '0')}`
            : `\\u{${code.toString(16)}}`;
  }
  return out;
}
