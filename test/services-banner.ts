// Says once, before the run, which real services the suites will use and which tests will be skipped.
export default function servicesBanner(): void {
  const postgres = process.env.DATABASE_URL
    ? `PostgreSQL at DATABASE_URL, plus PGlite`
    : "PGlite only (set DATABASE_URL to also run the store suites against a real PostgreSQL)";
  const skipped = (name: string) => `none: every test named "[${name}]" is SKIPPED (set ${name} to run them)`;
  const redis = process.env.REDIS_URL ? "Redis at REDIS_URL" : skipped("REDIS_URL");
  const mysql = process.env.MYSQL_URL ? "MySQL/MariaDB at MYSQL_URL" : skipped("MYSQL_URL");
  const amqp = process.env.AMQP_URL ? "RabbitMQ at AMQP_URL" : skipped("AMQP_URL");
  const nats = process.env.NATS_URL ? "NATS JetStream at NATS_URL" : skipped("NATS_URL");
  console.log(
    `\n[blocks tests] store: ${postgres}\n[blocks tests] cache: ${redis}\n[blocks tests] mysql: ${mysql}\n[blocks tests] rabbitmq: ${amqp}\n[blocks tests] nats: ${nats}\n`,
  );
}
