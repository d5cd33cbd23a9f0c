// A loopback TCP proxy that can cut the link to a real server (PostgreSQL, Redis) and restore it.
import net from "node:net";

/**
 * How a cut treats the link: `blackhole` stalls open connections and accepts new ones without ever
 * answering (a partition: clients must time out); `reset` destroys them (a crash: clients fail fast).
 */
export type CutMode = "blackhole" | "reset";

type Pair = { client: net.Socket; upstream: net.Socket; stalled: boolean };

export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private readonly held = new Set<net.Socket>();
  private mode: CutMode | undefined;
  /** Connections accepted since start, including those held during a cut. */
  accepted = 0;
  /** Added to every chunk the server sends back: a slow store that answers after the client gave up. */
  latencyMs = 0;

  private readonly server: net.Server;
  private readonly target: { host: string; port: number };

  private constructor(server: net.Server, target: { host: string; port: number }) {
    this.server = server;
    this.target = target;
    server.on("connection", (client) => this.accept(client));
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = net.createServer();
    const proxy = new TcpProxy(server, target);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get isCut(): boolean {
    return this.mode !== undefined;
  }

  /** Breaks every open connection and every new one until `restore()`. */
  cut(mode: CutMode = "blackhole"): void {
    this.mode = mode;
    for (const pair of this.pairs) {
      if (mode === "reset") {
        destroy(pair);
      } else {
        pair.stalled = true;
        pair.client.pause();
        pair.upstream.pause();
        this.held.add(pair.client);
        this.held.add(pair.upstream);
      }
    }
    this.pairs.clear();
  }

  /** New connections reach the server again; connections stalled by the cut are dropped, as after a real partition. */
  restore(): void {
    this.mode = undefined;
    for (const socket of this.held) socket.destroy();
    this.held.clear();
  }

  async close(): Promise<void> {
    this.restore();
    for (const pair of this.pairs) destroy(pair);
    this.pairs.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    client.on("error", () => {});
    if (this.mode === "reset") return void client.destroy();
    if (this.mode === "blackhole") {
      client.pause();
      this.held.add(client);
      client.on("close", () => this.held.delete(client));
      return;
    }
    const upstream = net.connect(this.target);
    upstream.on("error", () => {});
    const pair = { client, upstream, stalled: false };
    this.pairs.add(pair);
    const drop = () => {
      if (!this.pairs.delete(pair)) return;
      destroy(pair);
    };
    client.on("close", drop);
    upstream.on("close", drop);
    client.on("data", (chunk: Buffer) => pair.stalled || upstream.write(chunk));
    this.forwardWithLatency(pair, upstream, client);
  }

  /** Delays each answer chunk by the latency of the moment, never reordering chunks. */
  private forwardWithLatency(pair: Pair, from: net.Socket, to: net.Socket): void {
    let last = 0;
    from.on("data", (chunk: Buffer) => {
      const at = Math.max(Date.now() + this.latencyMs, last);
      last = at;
      const write = () => pair.stalled || to.destroyed || to.write(chunk);
      if (at <= Date.now()) write();
      else setTimeout(write, at - Date.now());
    });
  }
}

function destroy({ client, upstream }: Pair): void {
  client.destroy();
  upstream.destroy();
}
