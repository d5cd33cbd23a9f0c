// A 127.0.0.1 port nothing listens on right now: for a server a test starts on it, or a service a test finds down.
import { createServer } from "node:net";

/** The OS picks the port, we bind it and close it again: free now, until something binds it. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
