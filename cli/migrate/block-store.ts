// Which store a block with a table runs on in this project, and so what `migrate` and `doctor` owe it:
// SQL (PostgreSQL), another SQL dialect's file (MySQL, SQLite), a DynamoDB table, or nothing (RedisStore keeps no schema).
import type { DatabaseDialect } from "../config/blocks-config.js";
import type { Lock, LockedBlock } from "../config/lock-file.js";
import { recordedFeatures } from "../add/choose-features.js";
import type { RegistryBlock, RegistryFeature } from "../registry/types.js";

export type BlockStore =
  | { kind: "sql" }
  | { kind: "dynamodb"; feature: RegistryFeature }
  | { kind: "dialect"; feature: RegistryFeature & { sqlSchema: NonNullable<RegistryFeature["sqlSchema"]> } }
  | { kind: "none"; feature: RegistryFeature };

/**
 * The block's store features: its migration's own (`postgres-store`), the features sharing its
 * flag (`--store redis`), and any DynamoDB store. Empty for a block whose table has no store choice.
 *
 * @example
 * storeFeatures(block).map(([name]) => name); // ["postgres-store", "redis-store", "dynamodb-store"]
 */
export function storeFeatures(block: RegistryBlock): Array<[string, RegistryFeature]> {
  const features = Object.entries(block.features ?? {});
  const owner = block.migration?.feature;
  const ownerFeature = owner === undefined ? undefined : block.features?.[owner];
  const flag = ownerFeature ? (ownerFeature.flag ?? owner) : undefined;
  return features.filter(
    ([name, feature]) =>
      name === owner || feature.dynamoDbTable !== undefined || (flag !== undefined && (feature.flag ?? name) === flag),
  );
}

/**
 * `store` (from `--store`) names it; else the lock shows it (the files `add` recorded; a DynamoDB
 * store first, then PostgreSQL, for a project that has both); else the block's default, SQL.
 *
 * @example
 * blockStore(block, lock.blocks.idempotency); // { kind: "none", feature } after `add --store redis`
 */
export function blockStore(block: RegistryBlock, locked: LockedBlock | undefined, store?: string): BlockStore {
  const candidates = storeFeatures(block);
  const recorded = recordedFeatures(block, locked);
  const owner = block.migration?.feature;
  const chosen =
    store !== undefined
      ? candidates.find(([, feature]) => feature.choice === store)
      : (candidates.find(([name, feature]) => feature.dynamoDbTable !== undefined && recorded.has(name)) ??
        candidates.find(([name]) => name === owner && recorded.has(name)) ??
        candidates.find(([name]) => recorded.has(name)));
  if (!chosen || chosen[0] === owner) return { kind: "sql" };
  const [, feature] = chosen;
  if (feature.sqlSchema !== undefined)
    return { kind: "dialect", feature: { ...feature, sqlSchema: feature.sqlSchema } };
  return feature.dynamoDbTable !== undefined ? { kind: "dynamodb", feature } : { kind: "none", feature };
}

/**
 * The block's table: `table` (from `--table`) names it; else the one `add` recorded; else the
 * block's default. So `add --table orders_idempotency` then a bare `migrate` writes no second table.
 *
 * @example
 * blockTable(block, lock); // "orders_idempotency" after `add idempotency --table orders_idempotency`
 */
export function blockTable(block: RegistryBlock, lock: Lock, table?: string): string {
  return table ?? lock.blocks[block.name]?.table ?? block.migration?.table ?? "";
}

/**
 * The `--store` a project on MySQL or SQLite (blocks.json's `database.dialect`) gets by default: the blocks'
 * store on that database, if they have one. Undefined on PostgreSQL, whose store is every block's default.
 *
 * @example
 * dialectStoreChoice([idempotency], "mysql"); // "mysql"
 */
export function dialectStoreChoice(blocks: RegistryBlock[], dialect: DatabaseDialect): string | undefined {
  const features = blocks.flatMap((block) => storeFeatures(block).map(([, feature]) => feature));
  return features.find((feature) => feature.sqlSchema?.dialect === dialect)?.choice;
}
