// Recovery points (`ctx.step(name, fn)`): each external call's result recorded under the key, so a retry replays it.
import { createHash } from "node:crypto";
import type { BoundedStore } from "./bounded-store";
import { UnstorableResultError } from "./result-json";
import type { IdempotencyScope, StepResults } from "./types";

/** What a step runs: `stepKey` is the idempotency key to pass on to the downstream it calls. */
export type StepFunction<T> = (stepKey: string) => Promise<T> | T;

/** `ctx.step`: runs `fn` once per key and step name, and replays its recorded result to later attempts. */
export type Step = <T>(name: string, fn: StepFunction<T>) => Promise<T>;

const MAX_STEP_NAME = 100;
/** Visible ASCII and spaces, not starting or ending with a space: a name is code, and shows in logs and keys. */
const STEP_NAME = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** JSON text never is empty, so the empty string can stand for `undefined` (what a mailer's `send` returns). */
const UNDEFINED = "";

/**
 * The downstream idempotency key of one step: the same on every attempt of the scope, different
 * for every other operation, user, key or step name. A hash, so it reveals neither the user nor the
 * key, and 48 visible-ASCII characters, within what payment APIs accept (255).
 *
 * @example
 * stepKeyOf({ operation: "payments:create", userId: "u_1", key: "k" }, "charge"); // "idem_3q2..."
 */
export function stepKeyOf({ operation, userId, key }: IdempotencyScope, name: string): string {
  return `idem_${createHash("sha256")
    .update(JSON.stringify([operation, userId, key, name]))
    .digest("base64url")}`;
}

/**
 * The steps of one execution. The stored steps come with `create` where the store reads them in the
 * same round trip; otherwise one `get` on the first `step` call reads them.
 */
export class StepLog {
  private readonly store: BoundedStore;
  private readonly scope: IdempotencyScope;
  private readonly token: string;
  private readonly ttlMs: number;
  /** Throws (and aborts the execution's signal) when the key is no longer this execution's. */
  private readonly leaseLost: () => Error;
  private stored: Promise<StepResults> | undefined;
  private readonly names = new Set<string>();

  constructor(
    store: BoundedStore,
    scope: IdempotencyScope,
    token: string,
    ttlMs: number,
    known: StepResults | undefined,
    leaseLost: () => Error,
  ) {
    this.store = store;
    this.scope = scope;
    this.token = token;
    this.ttlMs = ttlMs;
    this.leaseLost = leaseLost;
    if (known) this.stored = Promise.resolve(known);
  }

  async run<T>(name: string, fn: StepFunction<T>, signal: AbortSignal | undefined): Promise<T> {
    this.claim(name);
    signal?.throwIfAborted();
    this.stored ??= this.read();
    const recorded = (await this.stored)[name];
    if (recorded !== undefined) return parse<T>(recorded);
    const json = stepJson(name, await fn(stepKeyOf(this.scope, name)));
    const held = await this.store.call("markStep", (store) =>
      store.markStep(this.scope, this.token, name, json, this.ttlMs),
    );
    if (!held) throw this.leaseLost();
    // Parsed back, so the first attempt sees the value a replay will: a Date is a string on both.
    return parse<T>(json);
  }

  private claim(name: string): void {
    if (typeof name !== "string" || name.length > MAX_STEP_NAME || !STEP_NAME.test(name)) {
      throw new TypeError(
        `idempotency: step names are 1 to ${MAX_STEP_NAME} visible ASCII characters (spaces inside), got ${JSON.stringify(name)}.`,
      );
    }
    if (this.names.has(name)) {
      throw new TypeError(
        `idempotency: the step "${name}" already ran in this execution; give each step its own name.`,
      );
    }
    this.names.add(name);
  }

  private async read(): Promise<StepResults> {
    const record = await this.store.call("get", (store) => store.get(this.scope));
    if (record?.token !== this.token || record.status !== "PROCESSING") throw this.leaseLost();
    return record.steps ?? {};
  }
}

/** The step's result as the store keeps it; what JSON cannot carry fails before anything is recorded. */
function stepJson(name: string, result: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (err) {
    throw new UnstorableResultError(
      `idempotency: the result of step "${name}" cannot be stored as JSON (${String(err)}); its effect happened ` +
        "but cannot be replayed, so the key is marked FAILED. Return only what the next steps need (an id, a status).",
      { cause: err },
    );
  }
  return json ?? UNDEFINED;
}

function parse<T>(json: string): T {
  return (json === UNDEFINED ? undefined : JSON.parse(json)) as T;
}
