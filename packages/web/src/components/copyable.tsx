import { useState } from 'react';

/** A value with a button that copies it; the outcome is announced. */
export function Copyable({ value, label, shown }: { value: string; label: string; shown?: string }) {
  const [state, setState] = useState<'' | 'copied' | 'failed'>('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span className="copyable">
      <code>{shown ?? value}</code>
      <button type="button" className="button small" aria-label={`Copy ${label}`} onClick={() => void copy()}>
        Copy
      </button>
      <span role="status" className="muted">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text instead' : ''}
      </span>
    </span>
  );
}
