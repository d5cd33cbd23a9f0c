// Starts worker scripts as real OS processes (node --import tsx), reads their JSON log lines, and stops them.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { WORKER_CONFIG_ENV, type ReadyLine, type WorkerConfig } from "../workers/worker-config";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const READY_TIMEOUT_MS = 30_000;
const MAX_LINES = 20_000;

export type LogLine = { level: string; msg: string; status?: string; key?: string } & Record<string, unknown>;
export type IpcReply =
  | { type: "reply"; id: number; ok: true; value: unknown }
  | { type: "reply"; id: number; ok: false; code?: string; message: string };
export type IpcEvent = { type: "event"; event: string; key: string };

export class WorkerProcess {
  readonly lines: LogLine[] = [];
  private stderrTail = "";
  private nextId = 0;
  private readonly replies = new Map<number, (reply: IpcReply) => void>();
  private readonly eventWaiters: Array<{ match: (e: IpcEvent) => boolean; resolve: (e: IpcEvent) => void }> = [];
  readonly events: IpcEvent[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  port = 0;

  readonly config: WorkerConfig;
  private readonly child: ChildProcess;

  constructor(config: WorkerConfig, child: ChildProcess) {
    this.config = config;
    this.child = child;
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    child.stderr?.on("data", (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString()).slice(-4_000)));
    child.on("message", (message: IpcReply | IpcEvent) => this.onMessage(message));
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  /** Log lines matching every given field, e.g. `{ level: "error", status: "UNRECORDED" }`. */
  logged(fields: Partial<LogLine>): LogLine[] {
    return this.lines.filter((line) => Object.entries(fields).every(([k, v]) => line[k] === v));
  }

  /** Sends an IPC request and waits for its reply (handler workers only). */
  request(message: Record<string, unknown>, timeoutMs = 30_000): Promise<IpcReply> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.replies.delete(id);
        reject(
          new Error(`worker ${this.config.workerId}: no reply to ${JSON.stringify(message)} within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      this.replies.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.exited.then(() => {
        if (this.replies.delete(id)) {
          clearTimeout(timer);
          reject(new WorkerExitedError(`worker ${this.config.workerId} exited before replying`));
        }
      });
      this.child.send({ ...message, id });
    });
  }

  /** Resolves with the first IPC event matching, past or future. */
  waitForEvent(event: string, key: string, timeoutMs = 15_000): Promise<IpcEvent> {
    const match = (e: IpcEvent) => e.event === event && e.key === key;
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`worker ${this.config.workerId}: no "${event}" event for ${key} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.eventWaiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.kill("SIGCONT");
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 3_000);
    await this.exited;
    clearTimeout(timer);
  }

  onLine(line: string): void {
    if (!line.startsWith("{")) return;
    try {
      const parsed = JSON.parse(line) as LogLine;
      if (this.lines.length < MAX_LINES) this.lines.push(parsed);
    } catch {
      // Not one of our lines (a dependency printing): ignored.
    }
  }

  private onMessage(message: IpcReply | IpcEvent): void {
    if (message.type === "reply") {
      this.replies.get(message.id)?.(message);
      this.replies.delete(message.id);
      return;
    }
    this.events.push(message);
    for (const waiter of [...this.eventWaiters]) {
      if (waiter.match(message)) {
        this.eventWaiters.splice(this.eventWaiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  }
}

export class WorkerExitedError extends Error {
  override readonly name = "WorkerExitedError";
}

/**
 * Starts `test/reliability/workers/<script>` and resolves once it printed its ready line.
 * Handler workers get an IPC channel; HTTP workers report the port they listen on.
 */
export async function startWorker(
  script: string,
  config: WorkerConfig,
  options: { exposeGc?: boolean } = {},
): Promise<WorkerProcess> {
  const args = [...(options.exposeGc ? ["--expose-gc"] : []), "--import", "tsx", `test/reliability/workers/${script}`];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, [WORKER_CONFIG_ENV]: JSON.stringify(config), NODE_ENV: "test" },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const worker = new WorkerProcess(config, child);
  const ready = new Promise<ReadyLine>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker ${config.workerId} not ready within ${READY_TIMEOUT_MS} ms:\n${worker.stderr}`)),
      READY_TIMEOUT_MS,
    );
    worker.exited.then(({ code, signal }) =>
      reject(new Error(`worker ${config.workerId} exited (${code ?? signal}) before ready:\n${worker.stderr}`)),
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith('{"ready":true')) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as ReadyLine);
      } else {
        worker.onLine(line);
      }
    });
  });
  try {
    worker.port = (await ready).port ?? 0;
  } catch (err) {
    await worker.stop();
    throw err;
  }
  return worker;
}

/** Stops every worker still running; for afterAll / afterEach. */
export async function stopAll(workers: Iterable<WorkerProcess>): Promise<void> {
  await Promise.all([...workers].map((worker) => worker.stop()));
}
