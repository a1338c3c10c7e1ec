import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { usePermission } from '../auth';
import { errorFor, fieldErrors } from '../form-errors';
import { ActionButton, ErrorBox, Section } from './common';
import { FormField } from './form-field';

export interface FieldSpec {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'select';
  options?: readonly string[];
  required?: boolean;
  hint?: string;
}

/**
 * A small create form: text fields and selects, one submit, the API's problem shown on failure,
 * the created name confirmed. The caller's permission gates it with the reason shown.
 */
export function CreateForm({
  title,
  permission,
  fields,
  submitLabel,
  invalidate,
  create,
}: {
  title: string;
  permission: string;
  fields: readonly FieldSpec[];
  submitLabel: string;
  invalidate: readonly unknown[];
  create: (values: Record<string, string>) => Promise<unknown>;
}) {
  const client = useQueryClient();
  const allowed = usePermission(permission);
  const initial = () =>
    Object.fromEntries(fields.map((f) => [f.name, f.type === 'select' ? (f.options?.[0] ?? '') : '']));
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [created, setCreated] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: () =>
      create(
        Object.fromEntries(
          Object.entries(values)
            .filter(([, v]) => v.trim() !== '')
            .map(([k, v]) => [k, v.trim()]),
        ),
      ),
    onSuccess: async () => {
      setCreated(values.name ?? 'item');
      setValues(initial());
      await client.invalidateQueries({ queryKey: invalidate });
    },
  });
  // Each field's name is the API's: its error (`email`, `name` …) shows at the input.
  const errors = fieldErrors(mutation.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    mutation.mutate();
  };
  return (
    <Section title={title}>
      {created ? (
        <p className="notice" role="status">
          Created {created}.
        </p>
      ) : null}
      {mutation.isError ? <ErrorBox error={mutation.error} /> : null}
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit}>
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          {fields.map((f) => (
            <FormField key={f.name} label={f.label} hint={f.hint} error={errorFor(errors, f.name)}>
              {({ id, describedBy, invalid }) =>
                f.type === 'select' ? (
                  <select
                    id={id}
                    value={values[f.name]}
                    onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
                    aria-describedby={describedBy}
                    aria-invalid={invalid}
                  >
                    {f.options?.map((o) => (
                      <option key={o} value={o}>
                        {o}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    id={id}
                    type={f.type ?? 'text'}
                    value={values[f.name]}
                    required={f.required}
                    onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
                    aria-describedby={describedBy}
                    aria-invalid={invalid}
                  />
                )
              }
            </FormField>
          ))}
          <ActionButton {...allowed} type="submit" className="button primary" disabled={mutation.isPending}>
            {submitLabel}
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}
