//! Opening the database: SQLite pragmas for durability, PostgreSQL schema selection, embedded migrations.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Executor};

use super::group_commit::GroupWriter;
use super::{SqliteStore, Store};
use crate::config::DatabaseConfig;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

impl Store {
    /// Connects, applies the embedded migrations, and returns the store. Fails before the port opens.
    pub async fn connect(config: &DatabaseConfig) -> Result<Store, String> {
        if config.url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(&config.url)
                .map_err(|e| format!("database.url: {e}"))?
                .create_if_missing(true)
                // WAL + FULL: a commit is fsynced before it is acknowledged, so it survives kill -9 and power
                // loss; readers never block the writer.
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(10));
            // The pool serves reads (and the migrations); every write goes through the writer's own
            // connection, opened after the migrations so it sees the final schema.
            let pool = SqlitePoolOptions::new()
                .max_connections(config.max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options.clone())
                .await
                .map_err(|e| format!("database: cannot open SQLite: {e}"))?;
            SQLITE_MIGRATIONS
                .run(&pool)
                .await
                .map_err(|e| format!("database: migration failed: {e}"))?;
            let writer = GroupWriter::start(&options)
                .await
                .map_err(|e| format!("database: cannot open SQLite: {e}"))?;
            Ok(Store::Sqlite(SqliteStore { pool, writer }))
        } else {
            let options = PgConnectOptions::from_str(&config.url)
                .map_err(|e| format!("database.url: {e}"))?;
            let schema = config.schema.clone();
            if let Some(schema) = &schema {
                // Validated as [a-z_][a-z0-9_]*, so quoting is enough.
                let mut conn = sqlx::PgConnection::connect_with(&options)
                    .await
                    .map_err(|e| format!("database: cannot connect to PostgreSQL: {e}"))?;
                // `CREATE SCHEMA IF NOT EXISTS` is not atomic against a concurrent creation (two replicas starting
                // together fail with a unique violation), so replicas take a transaction-scoped advisory lock.
                let mut tx = conn.begin().await.map_err(|e| format!("database: {e}"))?;
                sqlx::query(
                    "SELECT pg_advisory_xact_lock(hashtext('patchbridge-relay:create-schema'))",
                )
                .execute(&mut *tx)
                .await
                .map_err(|e| format!("database.schema: {e}"))?;
                tx.execute(format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"").as_str())
                    .await
                    .map_err(|e| format!("database.schema: {e}"))?;
                tx.commit()
                    .await
                    .map_err(|e| format!("database.schema: {e}"))?;
                let _ = conn.close().await;
            }
            let pool = PgPoolOptions::new()
                .max_connections(config.max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .after_connect(move |conn, _meta| {
                    let schema = schema.clone();
                    Box::pin(async move {
                        if let Some(schema) = schema {
                            conn.execute(format!("SET search_path TO \"{schema}\"").as_str())
                                .await?;
                        }
                        Ok(())
                    })
                })
                .connect_with(options)
                .await
                .map_err(|e| format!("database: cannot connect to PostgreSQL: {e}"))?;
            POSTGRES_MIGRATIONS
                .run(&pool)
                .await
                .map_err(|e| format!("database: migration failed: {e}"))?;
            Ok(Store::Postgres(pool))
        }
    }
}
