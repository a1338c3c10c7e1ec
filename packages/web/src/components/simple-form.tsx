import type { ReactNode } from 'react';
import { errorFor } from '../form-errors';
import { FormField } from './form-field';

/** A text input bound to one key of a draft, showing the API's error for that key. */
export function TextInput<D extends object>({
  draft,
  setDraft,
  name,
  label,
  errors,
  hint,
  type = 'text',
  required,
  field,
}: {
  draft: D;
  setDraft: (d: D) => void;
  name: keyof D & string;
  label: string;
  errors: Record<string, string>;
  hint?: ReactNode;
  type?: string;
  required?: boolean;
  /** The API's field name when it differs from the draft key. */
  field?: string;
}) {
  return (
    <FormField label={label} hint={hint} error={errorFor(errors, field ?? name)}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type={type}
          value={String((draft[name] as unknown) ?? '')}
          required={required}
          autoComplete={type === 'password' ? 'new-password' : 'off'}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onChange={(e) => setDraft({ ...draft, [name]: e.target.value })}
        />
      )}
    </FormField>
  );
}
