import { type ReactNode, useId } from 'react';
import { fieldErrors } from '../form-errors';
import { ErrorBox } from './common';

/**
 * A labelled form field that shows the API's error for it: the message sits under the input,
 * the input is marked invalid and described by it (and by the hint).
 */
export function FormField({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ReactNode;
  error?: string | undefined;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      ) : null}
      {children({ id, describedBy, invalid: Boolean(error) })}
      {error ? (
        <span className="field-error" id={errorId}>
          {error}
        </span>
      ) : null}
    </div>
  );
}

/**
 * A failed save: with field errors, a summary (each error also sits at its field; those the
 * form has no input for are listed here); otherwise the API's problem.
 */
export function FormProblem({ error, shown }: { error: unknown; shown: readonly string[] }) {
  if (!error) return null;
  const errors = fieldErrors(error);
  const keys = Object.keys(errors);
  if (keys.length === 0) return <ErrorBox error={error} />;
  const rest = keys.filter((k) => !shown.some((s) => k === s || k.startsWith(`${s}.`)));
  return (
    <div className="error" role="alert">
      <strong>
        Not saved: {keys.length === 1 ? 'a field needs' : `${keys.length} fields need`} attention
        {rest.length < keys.length ? ' (marked below)' : ''}.
      </strong>
      {rest.length > 0 ? (
        <ul>
          {rest.map((k) => (
            <li key={k}>
              {k}: {errors[k]}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
