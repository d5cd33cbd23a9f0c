// The one way a result becomes the text a store keeps, and back: used by `execute` and `executeInTransaction`.

/** The operation returned what JSON cannot carry: the key is marked FAILED rather than run again. */
export class UnstorableResultError extends TypeError {
  override readonly name = "UnstorableResultError";
}

/** `undefined` (and what JSON drops, like a function) is kept as null; throws UnstorableResultError for a cycle or a BigInt. */
export function serializeResult(result: unknown): string | null {
  let json: string | undefined;
  try {
    json = result === undefined ? undefined : JSON.stringify(result);
  } catch (err) {
    throw new UnstorableResultError(`idempotency: the operation's result cannot be stored as JSON (${String(err)}); the key is marked FAILED.`, { cause: err });
  }
  return json ?? null;
}

export function deserializeResult<T>(serialized: string | null): T {
  return (serialized === null ? undefined : JSON.parse(serialized)) as T;
}

/**
 * A first run's result. `response` is parsed from the stored text only when read, so it is the
 * same value a replay gets, and a caller that already holds the answer (the HTTP layer) parses nothing.
 */
export function freshResult<T>(serialized: string | null): { response: T; replayed: boolean } {
  let response: { value: T } | undefined;
  return {
    get response(): T {
      response ??= { value: deserializeResult<T>(serialized) };
      return response.value;
    },
    replayed: false,
  };
}

