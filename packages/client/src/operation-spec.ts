/** One REST operation as the OpenAPI document describes it; the generated table holds one per operation. */
export interface OperationSpec {
  readonly operationId: string;
  readonly method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /** Only an admin principal may call it; the server answers 403 otherwise. */
  readonly admin: boolean;
  /** Answers without an API key. */
  readonly public: boolean;
  readonly pathParams: readonly ParameterSpec[];
  readonly queryParams: readonly ParameterSpec[];
  readonly body: { readonly required: boolean; readonly schema: unknown } | null;
  readonly success: readonly { readonly status: number; readonly contentTypes: readonly string[] }[];
}

export interface ParameterSpec {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
  readonly schema: unknown;
}
