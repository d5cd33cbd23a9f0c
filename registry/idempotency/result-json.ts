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
    throw new UnstorableResultError(
      `idempotency: the operation's result cannot be stored as JSON (${String(err)}); the key is marked FAILED.`,
      { cause: err },
    );
  }
  return json ?? null;
}

export function deserializeResult<T>(serialized: string | null): T {
  return (serialized === null ? undefined : JSON.parse(serialized)) as T;
}

/**
 * A first run's result. `response` is parsed from the stored text only when read, so it is the
 * same value a replay gets, and a caller that already holds the answer (the HTTP layer) parses nothing.
 * Not `{ get response() {...} }`: a literal's getter is a new closure per call, which gives every
 * result a hidden class of its own (1 to 2 µs a call, measured). Here every result shares one getter,
 * still an own enumerable property, so a spread, `JSON.stringify` and `toEqual` see `response` as before.
 */
class FreshResult<T> {
  declare readonly response: T;
  declare readonly replayed: false;
  readonly #serialized: string | null;
  #parsed: { value: T } | undefined;

  static readonly #response: PropertyDescriptor = {
    enumerable: true,
    get(this: FreshResult<unknown>): unknown {
      return this.#read();
    },
  };

  constructor(serialized: string | null) {
    this.#serialized = serialized;
    // Defined before `replayed`, so the keys come in the order a replay's result has them.
    Object.defineProperty(this, "response", FreshResult.#response);
    this.replayed = false;
  }

  #read(): T {
    this.#parsed ??= { value: deserializeResult<T>(this.#serialized) };
    return this.#parsed.value;
  }
}

export function freshResult<T>(serialized: string | null): { response: T; replayed: boolean } {
  return new FreshResult<T>(serialized);
}
