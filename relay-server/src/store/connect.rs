//! Opening the database: SQLite pragmas for durability, PostgreSQL schema selection, embedded migrations.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Executor};

use super::group_commit::GroupWriter;
use super::{ConnectError, SqliteStore, Store};
use crate::config::DatabaseConfig;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

impl Store {
    /// Connects, applies the embedded migrations, and returns the store. Fails before the port opens.
    pub async fn connect(config: &DatabaseConfig) -> Result<Store, ConnectError> {
        if config.url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(&config.url)
                .map_err(ConnectError::InvalidUrl)?
                .create_if_missing(true)
                // WAL + FULL: a commit is fsynced before it is acknowledged, so it survives kill -9 and power
                // loss; readers never block the writer.
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(10));
            let pool = SqlitePoolOptions::new()
                .max_connections(config.max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options.clone())
                .await
                .map_err(ConnectError::OpenSqlite)?;
            SQLITE_MIGRATIONS.run(&pool).await?;
            // Writes go through one writer task on its own connection (group commit); reads use the pool.
            let writer = GroupWriter::start(&options)
                .await
                .map_err(ConnectError::OpenSqlite)?;
            Ok(Store::Sqlite(SqliteStore { pool, writer }))
        } else {
            let options =
                PgConnectOptions::from_str(&config.url).map_err(ConnectError::InvalidUrl)?;
            let schema = config.schema.clone();
            if let Some(schema) = &schema {
                // Validated as [a-z_][a-z0-9_]*, so quoting is enough.
                let mut conn = sqlx::PgConnection::connect_with(&options)
                    .await
                    .map_err(ConnectError::ConnectPostgres)?;
                // `CREATE SCHEMA IF NOT EXISTS` is not atomic against a concurrent creation (two replicas starting
                // together fail with a unique violation), so replicas take a transaction-scoped advisory lock.
                let mut tx = conn.begin().await.map_err(ConnectError::Database)?;
                sqlx::query(
                    "SELECT pg_advisory_xact_lock(hashtext('patchbridge-relay:create-schema'))",
                )
                .execute(&mut *tx)
                .await
                .map_err(ConnectError::Schema)?;
                tx.execute(format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"").as_str())
                    .await
                    .map_err(ConnectError::Schema)?;
                tx.commit().await.map_err(ConnectError::Schema)?;
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
                .map_err(ConnectError::ConnectPostgres)?;
            POSTGRES_MIGRATIONS.run(&pool).await?;
            Ok(Store::Postgres(pool))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> DatabaseConfig {
        serde_json::from_value(serde_json::json!({ "url": url })).expect("a database config")
    }

    #[tokio::test]
    async fn a_database_url_that_does_not_parse_names_the_setting() {
        let error = Store::connect(&config("postgres://[::1"))
            .await
            .unwrap_err();
        assert!(matches!(error, ConnectError::InvalidUrl(_)), "{error:?}");
        assert!(error.to_string().starts_with("database.url: "), "{error}");
    }

    #[tokio::test]
    async fn an_unopenable_sqlite_file_says_so() {
        let error = Store::connect(&config("sqlite:///nonexistent-dir/deeper/relay.sqlite3"))
            .await
            .unwrap_err();
        assert!(matches!(error, ConnectError::OpenSqlite(_)), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("database: cannot open SQLite: "),
            "{error}"
        );
    }
}
