import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { request } from '../api';
import { fileNameOf, saveFile } from '../download';
import { errorFor, fieldErrors } from '../form-errors';
import { ConfirmDialog, ErrorBox } from './common';
import { FormField } from './form-field';

/**
 * PKCS#12 export: the password is asked here and POSTed in the body, never put in a URL. The
 * server encrypts key, certificate and chain under it and records the export in the audit trail.
 */
export function Pkcs12Dialog({
  open,
  certificateId,
  name,
  onClose,
}: {
  open: boolean;
  certificateId: string;
  name: string;
  onClose: (message: string) => void;
}) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const exportFile = useMutation({
    mutationFn: async () => {
      const response = await request(
        'POST',
        `/api/v1/certificates/${encodeURIComponent(certificateId)}/export`,
        {
          format: 'pkcs12',
          password,
        },
      );
      saveFile(await response.blob(), `${fileNameOf(name)}.p12`);
    },
    onSuccess: () => {
      setPassword('');
      setAgain('');
      onClose(`Exported ${name} as PKCS#12; the export is in the audit trail.`);
    },
  });
  const errors = fieldErrors(exportFile.error);
  const submit = () => {
    setMismatch(password !== again);
    if (password !== again) return;
    exportFile.mutate();
  };
  return (
    <ConfirmDialog
      open={open}
      title={`Export ${name} with its private key`}
      confirmLabel="Export PKCS#12"
      busy={exportFile.isPending}
      onConfirm={submit}
      onCancel={() => {
        setPassword('');
        setAgain('');
        exportFile.reset();
        onClose('');
      }}
    >
      <p>
        The file holds the private key, the certificate and its chain, encrypted under this password. Keep the
        password apart from the file.
      </p>
      {exportFile.isError && Object.keys(errors).length === 0 ? <ErrorBox error={exportFile.error} /> : null}
      <div className="form">
        <FormField label="Password" hint="at least 8 characters" error={errorFor(errors, 'password')}>
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              minLength={8}
              value={password}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </FormField>
        <FormField label="Password again" error={mismatch ? 'the passwords differ' : undefined}>
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              value={again}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              onChange={(e) => setAgain(e.target.value)}
            />
          )}
        </FormField>
      </div>
    </ConfirmDialog>
  );
}
