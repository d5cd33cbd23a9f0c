// A small loopback HTTP client with a hard deadline per request, and a raw-bytes variant for malformed requests.
import http from "node:http";
import net from "node:net";

export type HttpAnswer = {
  /** 0 when the connection failed or was cut, -1 when the deadline passed first. */
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  ms: number;
};

export type HttpRequest = {
  port: number;
  method?: string;
  path?: string;
  /** One value, or several to send the header repeated; omitted = no header. */
  key?: string | string[];
  body?: unknown;
  /** Sent as is when a string (malformed JSON, huge bodies); JSON-encoded otherwise. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  timeoutMs?: number;
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function send(request: HttpRequest): Promise<HttpAnswer> {
  const started = performance.now();
  const payload = request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  const headers: http.OutgoingHttpHeaders = { "content-type": "application/json", ...request.headers };
  if (request.key !== undefined) headers["idempotency-key"] = request.key;
  if (payload !== undefined) headers["content-length"] = Buffer.byteLength(payload);
  return new Promise((resolve) => {
    const done = (answer: Omit<HttpAnswer, "ms">) => {
      clearTimeout(timer);
      resolve({ ...answer, ms: performance.now() - started });
    };
    const req = http.request(
      {
        host: "127.0.0.1",
        port: request.port,
        method: request.method ?? "POST",
        path: request.path ?? "/payments",
        headers,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          done({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", () => done({ status: 0, headers: {}, text: "" }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ status: -1, headers: {}, text: "" });
    }, request.timeoutMs ?? 15_000);
    req.on("error", () => done({ status: 0, headers: {}, text: "" }));
    req.end(payload);
  });
}

/** The error code of a `{ error: { code } }` body (or Fastify's `{ code }`), if any. */
export function errorCode(answer: HttpAnswer): string | undefined {
  try {
    const body = JSON.parse(answer.text) as { error?: { code?: string }; code?: string };
    return body.error?.code ?? body.code;
  } catch {
    return undefined;
  }
}

/** Writes `bytes` as the whole request on a fresh connection and returns the status line's code (0 if none). */
export function sendRaw(port: number, bytes: Buffer, timeoutMs = 10_000): Promise<{ status: number; text: string }> {
  return exchange(port, (socket) => socket.write(bytes), timeoutMs);
}

/**
 * Sends the head, and the body only if no answer comes within `waitMs`: a server that refuses on
 * Content-Length (413: Fastify, Hono) answers at once and then closes, and a close with unread bytes
 * resets the connection, which can lose the answer before it is read. Real clients stop sending too.
 * Express's body parser reads the whole body before it answers, so there the body does go out.
 */
export function sendHeadFirst(
  port: number,
  head: string,
  body: string,
  waitMs = 300,
  timeoutMs = 10_000,
): Promise<{ status: number; text: string }> {
  return exchange(
    port,
    (socket) => {
      socket.write(head);
      const later = setTimeout(() => socket.writable && socket.write(body), waitMs);
      socket.once("data", () => clearTimeout(later));
      socket.once("close", () => clearTimeout(later));
    },
    timeoutMs,
  );
}

function exchange(
  port: number,
  send: (socket: net.Socket) => void,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      // One response is all we want: stop once its body is complete.
      const text = Buffer.concat(chunks).toString("latin1");
      const length = /\r\ncontent-length: (\d+)/i.exec(text);
      const headerEnd = text.indexOf("\r\n\r\n");
      if (length && headerEnd >= 0 && Buffer.byteLength(text, "latin1") >= headerEnd + 4 + Number(length[1])) finish();
    });
    socket.on("end", finish);
    socket.on("error", finish);
    send(socket);
  });
}

export function closeClient(): void {
  agent.destroy();
}
