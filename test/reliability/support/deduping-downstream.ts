// A stand-in payment provider: it dedupes calls by their Idempotency-Key, as Stripe does, and can SIGKILL its caller mid-call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Where a planned crash hits a call: before the provider applies it, or after it applied it and before it answers. */
export type CallCrash = "before-effect" | "after-effect";

/** What one Idempotency-Key (one step of one request) saw. */
export type KeyLedger = { path: string; requestKey: string; calls: number; answer: unknown };

/**
 * Runs in the test process, so it outlives every worker it kills. Each key's first call applies the
 * effect once and stores the answer; a repeat gets the stored answer and applies nothing: the
 * provider's half of the promise that a crash repeats no external effect.
 */
export class DedupingDownstream {
  readonly ledger = new Map<string, KeyLedger>();
  /** Crashes still to fire, by "<path> <requestKey>": each fires once, on the first matching call. */
  private readonly crashes = new Map<string, CallCrash>();
  private nextId = 0;
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The next call to `path` for `requestKey` kills its caller at `when`. */
  planCrash(path: string, requestKey: string, when: CallCrash): void {
    this.crashes.set(`${path} ${requestKey}`, when);
  }

  /** Forgets the crashes that never fired (their worker died of another key's crash first). */
  clearCrashes(): void {
    this.crashes.clear();
  }

  /** Effects applied per call site ("<path> <requestKey>"): more than 1 is a double charge. */
  effectsByCall(): Map<string, number> {
    const effects = new Map<string, number>();
    for (const { path, requestKey } of this.ledger.values()) {
      const call = `${path} ${requestKey}`;
      effects.set(call, (effects.get(call) ?? 0) + 1);
    }
    return effects;
  }

  /** Calls that repeated a key the provider had already applied: deduped, as a crash mid-call needs. */
  dedupedCalls(): number {
    let repeats = 0;
    for (const entry of this.ledger.values()) repeats += entry.calls - 1;
    return repeats;
  }

  /** The request keys whose planned crash fired. */
  readonly firedCrashes = new Set<string>();

  /** Keys sent for two different calls: step keys that are not as distinct as they must be. */
  readonly collisions: string[] = [];

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { requestKey: string };
    const key = req.headers["idempotency-key"];
    const pid = Number(req.headers["x-caller-pid"]);
    const path = req.url ?? "/";
    if (typeof key !== "string" || key === "" || !Number.isInteger(pid)) {
      res.writeHead(400).end();
      return;
    }
    const crash = this.crashes.get(`${path} ${body.requestKey}`);
    if (crash) {
      this.crashes.delete(`${path} ${body.requestKey}`);
      this.firedCrashes.add(body.requestKey);
    }
    if (crash === "before-effect") return kill(pid);

    let entry = this.ledger.get(key);
    if (entry) {
      entry.calls++;
    } else {
      entry = { path, requestKey: body.requestKey, calls: 1, answer: { id: `${path.slice(1, 3)}_${++this.nextId}` } };
      this.ledger.set(key, entry);
    }
    if (entry.path !== path || entry.requestKey !== body.requestKey) this.collisions.push(key);
    if (crash === "after-effect") return kill(pid);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(entry.answer));
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone: another planned crash got there first.
  }
}
