// Starts a throwaway Redis Cluster of three masters on loopback ports with the machine's redis-server, and stops it.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export type LocalRedisCluster = {
  ports: number[];
  /** Kills one master with SIGKILL (no shutdown, no save). */
  kill(port: number): Promise<void>;
  /** Starts a killed master again on its port, directory and cluster config, and waits for the cluster. */
  restart(port: number): Promise<void>;
  stop(): Promise<void>;
};

export type ClusterOptions = {
  /** Extra redis-server arguments, e.g. ["--appendonly", "yes", "--appendfsync", "always"] so a restart keeps the data. */
  serverArgs?: string[];
};

/**
 * Ports 17000-19999 are picked at random among free ones (the cluster bus uses port + 10000); test
 * files start clusters in parallel, so a start that still collides is tried again on other ports.
 */
export async function startRedisCluster(options: ClusterOptions = {}): Promise<LocalRedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

async function startOnce({
  serverArgs = ["--save", "", "--appendonly", "no"],
}: ClusterOptions): Promise<LocalRedisCluster> {
  let base = 17000 + Math.floor(Math.random() * 2997);
  while (!(await allFree([base, base + 1, base + 2].flatMap((port) => [port, port + 10000]))))
    base = 17000 + Math.floor(Math.random() * 2997);
  const dir = await mkdtemp(join(tmpdir(), "idem-redis-cluster-"));
  const ports = [base, base + 1, base + 2];
  const servers = new Map<number, ChildProcess>();
  const startServer = async (port: number) => {
    const child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        `nodes-${port}.conf`,
        "--cluster-node-timeout",
        "2000",
        "--appendfilename",
        `appendonly-${port}.aof`,
        "--appenddirname",
        `aof-${port}`,
        ...serverArgs,
        "--daemonize",
        "no",
      ],
      { cwd: dir, stdio: "ignore" },
    );
    servers.set(port, child);
    await waitFor(`redis-server on port ${port}`, async () => (await cli(port, "ping")) === "PONG");
  };
  const stop = async () => {
    await Promise.all(
      [...servers.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
          }),
      ),
    );
    servers.clear();
    await rm(dir, { recursive: true, force: true });
  };
  const waitForClusterOk = () =>
    waitFor("cluster_state:ok", async () => {
      const infos = await Promise.all(ports.map((port) => cli(port, "cluster", "info")));
      return infos.every((info) => info.includes("cluster_state:ok"));
    });
  try {
    await Promise.all(ports.map(startServer));
    await run("redis-cli", [
      "--cluster",
      "create",
      ...ports.map((port) => `127.0.0.1:${port}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    await waitForClusterOk();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ports,
    async kill(port) {
      const child = servers.get(port);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      });
    },
    async restart(port) {
      await startServer(port);
      await waitForClusterOk();
    },
    stop,
  };
}

async function allFree(ports: number[]): Promise<boolean> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
  return (await Promise.all(ports.map(free))).every(Boolean);
}

async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run("redis-cli", ["-p", String(port), ...args]);
    return stdout.trim();
  } catch {
    return "";
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Local Redis Cluster: timed out waiting for ${what}.`);
}
