// Creates a DynamoDB table from the project's JSON files, with the AWS SDK the project itself depends on.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type * as DynamoDb from "@aws-sdk/client-dynamodb";
import { BlocksError, isBlocksError } from "../utils/errors.js";
import { insideProject } from "../utils/files.js";
import type { DynamoDbTablePlan } from "./dynamodb-table.js";

type Sdk = typeof DynamoDb;
type KeySchema = Array<{ AttributeName?: string | undefined; KeyType?: string | undefined }>;
type TableInput = {
  TableName: string;
  KeySchema: KeySchema;
  GlobalSecondaryIndexes?: Array<{ IndexName?: string; KeySchema?: KeySchema }>;
};

export type DynamoDbApplyResult = {
  table: string;
  alreadyApplied: boolean;
  /** "enabled" by this run, "already enabled", or "not enabled" (see `ttlError`): expired items then stay until deleted by hand. */
  ttl: "enabled" | "already enabled" | "not enabled";
  ttlError?: string;
};

/**
 * Creates the table (and waits until it is ACTIVE), or checks that the one there has the same keys;
 * then turns on TTL. Running it again changes nothing. Credentials and region come from the AWS SDK's
 * default chain; `endpoint` (or AWS_ENDPOINT_URL_DYNAMODB) points it at a local DynamoDB.
 *
 * @example
 * await applyDynamoDbTable(plan, { root: "/app", endpoint: "http://127.0.0.1:8000" });
 */
export async function applyDynamoDbTable(
  plan: DynamoDbTablePlan,
  options: { root: string; endpoint?: string | undefined },
): Promise<DynamoDbApplyResult> {
  const sdk = loadSdk(options.root);
  const createTable = await readInput<TableInput>(options.root, plan.paths.createTable);
  const updateTimeToLive = await readInput<DynamoDb.UpdateTimeToLiveCommandInput>(
    options.root,
    plan.paths.updateTimeToLive,
  );
  const endpoint = options.endpoint || process.env.AWS_ENDPOINT_URL_DYNAMODB || undefined;
  const client = new sdk.DynamoDBClient({
    ...(endpoint && { endpoint }),
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 15_000 },
  });
  const where = endpoint ?? "the AWS region's DynamoDB endpoint";
  try {
    await checkConfig(client);
    const existing = await describe(sdk, client, createTable.TableName);
    if (existing) checkSameKeys(createTable, existing, plan.paths.createTable);
    else await create(sdk, client, createTable, plan.paths.createTable);
    await sdk.waitUntilTableExists({ client, maxWaitTime: 300 }, { TableName: createTable.TableName });
    return {
      table: createTable.TableName,
      alreadyApplied: existing !== undefined,
      ...(await enableTtl(sdk, client, updateTimeToLive)),
    };
  } catch (cause) {
    throw explain(cause, where);
  } finally {
    client.destroy();
  }
}

/** The SDK from the user's project: the CLI itself depends on no AWS package. */
function loadSdk(root: string): Sdk {
  try {
    return createRequire(path.join(root, "package.json"))("@aws-sdk/client-dynamodb") as Sdk;
  } catch (cause) {
    throw new BlocksError(
      "MISSING_DEPENDENCY",
      "--apply for a DynamoDB table needs @aws-sdk/client-dynamodb in this project, and it cannot be found here.",
      {
        cause,
        suggestion:
          "Install it (`npm install @aws-sdk/client-dynamodb`; `blocks add idempotency --store dynamodb` does), or drop --apply and create the table with the AWS CLI from the JSON files.",
      },
    );
  }
}

async function readInput<T>(root: string, file: string): Promise<T> {
  try {
    return JSON.parse(await readFile(insideProject(root, file), "utf8")) as T;
  } catch (cause) {
    throw new BlocksError("MIGRATION_FAILED", `Could not read ${file} as JSON.`, {
      cause,
      suggestion: `Fix the file, or delete it and run \`blocks migrate\` again to write it anew.`,
    });
  }
}

/** Region and credentials resolve before any call, so a missing one is named as such rather than as a network failure. */
async function checkConfig(client: DynamoDb.DynamoDBClient): Promise<void> {
  for (const [what, resolve] of [
    ["region", () => client.config.region()],
    ["credentials", () => client.config.credentials()],
  ] as const) {
    try {
      await resolve();
    } catch (cause) {
      throw new BlocksError("MISSING_AWS_CONFIG", `No AWS ${what} found for --apply.`, {
        cause,
        suggestion:
          "Configure the AWS SDK as your app does: AWS_REGION and AWS_PROFILE (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), or a role; a local DynamoDB still needs a region and any key pair.",
      });
    }
  }
}

async function describe(
  sdk: Sdk,
  client: DynamoDb.DynamoDBClient,
  table: string,
): Promise<DynamoDb.TableDescription | undefined> {
  try {
    return (await client.send(new sdk.DescribeTableCommand({ TableName: table }))).Table;
  } catch (err) {
    if ((err as Error).name === "ResourceNotFoundException") return undefined;
    throw err;
  }
}

async function create(sdk: Sdk, client: DynamoDb.DynamoDBClient, input: TableInput, file: string): Promise<void> {
  try {
    await client.send(new sdk.CreateTableCommand(input as DynamoDb.CreateTableCommandInput));
  } catch (err) {
    // Another run created it meanwhile: it must still have our keys.
    if ((err as Error).name !== "ResourceInUseException") throw err;
    const existing = await describe(sdk, client, input.TableName);
    if (existing) checkSameKeys(input, existing, file);
  }
}

/** The store reads and writes by these keys: a table with other ones would fail on every request. */
function checkSameKeys(wanted: TableInput, existing: DynamoDb.TableDescription, file: string): void {
  const keys = (schema: KeySchema | undefined) =>
    JSON.stringify((schema ?? []).map((key) => [key.AttributeName, key.KeyType]));
  const differences = [
    keys(wanted.KeySchema) === keys(existing.KeySchema)
      ? undefined
      : `key ${keys(existing.KeySchema)} instead of ${keys(wanted.KeySchema)}`,
  ];
  for (const index of wanted.GlobalSecondaryIndexes ?? []) {
    const found = existing.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === index.IndexName);
    if (!found) differences.push(`no index "${index.IndexName}"`);
    else if (keys(found.KeySchema) !== keys(index.KeySchema))
      differences.push(`index "${index.IndexName}" keyed ${keys(found.KeySchema)} instead of ${keys(index.KeySchema)}`);
  }
  const found = differences.filter(Boolean);
  if (!found.length) return;
  throw new BlocksError(
    "MIGRATION_FAILED",
    `Table ${wanted.TableName} already exists with another schema: ${found.join("; ")}.`,
    {
      suggestion: `Pick another name (--table), or migrate that table to the definition in ${file} yourself; the store cannot use it as it is.`,
    },
  );
}

async function enableTtl(
  sdk: Sdk,
  client: DynamoDb.DynamoDBClient,
  input: DynamoDb.UpdateTimeToLiveCommandInput,
): Promise<Pick<DynamoDbApplyResult, "ttl" | "ttlError">> {
  const attribute = input.TimeToLiveSpecification?.AttributeName;
  try {
    const { TimeToLiveDescription: current } = await client.send(
      new sdk.DescribeTimeToLiveCommand({ TableName: input.TableName }),
    );
    if (current?.AttributeName === attribute && ["ENABLED", "ENABLING"].includes(current?.TimeToLiveStatus ?? ""))
      return { ttl: "already enabled" };
    await client.send(new sdk.UpdateTimeToLiveCommand(input));
    return { ttl: "enabled" };
  } catch (err) {
    // Local implementations (dynalite) lack the TTL API; a role may lack the permission. The table works without it.
    return { ttl: "not enabled", ttlError: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

function explain(cause: unknown, where: string): unknown {
  if (isBlocksError(cause)) return cause;
  const err = cause as Error & { code?: string; $metadata?: { httpStatusCode?: number } };
  const unreachable =
    err.$metadata?.httpStatusCode === undefined &&
    (["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "ECONNRESET", "EAI_AGAIN"].includes(err.code ?? "") ||
      err.name === "TimeoutError");
  if (unreachable) {
    return new BlocksError("MIGRATION_FAILED", `Could not reach DynamoDB at ${where}.`, {
      cause,
      suggestion:
        "Check the endpoint (--endpoint or AWS_ENDPOINT_URL_DYNAMODB for a local DynamoDB), the region, and the network.",
    });
  }
  return new BlocksError("MIGRATION_FAILED", `DynamoDB refused the table: ${err.name}: ${err.message}`, {
    cause,
    suggestion:
      "Check that the credentials may call DescribeTable, CreateTable, DescribeTimeToLive and UpdateTimeToLive on this table.",
  });
}
