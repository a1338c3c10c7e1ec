import type { operations } from './generated/schema.js';

/** Every operationId of the REST API. */
export type OperationId = keyof operations & string;
type Op<K extends OperationId> = operations[K];
type Params<K extends OperationId> = Op<K>['parameters'];
type Empty = Record<never, never>;

/** `{ key: T }` when the document requires the part, `{ key?: T }` when optional, `{}` when absent. */
type Part<T, Key extends string, As extends string = Key> = Key extends keyof T
  ? [NonNullable<T[Key]>] extends [never]
    ? Empty
    : Empty extends Pick<T, Key>
      ? { [P in As]?: NonNullable<T[Key]> }
      : { [P in As]: T[Key] }
  : Empty;

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type BodyPart<K extends OperationId> = 'requestBody' extends keyof Op<K>
  ? [NonNullable<Op<K>['requestBody']>] extends [never]
    ? Empty
    : Empty extends Pick<Op<K>, 'requestBody'>
      ? { body?: JsonOf<NonNullable<Op<K>['requestBody']>> }
      : { body: JsonOf<NonNullable<Op<K>['requestBody']>> }
  : Empty;

/** What an operation takes: `path` parameters, `query` parameters and the JSON `body`, as the document says. */
export type OperationInput<K extends OperationId> = Part<Params<K>, 'path'> &
  Part<Params<K>, 'query'> &
  BodyPart<K>;

/** A non-JSON answer (PEM, DER, PKCS#12, NDJSON): the bytes and their media type. */
export interface BinaryBody {
  readonly contentType: string;
  readonly bytes: Uint8Array;
}

type Responses<K extends OperationId> = Op<K>['responses'];
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204>;
type ContentOf<R> = R extends { content: infer C }
  ? C extends { 'application/json': infer J }
    ? J
    : BinaryBody
  : undefined;

/** What an operation answers on success: its JSON, a `BinaryBody`, or `undefined` for 204. */
export type OperationOutput<K extends OperationId> = ContentOf<Responses<K>[SuccessStatus<K>]>;

export interface RequestOptions {
  signal?: AbortSignal;
}

/** One method per operation, named by its operationId. */
export type OperationMethods = {
  [K in OperationId]: Empty extends OperationInput<K>
    ? (input?: OperationInput<K>, options?: RequestOptions) => Promise<OperationOutput<K>>
    : (input: OperationInput<K>, options?: RequestOptions) => Promise<OperationOutput<K>>;
};

/** Operations that answer the list envelope `{data, total, page, per_page}`. */
export type PagedOperationId = {
  [K in OperationId]: OperationOutput<K> extends { data: readonly unknown[]; total: number; page: number }
    ? K
    : never;
}[OperationId];

export type PageItem<K extends PagedOperationId> =
  OperationOutput<K> extends { data: readonly (infer T)[] } ? T : never;
